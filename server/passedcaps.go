package server

// Design: a client may pass capabilities into a gadget in the params of a
// call on its session (the counter's watch(listener)), and the guest may
// keep them and call them long after that call. The session's guard
// (guardedSession: the token's credential and the share's check) stops the
// client's calls into the gadget once it is revoked, but not the gadget's
// calls out to what the client gave it: a revoked user would go on hearing
// a gadget they may no longer read. So guardedSession wraps each capability
// in such params (revocable.NewWith) in a check of the same guard, run on
// every call the gadget makes to it; the first that fails revokes the
// wrapper, which releases the client's capability, and the guest sees an
// ordinary disconnected call, as when the client goes away. A frame's
// session also ends its websocket then (frameticket.go).
//
// The wrapping is done where the params pass through guardedSession, in
// their own message before the guest's sandbox reads them: it replaces
// entries of the message's cap table, which owns them, and leaves the
// params' data as it is. A call whose params carry no capability costs one
// length check. Objects the session's own guest exported are not wrapped:
// the guest must still know its own object when a client hands it back (as
// guardedSession.Brand arranges for sessions), and its calls to one never
// leave the gadget. Another gadget's objects are wrapped like the rest: the
// revoked user may still read that gadget.

import (
	"context"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/revocable"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// access fails once the session's token or share no longer admits its
// user.
func (h *guardedSession) access(ctx context.Context) error {
	if err := h.cred.check(ctx); err != nil {
		return err
	}
	return h.share.check(ctx)
}

// lost ends the websocket of a frame's session whose guard failed with
// err, if err says the session is gone for good (frameticket.go).
func (h *guardedSession) lost(err error) {
	if h.save != nil && capnp.IsDisconnected(err) {
		h.save.frame.sessionLost(err)
	}
}

// guardPassed guards the capabilities from index from on of the cap table
// of msg, the params of a call about to go to the session.
func (h *guardedSession) guardPassed(msg *capnp.Message, from int) {
	if msg == nil || msg.CapTable().Len() <= from || (h.cred == nil && h.share == nil) {
		return
	}
	ct := msg.CapTable()
	for i := from; i < ct.Len(); i++ {
		c := ct.At(i)
		if !c.IsValid() || wasmhost.SameGuest(c, h.session) {
			continue
		}
		var r *revocable.Revoker
		guarded, r := revocable.NewWith(c, revocable.Options{
			Around: func(ctx context.Context, _ capnp.Method, forward func(context.Context) error) error {
				if err := h.access(ctx); err != nil {
					h.lost(err)
					r.Revoke(err)
					return err
				}
				return forward(ctx)
			},
		})
		ct.Set(capnp.CapabilityID(i), guarded) // guarded took over c's reference
	}
}

// guardingPassed returns s's PlaceArgs, made to guard the capabilities it
// places.
func (h *guardedSession) guardingPassed(place func(capnp.Struct) error) func(capnp.Struct) error {
	if place == nil {
		return nil
	}
	return func(p capnp.Struct) error {
		msg := p.Message()
		from := 0
		if msg != nil {
			from = msg.CapTable().Len()
		}
		err := place(p)
		h.guardPassed(msg, from)
		return err
	}
}
