package server

// Design: a share is a grant in the store (internal/store/shares.go), never
// a verdict kept here. Every Workspace lookup and every Gadget call asks the
// store for the caller's effective role afresh (gadgetCap.access), so a
// revoked or lowered share counts from the next call. Sessions are the hot
// path, so a session opened through a share carries a shareCheck, which
// asks the store again only when some grant changed since its last look
// (the store counts changes, as it counts token revocations); the owner's
// sessions carry none, since nothing but removal, which kills the sandbox,
// takes an owner's access away.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"capnproto.org/go/capnp/v3"
	capnpserver "capnproto.org/go/capnp/v3/server"

	"github.com/gadgetd/gadgetd/gatekeepers/desk"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// errShareRevoked is what a capability obtained through a share answers
// once the share is gone. Disconnected: the capability is gone for good.
var errShareRevoked = capnp.Disconnected("the share this capability was obtained through was revoked, lowered, or its gadget removed")

// shareCheck holds a session opened through a share to the chain of grants
// it was opened through, as it was then: it fails once any grant along the
// chain is revoked, lowered or moved, even if the role came back since.
type shareCheck struct {
	s     *Server
	user  string // the session's user
	via   string // the grant the session's role came through
	stamp string // its store.ChainStamp at open

	// validAt is 1 + the store's ShareChanges count at which the chain
	// was last seen unchanged (0: never), so a check reads the store only
	// after a change.
	validAt atomic.Uint64
	// revoked is set by the first check that finds the chain changed: a
	// session that failed as disconnected stays so.
	revoked atomic.Bool
}

// check fails once the session's chain of grants has changed. A nil check
// (an owner's session) passes.
func (c *shareCheck) check(ctx context.Context) error {
	if c == nil {
		return nil
	}
	if c.revoked.Load() {
		return errShareRevoked
	}
	changes := c.s.store.ShareChanges()
	if c.validAt.Load() == changes+1 {
		return nil
	}
	stamp, err := c.s.store.ChainStamp(ctx, c.via)
	switch {
	case errors.Is(err, store.ErrNotFound), err == nil && stamp != c.stamp:
		c.revoked.Store(true)
		return errShareRevoked
	case err != nil:
		return err
	}
	c.validAt.Store(changes + 1)
	return nil
}

// admitting returns ctx for a call on a session c guards, so that the
// gadget's worker checks c again when it takes the call off its queue (a
// call queued before a revocation never reaches the guest after it), and
// so that the gatekeepers the guest calls while serving it record c's user
// as the one acting, with the owner's authority (desk.WithActor).
func (c *shareCheck) admitting(ctx context.Context) context.Context {
	if c == nil {
		return ctx
	}
	return wasmhost.WithAdmission(desk.WithActor(ctx, c.user), c.check)
}

// guard makes every method check c before it runs.
func (c *shareCheck) guard(methods []capnpserver.Method) []capnpserver.Method {
	if c == nil {
		return methods
	}
	return guardMethods(methods, c.check)
}

// access returns the gadget's record and the role this capability has on
// it now: the user's effective role, at most the capability's own.
func (g *gadgetCap) access(ctx context.Context) (store.GadgetAccess, error) {
	if g.revoked.Load() {
		return store.GadgetAccess{}, errShareRevoked
	}
	a, err := g.s.store.Access(ctx, g.id, g.user.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		g.revoked.Store(g.shared)
		return store.GadgetAccess{}, g.lost()
	case err != nil:
		return store.GadgetAccess{}, err
	}
	a.Role = min(a.Role, store.Role(g.role))
	return a, nil
}

// lost is the error of a call once g's user may no longer reach the gadget:
// through a share, the share was revoked; as the owner, it is gone, and
// says so as gadgetFor does.
func (g *gadgetCap) lost() error {
	if g.shared {
		return errShareRevoked
	}
	return errUnknownGadget(g.id)
}

// shareCheckFor returns the check for a session opened with a, nil for the
// owner's.
func (g *gadgetCap) shareCheckFor(a store.GadgetAccess) *shareCheck {
	if a.Gadget.OwnerID == g.user.ID {
		return nil
	}
	return &shareCheck{s: g.s, user: g.user.ID, via: a.Via.ID, stamp: a.Stamp}
}

// errNoUser names a user that does not exist.
func errNoUser(name string) error { return fmt.Errorf("no user named %q", name) }

func (g *gadgetCap) Share(ctx context.Context, call schema.Gadget_share) error {
	if err := refuseGuest(ctx, "share"); err != nil {
		return err
	}
	name, err := call.Args().User()
	if err != nil {
		return err
	}
	role := call.Args().Role()
	if role > schema.Role_owner {
		return fmt.Errorf("unknown role %d", role)
	}
	a, err := g.access(ctx)
	if err != nil {
		return err
	}
	// The store checks the user's role again as it writes (it may have
	// changed since); this capability may carry less.
	switch {
	case a.Role < store.RoleEditor:
		return fmt.Errorf("sharing gadget %q with %q: %w: a viewer may not share", g.id, name, store.ErrDenied)
	case store.Role(role) > a.Role:
		return fmt.Errorf("sharing gadget %q with %q: %w: the %s role is above the sharer's own %s role", g.id, name, store.ErrDenied, role, a.Role)
	}
	holder, err := g.s.store.UserByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return errNoUser(name)
	}
	if err != nil {
		return err
	}
	grant, err := g.s.store.Share(ctx, g.id, g.user.ID, holder.ID, store.Role(role))
	switch {
	case errors.Is(err, store.ErrNotFound): // access lost meanwhile
		return g.lost()
	case err != nil:
		return fmt.Errorf("sharing gadget %q with %q: %w", g.id, name, err)
	}
	g.s.presence.endRevoked(ctx, g.id, "") // a lowered role ends the sessions opened above it
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	info, err := res.NewShare()
	if err != nil {
		return err
	}
	return fillShareInfo(info, grant, holder.Name, g.user.Name)
}

func (g *gadgetCap) Unshare(ctx context.Context, call schema.Gadget_unshare) error {
	name, err := call.Args().User()
	if err != nil {
		return err
	}
	if _, err := g.access(ctx); err != nil {
		return err
	}
	holder, err := g.s.store.UserByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return errNoUser(name)
	}
	if err != nil {
		return err
	}
	dropped, err := g.s.store.Unshare(ctx, g.id, g.user.ID, holder.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return g.lost()
	case err != nil:
		return err
	case len(dropped) == 0:
		return fmt.Errorf("%q holds no share of gadget %q that you may revoke: only its sharer or an owner may", name, g.id)
	}
	g.s.presence.endRevoked(ctx, g.id, "")
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetRevoked(uint32(len(dropped)))
	return nil
}

func (g *gadgetCap) Shares(ctx context.Context, call schema.Gadget_shares) error {
	a, err := g.access(ctx)
	if err != nil {
		return err
	}
	if a.Role < store.RoleEditor {
		return fmt.Errorf("listing the shares of gadget %q needs the editor or owner role; this capability has the viewer role", g.id)
	}
	grants, err := g.s.store.Grants(ctx, g.id)
	if err != nil {
		return err
	}
	// Links are listed by links(); their redemptions are shares.
	grants = slices.DeleteFunc(grants, func(gr store.Grant) bool { return gr.Link != nil })
	names := userNames{s: g.s}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewShares(int32(len(grants)))
	if err != nil {
		return err
	}
	for i, gr := range grants {
		holder, err := names.of(ctx, gr.HolderID)
		if err != nil {
			return err
		}
		sharer, err := names.of(ctx, gr.SharerID)
		if err != nil {
			return err
		}
		if err := fillShareInfo(list.At(i), gr, holder, sharer); err != nil {
			return err
		}
	}
	return nil
}

func fillShareInfo(dst schema.ShareInfo, g store.Grant, holder, sharer string) error {
	dst.SetRole(schema.Role(g.Role))
	dst.SetCreatedAt(g.CreatedAt.UnixMilli())
	if err := dst.SetUser(holder); err != nil {
		return err
	}
	return dst.SetSharedBy(sharer)
}

// userNames looks user names up by id, each once per answer.
type userNames struct {
	s     *Server
	known map[string]string
}

func (n *userNames) of(ctx context.Context, id string) (string, error) {
	if name, ok := n.known[id]; ok {
		return name, nil
	}
	u, err := n.s.store.User(ctx, id)
	if err != nil {
		return "", err
	}
	if n.known == nil {
		n.known = map[string]string{}
	}
	n.known[id] = u.Name
	return u.Name, nil
}
