package server

// The gatekeeper methods of the schema: Host.gatekeeper for a gadget's
// sandbox, the bindings on Gadget, and the actions and audit log on
// Workspace. Each one checks who may call it and converts between Cap'n
// Proto and the desk (gatekeepers/desk), which does the work.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/gatekeepers/desk"
	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
)

// maxDecideIDs bounds one decide's ids. (The ledger bounds the answers of
// Workspace.actions and Workspace.audit: 100 by default, at most 1000.)
const maxDecideIDs = 1000

func (h *host) Gatekeeper(ctx context.Context, call schema.Host_gatekeeper) error {
	name, err := call.Args().Name()
	if err != nil {
		return err
	}
	g := desk.Gadget{ID: h.lg.id, OwnerID: h.lg.owner}
	// Every call a gadget makes acts with its owner's authority; one made
	// while serving a shared user's session is recorded as that user's
	// (shareCheck.admitting).
	c, err := h.desk.Gatekeeper(ctx, g, h.lg.owner, name)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		c.Release()
		return err
	}
	return res.SetGatekeeper(schema.Gatekeeper(c))
}

// needCreator refuses a call that changes what the gadget may reach to
// anyone but its creator, through a capability of the owner role. A
// gadget's gatekeepers act with its creator's authority: their calls are
// audited as the creator's and their actions wait for the creator's
// approval, so a user the gadget is shared with, even as owner, must not
// bind them or let their actions pass unapproved. (An outside tester, as
// an editor, turned on auto-approval of the creator's binding, and the
// gadget's action reached the service unapproved, recorded as the
// creator's.)
func (g *gadgetCap) needCreator(ctx context.Context, what string) error {
	a, err := g.access(ctx)
	if err != nil {
		return err
	}
	if a.Gadget.OwnerID != g.user.ID || a.Role < store.RoleOwner {
		return fmt.Errorf("%s of gadget %q is for its creator, through a capability of the owner role: its gatekeepers act with the creator's authority; this capability has the %s role", what, g.id, a.Role)
	}
	return nil
}

func (g *gadgetCap) deskGadget(ctx context.Context) (desk.Gadget, error) {
	rec, err := g.record(ctx)
	if err != nil {
		return desk.Gadget{}, err
	}
	return desk.Gadget{ID: rec.ID, OwnerID: rec.OwnerID}, nil
}

func (g *gadgetCap) Bind(ctx context.Context, call schema.Gadget_bind) error {
	if err := g.needCreator(ctx, "binding a gatekeeper"); err != nil {
		return err
	}
	dg, err := g.deskGadget(ctx)
	if err != nil {
		return err
	}
	args := call.Args()
	name, _ := args.Name()
	service, _ := args.Service()
	resource, _ := args.Resource()
	b, err := g.s.desk.Bind(ctx, dg, g.user.ID, name, service, resource)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	info, err := res.NewBinding()
	if err != nil {
		return err
	}
	return fillBinding(info, b)
}

func (g *gadgetCap) Unbind(ctx context.Context, call schema.Gadget_unbind) error {
	if err := g.needCreator(ctx, "unbinding a gatekeeper"); err != nil {
		return err
	}
	dg, err := g.deskGadget(ctx)
	if err != nil {
		return err
	}
	name, err := call.Args().Name()
	if err != nil {
		return err
	}
	return g.s.desk.Unbind(ctx, dg.ID, name)
}

func (g *gadgetCap) Bindings(ctx context.Context, call schema.Gadget_bindings) error {
	dg, err := g.deskGadget(ctx)
	if err != nil {
		return err
	}
	bs, err := g.s.desk.Bindings(ctx, dg.ID)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewBindings(int32(len(bs)))
	if err != nil {
		return err
	}
	for i, b := range bs {
		if err := fillBinding(list.At(i), b); err != nil {
			return err
		}
	}
	return nil
}

func (g *gadgetCap) SetAutoApprove(ctx context.Context, call schema.Gadget_setAutoApprove) error {
	if err := g.needCreator(ctx, "setting auto-approval"); err != nil {
		return err
	}
	dg, err := g.deskGadget(ctx)
	if err != nil {
		return err
	}
	args := call.Args()
	binding, _ := args.Binding()
	method, _ := args.Method()
	return g.s.desk.SetAutoApprove(ctx, dg.ID, binding, method, args.On())
}

func fillBinding(dst schema.BindingInfo, b gatekeepers.Binding) error {
	dst.SetCreatedAt(b.CreatedAt.UnixMilli())
	for _, set := range []func() error{
		func() error { return dst.SetName(b.Name) },
		func() error { return dst.SetService(b.Service) },
		func() error { return dst.SetKind(b.Kind) },
		func() error { return dst.SetResource(b.Resource) },
		func() error { return dst.SetCreatedBy(b.CreatedBy) },
	} {
		if err := set(); err != nil {
			return err
		}
	}
	list, err := dst.NewAutoApprove(int32(len(b.AutoApprove)))
	if err != nil {
		return err
	}
	for i, m := range b.AutoApprove {
		if err := list.Set(i, m); err != nil {
			return err
		}
	}
	return nil
}

func (w *workspace) Services(ctx context.Context, call schema.Workspace_services) error {
	svcs := w.s.desk.Services()
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewServices(int32(len(svcs)))
	if err != nil {
		return err
	}
	for i, s := range svcs {
		dst := list.At(i)
		if err := dst.SetName(s.Name); err != nil {
			return err
		}
		if err := dst.SetKind(s.Kind); err != nil {
			return err
		}
		if err := dst.SetDescription(s.Description); err != nil {
			return err
		}
		actions, err := dst.NewActions(int32(len(s.Actions)))
		if err != nil {
			return err
		}
		for j, a := range s.Actions {
			if err := actions.Set(j, a); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *workspace) GatekeeperSchema(ctx context.Context, call schema.Workspace_gatekeeperSchema) error {
	kind, err := call.Args().Kind()
	if err != nil {
		return err
	}
	sch, err := w.s.desk.Schema(kind)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetInterfaceId(sch.InterfaceID)
	if err := res.SetNodes(sch.Nodes); err != nil {
		return err
	}
	return res.SetSource(sch.Source)
}

var actionStates = map[gatekeepers.ActionState]schema.ActionState{
	gatekeepers.Pending:  schema.ActionState_pending,
	gatekeepers.Approved: schema.ActionState_approved,
	gatekeepers.Applying: schema.ActionState_applying,
	gatekeepers.Applied:  schema.ActionState_applied,
	gatekeepers.Failed:   schema.ActionState_failed,
	gatekeepers.Rejected: schema.ActionState_rejected,
	gatekeepers.InDoubt:  schema.ActionState_inDoubt,
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// callerName is the login name of the user whose id an action or audit
// entry records, for the owner to read; "" for what names no user (an
// outcome entry's "auto", who approved it).
func callerName(ctx context.Context, names *userNames, id string) (string, error) {
	name, err := names.of(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return name, err
}

// fillAction describes a, whose user is userName.
func fillAction(dst schema.ActionInfo, a gatekeepers.Action, userName, details string) error {
	dst.SetSeq(a.Seq)
	dst.SetState(actionStates[a.State])
	dst.SetCreatedAt(millis(a.CreatedAt))
	dst.SetDecidedAt(millis(a.DecidedAt))
	dst.SetDoneAt(millis(a.DoneAt))
	for _, set := range []func() error{
		func() error { return dst.SetId(a.ID) },
		func() error { return dst.SetGadget(a.GadgetID) },
		func() error { return dst.SetBinding(a.Binding) },
		func() error { return dst.SetKind(a.Kind) },
		func() error { return dst.SetMethod(a.Method) },
		func() error { return dst.SetUser(a.UserID) },
		func() error { return dst.SetUserName(userName) },
		func() error { return dst.SetDescription(a.Describe) },
		func() error { return dst.SetDecidedBy(a.DecidedBy) },
		func() error { return dst.SetOutcome(a.Outcome.Describe) },
		func() error { return dst.SetDetails(details) },
	} {
		if err := set(); err != nil {
			return err
		}
	}
	return nil
}

func (w *workspace) Actions(ctx context.Context, call schema.Workspace_actions) error {
	f, err := call.Args().Filter()
	if err != nil {
		return err
	}
	filter := desk.ActionFilter{AfterSeq: f.AfterSeq(), Limit: int(f.Limit())}
	filter.GadgetID, _ = f.Gadget()
	states, _ := f.States()
	for i := 0; i < states.Len(); i++ {
		for gs, ss := range actionStates {
			if ss == states.At(i) {
				filter.States = append(filter.States, gs)
			}
		}
	}
	actions, err := w.s.desk.Actions(ctx, w.user.ID, filter)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewActions(int32(len(actions)))
	if err != nil {
		return err
	}
	names := w.names()
	for i, a := range actions {
		user, err := callerName(ctx, names, a.UserID)
		if err != nil {
			return err
		}
		if err := fillAction(list.At(i), a, user, w.s.desk.Details(a)); err != nil {
			return err
		}
	}
	return nil
}

func (w *workspace) Decide(ctx context.Context, call schema.Workspace_decide) error {
	idList, err := call.Args().Ids()
	if err != nil {
		return err
	}
	if idList.Len() > maxDecideIDs {
		return fmt.Errorf("decide takes at most %d ids at once, got %d", maxDecideIDs, idList.Len())
	}
	ids := make([]string, idList.Len())
	for i := range ids {
		if ids[i], err = idList.At(i); err != nil {
			return err
		}
	}
	decisions, err := w.s.desk.Decide(ctx, w.user.ID, ids, call.Args().Approve(), w.user.ID)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewDecisions(int32(len(decisions)))
	if err != nil {
		return err
	}
	names := w.names()
	for i, d := range decisions {
		dst := list.At(i)
		dst.SetOk(d.Err == nil)
		if err := dst.SetId(d.ID); err != nil {
			return err
		}
		if d.Err != nil {
			if err := dst.SetReason(d.Err.Error()); err != nil {
				return err
			}
			continue
		}
		info, err := dst.NewAction()
		if err != nil {
			return err
		}
		user, err := callerName(ctx, names, d.Action.UserID)
		if err != nil {
			return err
		}
		if err := fillAction(info, d.Action, user, w.s.desk.Details(d.Action)); err != nil {
			return err
		}
	}
	return nil
}

func (w *workspace) Audit(ctx context.Context, call schema.Workspace_audit) error {
	f, err := call.Args().Filter()
	if err != nil {
		return err
	}
	filter := desk.AuditFilter{BeforeSeq: f.BeforeSeq(), Limit: int(f.Limit())}
	filter.GadgetID, _ = f.Gadget()
	entries, err := w.s.desk.Audit(ctx, w.user.ID, filter)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewEntries(int32(len(entries)))
	if err != nil {
		return err
	}
	names := w.names()
	for i, e := range entries {
		user, err := callerName(ctx, names, e.UserID)
		if err != nil {
			return err
		}
		dst := list.At(i)
		dst.SetSeq(e.Seq)
		dst.SetTime(millis(e.Time))
		dst.SetAction(e.Effect == gatekeepers.Act)
		dst.SetFailed(e.Failed)
		for _, set := range []func() error{
			func() error { return dst.SetGadget(e.GadgetID) },
			func() error { return dst.SetUser(e.UserID) },
			func() error { return dst.SetUserName(user) },
			func() error { return dst.SetBinding(e.Binding) },
			func() error { return dst.SetKind(e.Kind) },
			func() error { return dst.SetMethod(e.Method) },
			func() error { return dst.SetDescription(e.Describe) },
			func() error { return dst.SetOutcome(e.Outcome) },
			func() error { return dst.SetActionId(e.ActionID) },
		} {
			if err := set(); err != nil {
				return err
			}
		}
	}
	return nil
}

// WatchActions subscribes listener to the workspace's actions: each change
// is a call, made in order, one at a time (by the desk's watcher, on a
// goroutine of its own); a listener that falls behind loses changes and
// hears missed() before the next one. The subscription ends when the
// client releases it, or when a call on the listener fails.
func (w *workspace) WatchActions(ctx context.Context, call schema.Workspace_watchActions) error {
	leave, err := w.s.joinWatchers(w.user.ID)
	if err != nil {
		return err
	}
	feedCtx, stop := context.WithCancel(context.Background())
	f := &actionFeed{s: w.s, listener: call.Args().Listener().AddRef(), ctx: feedCtx, stop: stop, leave: leave}
	f.cancel = w.s.desk.Watch(w.user.ID, f.changed, f.missed)
	res, err := call.AllocResults()
	if err != nil {
		f.Shutdown()
		return err
	}
	return res.SetSubscription(schema.Subscription(capserver.New(schema.Subscription_Methods(nil, f), f, f)))
}

// actionFeed is one WatchActions subscription. Its calls on the listener
// run on the desk watcher's goroutine; Shutdown (the subscription's last
// reference is gone) cancels the watch and cuts short a call the listener
// does not answer.
type actionFeed struct {
	s        *Server
	listener schema.ActionListener
	ctx      context.Context
	stop     context.CancelFunc
	cancel   func()
	leave    func() // gives the user's place back
	once     sync.Once
}

func (f *actionFeed) changed(a gatekeepers.Action) {
	fut, release := f.listener.Changed(f.ctx, func(p schema.ActionListener_changed_Params) error {
		user, err := callerName(f.ctx, &userNames{s: f.s}, a.UserID)
		if err != nil {
			return err
		}
		info, err := p.NewAction()
		if err != nil {
			return err
		}
		return fillAction(info, a, user, "") // watch events carry no payload: list the action for its details
	})
	defer release()
	if _, err := fut.Struct(); err != nil {
		f.Shutdown()
	}
}

func (f *actionFeed) missed() {
	fut, release := f.listener.Missed(f.ctx, nil)
	defer release()
	if _, err := fut.Struct(); err != nil {
		f.Shutdown()
	}
}

// Shutdown ends the subscription; it may run more than once.
func (f *actionFeed) Shutdown() {
	f.once.Do(func() {
		f.stop()
		if f.cancel != nil {
			f.cancel()
		}
		f.listener.Release()
		f.leave()
	})
}

// MaxActionWatchersPerUser bounds a user's watchActions subscriptions open
// at once: each holds a goroutine and a buffer of the desk's. A shell
// holds one per open gadget.
const MaxActionWatchersPerUser = 32

// joinWatchers counts one more subscription of user's, or says why not;
// leave gives it back, once.
func (s *Server) joinWatchers(user string) (leave func(), err error) {
	s.watchersMu.Lock()
	defer s.watchersMu.Unlock()
	if s.watchers[user] >= MaxActionWatchersPerUser {
		return nil, fmt.Errorf("watchActions: %d subscriptions are open already, the most one user may hold; release one first", s.watchers[user])
	}
	s.watchers[user]++
	return func() {
		s.watchersMu.Lock()
		defer s.watchersMu.Unlock()
		if s.watchers[user]--; s.watchers[user] == 0 {
			delete(s.watchers, user)
		}
	}, nil
}
