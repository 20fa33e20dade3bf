package store

// Links are grants too (shares.go). A link's grant is held by the link
// itself, named by LinkHolder (a keyed hash of its secret: the secret is
// never stored), and hangs below its creator's grant as a share would.
// Redeeming it gives the redeemer a grant below the link's, so a redemption
// is bounded along the chain exactly as a share is, and revoking the link,
// or anything above it, ends every redemption in the same transaction.
//
// A link's terms ride on its grant (Grant.Link). One more index:
//
//	"linksbycreator"  creator/grant -> empty (the per-user bound; pruning)
//
// Expiry, consumption and its creator's loss of the editor role end
// redeeming, not what was redeemed (which the creator's role bounds along
// the chain): a dead link stays in the tree while redemptions hang below
// it, and is pruned when its creator next creates a link once nothing does.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

var bucketLinksByCreator = []byte("linksbycreator")

// ErrLinkInvalid is Redeem's one answer for a link that does not exist,
// expired, was consumed or revoked, or no longer reaches its gadget's
// owner: which one is not told, so secrets cannot be probed.
var ErrLinkInvalid = errors.New("invalid or expired link")

// ErrUnknownLink is RevokeLink's answer for a link id that is not a link of
// the gadget: never was, or was revoked.
var ErrUnknownLink = errors.New("unknown link id")

// linkHolderPrefix cannot begin a user id (NewID has no ':'), so a link never
// holds a user's grants nor a user a link's.
const linkHolderPrefix = "link:"

// KeyedHash is how the store keeps a bearer secret (a link's, a saved
// capability's): its HMAC-SHA256 under the server's key, hex, so that
// neither the store nor a copy of it can give the secret back, nor test a
// guess without the key.
func KeyedHash(key, secret []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(secret)
	return hex.EncodeToString(m.Sum(nil))
}

// LinkHolder is the holder id of the link with this secret: its KeyedHash.
func LinkHolder(key, secret []byte) string {
	return linkHolderPrefix + KeyedHash(key, secret)
}

// LinkTerms are what make a grant a link's.
type LinkTerms struct {
	ExpiresAt time.Time `json:",omitzero"` // zero: never
	SingleUse bool      `json:",omitempty"`
	Consumed  bool      `json:",omitempty"` // a single-use link, redeemed
	Label     string    `json:",omitempty"`
}

// Redeemable reports whether the link may still be redeemed at now.
func (t *LinkTerms) Redeemable(now time.Time) bool {
	return !t.Consumed && (t.ExpiresAt.IsZero() || now.Before(t.ExpiresAt))
}

// Link is a link's grant, with how many redemptions hang below it.
type Link struct {
	Grant
	Redemptions int
}

// LinkLimits bounds the redeemable links of one gadget and of one creator.
// Of a gadget's PerGadget, a quarter is kept for its owner: every other
// user may hold a quarter on it, and all of them together the rest, so no
// one who was shared the gadget can use up its owner's links.
type LinkLimits struct{ PerGadget, PerCreator int }

// others returns how many redeemable links on one gadget each user other
// than its owner may hold, and how many all of them together.
func (l LinkLimits) others() (each, together int) {
	return max(1, l.PerGadget/4), l.PerGadget - l.PerGadget/4
}

// indexLink adds (put) or removes a link's grant from linksbycreator, with
// putGrant and dropGrant.
func indexLink(tx *bolt.Tx, g Grant, put bool) error {
	if g.Link == nil {
		return nil
	}
	b, k := tx.Bucket(bucketLinksByCreator), pairKey(g.SharerID, g.ID)
	if put {
		return b.Put(k, nil)
	}
	return b.Delete(k)
}

// linkByHolder returns the grant of the link held by holder.
func linkByHolder(tx *bolt.Tx, holder string) (Grant, error) {
	keys := suffixes(tx.Bucket(bucketGrantsByHolder), pairKey(holder, ""))
	if len(keys) != 1 {
		return Grant{}, ErrLinkInvalid
	}
	_, id, _ := strings.Cut(keys[0], "/")
	g, err := getGrant(tx, id)
	if errors.Is(err, ErrNotFound) || err == nil && g.Link == nil {
		return Grant{}, ErrLinkInvalid
	}
	return g, err
}

// linksOf returns the link grants among ids.
func linksOf(tx *bolt.Tx, ids []string) ([]Grant, error) {
	var out []Grant
	for _, id := range ids {
		g, err := getGrant(tx, id)
		if err != nil {
			return nil, err
		}
		if g.Link != nil {
			out = append(out, g)
		}
	}
	return out, nil
}

func hasChildren(tx *bolt.Tx, id string) bool {
	k, _ := tx.Bucket(bucketGrantsByParent).Cursor().Seek(pairKey(id, ""))
	return k != nil && strings.HasPrefix(string(k), id+"/")
}

func countRedeemable(links []Grant, now time.Time) int {
	n := 0
	for _, l := range links {
		if l.Link.Redeemable(now) {
			n++
		}
	}
	return n
}

func (s *BoltStore) CreateLink(ctx context.Context, gadgetID, creatorID, holder string, role Role, terms LinkTerms, now time.Time, lim LinkLimits) (Grant, error) {
	if !strings.HasPrefix(holder, linkHolderPrefix) {
		return Grant{}, fmt.Errorf("link holder %q is not a LinkHolder", holder)
	}
	terms.Consumed = false
	var out Grant
	err := s.db.Update(func(tx *bolt.Tx) error {
		var gadget GadgetRecord
		if err := getJSON(tx.Bucket(bucketGadgets), []byte(gadgetID), &gadget); err != nil {
			return err
		}
		have, via, ok, err := access(tx, gadget, creatorID, "")
		switch {
		case err != nil:
			return err
		case !ok:
			return ErrNotFound
		case have < RoleEditor:
			return fmt.Errorf("%w: a viewer may not create links", ErrDenied)
		case role > have:
			return fmt.Errorf("%w: the %s role is above the creator's own %s role", ErrDenied, role, have)
		}
		mine, err := linksOf(tx, suffixes(tx.Bucket(bucketLinksByCreator), pairKey(creatorID, "")))
		if err != nil {
			return err
		}
		// Dead links nothing hangs below are garbage: pruned here, so
		// that dead links cannot pile up past the bound.
		mine = slices.DeleteFunc(mine, func(l Grant) bool {
			if l.Link.Redeemable(now) || hasChildren(tx, l.ID) {
				return false
			}
			err = errors.Join(err, dropGrant(tx, l))
			return true
		})
		if err != nil {
			return err
		}
		if n := countRedeemable(mine, now); n >= lim.PerCreator {
			return fmt.Errorf("%w: you have %d live links, the limit is %d; revoke one first", ErrLimit, n, lim.PerCreator)
		}
		ours, err := linksOf(tx, suffixes(tx.Bucket(bucketGrantsByGadget), pairKey(gadgetID, "")))
		if err != nil {
			return err
		}
		if n := countRedeemable(ours, now); n >= lim.PerGadget {
			return fmt.Errorf("%w: gadget %q has %d live links, the limit is %d; revoke one first", ErrLimit, gadgetID, n, lim.PerGadget)
		}
		if creatorID != gadget.OwnerID {
			each, together := lim.others()
			here := countRedeemable(slices.DeleteFunc(slices.Clone(ours), func(l Grant) bool { return l.SharerID != creatorID }), now)
			if here >= each {
				return fmt.Errorf("%w: you have %d live links on gadget %q, the most a user other than its owner may; revoke one first", ErrLimit, here, gadgetID)
			}
			notOwners := countRedeemable(slices.DeleteFunc(ours, func(l Grant) bool { return l.SharerID == gadget.OwnerID }), now)
			if notOwners >= together {
				return fmt.Errorf("%w: gadget %q has %d live links made by users other than its owner, the most they may make together (the rest are kept for its owner); revoke one first", ErrLimit, gadgetID, notOwners)
			}
		}
		out = Grant{ID: NewID(), GadgetID: gadgetID, ParentID: via.ID, Role: role, HolderID: holder, SharerID: creatorID, CreatedAt: now.UTC().Truncate(time.Millisecond), Link: &terms}
		s.afterCommit(tx)
		return putGrant(tx, out)
	})
	if err != nil {
		return Grant{}, err
	}
	return out, nil
}

func (s *BoltStore) Links(ctx context.Context, gadgetID string) ([]Link, error) {
	var out []Link
	err := s.db.View(func(tx *bolt.Tx) error {
		links, err := linksOf(tx, suffixes(tx.Bucket(bucketGrantsByGadget), pairKey(gadgetID, "")))
		for _, l := range links {
			out = append(out, Link{Grant: l, Redemptions: len(suffixes(tx.Bucket(bucketGrantsByParent), pairKey(l.ID, "")))})
		}
		return err
	})
	slices.SortFunc(out, func(a, b Link) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, err
}

func (s *BoltStore) RevokeLink(ctx context.Context, gadgetID, byID, linkID string) ([]Grant, error) {
	var dropped []Grant
	err := s.db.Update(func(tx *bolt.Tx) error {
		have, err := roleOn(tx, gadgetID, byID)
		if err != nil {
			return err
		}
		l, err := getGrant(tx, linkID)
		switch {
		case errors.Is(err, ErrNotFound) || err == nil && (l.Link == nil || l.GadgetID != gadgetID):
			return fmt.Errorf("%w %.64q", ErrUnknownLink, linkID)
		case err != nil:
			return err
		case have != RoleOwner && l.SharerID != byID:
			return fmt.Errorf("%w: only its creator or an owner may revoke a link", ErrDenied)
		}
		s.afterCommit(tx)
		return dropSubtree(tx, l.ID, &dropped)
	})
	return dropped, err
}

func (s *BoltStore) Redeem(ctx context.Context, holder, userID string, now time.Time) (GadgetAccess, bool, error) {
	// A look first, read-only: a wrong secret, the common failure, costs
	// no write transaction.
	if err := s.db.View(func(tx *bolt.Tx) error {
		_, err := linkByHolder(tx, holder)
		return err
	}); err != nil {
		return GadgetAccess{}, false, err
	}
	var a GadgetAccess
	var redeemed bool
	err := s.db.Update(func(tx *bolt.Tx) error {
		l, err := linkByHolder(tx, holder)
		if err != nil {
			return err
		}
		if err := getJSON(tx.Bucket(bucketGadgets), []byte(l.GadgetID), &a.Gadget); err != nil {
			return err
		}
		worth, reaches, err := chainRole(tx, l, "")
		if err != nil {
			return err
		}
		// A link is only as good as its creator's power to make it: one
		// lowered to viewer, or without access, can make none now.
		creator, _, creatorReaches, err := access(tx, a.Gadget, l.SharerID, "")
		if err != nil {
			return err
		}
		if !reaches || !l.Link.Redeemable(now) || !creatorReaches || creator < RoleEditor {
			return ErrLinkInvalid
		}
		have, via, ok, err := access(tx, a.Gadget, userID, "")
		if err != nil {
			return err
		}
		if ok && have >= worth {
			// Nothing to gain (one's own link, or a role already held):
			// a no-op that does not consume the link.
			a.Role, a.Via = have, via
			return nil
		}
		g := Grant{ID: NewID(), GadgetID: l.GadgetID, ParentID: l.ID, Role: l.Role, HolderID: userID, SharerID: l.SharerID, CreatedAt: now.UTC().Truncate(time.Millisecond)}
		if err := putGrant(tx, g); err != nil {
			return err
		}
		if l.Link.SingleUse {
			l.Link.Consumed = true
			if err := putGrant(tx, l); err != nil {
				return err
			}
		}
		s.afterCommit(tx)
		redeemed = true
		a.Role, a.Via, _, err = access(tx, a.Gadget, userID, "")
		return err
	})
	if err != nil {
		return GadgetAccess{}, false, err
	}
	return a, redeemed, nil
}
