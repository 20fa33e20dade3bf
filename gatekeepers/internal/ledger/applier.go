package ledger

// The Applier makes the real calls of approved actions, in order, exactly
// once.
//
// Order and exactly once are the ledger's, not the Applier's: Begin admits
// only a binding's head (its oldest unfinished action) and only if it is
// Approved, and moves it to Applying in the same transaction, so no two
// calls of one action can both begin, and no action begins before an
// earlier one of its binding finished. The Applier only has to ask.
//
// Goroutines: Start runs in its caller's goroutine; it reconciles the
// actions a crash left Applying, then subscribes to the ledger's commits and
// kicks every binding whose head is Approved. A kick for a binding starts
// one worker goroutine for it, unless one is running; a worker applies the
// binding's heads one after another while they are Approved, and ends when
// the head is not. So bindings apply independently and concurrently (at most
// WithConcurrency calls at once), one action at a time each, and nothing
// polls: every commit that changes a binding's queue kicks it (the hub
// calls kick after the commit, in commit order).
//
// Locks: mu guards running, dirty and closed. kick is called under the
// hub's lock, so it only takes mu and starts a goroutine; a worker never
// holds mu while calling the ledger or apply. A kick that arrives while the
// binding's worker runs sets dirty, and the worker looks at the head again
// before it ends, so no kick is lost.
//
// Close stops new kicks and new calls, and waits for the workers, which
// finish the call in progress and record its outcome.

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gadgetd/gadgetd/gatekeepers"
)

// ApplyFunc makes the real call of an approved action.
type ApplyFunc func(ctx context.Context, a gatekeepers.Action) (gatekeepers.Outcome, error)

// ReconcileFunc tells whether an action whose real call began before a
// crash took effect. ok=false means the service cannot tell (it is no
// gatekeepers.Reconciler).
type ReconcileFunc func(ctx context.Context, a gatekeepers.Action) (applied bool, o gatekeepers.Outcome, ok bool, err error)

// Applier applies a ledger's approved actions. Make one per ledger with
// NewApplier, Start it once, and Close it before closing the database.
type Applier struct {
	l         *Ledger
	apply     ApplyFunc
	reconcile ReconcileFunc
	slots     chan struct{} // a token per call in progress

	mu      sync.Mutex
	started bool
	closed  bool
	ctx     context.Context // the workers', ended by Close
	cancel  context.CancelFunc
	running map[queueKey]bool // bindings with a worker
	dirty   map[queueKey]bool // kicked while their worker ran
	workers sync.WaitGroup
}

// ApplierOption configures an Applier.
type ApplierOption func(*Applier)

// WithConcurrency bounds the real calls in progress at once, across all
// bindings. Default 8.
func WithConcurrency(n int) ApplierOption {
	return func(ap *Applier) { ap.slots = make(chan struct{}, max(n, 1)) }
}

// maxErrorText bounds an apply error's text kept as an outcome.
const maxErrorText = 512

// NewApplier returns an Applier that makes l's approved actions' real calls
// with apply, and after a crash asks reconcile about the ones that were in
// progress.
func NewApplier(l *Ledger, apply ApplyFunc, reconcile ReconcileFunc, opts ...ApplierOption) *Applier {
	ap := &Applier{
		l: l, apply: apply, reconcile: reconcile,
		slots:   make(chan struct{}, 8),
		running: make(map[queueKey]bool),
		dirty:   make(map[queueKey]bool),
	}
	for _, o := range opts {
		o(ap)
	}
	return ap
}

// Start settles the actions a crash left Applying: one reconcile says took
// effect is Applied (or Failed) with its outcome, one it says did not is
// Approved again, and one it cannot tell about (or fails on) is InDoubt,
// holding its binding until a human decides it again. Then it applies every
// approved head, and from then on every one that becomes ready, until Close.
// ctx bounds the settling only, and gives its values to the calls; the
// Applier outlives it. Start returns once the settling is done and the
// ready heads are kicked.
func (ap *Applier) Start(ctx context.Context) error {
	ap.mu.Lock()
	if ap.started {
		ap.mu.Unlock()
		return errors.New("applier: already started")
	}
	ap.started = true
	ap.ctx, ap.cancel = context.WithCancel(context.WithoutCancel(ctx))
	ap.mu.Unlock()

	interrupted, err := ap.l.Interrupted(ctx)
	if err != nil {
		return fmt.Errorf("applier: %w", err)
	}
	for _, a := range interrupted {
		if err := ap.settle(ctx, a); err != nil {
			return fmt.Errorf("applier: settle interrupted action %s: %w", a.ID, err)
		}
	}
	// Subscribe before listing the ready heads, so that no change falls
	// between the two; a binding kicked twice is looked at twice.
	ap.l.hub.subscribe(ap)
	ready, err := ap.l.heads(ctx, gatekeepers.Approved)
	if err != nil {
		return fmt.Errorf("applier: %w", err)
	}
	for _, a := range ready {
		ap.kick(queueKey{a.GadgetID, a.Binding})
	}
	return nil
}

func (ap *Applier) settle(ctx context.Context, a gatekeepers.Action) error {
	applied, o, ok, err := ap.callReconcile(ctx, a)
	switch {
	case err != nil:
		return ap.l.Doubt(ctx, a.ID, gatekeepers.Clip("could not tell whether it was applied: "+err.Error(), maxErrorText))
	case !ok:
		return ap.l.Doubt(ctx, a.ID, "the service cannot tell whether it was applied before the server stopped")
	case applied:
		return ap.l.Finish(ctx, a.ID, o, false)
	default:
		return ap.l.Resume(ctx, a.ID)
	}
}

// Close stops applying and waits for the calls in progress to end and be
// recorded. If ctx ends first, it cancels their context and returns
// ctx.Err() without waiting more; an action whose call did not record its
// end stays Applying, for the next Start to settle.
func (ap *Applier) Close(ctx context.Context) error {
	ap.mu.Lock()
	ap.closed = true
	cancel := ap.cancel
	ap.mu.Unlock()
	ap.l.hub.unsubscribe(ap)
	done := make(chan struct{})
	go func() { ap.workers.Wait(); close(done) }()
	select {
	case <-done:
		if cancel != nil {
			cancel()
		}
		return nil
	case <-ctx.Done():
		if cancel != nil {
			cancel()
		}
		return ctx.Err()
	}
}

// kick makes sure a worker looks at the binding's head. It never blocks:
// the hub calls it under its lock.
func (ap *Applier) kick(q queueKey) {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	switch {
	case ap.closed:
	case ap.running[q]:
		ap.dirty[q] = true
	default:
		ap.running[q] = true
		ap.workers.Add(1)
		go ap.work(q)
	}
}

// work applies the binding's heads while they are Approved.
func (ap *Applier) work(q queueKey) {
	defer ap.workers.Done()
	for ap.applyHead(q) || ap.keepWorking(q) {
	}
}

// keepWorking reports whether the worker must look at the head again (it
// was kicked meanwhile), or else ends it.
func (ap *Applier) keepWorking(q queueKey) bool {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	if ap.dirty[q] && !ap.closed {
		delete(ap.dirty, q)
		return true
	}
	delete(ap.dirty, q)
	delete(ap.running, q)
	return false
}

// applyHead applies the binding's head if it is Approved, and reports
// whether it did (and the worker should go on to the next).
func (ap *Applier) applyHead(q queueKey) bool {
	ap.mu.Lock()
	delete(ap.dirty, q) // what a kick asks for is what we do now
	ctx, closed := ap.ctx, ap.closed
	ap.mu.Unlock()
	if closed || ctx.Err() != nil {
		return false
	}
	a, ok, err := ap.l.next(ctx, q)
	if err != nil || !ok {
		return false
	}
	select {
	case ap.slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	defer func() { <-ap.slots }()
	if a, err = ap.l.Begin(ctx, a.ID); err != nil {
		return false // another Applier began it, or the database is gone
	}
	o, err := ap.call(ctx, a)
	if err != nil && ctx.Err() != nil {
		// Stopped mid-call: whether it took effect is for the next
		// Start to find out. It stays Applying.
		return false
	}
	if err != nil {
		o = gatekeepers.Outcome{Describe: gatekeepers.Clip(err.Error(), maxErrorText)}
	}
	// The outcome is recorded even if Close is waiting: it happened.
	return ap.l.Finish(context.WithoutCancel(ctx), a.ID, o, err != nil) == nil
}

// call runs apply, turning a panic into an error.
func (ap *Applier) call(ctx context.Context, a gatekeepers.Action) (o gatekeepers.Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			o, err = gatekeepers.Outcome{}, fmt.Errorf("apply panicked: %v", p)
		}
	}()
	return ap.apply(ctx, a)
}

func (ap *Applier) callReconcile(ctx context.Context, a gatekeepers.Action) (applied bool, o gatekeepers.Outcome, ok bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			applied, o, ok, err = false, gatekeepers.Outcome{}, false, fmt.Errorf("reconcile panicked: %v", p)
		}
	}()
	if ap.reconcile == nil {
		return false, gatekeepers.Outcome{}, false, nil
	}
	return ap.reconcile(ctx, a)
}
