package store

// Shares are grants, Sandstorm style: a grant gives its holder a role on one
// gadget, and hangs below the grant its sharer held when sharing it (or
// below nothing, when the sharer is the gadget's owner). The grants of a
// gadget form a tree under its owner, and a holder's effective role is the
// best, over the holder's grants, of the least role along the grant's chain
// up to the owner. Revoking a grant deletes its whole subtree, so access
// given on the strength of a grant never outlives it.
//
// Layout (values JSON unless noted):
//
//	"grants"          grant id -> Grant
//	"grantsbyholder"  holder/gadget/grant -> empty (what a holder may reach)
//	"grantsbygadget"  gadget/grant -> empty (a gadget's shares; its removal)
//	"grantsbyparent"  parent/grant -> empty (the cascade); roots not indexed
//	"linksbycreator"  links (links.go)
//
// Ids never contain '/', so a prefix ending in '/' selects exactly one
// holder, gadget or parent. Every change to grants is one transaction, and
// is counted (ShareChanges) once it has committed.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

var (
	bucketGrants         = []byte("grants")
	bucketGrantsByHolder = []byte("grantsbyholder")
	bucketGrantsByGadget = []byte("grantsbygadget")
	bucketGrantsByParent = []byte("grantsbyparent")
)

// ErrDenied is returned when the caller's role does not allow a change.
var ErrDenied = errors.New("not allowed")

// Role is what a user may do with a gadget, ordered from least to most
// power; the values are schema.Role's.
type Role uint16

const (
	RoleViewer Role = iota
	RoleEditor
	RoleOwner
)

func (r Role) String() string {
	switch r {
	case RoleViewer:
		return "viewer"
	case RoleEditor:
		return "editor"
	case RoleOwner:
		return "owner"
	}
	return fmt.Sprintf("role(%d)", uint16(r))
}

// Grant is one share of a gadget: Role for HolderID, given by SharerID.
type Grant struct {
	ID       string // random, 128 bits
	GadgetID string
	// ParentID is the grant SharerID held when sharing, whose revocation
	// ends this one too; "" when SharerID is the gadget's owner.
	ParentID  string
	Role      Role
	HolderID  string // a user id, or a link's LinkHolder
	SharerID  string // for a link: its creator
	CreatedAt time.Time
	Link      *LinkTerms `json:",omitempty"` // set on a link's grant only (links.go)
	// Gen counts the times a re-share lowered the grant's role or hung
	// it below another grant: a chain whose generations are unchanged has
	// lost nothing since (ChainStamp).
	Gen uint64 `json:",omitempty"`
}

// GadgetAccess is a gadget as one user reaches it.
type GadgetAccess struct {
	Gadget GadgetRecord
	Role   Role  // the user's effective role
	Via    Grant // the grant the role comes through; zero for the owner
	// Stamp is Via's ChainStamp ("" for the owner), as Access read it.
	Stamp string
}

func holderKey(holder, gadget, grant string) []byte {
	return []byte(holder + "/" + gadget + "/" + grant)
}

func pairKey(a, b string) []byte { return []byte(a + "/" + b) }

// suffixes returns what follows prefix in the keys of b that start with it.
func suffixes(b *bolt.Bucket, prefix []byte) []string {
	var out []string
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		out = append(out, string(k[len(prefix):]))
	}
	return out
}

func createShareBuckets(tx *bolt.Tx) error {
	for _, b := range [][]byte{bucketGrants, bucketGrantsByHolder, bucketGrantsByGadget, bucketGrantsByParent, bucketLinksByCreator} {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	return nil
}

func getGrant(tx *bolt.Tx, id string) (Grant, error) {
	var g Grant
	err := getJSON(tx.Bucket(bucketGrants), []byte(id), &g)
	return g, err
}

// putGrant stores g and indexes it under its holder, gadget and parent.
func putGrant(tx *bolt.Tx, g Grant) error {
	if err := putJSON(tx.Bucket(bucketGrants), []byte(g.ID), g); err != nil {
		return err
	}
	if err := tx.Bucket(bucketGrantsByHolder).Put(holderKey(g.HolderID, g.GadgetID, g.ID), nil); err != nil {
		return err
	}
	if err := tx.Bucket(bucketGrantsByGadget).Put(pairKey(g.GadgetID, g.ID), nil); err != nil {
		return err
	}
	if err := indexLink(tx, g, true); err != nil {
		return err
	}
	if g.ParentID == "" {
		return nil
	}
	return tx.Bucket(bucketGrantsByParent).Put(pairKey(g.ParentID, g.ID), nil)
}

// dropGrant deletes g and its index entries, not its children.
func dropGrant(tx *bolt.Tx, g Grant) error {
	if err := tx.Bucket(bucketGrants).Delete([]byte(g.ID)); err != nil {
		return err
	}
	if err := tx.Bucket(bucketGrantsByHolder).Delete(holderKey(g.HolderID, g.GadgetID, g.ID)); err != nil {
		return err
	}
	if err := tx.Bucket(bucketGrantsByGadget).Delete(pairKey(g.GadgetID, g.ID)); err != nil {
		return err
	}
	if err := indexLink(tx, g, false); err != nil {
		return err
	}
	if g.ParentID == "" {
		return nil
	}
	return tx.Bucket(bucketGrantsByParent).Delete(pairKey(g.ParentID, g.ID))
}

// dropSubtree deletes grant id and every grant below it, appending them to
// *dropped.
func dropSubtree(tx *bolt.Tx, id string, dropped *[]Grant) error {
	for todo := []string{id}; len(todo) > 0; {
		id, todo = todo[len(todo)-1], todo[:len(todo)-1]
		g, err := getGrant(tx, id)
		if errors.Is(err, ErrNotFound) {
			continue // reached twice: already gone
		}
		if err != nil {
			return err
		}
		// Collected before deleting: bbolt forbids changing a bucket
		// under a cursor.
		todo = append(todo, suffixes(tx.Bucket(bucketGrantsByParent), pairKey(id, ""))...)
		if err := dropGrant(tx, g); err != nil {
			return err
		}
		*dropped = append(*dropped, g)
	}
	return nil
}

// chainRole returns the least role along g's chain up to the gadget's
// owner, and whether the chain reaches the owner without passing through
// grant avoid. A chain that does not (a parent gone, a loop) gives nothing.
func chainRole(tx *bolt.Tx, g Grant, avoid string) (Role, bool, error) {
	role := g.Role
	seen := map[string]bool{}
	for {
		if g.ID == avoid || seen[g.ID] {
			return 0, false, nil
		}
		seen[g.ID] = true
		role = min(role, g.Role)
		if g.ParentID == "" {
			return role, true, nil
		}
		var err error
		if g, err = getGrant(tx, g.ParentID); errors.Is(err, ErrNotFound) {
			return 0, false, nil
		} else if err != nil {
			return 0, false, err
		}
	}
}

// isRedemption reports whether g was given by redeeming a link: it hangs
// below the link's grant.
func isRedemption(tx *bolt.Tx, g Grant) (bool, error) {
	if g.ParentID == "" {
		return false, nil
	}
	parent, err := getGrant(tx, g.ParentID)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil && parent.Link != nil, err
}

// chainStamp names g's chain up to the gadget's owner as it is now: each
// grant's id and generation. ok is false if the chain no longer reaches
// the owner.
func chainStamp(tx *bolt.Tx, g Grant) (stamp string, ok bool, err error) {
	var b strings.Builder
	seen := map[string]bool{}
	for {
		if seen[g.ID] {
			return "", false, nil
		}
		seen[g.ID] = true
		fmt.Fprintf(&b, "%s:%d/", g.ID, g.Gen)
		if g.ParentID == "" {
			return b.String(), true, nil
		}
		if g, err = getGrant(tx, g.ParentID); errors.Is(err, ErrNotFound) {
			return "", false, nil
		} else if err != nil {
			return "", false, err
		}
	}
}

// access returns userID's effective role on gadget and the grant it comes
// through (none for the owner), ignoring chains through grant avoid; ok is
// false if userID may not reach the gadget at all. Of grants giving the
// same role, the oldest wins, so the answer is stable.
func access(tx *bolt.Tx, gadget GadgetRecord, userID, avoid string) (role Role, via Grant, ok bool, err error) {
	if userID == gadget.OwnerID {
		return RoleOwner, Grant{}, true, nil
	}
	for _, id := range suffixes(tx.Bucket(bucketGrantsByHolder), holderKey(userID, gadget.ID, "")) {
		g, err := getGrant(tx, id)
		if err != nil {
			return 0, Grant{}, false, err
		}
		r, reaches, err := chainRole(tx, g, avoid)
		if err != nil {
			return 0, Grant{}, false, err
		}
		if reaches && (!ok || r > role || r == role && g.CreatedAt.Before(via.CreatedAt)) {
			role, via, ok = r, g, true
		}
	}
	return role, via, ok, nil
}

// heldOn returns the grants holder holds on gadget.
func heldOn(tx *bolt.Tx, holder, gadget string) ([]Grant, error) {
	var out []Grant
	for _, id := range suffixes(tx.Bucket(bucketGrantsByHolder), holderKey(holder, gadget, "")) {
		g, err := getGrant(tx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// afterCommit counts a change to grants once it is durable, so that a
// reader that saw the old count cannot have read the state after it.
func (s *BoltStore) afterCommit(tx *bolt.Tx) {
	tx.OnCommit(func() { s.shareChanges.Add(1) })
}

func (s *BoltStore) ShareChanges() uint64 { return s.shareChanges.Load() }

func (s *BoltStore) Access(ctx context.Context, gadgetID, userID string) (GadgetAccess, error) {
	var a GadgetAccess
	err := s.db.View(func(tx *bolt.Tx) error {
		if err := getJSON(tx.Bucket(bucketGadgets), []byte(gadgetID), &a.Gadget); err != nil {
			return err
		}
		var ok bool
		var err error
		a.Role, a.Via, ok, err = access(tx, a.Gadget, userID, "")
		if err == nil && !ok {
			err = ErrNotFound
		}
		if err != nil || a.Via.ID == "" {
			return err
		}
		a.Stamp, _, err = chainStamp(tx, a.Via)
		return err
	})
	if err != nil {
		return GadgetAccess{}, err
	}
	return a, nil
}

func (s *BoltStore) ChainStamp(ctx context.Context, grantID string) (string, error) {
	var stamp string
	err := s.db.View(func(tx *bolt.Tx) error {
		g, err := getGrant(tx, grantID)
		if err != nil {
			return err
		}
		var ok bool
		if stamp, ok, err = chainStamp(tx, g); err == nil && !ok {
			err = ErrNotFound
		}
		return err
	})
	return stamp, err
}

func (s *BoltStore) Share(ctx context.Context, gadgetID, sharerID, holderID string, role Role) (Grant, error) {
	var out Grant
	err := s.db.Update(func(tx *bolt.Tx) error {
		var gadget GadgetRecord
		if err := getJSON(tx.Bucket(bucketGadgets), []byte(gadgetID), &gadget); err != nil {
			return err
		}
		held, err := heldOn(tx, holderID, gadgetID)
		if err != nil {
			return err
		}
		// A re-share replaces the sharer's own share, never a redemption
		// of their link: that stays below the link, which ends it.
		var old Grant
		for _, g := range held {
			redeemed, err := isRedemption(tx, g)
			if err != nil {
				return err
			}
			if g.SharerID == sharerID && !redeemed {
				old = g
				break
			}
		}
		// The grant being replaced cannot bound or carry its own
		// replacement: the new parent must reach the owner without it, or
		// the two could form a loop that outlives the revocation of
		// everything above them. (Oldest-first between equal roles picks
		// such a parent only when their times tie, so no test forces it.)
		have, via, ok, err := access(tx, gadget, sharerID, old.ID)
		switch {
		case err != nil:
			return err
		case !ok:
			return ErrNotFound
		case holderID == sharerID:
			return fmt.Errorf("%w: sharing with oneself", ErrDenied)
		case holderID == gadget.OwnerID:
			return fmt.Errorf("%w: sharing with the gadget's owner, who holds every role already", ErrDenied)
		case have < RoleEditor:
			return fmt.Errorf("%w: a viewer may not share", ErrDenied)
		case role > have:
			return fmt.Errorf("%w: the %s role is above the sharer's own %s role", ErrDenied, role, have)
		}
		out = Grant{ID: NewID(), GadgetID: gadgetID, ParentID: via.ID, Role: role, HolderID: holderID, SharerID: sharerID, CreatedAt: time.Now().UTC().Truncate(time.Millisecond)}
		if old.ID != "" {
			// Replaced in place: the grant keeps its id, age and
			// children, so what its holder shared on lives on; a
			// session opened through it ends if it lost anything.
			out.ID, out.CreatedAt, out.Gen = old.ID, old.CreatedAt, old.Gen
			if out.Role < old.Role || out.ParentID != old.ParentID {
				out.Gen++
			}
			if err := dropGrant(tx, old); err != nil {
				return err
			}
		}
		s.afterCommit(tx)
		return putGrant(tx, out)
	})
	if err != nil {
		return Grant{}, err
	}
	return out, nil
}

// roleOn returns userID's effective role on gadget gadgetID; ErrNotFound
// if the gadget does not exist or userID may not reach it.
func roleOn(tx *bolt.Tx, gadgetID, userID string) (Role, error) {
	var gadget GadgetRecord
	if err := getJSON(tx.Bucket(bucketGadgets), []byte(gadgetID), &gadget); err != nil {
		return 0, err
	}
	have, _, ok, err := access(tx, gadget, userID, "")
	if err == nil && !ok {
		err = ErrNotFound
	}
	return have, err
}

func (s *BoltStore) Unshare(ctx context.Context, gadgetID, byID, holderID string) ([]Grant, error) {
	var dropped []Grant
	err := s.db.Update(func(tx *bolt.Tx) error {
		have, err := roleOn(tx, gadgetID, byID)
		if err != nil {
			return err
		}
		held, err := heldOn(tx, holderID, gadgetID)
		if err != nil {
			return err
		}
		for _, g := range held {
			if have == RoleOwner || g.SharerID == byID {
				if err := dropSubtree(tx, g.ID, &dropped); err != nil {
					return err
				}
			}
		}
		if len(dropped) > 0 {
			s.afterCommit(tx)
		}
		return nil
	})
	return dropped, err
}

func (s *BoltStore) Grants(ctx context.Context, gadgetID string) ([]Grant, error) {
	var out []Grant
	err := s.db.View(func(tx *bolt.Tx) error {
		for _, id := range suffixes(tx.Bucket(bucketGrantsByGadget), pairKey(gadgetID, "")) {
			g, err := getGrant(tx, id)
			if err != nil {
				return err
			}
			out = append(out, g)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b Grant) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, err
}

func (s *BoltStore) SharedWith(ctx context.Context, userID string) ([]GadgetAccess, error) {
	var out []GadgetAccess
	err := s.db.View(func(tx *bolt.Tx) error {
		var gadgets []string
		for _, k := range suffixes(tx.Bucket(bucketGrantsByHolder), pairKey(userID, "")) {
			gadget, _, _ := strings.Cut(k, "/")
			if len(gadgets) == 0 || gadgets[len(gadgets)-1] != gadget { // keys are sorted
				gadgets = append(gadgets, gadget)
			}
		}
		for _, id := range gadgets {
			var g GadgetRecord
			if err := getJSON(tx.Bucket(bucketGadgets), []byte(id), &g); err != nil {
				return err
			}
			role, via, ok, err := access(tx, g, userID, "")
			if err != nil {
				return err
			}
			if ok {
				out = append(out, GadgetAccess{Gadget: g, Role: role, Via: via})
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b GadgetAccess) int {
		if c := a.Gadget.CreatedAt.Compare(b.Gadget.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Gadget.ID, b.Gadget.ID)
	})
	return out, err
}

// dropGadgetGrants deletes every grant on gadget id, in DeleteGadget's
// transaction.
func (s *BoltStore) dropGadgetGrants(tx *bolt.Tx, id string) error {
	for _, gid := range suffixes(tx.Bucket(bucketGrantsByGadget), pairKey(id, "")) {
		g, err := getGrant(tx, gid)
		if err != nil {
			return err
		}
		if err := dropGrant(tx, g); err != nil {
			return err
		}
	}
	s.afterCommit(tx)
	return nil
}
