package store

// Saved capabilities (Persistent.save, Gateway.restore). A saved token is a
// bearer secret kept only as its KeyedHash, like a link's. Its record names
// who saved it, the gadget, what it restores and the most it restores, and
// the grant the saver's role came through when saving: the token is bound
// to that grant, so revoking it (and so anything above it) kills the token
// for good, even if the saver is given access again by another grant.
//
// Layout (values JSON unless noted):
//
//	"saved"         id -> Saved
//	"savedbyhash"   KeyedHash(secret) -> id (what Restore reads)
//	"savedbyuser"   user/id -> id (listing; the per-user bound; drops)
//	"savedbygadget" gadget/id -> id (the gadget's removal)
//
// Every change is one transaction. Drops (DropSaved, and a gadget's removal
// with its tokens) are counted once committed (SavedDrops). A token whose
// grant is revoked stays until its saver next saves (pruneSaved); until
// then SavedOf leaves it out, so only live tokens are listed or counted.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

var (
	bucketSaved         = []byte("saved")
	bucketSavedByHash   = []byte("savedbyhash")
	bucketSavedByUser   = []byte("savedbyuser")
	bucketSavedByGadget = []byte("savedbygadget")
)

// SavedKind is what a saved token restores; the values are
// schema.SavedKind's.
type SavedKind uint16

const (
	SavedGadget  SavedKind = iota // a Gadget capability
	SavedSession                  // a fresh session, as Gadget.open opens one
)

// Saved is the record of one saved token, without its secret.
type Saved struct {
	ID       string // public handle, random
	UserID   string // who saved it: whose access it restores
	GadgetID string
	Kind     SavedKind
	Role     Role // the saver's role when saving: the most it restores
	// Via is the grant the saver's role came through when saving; "" for
	// the gadget's owner. The token dies with it.
	Via       string `json:",omitempty"`
	CreatedAt time.Time
}

func createSavedBuckets(tx *bolt.Tx) error {
	for _, b := range [][]byte{bucketSaved, bucketSavedByHash, bucketSavedByUser, bucketSavedByGadget} {
		if _, err := tx.CreateBucketIfNotExists(b); err != nil {
			return err
		}
	}
	return nil
}

func (s *BoltStore) AddSaved(ctx context.Context, hash string, sv Saved, maxPerUser int) (Saved, error) {
	err := s.db.Update(func(tx *bolt.Tx) error {
		var gadget GadgetRecord
		if err := getJSON(tx.Bucket(bucketGadgets), []byte(sv.GadgetID), &gadget); err != nil {
			return err
		}
		have, via, ok, err := access(tx, gadget, sv.UserID, "")
		switch {
		case err != nil:
			return err
		case !ok:
			return ErrNotFound
		case sv.Role > have:
			return fmt.Errorf("%w: the %s role is above the saver's own %s role", ErrDenied, sv.Role, have)
		}
		if tx.Bucket(bucketSavedByHash).Get([]byte(hash)) != nil {
			return fmt.Errorf("saved token: %w", ErrExists)
		}
		n, err := pruneSaved(tx, sv.UserID)
		if err != nil {
			return err
		}
		if maxPerUser > 0 && n >= maxPerUser {
			return fmt.Errorf("%w: you have %d saved tokens, the limit is %d; drop one first", ErrLimit, n, maxPerUser)
		}
		sv.ID, sv.Via = NewID(), via.ID
		return putSaved(tx, hash, sv)
	})
	if err != nil {
		return Saved{}, err
	}
	return sv, nil
}

func putSaved(tx *bolt.Tx, hash string, sv Saved) error {
	id := []byte(sv.ID)
	return errors.Join(
		putJSON(tx.Bucket(bucketSaved), id, savedRecord{Saved: sv, Hash: hash}),
		tx.Bucket(bucketSavedByHash).Put([]byte(hash), id),
		tx.Bucket(bucketSavedByUser).Put(pairKey(sv.UserID, sv.ID), id),
		tx.Bucket(bucketSavedByGadget).Put(pairKey(sv.GadgetID, sv.ID), id),
	)
}

// dead reports whether sv can never restore again: its gadget is gone, or
// the grant it is bound to was revoked (a grant's id is never reused, so
// giving the saver access again does not revive it).
func (sv Saved) dead(tx *bolt.Tx) bool {
	return tx.Bucket(bucketGadgets).Get([]byte(sv.GadgetID)) == nil ||
		sv.Via != "" && tx.Bucket(bucketGrants).Get([]byte(sv.Via)) == nil
}

// pruneSaved deletes userID's dead tokens, and returns how many live ones
// they have. A revocation leaves the tokens it kills in place (they
// restore nothing); they are pruned here, before the per-user bound is
// counted, so that they never take the room of live ones. No drop is
// counted: what they restored already fails.
func pruneSaved(tx *bolt.Tx, userID string) (live int, err error) {
	for _, id := range suffixes(tx.Bucket(bucketSavedByUser), pairKey(userID, "")) {
		var rec savedRecord
		if err := getJSON(tx.Bucket(bucketSaved), []byte(id), &rec); err != nil {
			return 0, err
		}
		if !rec.dead(tx) {
			live++
		} else if err := dropSaved(tx, id); err != nil {
			return 0, err
		}
	}
	return live, nil
}

// savedRecord is what "saved" holds: the record and its hash, so that a
// drop finds the index entry to delete.
type savedRecord struct {
	Saved
	Hash string
}

func dropSaved(tx *bolt.Tx, id string) error {
	var rec savedRecord
	if err := getJSON(tx.Bucket(bucketSaved), []byte(id), &rec); err != nil {
		return err
	}
	return errors.Join(
		tx.Bucket(bucketSaved).Delete([]byte(id)),
		tx.Bucket(bucketSavedByHash).Delete([]byte(rec.Hash)),
		tx.Bucket(bucketSavedByUser).Delete(pairKey(rec.UserID, id)),
		tx.Bucket(bucketSavedByGadget).Delete(pairKey(rec.GadgetID, id)),
	)
}

// countDrop counts a drop of saved tokens once it is durable, so that a
// reader that saw the old count cannot have read the state after it.
func (s *BoltStore) countDrop(tx *bolt.Tx) {
	tx.OnCommit(func() { s.savedDrops.Add(1) })
}

func (s *BoltStore) Restore(ctx context.Context, hash string) (Saved, GadgetAccess, error) {
	var sv Saved
	var a GadgetAccess
	err := s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketSavedByHash).Get([]byte(hash))
		if id == nil {
			return ErrNotFound
		}
		var rec savedRecord
		if err := getJSON(tx.Bucket(bucketSaved), id, &rec); err != nil {
			return err
		}
		sv = rec.Saved
		if err := getJSON(tx.Bucket(bucketGadgets), []byte(sv.GadgetID), &a.Gadget); err != nil {
			return err
		}
		// The grants below a revoked one go with it (dropSubtree), so
		// that the grant is there says the chain above it is.
		if sv.Via != "" && tx.Bucket(bucketGrants).Get([]byte(sv.Via)) == nil {
			return ErrNotFound
		}
		var ok bool
		var err error
		a.Role, a.Via, ok, err = access(tx, a.Gadget, sv.UserID, "")
		if err == nil && !ok {
			err = ErrNotFound
		}
		a.Role = min(a.Role, sv.Role)
		return err
	})
	if err != nil {
		return Saved{}, GadgetAccess{}, err
	}
	return sv, a, nil
}

func (s *BoltStore) SavedOf(ctx context.Context, userID string) ([]Saved, error) {
	var out []Saved
	err := s.db.View(func(tx *bolt.Tx) error {
		for _, id := range suffixes(tx.Bucket(bucketSavedByUser), pairKey(userID, "")) {
			var rec savedRecord
			if err := getJSON(tx.Bucket(bucketSaved), []byte(id), &rec); err != nil {
				return err
			}
			if !rec.dead(tx) {
				out = append(out, rec.Saved)
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b Saved) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, err
}

func (s *BoltStore) DropSaved(ctx context.Context, userID, id string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketSavedByUser).Get(pairKey(userID, id)) == nil {
			return fmt.Errorf("saved token id %.64q: %w", id, ErrNotFound)
		}
		s.countDrop(tx)
		return dropSaved(tx, id)
	})
}

func (s *BoltStore) SavedDrops() uint64 { return s.savedDrops.Load() }

// dropGadgetSaved deletes every token saved of gadget id, in DeleteGadget's
// transaction.
func (s *BoltStore) dropGadgetSaved(tx *bolt.Tx, id string) error {
	for _, sid := range suffixes(tx.Bucket(bucketSavedByGadget), pairKey(id, "")) {
		if err := dropSaved(tx, sid); err != nil {
			return err
		}
	}
	s.countDrop(tx)
	return nil
}
