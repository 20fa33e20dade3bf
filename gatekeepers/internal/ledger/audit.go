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
// Every text field is cut to 1 KiB on a rune boundary. Past the bound on
// entries, the owner's oldest entries are dropped.
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
	audit := owner.Bucket(keyAudit)
	if e.Seq, err = audit.NextSequence(); err != nil {
		return err
	}
	if e.Time.IsZero() {
		e.Time = w.l.now()
	}
	for _, s := range []*string{&e.GadgetID, &e.UserID, &e.Binding, &e.Kind, &e.Method, &e.Describe, &e.Outcome, &e.ActionID} {
		*s = gatekeepers.Clip(*s, maxText)
	}
	if err := putJSON(audit, u64(e.Seq), e); err != nil {
		return err
	}
	// Seqs are never reused and only the oldest are dropped, so the log
	// holds exactly the entries from its first key to e.Seq.
	c := audit.Cursor()
	for k, _ := c.First(); k != nil && e.Seq-readU64(k)+1 > uint64(w.l.cfg.maxAudit); k, _ = c.First() {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
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
		c := owner.Bucket(keyAudit).Cursor()
		var k, v []byte
		if f.BeforeSeq == 0 {
			k, v = c.Last()
		} else if at, _ := c.Seek(u64(f.BeforeSeq)); at == nil {
			k, v = c.Last() // every entry is before it
		} else {
			k, v = c.Prev()
		}
		for ; k != nil && len(es) < limit; k, v = c.Prev() {
			var e Entry
			if err := json.Unmarshal(v, &e); err != nil {
				return err
			}
			if f.GadgetID == "" || e.GadgetID == f.GadgetID {
				es = append(es, e)
			}
		}
		return nil
	})
	return es, err
}
