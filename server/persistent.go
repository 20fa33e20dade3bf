package server

// Persistent capabilities: Persistent.save on a Gadget capability, or on a
// session Gadget.open returned, keeps a record of the saver, the gadget,
// what to restore and the most it restores (internal/store/saved.go), and
// answers with a bearer token whose secret only its holder has: the store
// keeps its KeyedHash, under the links' key. Gateway.restore turns the
// token back into the capability for the saver, at no more than the saved
// role and no more than the saver holds now.
//
// A restored capability carries the saved token as its credential
// (tokens.go), in place of a login token's: everything reached through it
// (its sessions, their contexts, frame tickets) checks the token as a
// logged-in user's capabilities check their login token, re-reading the
// store whenever a saved token was dropped or a grant changed since the
// last look. So dropping the token, removing the gadget (which drops its
// tokens) and revoking the grant the saver held when saving each cut every
// restored capability off from its next call; and the grant binding makes
// that last one stay, even if the saver is given access again.
//
// A session's save is answered by the host (guardedSession routes every
// call of Persistent to a sessionSaver), so a guest never sees it. Three
// holders may not save: a restored capability (its holder could mint
// tokens that outlive the one dropped), a gadget frame's session (its
// holder is the blueprint's own UI script), and any gadget's guest, on a
// capability a client passed it (its author could restore it later as that
// client's user; refuseGuest, which refuses a frame ticket, a share and a
// link to a guest too). The host tells a guest's call by its context
// (wasmhost.FromGuest), so only a call from a client's connection saves.
//
// Restoring is not rate limited, as redeeming a link is not (links.go):
// the secret is 128 random bits. A connection that restores is counted as
// the saver's from then on (rpcguard's Peer.Authenticated, as a login
// does), so a stranger with tokens holds no more than the saver could.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/std/capnp/persistent"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

const (
	// savedSecretPrefix marks saved tokens, as gdl_ marks links and gdt_
	// login tokens.
	savedSecretPrefix = "gds_"
	// DefaultMaxSavedPerUser bounds the tokens one user may have saved
	// (WithMaxSavedPerUser).
	DefaultMaxSavedPerUser = 256
)

// errSavedDropped is what a restored capability answers once its token
// restores nothing: dropped, its gadget removed, or its saver's access
// gone. Disconnected: the capability is gone for good.
var errSavedDropped = capnp.Disconnected("the saved token this capability was restored from was dropped, or its saver lost access")

// refuseGuest fails a call a gadget's guest makes (wasmhost.FromGuest) to
// turn a Gadget capability, or a session, a client handed it into a
// credential that outlives the capability: a saved token, a frame ticket,
// a share or a link. The gadget's author could use it later, from
// anywhere, as that client's user (an outside tester's session of another
// user's gadget, by a frame ticket the guest asked for). What the
// capability itself can do stays the guest's while it holds it: that is
// what handing it over means. nil for a client's call.
func refuseGuest(ctx context.Context, method string) error {
	if !wasmhost.FromGuest(ctx) {
		return nil
	}
	return fmt.Errorf("%s: a gadget cannot make a lasting credential (a saved token, a frame ticket, a share, a link) from a capability it holds; only a client can", method)
}

// WithMaxSavedPerUser bounds the tokens one user may have saved
// (Persistent.save); past it save fails with an error naming the limit
// until one is dropped. Zero keeps DefaultMaxSavedPerUser.
func WithMaxSavedPerUser(n int) Option {
	return func(c *config) { c.maxSavedPerUser = positiveOr(n, c.maxSavedPerUser) }
}

func (g *gadgetCap) Save(ctx context.Context, call persistent.Persistent_save) error {
	a, err := g.access(ctx)
	if err != nil {
		return err
	}
	return g.save(ctx, call, store.SavedGadget, a.Role)
}

// sessionSaver answers Persistent.save on a session g opened at role.
type sessionSaver struct {
	g    *gadgetCap
	role store.Role
	// frame: the session of a gadget's frame (frameticket.go), nil for
	// any other. Its token would let the blueprint's author open sessions
	// as the user, later, from anywhere.
	frame *frameLink
}

func (sv *sessionSaver) Save(ctx context.Context, call persistent.Persistent_save) error {
	if sv.frame != nil {
		return errString("save: a gadget frame's session cannot be saved")
	}
	return sv.g.save(ctx, call, store.SavedSession, sv.role)
}

func (sv *sessionSaver) client() capnp.Client {
	return capserver.New(persistent.Persistent_Methods(nil, sv), sv, nil)
}

// save keeps a token restoring kind of g's gadget for g's user at role,
// and answers with it.
func (g *gadgetCap) save(ctx context.Context, call persistent.Persistent_save, kind store.SavedKind, role store.Role) error {
	if err := refuseGuest(ctx, "save"); err != nil {
		return err
	}
	switch {
	case call.Args().HasSealFor():
		return errString("save: sealFor is not supported; leave it null")
	case g.cred != nil && g.cred.saved != "":
		return errString("save: this capability was restored from a saved token; keep that token instead")
	}
	text, secret := newSecret(savedSecretPrefix)
	rec := store.Saved{UserID: g.user.ID, GadgetID: g.id, Kind: kind, Role: role, CreatedAt: time.Now().UTC().Truncate(time.Millisecond)}
	_, err := g.s.store.AddSaved(ctx, store.KeyedHash(g.s.linkKey, secret), rec, g.s.cfg.maxSavedPerUser)
	switch {
	case errors.Is(err, store.ErrNotFound): // access lost meanwhile
		return g.lost()
	case err != nil:
		return fmt.Errorf("saving a capability of gadget %q: %w", g.id, err)
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	ref, err := capnp.NewText(res.Segment(), text)
	if err != nil {
		return err
	}
	return res.SetSturdyRef(ref.ToPtr())
}

// Restore answers every token that restores nothing with errInvalidToken,
// as Login does, whatever the reason.
func (g *gateway) Restore(ctx context.Context, call schema.Gateway_restore) error {
	text, err := call.Args().Token()
	if err != nil {
		return errInvalidToken
	}
	secret, ok := parseSecret(savedSecretPrefix, text)
	if !ok {
		return errInvalidToken
	}
	hash := store.KeyedHash(g.s.linkKey, secret)
	sv, a, err := g.s.store.Restore(ctx, hash)
	var u store.User
	if err == nil {
		u, err = g.s.store.User(ctx, sv.UserID)
	}
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			g.s.cfg.logger.Error("restore: store lookup failed", "err", err)
		}
		return errInvalidToken
	}
	// The connection is the saver's from here: their budgets and bounds.
	if err := g.peer.Authenticated(u.ID); err != nil {
		return err
	}
	gc := &gadgetCap{
		s: g.s, user: u, id: sv.GadgetID, role: schema.Role(a.Role),
		shared: a.Gadget.OwnerID != u.ID,
		cred:   &credential{s: g.s, id: sv.ID, saved: hash},
	}
	var c capnp.Client
	switch sv.Kind {
	case store.SavedGadget:
		c = capnp.Client(gc.client())
	case store.SavedSession:
		if c, err = gc.session(ctx, call.Go, nil); err != nil {
			return err
		}
	default:
		return fmt.Errorf("saved token %s restores an unknown kind %d", sv.ID, sv.Kind)
	}
	res, err := call.AllocResults()
	if err != nil {
		c.Release()
		return err
	}
	return res.SetCap(c)
}

// checkSaved is check for a restored capability's credential: the token
// must still restore. It reads the store only after a drop or a change to
// grants.
func (c *credential) checkSaved(ctx context.Context) error {
	changes := c.s.store.SavedDrops() + c.s.store.ShareChanges()
	if c.validAt.Load() == changes+1 {
		return nil
	}
	_, _, err := c.s.store.Restore(ctx, c.saved)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errSavedDropped
	case err != nil:
		return err
	}
	c.validAt.Store(changes + 1)
	return nil
}

func (ws *workspace) Saved(ctx context.Context, call schema.Workspace_saved) error {
	saved, err := ws.s.store.SavedOf(ctx, ws.user.ID)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewSaved(int32(len(saved)))
	if err != nil {
		return err
	}
	for i, sv := range saved {
		dst := list.At(i)
		dst.SetKind(schema.SavedKind(sv.Kind))
		dst.SetRole(schema.Role(sv.Role))
		dst.SetCreatedAt(sv.CreatedAt.UnixMilli())
		if err := dst.SetId(sv.ID); err != nil {
			return err
		}
		if err := dst.SetGadget(sv.GadgetID); err != nil {
			return err
		}
	}
	return nil
}

func (ws *workspace) DropSaved(ctx context.Context, call schema.Workspace_dropSaved) error {
	id, err := call.Args().Id()
	if err != nil {
		return err
	}
	err = ws.s.store.DropSaved(ctx, ws.user.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("unknown saved token id %.64q", id)
	}
	if err == nil {
		ws.s.presence.endRevoked(ctx, "", id)
	}
	return err
}
