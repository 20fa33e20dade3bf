package server

import (
	"context"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
)

// sessionContext is the SessionContext lent to a guest with one session
// (Guest.open's context). It answers from the gadget capability the session
// was opened through, checked on every call: its credential and, opened
// through a share, the session's role by the guards (newSessionContext),
// the gadget and the user's access by record.
type sessionContext struct {
	g    *gadgetCap
	role store.Role // the session's, as Guest.open was told
}

// newSessionContext returns the context of a session opened through g with
// role, guarded by g's credential and share like the session itself.
func newSessionContext(g *gadgetCap, role store.Role, share *shareCheck) schema.SessionContext {
	sc := &sessionContext{g: g, role: role}
	return schema.SessionContext(capserver.New(share.guard(g.cred.guard(schema.SessionContext_Methods(nil, sc))), sc, nil))
}

func (sc *sessionContext) Caller(ctx context.Context, call schema.SessionContext_caller) error {
	a, err := sc.g.access(ctx)
	if err != nil {
		return err
	}
	// The guards hold the user to at least the session's role; the session
	// is told that one, and the permissions it holds now.
	a.Role = sc.role
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	caller, err := res.NewCaller()
	if err != nil {
		return err
	}
	return sc.g.fillCaller(ctx, caller, a)
}

// Present answers from the registry of open sessions (presence.go), each
// user described as their own sessions' callers are.
func (sc *sessionContext) Present(ctx context.Context, call schema.SessionContext_present) error {
	a, err := sc.g.access(ctx)
	if err != nil {
		return err
	}
	people, err := sc.g.s.presence.of(ctx, sc.g.id)
	if err != nil {
		return err
	}
	bp, err := sc.g.s.store.BlueprintMeta(ctx, a.Gadget.BlueprintOwner, a.Gadget.BlueprintName, a.Gadget.BlueprintVersion)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewPresent(int32(len(people)))
	if err != nil {
		return err
	}
	for i, p := range people {
		if err := sc.g.s.describeCaller(list.At(i), sc.g.id, bp.Access, p.user, p.role); err != nil {
			return err
		}
	}
	return nil
}
