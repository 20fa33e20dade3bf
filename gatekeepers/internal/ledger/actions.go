package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/internal/store"
)

// queueKey names one binding's queue.
type queueKey struct{ GadgetID, Binding string }

// actionRef is the value of "gkids": where an action is kept.
type actionRef struct {
	Owner string `json:"o"`
	Seq   uint64 `json:"s"`
}

// Filter selects actions for Actions. Zero fields select everything.
type Filter struct {
	States   []gatekeepers.ActionState // any of these
	GadgetID string
	Binding  string // with GadgetID
	AfterSeq uint64 // only actions with a larger Seq: the last Seq of the previous page
	Limit    int    // at most this many; default 100, at most 1000
}

// Decision is the outcome of Decide for one action id.
type Decision struct {
	ID     string
	Action gatekeepers.Action // as the decision left it; zero if Err wraps ErrNotFound
	Err    error              // nil if decided; wraps ErrNotFound or ErrDecided
}

// isOpen reports whether an action in state s is unfinished: it holds its
// binding's queue, and counts against the owner's open actions.
func isOpen(s gatekeepers.ActionState) bool {
	switch s {
	case gatekeepers.Pending, gatekeepers.Approved, gatekeepers.Applying, gatekeepers.InDoubt:
		return true
	}
	return false
}

func stateName(s gatekeepers.ActionState) string {
	switch s {
	case gatekeepers.Pending:
		return "pending"
	case gatekeepers.Approved:
		return "approved"
	case gatekeepers.Applying:
		return "applying"
	case gatekeepers.Applied:
		return "applied"
	case gatekeepers.Failed:
		return "failed"
	case gatekeepers.Rejected:
		return "rejected"
	case gatekeepers.InDoubt:
		return "in doubt"
	}
	return fmt.Sprintf("state %d", s)
}

// Queue queues a, an action of a.Method through the gadget's binding
// a.Binding, and returns it as kept: with a fresh unguessable ID, the
// owner's next Seq, CreatedAt, the binding's OwnerID and Kind, and State
// Pending, or Approved by "auto" if the binding auto-approves a.Method. It
// fails with an error wrapping gatekeepers.ErrNoBinding if there is no such
// binding, and ErrLimit if the owner has as many open actions as they may or
// the payload is too large. Describe is cut to 1 KiB.
func (l *Ledger) Queue(ctx context.Context, a gatekeepers.Action) (gatekeepers.Action, error) {
	if a.Method == "" || len(a.Method) > maxName {
		return gatekeepers.Action{}, fmt.Errorf("queue: %w method %q", ErrInvalid, gatekeepers.Clip(a.Method, maxName))
	}
	if len(a.Payload) > l.cfg.maxPayload {
		return gatekeepers.Action{}, fmt.Errorf("queue: payload of %d bytes: %w (at most %d)", len(a.Payload), ErrLimit, l.cfg.maxPayload)
	}
	a.Describe = gatekeepers.Clip(a.Describe, maxText)
	a.UserID = gatekeepers.Clip(a.UserID, maxName)
	err := l.update(ctx, func(w *writeTx) error {
		b, err := getBinding(w.Tx, a.GadgetID, a.Binding)
		if err != nil {
			return err
		}
		if a.OwnerID != "" && a.OwnerID != b.OwnerID || a.Kind != "" && a.Kind != b.Kind {
			return fmt.Errorf("queue: %w action: its owner or kind is not its binding's", ErrInvalid)
		}
		owner, err := w.owner(b.OwnerID)
		if err != nil {
			return err
		}
		if n := readU64(owner.Get(keyOpen)); n >= uint64(l.cfg.maxOpen) {
			return fmt.Errorf("queue: %w: %d actions wait for a decision or their turn", ErrLimit, n)
		}
		if a.Seq, err = owner.Bucket(keyActions).NextSequence(); err != nil {
			return err
		}
		now := l.now()
		a.ID, a.OwnerID, a.Kind, a.CreatedAt = store.NewID(), b.OwnerID, b.Kind, now
		a.State, a.DecidedBy, a.DecidedAt, a.DoneAt, a.Outcome = gatekeepers.Pending, "", time.Time{}, time.Time{}, gatekeepers.Outcome{}
		if _, auto := slices.BinarySearch(b.AutoApprove, a.Method); auto {
			a.State, a.DecidedBy, a.DecidedAt = gatekeepers.Approved, "auto", now
		}
		return w.saveAction(0, a)
	})
	if err != nil {
		return gatekeepers.Action{}, err
	}
	return a, nil
}

// Action returns the owner's action id. Another owner's action is
// ErrNotFound, as one that does not exist.
func (l *Ledger) Action(ctx context.Context, ownerID, id string) (gatekeepers.Action, error) {
	var a gatekeepers.Action
	err := l.view(ctx, func(tx *bolt.Tx) error {
		var err error
		a, err = loadOwned(tx, ownerID, id)
		return err
	})
	return a, err
}

// Actions returns the owner's actions that f selects, oldest first.
func (l *Ledger) Actions(ctx context.Context, ownerID string, f Filter) ([]gatekeepers.Action, error) {
	limit := listLimit(f.Limit)
	var as []gatekeepers.Action
	err := l.view(ctx, func(tx *bolt.Tx) error {
		owner := tx.Bucket(bucketOwners).Bucket([]byte(ownerID))
		if owner == nil {
			return nil
		}
		c := owner.Bucket(keyActions).Cursor()
		for k, v := c.Seek(u64(f.AfterSeq + 1)); k != nil && len(as) < limit; k, v = c.Next() {
			var a gatekeepers.Action
			if err := json.Unmarshal(v, &a); err != nil {
				return err
			}
			if f.GadgetID != "" && a.GadgetID != f.GadgetID ||
				f.Binding != "" && a.Binding != f.Binding ||
				len(f.States) > 0 && !slices.Contains(f.States, a.State) {
				continue
			}
			as = append(as, a)
		}
		return nil
	})
	return as, err
}

// Pending returns the binding's actions whose change the gadget was promised
// and that are not yet applied: Pending, Approved and Applying, oldest
// first. Reads through the binding overlay them.
func (l *Ledger) Pending(ctx context.Context, gadgetID, binding string) ([]gatekeepers.Action, error) {
	var as []gatekeepers.Action
	err := l.view(ctx, func(tx *bolt.Tx) error {
		open, err := queued(tx, queueKey{gadgetID, binding})
		for _, a := range open {
			if a.State != gatekeepers.InDoubt {
				as = append(as, a)
			}
		}
		return err
	})
	return as, err
}

// Decide approves or rejects the owner's actions ids, as user by, in one
// transaction, and says for each id what became of it. A Pending action
// becomes Approved or Rejected; an InDoubt one becomes Approved (to be
// tried again) or Rejected (dropped). Any other state is ErrDecided; an id
// that is not the owner's is ErrNotFound. Of two Decides of one id, exactly
// one decides it. The error is for the whole call (nothing was decided);
// more ids than the open-action bound are ErrLimit.
func (l *Ledger) Decide(ctx context.Context, ownerID string, ids []string, approve bool, by string) ([]Decision, error) {
	if by == "" {
		return nil, fmt.Errorf("decide: %w: no decider", ErrInvalid)
	}
	if len(ids) > l.cfg.maxOpen {
		return nil, fmt.Errorf("decide: %d ids: %w (at most %d)", len(ids), ErrLimit, l.cfg.maxOpen)
	}
	var ds []Decision
	err := l.update(ctx, func(w *writeTx) error {
		ds = ds[:0]
		now := l.now()
		for _, id := range ids {
			d := Decision{ID: id}
			a, err := loadOwned(w.Tx, ownerID, id)
			switch {
			case err != nil:
				d.Err = err
			case a.State != gatekeepers.Pending && a.State != gatekeepers.InDoubt:
				d.Action, d.Err = a, fmt.Errorf("action %s: %w (%s)", id, ErrDecided, stateName(a.State))
			default:
				from := a.State
				a.DecidedBy, a.DecidedAt = by, now
				if approve {
					a.State, a.Outcome = gatekeepers.Approved, gatekeepers.Outcome{}
				} else {
					a.State, a.DoneAt = gatekeepers.Rejected, now
				}
				if err := w.saveAction(from, a); err != nil {
					return err
				}
				d.Action = a
			}
			ds = append(ds, d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ds, nil
}

// Begin marks action id Applying, just before its real call is made, and
// returns it. It refuses (ErrState) an action that is not Approved, or not
// its binding's head: every earlier action of the binding must be finished.
func (l *Ledger) Begin(ctx context.Context, id string) (gatekeepers.Action, error) {
	var a gatekeepers.Action
	err := l.update(ctx, func(w *writeTx) error {
		var err error
		if a, err = loadByID(w.Tx, id); err != nil {
			return err
		}
		if a.State != gatekeepers.Approved {
			return fmt.Errorf("begin action %s: %w: it is %s", id, ErrState, stateName(a.State))
		}
		if head, ok, err := head(w.Tx, queueKey{a.GadgetID, a.Binding}); err != nil {
			return err
		} else if !ok || head.ID != a.ID {
			return fmt.Errorf("begin action %s: %w: an earlier action of its binding is not finished", id, ErrState)
		}
		a.State = gatekeepers.Applying
		return w.saveAction(gatekeepers.Approved, a)
	})
	return a, err
}

// Finish records the outcome of the real call of action id, which must be
// Applying: Applied, or Failed if failed. The outcome's Describe is cut to
// 1 KiB, and a Result larger than the payload bound is not kept (Describe
// says so). The owner's audit log gets the outcome in the same transaction.
func (l *Ledger) Finish(ctx context.Context, id string, o gatekeepers.Outcome, failed bool) error {
	o.Describe = gatekeepers.Clip(o.Describe, maxText)
	if len(o.Result) > l.cfg.maxPayload {
		o.Result = nil
		o.Describe = gatekeepers.Clip(o.Describe+" (result too large to keep)", maxText)
	}
	state := gatekeepers.Applied
	if failed {
		state = gatekeepers.Failed
	}
	return l.settle(ctx, id, state, o)
}

// Resume puts action id, found Applying after a crash and known not to have
// taken effect, back to Approved, to be applied in its turn.
func (l *Ledger) Resume(ctx context.Context, id string) error {
	return l.settle(ctx, id, gatekeepers.Approved, gatekeepers.Outcome{})
}

// Doubt marks action id, found Applying after a crash, InDoubt: nothing can
// tell whether its real call took effect. why says so for humans. It holds
// its binding's queue until someone decides it again.
func (l *Ledger) Doubt(ctx context.Context, id, why string) error {
	return l.settle(ctx, id, gatekeepers.InDoubt, gatekeepers.Outcome{Describe: gatekeepers.Clip(why, maxText)})
}

// settle moves action id from Applying to state, with outcome o, and, for a
// final state or InDoubt, writes the owner's audit entry.
func (l *Ledger) settle(ctx context.Context, id string, state gatekeepers.ActionState, o gatekeepers.Outcome) error {
	return l.update(ctx, func(w *writeTx) error {
		a, err := loadByID(w.Tx, id)
		if err != nil {
			return err
		}
		if a.State != gatekeepers.Applying {
			return fmt.Errorf("action %s: %w: it is %s, not applying", id, ErrState, stateName(a.State))
		}
		a.State, a.Outcome = state, o
		if !isOpen(state) {
			a.DoneAt = l.now()
		}
		if err := w.saveAction(gatekeepers.Applying, a); err != nil {
			return err
		}
		if state == gatekeepers.Approved {
			return nil
		}
		outcome := o.Describe
		if state == gatekeepers.InDoubt {
			outcome = "in doubt: " + outcome
		}
		return w.record(Entry{
			OwnerID: a.OwnerID, GadgetID: a.GadgetID, UserID: a.DecidedBy, Binding: a.Binding,
			Kind: a.Kind, Method: a.Method, Effect: gatekeepers.Act, Describe: a.Describe,
			Outcome: outcome, Failed: state == gatekeepers.Failed, ActionID: a.ID,
		})
	})
}

// Interrupted returns the actions found Applying: their real call began and
// its end was never recorded, because the process stopped. Only an Applier
// that is not running may settle them.
func (l *Ledger) Interrupted(ctx context.Context) ([]gatekeepers.Action, error) {
	return l.heads(ctx, gatekeepers.Applying)
}

// heads returns the head of every binding's queue that is in state.
func (l *Ledger) heads(ctx context.Context, state gatekeepers.ActionState) ([]gatekeepers.Action, error) {
	var as []gatekeepers.Action
	err := l.view(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketQueues).ForEachBucket(func(gadget []byte) error {
			return tx.Bucket(bucketQueues).Bucket(gadget).ForEachBucket(func(name []byte) error {
				a, ok, err := head(tx, queueKey{string(gadget), string(name)})
				if ok && a.State == state {
					as = append(as, a)
				}
				return err
			})
		})
	})
	return as, err
}

// next returns the binding's head if it is Approved: the action to apply.
func (l *Ledger) next(ctx context.Context, q queueKey) (a gatekeepers.Action, ok bool, err error) {
	err = l.view(ctx, func(tx *bolt.Tx) error {
		a, ok, err = head(tx, q)
		ok = ok && a.State == gatekeepers.Approved
		return err
	})
	return a, ok, err
}

// head returns the binding's first open action.
func head(tx *bolt.Tx, q queueKey) (gatekeepers.Action, bool, error) {
	queue := queueBucket(tx, q)
	if queue == nil {
		return gatekeepers.Action{}, false, nil
	}
	seq, owner := queue.Cursor().First()
	if seq == nil {
		return gatekeepers.Action{}, false, nil
	}
	a, err := loadAction(tx, string(owner), seq)
	return a, err == nil, err
}

// queued returns the binding's open actions, oldest first.
func queued(tx *bolt.Tx, q queueKey) ([]gatekeepers.Action, error) {
	queue := queueBucket(tx, q)
	if queue == nil {
		return nil, nil
	}
	var as []gatekeepers.Action
	err := queue.ForEach(func(seq, owner []byte) error {
		a, err := loadAction(tx, string(owner), seq)
		as = append(as, a)
		return err
	})
	return as, err
}

func (w *writeTx) queued(q queueKey) ([]gatekeepers.Action, error) { return queued(w.Tx, q) }

func queueBucket(tx *bolt.Tx, q queueKey) *bolt.Bucket {
	gadget := tx.Bucket(bucketQueues).Bucket([]byte(q.GadgetID))
	if gadget == nil || q.Binding == "" {
		return nil
	}
	return gadget.Bucket([]byte(q.Binding))
}

func loadAction(tx *bolt.Tx, ownerID string, seq []byte) (gatekeepers.Action, error) {
	var a gatekeepers.Action
	owner := tx.Bucket(bucketOwners).Bucket([]byte(ownerID))
	if owner == nil {
		return a, ErrNotFound
	}
	return a, getJSON(owner.Bucket(keyActions), seq, &a)
}

func loadByID(tx *bolt.Tx, id string) (gatekeepers.Action, error) {
	a, err := loadOwned(tx, "", id)
	return a, err
}

// loadOwned returns action id if it is ownerID's, or any owner's if ownerID
// is "".
func loadOwned(tx *bolt.Tx, ownerID, id string) (gatekeepers.Action, error) {
	var ref actionRef
	if id == "" || getJSON(tx.Bucket(bucketIDs), []byte(id), &ref) != nil || ownerID != "" && ref.Owner != ownerID {
		return gatekeepers.Action{}, fmt.Errorf("action %s: %w", gatekeepers.Clip(id, maxName), ErrNotFound)
	}
	return loadAction(tx, ref.Owner, u64(ref.Seq))
}

// owner returns the owner's bucket, created if need be.
func (w *writeTx) owner(ownerID string) (*bolt.Bucket, error) {
	owner, err := w.Bucket(bucketOwners).CreateBucketIfNotExists([]byte(ownerID))
	if err != nil {
		return nil, err
	}
	for _, k := range [][]byte{keyActions, keyDone, keyAudit, keyAuditActs} {
		if _, err := owner.CreateBucketIfNotExists(k); err != nil {
			return nil, err
		}
	}
	return owner, nil
}

// saveAction writes a, which was in state from (0: new), and keeps every
// index in step with its state: the id index, its binding's queue, the
// owner's open count and finished actions. It is the one place an action
// changes, so that none of them can drift.
func (w *writeTx) saveAction(from gatekeepers.ActionState, a gatekeepers.Action) error {
	owner, err := w.owner(a.OwnerID)
	if err != nil {
		return err
	}
	if !isOpen(a.State) {
		// Done with: nothing will make its real call again. Up to
		// WithMaxFinishedActions of them are kept, and their payloads (up
		// to WithMaxPayload each) would hold gigabytes of a workspace's.
		a.Payload = nil
	}
	seq := u64(a.Seq)
	if err := putJSON(owner.Bucket(keyActions), seq, a); err != nil {
		return err
	}
	q := queueKey{a.GadgetID, a.Binding}
	switch wasOpen, open := isOpen(from), isOpen(a.State); {
	case from == 0:
		if err := putJSON(w.Bucket(bucketIDs), []byte(a.ID), actionRef{a.OwnerID, a.Seq}); err != nil {
			return err
		}
		gadget, err := w.Bucket(bucketQueues).CreateBucketIfNotExists([]byte(a.GadgetID))
		if err != nil {
			return err
		}
		queue, err := gadget.CreateBucketIfNotExists([]byte(a.Binding))
		if err != nil {
			return err
		}
		if err := queue.Put(seq, []byte(a.OwnerID)); err != nil {
			return err
		}
		if err := owner.Put(keyOpen, u64(readU64(owner.Get(keyOpen))+1)); err != nil {
			return err
		}
	case wasOpen && !open:
		if err := w.dequeue(q, seq); err != nil {
			return err
		}
		if err := owner.Put(keyOpen, u64(readU64(owner.Get(keyOpen))-1)); err != nil {
			return err
		}
		if err := w.retire(owner, seq); err != nil {
			return err
		}
	}
	w.changed = append(w.changed, a)
	if !slices.Contains(w.queues, q) {
		w.queues = append(w.queues, q)
	}
	return nil
}

// dequeue removes seq from the binding's queue, and the queue once empty.
func (w *writeTx) dequeue(q queueKey, seq []byte) error {
	gadget := w.Bucket(bucketQueues).Bucket([]byte(q.GadgetID))
	queue := gadget.Bucket([]byte(q.Binding))
	if err := queue.Delete(seq); err != nil {
		return err
	}
	if k, _ := queue.Cursor().First(); k != nil {
		return nil
	}
	if err := gadget.DeleteBucket([]byte(q.Binding)); err != nil {
		return err
	}
	if k, _ := gadget.Cursor().First(); k != nil {
		return nil
	}
	return w.Bucket(bucketQueues).DeleteBucket([]byte(q.GadgetID))
}

// retire notes that the action seq finished, and drops the owner's oldest
// finished actions past the bound.
func (w *writeTx) retire(owner *bolt.Bucket, seq []byte) error {
	done := owner.Bucket(keyDone)
	n, err := done.NextSequence()
	if err != nil {
		return err
	}
	if err := done.Put(u64(n), seq); err != nil {
		return err
	}
	c := done.Cursor()
	for k, v := c.First(); k != nil && n-readU64(k)+1 > uint64(w.l.cfg.maxDone); k, v = c.First() {
		var a gatekeepers.Action
		if err := getJSON(owner.Bucket(keyActions), v, &a); err == nil {
			if err := w.Bucket(bucketIDs).Delete([]byte(a.ID)); err != nil {
				return err
			}
		}
		if err := owner.Bucket(keyActions).Delete(v); err != nil {
			return err
		}
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

func listLimit(n int) int {
	if n <= 0 {
		return defaultList
	}
	return min(n, maxListed)
}
