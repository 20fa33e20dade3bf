package server

// Share links: a link is a grant in the store whose holder is a keyed hash
// of the link's secret (internal/store/links.go), so everything shares.go
// says of a share holds of a link and its redemptions: they are bounded
// along the grant chain on every call, and revoking a link, or a share
// above it, ends every session opened through a redemption at its next
// call (shareCheck).
//
// Redeeming is not rate limited as login is (loginlimits.go): a login
// token may be weak, but a link's secret is 128 random bits, so guessing is
// hopeless at any rate, and a wrong secret costs one HMAC and one read
// transaction, bounded like any call by the connection's limits. A wrong,
// expired, consumed or revoked link all fail with the same error.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/schema"
)

const (
	// linkKeyFile holds the key of the links' hashes, in the data
	// directory, created like the pseudonym key (loadOrCreateKey). Losing
	// it invalidates every link not yet redeemed; redemptions stay.
	linkKeyFile = "links.key"
	// linkSecretPrefix makes a secret recognizable in a paste or a leak
	// scanner; base64url of 16 random bytes follows.
	linkSecretPrefix = "gdl_"

	// DefaultMaxLinksPerGadget and DefaultMaxLinksPerUser bound the live
	// (redeemable) links of one gadget and of one creator
	// (WithLinkLimits).
	DefaultMaxLinksPerGadget = 64
	DefaultMaxLinksPerUser   = 256
)

// errLinkInvalid is Workspace.redeem's one failure for a secret that does
// not redeem, whatever the reason.
var errLinkInvalid = errString(store.ErrLinkInvalid.Error())

// WithLinkLimits bounds the live links of one gadget, and those one user
// created; of a gadget's, a quarter is kept for its owner
// (store.LinkLimits). Past any bound, createLink fails with an error naming
// it until a link is revoked or expires.
func WithLinkLimits(perGadget, perUser int) Option {
	return func(c *config) {
		c.links.PerGadget = positiveOr(perGadget, c.links.PerGadget)
		c.links.PerCreator = positiveOr(perUser, c.links.PerCreator)
	}
}

// newSecret returns a fresh bearer secret (a link's, a saved
// capability's): 128 random bits, as prefix and base64url.
func newSecret(prefix string) (text string, secret []byte) {
	secret = make([]byte, 16)
	rand.Read(secret)
	return prefix + base64.RawURLEncoding.EncodeToString(secret), secret
}

// parseSecret returns the secret of text, a newSecret of prefix; ok false
// if it is not one.
func parseSecret(prefix, text string) (secret []byte, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(text), prefix)
	secret, err := base64.RawURLEncoding.DecodeString(rest)
	return secret, found && err == nil && len(secret) == 16
}

func (g *gadgetCap) CreateLink(ctx context.Context, call schema.Gadget_createLink) error {
	if err := refuseGuest(ctx, "createLink"); err != nil {
		return err
	}
	args := call.Args()
	role := args.Role()
	if role > schema.Role_owner {
		return fmt.Errorf("unknown role %d", role)
	}
	label, err := args.Label()
	if err != nil {
		return err
	}
	if len(label) > 200 {
		return errString("link label is longer than 200 bytes")
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	terms := store.LinkTerms{SingleUse: args.SingleUse(), Label: label}
	switch in, at := args.ExpiresInSeconds(), args.ExpiresAt(); {
	case in != 0 && at != 0:
		return errString("a link expires in some seconds or at a time, not both")
	case in > uint64(100*365*24*time.Hour/time.Second):
		return errString("a link's expiry is more than 100 years away: leave it 0 for never")
	case in != 0:
		terms.ExpiresAt = now.Add(time.Duration(in) * time.Second)
	case at != 0:
		terms.ExpiresAt = time.UnixMilli(at).UTC()
		if !terms.ExpiresAt.After(now) {
			return errString("a link's expiry time has already passed")
		}
	}
	a, err := g.access(ctx)
	if err != nil {
		return err
	}
	// The store checks the user's role again as it writes; this
	// capability may carry less.
	switch {
	case a.Role < store.RoleEditor:
		return fmt.Errorf("creating a link to gadget %q: %w: a viewer may not create links", g.id, store.ErrDenied)
	case store.Role(role) > a.Role:
		return fmt.Errorf("creating a link to gadget %q: %w: the %s role is above your own %s role", g.id, store.ErrDenied, role, a.Role)
	}
	text, secret := newSecret(linkSecretPrefix)
	link, err := g.s.store.CreateLink(ctx, g.id, g.user.ID, store.LinkHolder(g.s.linkKey, secret), store.Role(role), terms, now, g.s.cfg.links)
	switch {
	case errors.Is(err, store.ErrNotFound): // access lost meanwhile
		return g.lost()
	case err != nil:
		return fmt.Errorf("creating a link to gadget %q: %w", g.id, err)
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	if err := res.SetSecret(text); err != nil {
		return err
	}
	info, err := res.NewLink()
	if err != nil {
		return err
	}
	return fillLinkInfo(info, store.Link{Grant: link}, g.user.Name)
}

func (g *gadgetCap) Links(ctx context.Context, call schema.Gadget_links) error {
	a, err := g.access(ctx)
	if err != nil {
		return err
	}
	if a.Role < store.RoleEditor {
		return fmt.Errorf("listing the links of gadget %q needs the editor or owner role; this capability has the viewer role", g.id)
	}
	links, err := g.s.store.Links(ctx, g.id)
	if err != nil {
		return err
	}
	if a.Role < store.RoleOwner {
		links = slices.DeleteFunc(links, func(l store.Link) bool { return l.SharerID != g.user.ID })
	}
	names := userNames{s: g.s}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewLinks(int32(len(links)))
	if err != nil {
		return err
	}
	for i, l := range links {
		creator, err := names.of(ctx, l.SharerID)
		if err != nil {
			return err
		}
		if err := fillLinkInfo(list.At(i), l, creator); err != nil {
			return err
		}
	}
	return nil
}

func (g *gadgetCap) RevokeLink(ctx context.Context, call schema.Gadget_revokeLink) error {
	id, err := call.Args().Id()
	if err != nil {
		return err
	}
	a, err := g.access(ctx)
	if err != nil {
		return err
	}
	if a.Role < store.RoleEditor {
		return fmt.Errorf("revoking a link of gadget %q needs the editor or owner role; this capability has the viewer role", g.id)
	}
	dropped, err := g.s.store.RevokeLink(ctx, g.id, g.user.ID, id)
	switch {
	case errors.Is(err, store.ErrUnknownLink):
		// Not the capability's loss: it still reaches the gadget.
		return fmt.Errorf("gadget %q has no link %.64q: it never had, or the link was revoked", g.id, id)
	case errors.Is(err, store.ErrNotFound):
		return g.lost()
	case err != nil:
		return fmt.Errorf("revoking link %.64q of gadget %q: %w", id, g.id, err)
	}
	g.s.presence.endRevoked(ctx, g.id, "")
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetRevoked(uint32(len(dropped) - 1)) // the link's own grant is no share
	return nil
}

func fillLinkInfo(dst schema.LinkInfo, l store.Link, creator string) error {
	dst.SetRole(schema.Role(l.Role))
	dst.SetCreatedAt(l.CreatedAt.UnixMilli())
	if !l.Link.ExpiresAt.IsZero() {
		dst.SetExpiresAt(l.Link.ExpiresAt.UnixMilli())
	}
	dst.SetSingleUse(l.Link.SingleUse)
	dst.SetConsumed(l.Link.Consumed)
	dst.SetRedemptions(uint32(l.Redemptions))
	for _, set := range []func() error{
		func() error { return dst.SetId(l.ID) },
		func() error { return dst.SetCreatedBy(creator) },
		func() error { return dst.SetLabel(l.Link.Label) },
	} {
		if err := set(); err != nil {
			return err
		}
	}
	return nil
}

func (w *workspace) Redeem(ctx context.Context, call schema.Workspace_redeem) error {
	text, err := call.Args().Secret()
	if err != nil {
		return err
	}
	secret, ok := parseSecret(linkSecretPrefix, text)
	if !ok {
		return errLinkInvalid
	}
	a, redeemed, err := w.s.store.Redeem(ctx, store.LinkHolder(w.s.linkKey, secret), w.user.ID, time.Now())
	switch {
	case errors.Is(err, store.ErrLinkInvalid):
		return errLinkInvalid
	case err != nil:
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
	if err := fillGadgetInfo(ctx, info, a, w.names()); err != nil {
		return err
	}
	if err := w.s.fillDeclarations(ctx, info, a.Gadget); err != nil {
		return err
	}
	res.SetRedeemed(redeemed)
	return res.SetGadget(w.gadgetCap(a))
}
