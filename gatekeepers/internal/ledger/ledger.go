package ledger

// Layout of the ledger's buckets in the bbolt file it shares with the store
// (bucket names in quotes, values JSON unless noted; seq keys are 8-byte
// big-endian, so that cursors walk them in order):
//
//	"gkbindings" / gadget id / binding name -> gatekeepers.Binding
//	"gkowners"   / owner id / {
//	    "actions" / seq -> gatekeepers.Action   (bucket sequence: the owner's action Seq)
//	    "done"    / n -> seq of a finished action, in the order they finished
//	              (bucket sequence numbers them; the oldest is dropped first)
//	    "audit"   / seq -> Entry, a read        (bucket sequence: Entry.Seq, of both kinds)
//	    "auditacts" / seq -> Entry about an action (ActionID set)
//	    "auditn", "auditactsn" -> uint64 BE: how many entries each holds
//	    "open"    -> uint64 BE: how many of the owner's actions are open
//	}
//	"gkids"      action id -> actionRef (which owner, which seq)
//	"gkqueues"   / gadget id / binding name / seq -> action id: the binding's
//	             open actions (Pending, Approved, Applying, InDoubt); the
//	             first is the binding's head, the only one that may apply
//
// bbolt serializes writers itself and allows concurrent readers, so the
// ledger has no lock around its data. Every write goes through
// Ledger.update, which hands the actions it changed to the hub (watch.go)
// after the commit, in commit order. Values returned by bbolt are only valid
// inside the transaction; every one that leaves is copied (decoded).

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/gadgetd/gadgetd/gatekeepers"
	"github.com/gadgetd/gadgetd/internal/store"
)

var (
	bucketBindings = []byte("gkbindings")
	bucketOwners   = []byte("gkowners")
	bucketIDs      = []byte("gkids")
	bucketQueues   = []byte("gkqueues")

	keyActions = []byte("actions")
	keyDone    = []byte("done")
	keyAudit   = []byte("audit")
	// Entries about actions are kept apart from reads, each bounded on its
	// own, so that a gadget's reads cannot push the record of an action
	// out of the log.
	keyAuditActs  = []byte("auditacts")
	keyAuditN     = []byte("auditn")
	keyAuditActsN = []byte("auditactsn")
	keyOpen       = []byte("open")
)

// Errors, tested with errors.Is. The first three are the store's own, so
// that the server maps the ledger's errors to its answers as it does the
// store's.
var (
	ErrNotFound = store.ErrNotFound
	ErrExists   = store.ErrExists
	ErrLimit    = store.ErrLimit
	// ErrDecided: Decide on an action that is not waiting for a decision
	// (it was already approved, rejected, applied...).
	ErrDecided = errors.New("already decided")
	// ErrState: Begin, Finish, Resume or Doubt on an action that is not in
	// the state the step starts from, or Begin on an action that is not its
	// binding's head.
	ErrState = errors.New("action is not in the state this step needs")
	// ErrInvalid: a binding or action that lacks what it must have.
	ErrInvalid = errors.New("invalid")
)

// Bounds on text: every string the ledger keeps from a caller (action and
// audit descriptions, outcomes, names) is cut to at most maxText bytes, on a
// rune boundary, so that no gadget can grow a record without limit.
const (
	maxText     = 1024
	maxName     = 128 // binding names and gadget ids: bbolt keys
	maxAuto     = 64  // auto-approved methods per binding
	maxListed   = 1000
	defaultList = 100
)

// Ledger keeps gatekeeper bindings, the action queue and the audit log in
// buckets of a bbolt file it does not own. It is safe for concurrent use.
type Ledger struct {
	db  *bolt.DB
	cfg config
	hub hub
	// serial numbers the write transactions that changed actions, in
	// commit order. It is read and written only inside a write
	// transaction, which bbolt runs one at a time.
	serial uint64
}

type config struct {
	maxAudit    int
	maxOpen     int
	maxDone     int
	maxBindings int
	maxPayload  int
	watchBuffer int
	now         func() time.Time
}

// Option configures a Ledger.
type Option func(*config)

// WithMaxAuditEntries bounds an owner's audit log; past it, the oldest
// entries are dropped. Default 10000.
func WithMaxAuditEntries(perOwner int) Option { return func(c *config) { c.maxAudit = perOwner } }

// WithMaxOpenActions bounds an owner's actions not yet finished (Pending,
// Approved, Applying, InDoubt); Queue past it fails with ErrLimit.
// Default 1000.
func WithMaxOpenActions(perOwner int) Option { return func(c *config) { c.maxOpen = perOwner } }

// WithMaxFinishedActions bounds how many of an owner's finished actions
// (Applied, Failed, Rejected) are kept; past it, the one that finished first
// is dropped. Default 10000.
func WithMaxFinishedActions(perOwner int) Option { return func(c *config) { c.maxDone = perOwner } }

// WithMaxBindings bounds a gadget's bindings; Bind past it fails with
// ErrLimit. Default 32.
func WithMaxBindings(perGadget int) Option { return func(c *config) { c.maxBindings = perGadget } }

// WithMaxPayload bounds an action's payload in bytes; Queue past it fails
// with ErrLimit. Default 256 KiB.
func WithMaxPayload(bytes int) Option { return func(c *config) { c.maxPayload = bytes } }

// WithWatchBuffer bounds the events a watcher may fall behind by before it
// is told it missed some (see Watch). Default 256.
func WithWatchBuffer(events int) Option { return func(c *config) { c.watchBuffer = events } }

// WithClock sets the clock, for tests.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// Open returns the ledger kept in db, creating its buckets if need be. The
// caller keeps db and closes it, after closing any Applier of the ledger.
func Open(db *bolt.DB, opts ...Option) (*Ledger, error) {
	cfg := config{
		maxAudit:    10000,
		maxOpen:     1000,
		maxDone:     10000,
		maxBindings: 32,
		maxPayload:  256 << 10,
		watchBuffer: 256,
		now:         time.Now,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.maxAudit < 1 || cfg.maxOpen < 1 || cfg.maxDone < 1 || cfg.maxBindings < 1 || cfg.maxPayload < 0 || cfg.watchBuffer < 1 {
		return nil, fmt.Errorf("ledger: %w option: bounds must be positive", ErrInvalid)
	}
	err := db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketBindings, bucketOwners, bucketIDs, bucketQueues} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	l := &Ledger{db: db, cfg: cfg}
	l.hub.init()
	return l, nil
}

func (l *Ledger) now() time.Time { return l.cfg.now().UTC() }

// writeTx is one write transaction of the ledger and what it changed.
type writeTx struct {
	*bolt.Tx
	l       *Ledger
	changed []gatekeepers.Action // in the order the transaction changed them
	queues  []queueKey           // bindings whose queue changed
}

// update runs fn in a write transaction and, once it committed, hands the
// actions it changed to the hub. Serials are taken as the transaction's last
// step, when only the commit itself can still fail, and published even then
// (empty), so that the hub, which releases batches in serial order, never
// waits for one that will not come.
func (l *Ledger) update(ctx context.Context, fn func(w *writeTx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var (
		w         writeTx
		serial    uint64
		staged    bool
		published bool
	)
	defer func() {
		if staged && !published { // bbolt panicked in Commit
			l.hub.publish(serial, batch{})
		}
	}()
	err := l.db.Update(func(tx *bolt.Tx) error {
		w = writeTx{Tx: tx, l: l}
		if err := fn(&w); err != nil {
			return err
		}
		if len(w.changed) > 0 || len(w.queues) > 0 {
			serial, staged = l.serial, true
			l.serial++
		}
		return nil
	})
	if staged {
		if err != nil {
			w.changed, w.queues = nil, nil
		}
		published = true
		l.hub.publish(serial, batch{actions: w.changed, queues: w.queues})
	}
	return err
}

func (l *Ledger) view(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.db.View(fn)
}

// Bind adds b. It fails with ErrExists if the gadget already has a binding
// of that name (or had one, whose last action is still being applied), and
// with ErrLimit if the gadget has as many as it may.
// CreatedAt is set if zero.
func (l *Ledger) Bind(ctx context.Context, b gatekeepers.Binding) error {
	if b.GadgetID == "" || b.OwnerID == "" || b.Name == "" || b.Kind == "" {
		return fmt.Errorf("bind: %w binding: gadget, owner, name and kind are required", ErrInvalid)
	}
	if len(b.GadgetID) > maxName || len(b.Name) > maxName {
		return fmt.Errorf("bind: %w binding: gadget id and name are at most %d bytes", ErrInvalid, maxName)
	}
	b.AutoApprove = slices.Compact(slices.Sorted(slices.Values(b.AutoApprove)))
	if len(b.AutoApprove) > maxAuto {
		return fmt.Errorf("bind: %d auto-approved methods: %w (at most %d)", len(b.AutoApprove), ErrLimit, maxAuto)
	}
	if b.CreatedAt.IsZero() {
		b.CreatedAt = l.now()
	}
	return l.update(ctx, func(w *writeTx) error {
		gadget, err := w.Bucket(bucketBindings).CreateBucketIfNotExists([]byte(b.GadgetID))
		if err != nil {
			return err
		}
		if gadget.Get([]byte(b.Name)) != nil {
			return fmt.Errorf("binding %q: %w", b.Name, ErrExists)
		}
		// An action of an earlier binding of the name may still be
		// applying (Unbind leaves those to finish). Until it is done, the
		// name stays taken, so that whoever applies it finds no binding
		// rather than this one, with another resource.
		if queueBucket(w.Tx, queueKey{b.GadgetID, b.Name}) != nil {
			return fmt.Errorf("binding %q: %w: an action of its previous binding is still being applied; try again", b.Name, ErrExists)
		}
		if n := gadget.Stats().KeyN; n >= l.cfg.maxBindings {
			return fmt.Errorf("binding %q: %w: the gadget has %d bindings", b.Name, ErrLimit, n)
		}
		return putJSON(gadget, []byte(b.Name), b)
	})
}

// Unbind removes the gadget's binding name and returns it. Its actions that
// wait for a decision or their turn (Pending, Approved, InDoubt) become
// Rejected, decided by "unbound", in the same transaction; one already
// Applying finishes as it would have.
func (l *Ledger) Unbind(ctx context.Context, gadgetID, name string) (gatekeepers.Binding, error) {
	var b gatekeepers.Binding
	err := l.update(ctx, func(w *writeTx) error {
		var err error
		if b, err = getBinding(w.Tx, gadgetID, name); err != nil {
			return err
		}
		return w.unbind(gadgetID, name, "unbound")
	})
	return b, err
}

// DeleteGadget removes every binding of the gadget and rejects their open
// actions, decided by "gadget deleted". The audit log is kept.
func (l *Ledger) DeleteGadget(ctx context.Context, gadgetID string) error {
	return l.update(ctx, func(w *writeTx) error {
		gadget := w.Bucket(bucketBindings).Bucket([]byte(gadgetID))
		if gadget == nil {
			return nil
		}
		var names []string
		gadget.ForEach(func(k, _ []byte) error { names = append(names, string(k)); return nil })
		for _, name := range names {
			// The last one deletes the gadget's bucket.
			if err := w.unbind(gadgetID, name, "gadget deleted"); err != nil {
				return err
			}
		}
		return nil
	})
}

// unbind deletes a binding and rejects its actions that are not Applying.
func (w *writeTx) unbind(gadgetID, name, by string) error {
	open, err := w.queued(queueKey{gadgetID, name})
	if err != nil {
		return err
	}
	now := w.l.now()
	for _, a := range open {
		if a.State == gatekeepers.Applying {
			continue
		}
		from := a.State
		a.State, a.DecidedBy, a.DecidedAt, a.DoneAt = gatekeepers.Rejected, by, now, now
		if err := w.saveAction(from, a); err != nil {
			return err
		}
	}
	gadget := w.Bucket(bucketBindings).Bucket([]byte(gadgetID))
	if err := gadget.Delete([]byte(name)); err != nil {
		return err
	}
	if k, _ := gadget.Cursor().First(); k == nil {
		return w.Bucket(bucketBindings).DeleteBucket([]byte(gadgetID))
	}
	return nil
}

// Binding returns the gadget's binding name, or an error wrapping both
// ErrNotFound and gatekeepers.ErrNoBinding.
func (l *Ledger) Binding(ctx context.Context, gadgetID, name string) (gatekeepers.Binding, error) {
	var b gatekeepers.Binding
	err := l.view(ctx, func(tx *bolt.Tx) error {
		var err error
		b, err = getBinding(tx, gadgetID, name)
		return err
	})
	return b, err
}

// Bindings returns the gadget's bindings, sorted by name.
func (l *Ledger) Bindings(ctx context.Context, gadgetID string) ([]gatekeepers.Binding, error) {
	var bs []gatekeepers.Binding
	err := l.view(ctx, func(tx *bolt.Tx) error {
		gadget := tx.Bucket(bucketBindings).Bucket([]byte(gadgetID))
		if gadget == nil {
			return nil
		}
		return gadget.ForEach(func(_, v []byte) error {
			var b gatekeepers.Binding
			if err := json.Unmarshal(v, &b); err != nil {
				return err
			}
			bs = append(bs, b)
			return nil
		})
	})
	return bs, err // bbolt keys are sorted, so the names are
}

// SetAutoApprove sets whether the binding's actions of method are approved
// as they are queued. Actions already queued are not changed. The caller
// checks that method is an action method of the binding's kind.
func (l *Ledger) SetAutoApprove(ctx context.Context, gadgetID, name, method string, on bool) error {
	if method == "" || len(method) > maxName {
		return fmt.Errorf("auto-approve: %w method %q", ErrInvalid, method)
	}
	return l.update(ctx, func(w *writeTx) error {
		b, err := getBinding(w.Tx, gadgetID, name)
		if err != nil {
			return err
		}
		i, found := slices.BinarySearch(b.AutoApprove, method)
		switch {
		case on && !found:
			if len(b.AutoApprove) >= maxAuto {
				return fmt.Errorf("auto-approve %s: %w (at most %d methods)", method, ErrLimit, maxAuto)
			}
			b.AutoApprove = slices.Insert(b.AutoApprove, i, method)
		case !on && found:
			b.AutoApprove = slices.Delete(b.AutoApprove, i, i+1)
		default:
			return nil
		}
		return putJSON(w.Bucket(bucketBindings).Bucket([]byte(gadgetID)), []byte(name), b)
	})
}

func getBinding(tx *bolt.Tx, gadgetID, name string) (gatekeepers.Binding, error) {
	var b gatekeepers.Binding
	gadget := tx.Bucket(bucketBindings).Bucket([]byte(gadgetID))
	if gadget == nil || name == "" {
		return b, noBinding(name)
	}
	raw := gadget.Get([]byte(name))
	if raw == nil {
		return b, noBinding(name)
	}
	return b, json.Unmarshal(raw, &b)
}

func noBinding(name string) error {
	return fmt.Errorf("binding %q: %w (%w)", name, gatekeepers.ErrNoBinding, ErrNotFound)
}

func putJSON(b *bolt.Bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, raw)
}

func getJSON(b *bolt.Bucket, key []byte, v any) error {
	raw := b.Get(key)
	if raw == nil {
		return ErrNotFound
	}
	return json.Unmarshal(raw, v)
}

func u64(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

func readU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}
