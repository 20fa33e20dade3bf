package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gadgetd/gadgetd/gatekeepers"
)

// Entry is one line of an owner's audit log: one call on a gatekeeper, or
// the outcome of an action's real call (ActionID set).
type Entry struct {
	Seq      uint64    // order in the owner's log; set by Record
	Time     time.Time // set by Record if zero
	OwnerID  string
	GadgetID string
	UserID   string // whose call it was; for an action's outcome, who approved it ("auto")
	Binding  string
	Kind     string
	Method   string
	Effect   gatekeepers.Effect
	Describe string
	Outcome  string
	Failed   bool
	ActionID string
}

// AuditFilter selects entries for Audit. Zero fields select everything.
type AuditFilter struct {
	GadgetID  string
	BeforeSeq uint64 // only entries with a smaller Seq: the last Seq of the previous page
	Limit     int    // at most this many; default 100, at most 1000
}

// Record appends e to its owner's audit log, setting Seq, and Time if zero.
// Every text field is cut to 1 KiB on a rune boundary. Entries about an
// action (ActionID set) and the others (reads) are bounded apart: past the
// bound, the owner's oldest entry of the same sort is dropped, so that
// reads, however many, never push out the record of an action.
func (l *Ledger) Record(ctx context.Context, e Entry) error {
	if e.OwnerID == "" {
		return fmt.Errorf("record: %w entry: no owner", ErrInvalid)
	}
	return l.update(ctx, func(w *writeTx) error { return w.record(e) })
}

func (w *writeTx) record(e Entry) error {
	owner, err := w.owner(e.OwnerID)
	if err != nil {
		return err
	}
	// The reads' bucket numbers every entry, so that the two sorts
	// interleave in one order.
	if e.Seq, err = owner.Bucket(keyAudit).NextSequence(); err != nil {
		return err
	}
	if e.Time.IsZero() {
		e.Time = w.l.now()
	}
	for _, s := range []*string{&e.GadgetID, &e.UserID, &e.Binding, &e.Kind, &e.Method, &e.Describe, &e.Outcome, &e.ActionID} {
		*s = gatekeepers.Clip(*s, maxText)
	}
	bucket, countKey := keyAudit, keyAuditN
	if e.ActionID != "" {
		bucket, countKey = keyAuditActs, keyAuditActsN
	}
	b := owner.Bucket(bucket)
	if err := putJSON(b, u64(e.Seq), e); err != nil {
		return err
	}
	n := readU64(owner.Get(countKey)) + 1
	c := b.Cursor()
	for k, _ := c.First(); k != nil && n > uint64(w.l.cfg.maxAudit); k, _ = c.First() {
		if err := c.Delete(); err != nil {
			return err
		}
		n--
	}
	return owner.Put(countKey, u64(n))
}

// Audit returns the owner's audit entries that f selects, newest first.
func (l *Ledger) Audit(ctx context.Context, ownerID string, f AuditFilter) ([]Entry, error) {
	limit := listLimit(f.Limit)
	var es []Entry
	err := l.view(ctx, func(tx *bolt.Tx) error {
		owner := tx.Bucket(bucketOwners).Bucket([]byte(ownerID))
		if owner == nil {
			return nil
		}
		// Newest first, from both sorts of entries: at each step, the
		// later of the two cursors' entries.
		reads, acts := newestFirst(owner.Bucket(keyAudit), f.BeforeSeq), newestFirst(owner.Bucket(keyAuditActs), f.BeforeSeq)
		for len(es) < limit {
			next := reads
			if acts.k != nil && (reads.k == nil || readU64(acts.k) > readU64(reads.k)) {
				next = acts
			}
			if next.k == nil {
				break
			}
			var e Entry
			if err := json.Unmarshal(next.v, &e); err != nil {
				return err
			}
			if f.GadgetID == "" || e.GadgetID == f.GadgetID {
				es = append(es, e)
			}
			next.k, next.v = next.c.Prev()
		}
		return nil
	})
	return es, err
}

// backCursor walks a bucket of entries from the newest back.
type backCursor struct {
	c    *bolt.Cursor
	k, v []byte
}

// newestFirst is a backCursor of b at its newest entry before seq (0:
// the newest of all).
func newestFirst(b *bolt.Bucket, seq uint64) *backCursor {
	bc := &backCursor{c: b.Cursor()}
	if seq == 0 {
		bc.k, bc.v = bc.c.Last()
	} else if at, _ := bc.c.Seek(u64(seq)); at == nil {
		bc.k, bc.v = bc.c.Last() // every entry is before it
	} else {
		bc.k, bc.v = bc.c.Prev()
	}
	return bc
}
