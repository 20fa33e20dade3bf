package server

import (
	"context"

	"capnproto.org/go/capnp/v3"

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

func (sc *sessionContext) Present(ctx context.Context, call schema.SessionContext_present) error {
	return capnp.Unimplemented("present is not implemented yet")
}
