package client

import (
	"context"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/std/capnp/persistent"

	"github.com/gadgetd/gadgetd/schema"
)

// Save saves c, a Gadget capability or a session that Gadget.open returned,
// and returns the token (gds_...) that Conn.Restore turns back into it. The
// token is a bearer secret: whoever holds it acts as you, at no more than
// c's role. Workspace.saved lists your tokens and Workspace.dropSaved drops
// one.
func Save(ctx context.Context, c capnp.Client) (string, error) {
	f, release := persistent.Persistent(c).Save(ctx, nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return "", err
	}
	ref, err := res.SturdyRef()
	if err != nil {
		return "", err
	}
	return ref.Text(), nil
}

// Restore exchanges a token from Save for its capability: a
// schema.Gadget, or a fresh session to cast to the blueprint's session
// interface. No login is needed. It does not wait: the capability is a
// promise that calls can be pipelined onto, valid until release is called.
// A token that restores nothing fails with "invalid token".
func (c *Conn) Restore(ctx context.Context, token string) (capnp.Client, capnp.ReleaseFunc) {
	f, release := c.gateway.Restore(ctx, func(p schema.Gateway_restore_Params) error {
		return p.SetToken(token)
	})
	return f.Cap(), release
}
