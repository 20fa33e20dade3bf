package server

// Design: a session is a membrane (internal/membrane) between the gadget
// and the user who opened it, governed by the session's own guard (its
// token's credential and its share's check). Every capability that crosses
// between them, either way, in params or results, pipelined or not, is
// wrapped in that guard: a listener the user passed in (the counter's
// watch(listener)), what that listener returns to the gadget, an object
// the session handed the user (a watch handle), and whatever the user
// passes through that object. Once the guard fails for good (the share,
// the link it came through or the token is revoked), the session's next
// call, or the gadget's next call to anything it holds from the user,
// closes the membrane: every wrapper fails from then on, and what they
// wrapped is released, so the user's listeners hear nothing more and the
// gadget sees ordinary disconnected calls, as when a client goes away. A
// frame's websocket also ends when the gadget's call is refused
// (frameticket.go).
//
// The gadget's own objects crossing in (the session handed back, as
// guardedSession.Brand arranges) arrive as themselves, and so does any
// wrapper of this session's that crosses back: each side still knows its
// own objects. Another gadget's objects are wrapped like the rest: the
// revoked user may still read that gadget. A session with no guard (an
// in-process workspace's, in tests) has no membrane.

import (
	"context"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/membrane"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// newMembrane returns the membrane of h, or nil if h guards nothing.
func (h *guardedSession) newMembrane() *membrane.Membrane {
	if h.cred == nil && h.share == nil {
		return nil
	}
	return membrane.New(membrane.Config{
		Check:   h.access,
		Inward:  h.admitting,
		Inside:  func(c capnp.Client) bool { return wasmhost.SameGuest(c, h.session) },
		Refused: h.lost,
	})
}

// access fails once the session's token or share no longer admits its
// user.
func (h *guardedSession) access(ctx context.Context) error {
	if err := h.cred.check(ctx); err != nil {
		return err
	}
	return h.share.check(ctx)
}

// end ends the session for good with err, the reason its guard failed:
// everything that crossed it is released, and a frame's websocket closes.
func (h *guardedSession) end(err error) {
	if h.membrane != nil {
		h.membrane.Close(err)
	}
	h.lost(err)
}

// lost ends the websocket of a frame's session whose guard failed with
// err, if err says the session is gone for good (frameticket.go).
func (h *guardedSession) lost(err error) {
	if h.save != nil && capnp.IsDisconnected(err) {
		h.save.frame.sessionLost(err)
	}
}
