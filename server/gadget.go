package server

import (
	"context"
	"fmt"
	"sync/atomic"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
)

// gadgetCap is the Gadget capability one user holds for one gadget. It
// keeps only the id and re-reads the registry and the user's role on every
// call (shares.go), so it fails with "unknown gadget id" from the moment the
// gadget is removed, and, obtained through a share, disconnected from the
// moment the share is revoked.
type gadgetCap struct {
	s    *Server
	user store.User
	id   string
	role schema.Role // the most it grants: the role it was obtained with
	// shared: obtained through a share rather than as the owner, so losing
	// access is a revocation.
	shared bool
	cred   *credential // the token it was obtained with; checks its sessions
	// revoked is set once a shared capability has found its share gone: it
	// stays disconnected, even if the gadget is shared with its user again.
	revoked atomic.Bool
}

// client returns the capability of g, every call checking g's credential
// first.
func (g *gadgetCap) client() schema.Gadget {
	return schema.Gadget(capserver.New(g.cred.guard(schema.Gadget_Methods(nil, g)), g, nil))
}

func (g *gadgetCap) record(ctx context.Context) (store.GadgetRecord, error) {
	a, err := g.access(ctx)
	return a.Gadget, err
}

func (g *gadgetCap) Info(ctx context.Context, call schema.Gadget_info) error {
	a, err := g.access(ctx)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	info, err := res.NewInfo()
	if err != nil {
		return err
	}
	names := userNames{s: g.s}
	if err := fillGadgetInfo(ctx, info, a, &names); err != nil {
		return err
	}
	return g.s.fillDeclarations(ctx, info, a.Gadget)
}

// Open asks the guest for a session and answers with it once the guest has.
// It never answers with a promise: go-capnp would queue a client's
// pipelined calls on it, and dies on the queue when the promise breaks (an
// overloaded or crashing guest). A call pipelined onto the session instead
// waits in the transport until this answer is sent (see rpcguard), then goes
// straight to the session, still in one network round trip. call.Go lets
// the capability's other calls run meanwhile.
func (g *gadgetCap) Open(ctx context.Context, call schema.Gadget_open) error {
	session, err := g.session(ctx, call.Go, nil)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		session.Release()
		return err
	}
	return res.SetSession(session)
}

// session asks the guest for a session for g's user at their role now and
// returns it guarded by g's credential and, opened through a share, by the
// role it was opened with, once the guest has answered. detach runs once
// the gadget is live, before the guest is asked: Open lets the capability's
// other calls run from there. A frame's session (frame non-nil) refuses
// save, and ends its websocket when the gadget finds its guard failed.
func (g *gadgetCap) session(ctx context.Context, detach func(), frame *frameLink) (capnp.Client, error) {
	a, err := g.access(ctx)
	if err != nil {
		return capnp.Client{}, err
	}
	share := g.shareCheckFor(a)
	lg, err := g.s.liveFor(ctx, a.Gadget)
	if err != nil {
		return capnp.Client{}, err
	}
	detach()
	here := g.s.presence.enter(g, a.Role, share)
	guest := lg.sandbox.Guest()
	defer guest.Release()
	ans, release := guest.Open(ctx, func(p schema.Guest_open_Params) error {
		caller, err := p.NewCaller()
		if err != nil {
			return err
		}
		if err := g.fillCaller(ctx, caller, a); err != nil {
			return err
		}
		// The params (and wasmhost's copy, kept to reopen the session)
		// hold the only references: the context goes when the session does.
		return p.SetContext(newSessionContext(g, a.Role, share))
	})
	defer release()
	opened, err := ans.Struct()
	if err != nil {
		here.leave()
		return capnp.Client{}, err
	}
	session := opened.Session()
	if !session.IsValid() {
		here.leave()
		return capnp.Client{}, fmt.Errorf("gadget %q returned no session from Guest.open", g.id)
	}
	guarded := g.cred.guardSession(session.AddRef(), share, &sessionSaver{g: g, role: a.Role, frame: frame})
	here.attach(guarded)
	return capnp.NewClient(guarded), nil
}

// fillCaller describes g's user to the gadget of a, with a's role and the
// blueprint's permissions that role holds.
func (g *gadgetCap) fillCaller(ctx context.Context, caller schema.Caller, a store.GadgetAccess) error {
	bp, err := g.s.store.BlueprintMeta(ctx, a.Gadget.BlueprintOwner, a.Gadget.BlueprintName, a.Gadget.BlueprintVersion)
	if err != nil {
		return err
	}
	return g.s.describeCaller(caller, g.id, bp.Access, g.user, a.Role)
}

// describeCaller describes user, at role, to gadget gadgetID of a
// blueprint with access: as Guest.open's caller and in
// SessionContext.present.
func (s *Server) describeCaller(caller schema.Caller, gadgetID string, access blueprint.Access, user store.User, r store.Role) error {
	role := schema.Role(r)
	caller.SetRole(role)
	if held := access.Of(role); len(held) > 0 {
		list, err := caller.NewPermissions(int32(len(held)))
		if err != nil {
			return err
		}
		for i, name := range held {
			if err := list.Set(i, name); err != nil {
				return err
			}
		}
	}
	if err := caller.SetUserId(s.pseudonym(gadgetID, user.ID)); err != nil {
		return err
	}
	return caller.SetUserName(user.Name)
}

func (g *gadgetCap) blueprint(ctx context.Context) (store.BlueprintRecord, error) {
	rec, err := g.record(ctx)
	if err != nil {
		return store.BlueprintRecord{}, err
	}
	return g.s.store.Blueprint(ctx, rec.BlueprintOwner, rec.BlueprintName, rec.BlueprintVersion)
}

func (g *gadgetCap) Ui(ctx context.Context, call schema.Gadget_ui) error {
	bp, err := g.blueprint(ctx)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetHtml(bp.UI)
}

func (g *gadgetCap) Schema(ctx context.Context, call schema.Gadget_schema) error {
	bp, err := g.blueprint(ctx)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetSessionInterface(bp.SessionInterface)
	return res.SetNodes(bp.SchemaNodes)
}

func (g *gadgetCap) Logs(ctx context.Context, call schema.Gadget_logs) error {
	a, err := g.access(ctx)
	if err != nil {
		return err
	}
	if a.Role < store.RoleEditor {
		return fmt.Errorf("reading the logs of gadget %q needs the editor or owner role", g.id)
	}
	limit := int(call.Args().Limit())
	if limit == 0 || limit > maxLogsAnswerLineCount {
		limit = maxLogsAnswerLineCount
	}
	var lines []logLine
	if ring := g.s.logsOf(g.id); ring != nil {
		lines = ring.newest(limit)
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewLines(int32(len(lines)))
	if err != nil {
		return err
	}
	for i, l := range lines {
		dst := list.At(i)
		dst.SetTime(l.time.UnixMilli())
		dst.SetLevel(l.level)
		if err := dst.SetText(l.message); err != nil {
			return err
		}
	}
	return nil
}

// Remove deletes the gadget. Authority to delete is the owner's, so it is
// checked here, on the capability that carries the role, not on the
// workspace (docs/RATIONALE.md); and of owners, only the creator's: a share
// can give every other power, not the end of everyone else's.
func (g *gadgetCap) Remove(ctx context.Context, call schema.Gadget_remove) error {
	a, err := g.access(ctx)
	if err != nil {
		return err
	}
	switch {
	case a.Role != store.RoleOwner:
		return fmt.Errorf("removing gadget %q needs the owner role; this capability has the %s role", g.id, a.Role)
	case a.Gadget.OwnerID != g.user.ID:
		return fmt.Errorf("removing gadget %q: only its creator may; it is shared with you as owner", g.id)
	}
	call.Go() // a call the gadget is running fails; removal waits for it to end
	return g.s.removeGadget(ctx, g.id)
}
