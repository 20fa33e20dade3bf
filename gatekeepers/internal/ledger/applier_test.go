package ledger

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gadgetd/gadgetd/gatekeepers"
)

func TestApplierAppliesEachBindingsActionsInOrder(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	var c calls
	startApplier(t, l, c.apply, cannotTell)
	var ids []string
	for range 20 {
		ids = append(ids, queue(t, l, "g1", "web").ID)
	}
	// Approve them newest first: they must still apply oldest first.
	for _, id := range slices.Backward(ids) {
		decide(t, l, "alice", true, id)
	}
	eventually(t, "all applied", func() bool { return state(t, l, "alice", ids[len(ids)-1]) == gatekeepers.Applied })
	if got := c.made(); !slices.Equal(got, ids) {
		t.Fatalf("applied in order %v, want %v", got, ids)
	}
	for _, id := range ids {
		a, _ := l.Action(ctx, "alice", id)
		if a.State != gatekeepers.Applied || a.Outcome.Describe != "done "+id || a.DoneAt.IsZero() {
			t.Fatalf("%s: %+v", id, a)
		}
	}
}

func TestApprovedActionWaitsBehindAPendingOne(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	var c calls
	ap := startApplier(t, l, c.apply, cannotTell)
	first, second := queue(t, l, "g1", "web"), queue(t, l, "g1", "web")
	decide(t, l, "alice", true, second.ID)
	ap.waitIdle() // the worker the approval kicked looked, and stopped
	if made := c.made(); len(made) != 0 {
		t.Fatalf("applied %v while the first action was pending", made)
	}
	if state(t, l, "alice", second.ID) != gatekeepers.Approved {
		t.Fatal("second action left Approved")
	}
	decide(t, l, "alice", true, first.ID) // the approval wakes the applier
	eventually(t, "both applied", func() bool { return len(c.made()) == 2 })
	if got := c.made(); !slices.Equal(got, []string{first.ID, second.ID}) {
		t.Fatalf("order %v", got)
	}
}

func TestRejectedActionDoesNotBlockItsBinding(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	var c calls
	startApplier(t, l, c.apply, cannotTell)
	first, second := queue(t, l, "g1", "web"), queue(t, l, "g1", "web")
	decide(t, l, "alice", true, second.ID)
	decide(t, l, "alice", false, first.ID) // the rejection wakes the applier
	eventually(t, "second applied", func() bool { return len(c.made()) == 1 })
	if got := c.made(); got[0] != second.ID {
		t.Fatalf("applied %v", got)
	}
}

func TestBindingsApplyIndependently(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "slow")
	bind(t, l, "g1", "alice", "fast")
	release := make(chan struct{})
	started := make(chan struct{})
	var c calls
	slow := queue(t, l, "g1", "slow")
	apply := func(ctx context.Context, a gatekeepers.Action) (gatekeepers.Outcome, error) {
		if a.ID == slow.ID {
			close(started)
			<-release
		}
		return c.apply(ctx, a)
	}
	startApplier(t, l, apply, cannotTell)
	slowNext := queue(t, l, "g1", "slow")
	decide(t, l, "alice", true, slow.ID, slowNext.ID)
	<-started
	// While slow's call hangs, fast's actions apply, and slow's next waits.
	var fast []string
	for range 3 {
		a := queue(t, l, "g1", "fast")
		decide(t, l, "alice", true, a.ID)
		fast = append(fast, a.ID)
	}
	eventually(t, "fast applied", func() bool { return len(c.made()) == 3 })
	if got := c.made(); !slices.Equal(got, fast) {
		t.Fatalf("applied %v, want only fast's %v", got, fast)
	}
	close(release)
	eventually(t, "slow applied", func() bool { return len(c.made()) == 5 })
	if got := c.made(); !slices.Equal(got[3:], []string{slow.ID, slowNext.ID}) {
		t.Fatalf("slow's order %v", got[3:])
	}
}

// Many goroutines approve and reject the same actions while an Applier
// runs: each action is decided once, and every approved one is applied
// exactly once, in order.
func TestExactlyOnceUnderConcurrentDecide(t *testing.T) {
	l := newLedger(t)
	for _, name := range []string{"a", "b", "c"} {
		bind(t, l, "g1", "alice", name)
	}
	var c calls
	startApplier(t, l, c.apply, cannotTell, WithConcurrency(2))
	var ids []string
	for i := range 60 {
		ids = append(ids, queue(t, l, "g1", string(rune('a'+i%3))).ID)
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		decided = map[string]int{}
		winners = map[string]bool{} // id -> approved
	)
	for g := range 16 {
		wg.Go(func() {
			order := slices.Clone(ids)
			if g%2 == 1 {
				slices.Reverse(order)
			}
			for _, id := range order {
				approve := (g+len(id))%5 != 0
				ds, err := l.Decide(ctx, "alice", []string{id}, approve, fmt.Sprint("user", g))
				if err != nil {
					t.Error(err)
					return
				}
				if ds[0].Err == nil {
					mu.Lock()
					decided[id]++
					winners[id] = approve
					mu.Unlock()
				} else if !errors.Is(ds[0].Err, ErrDecided) {
					t.Error(ds[0].Err)
				}
			}
		})
	}
	wg.Wait()
	var approved []string
	for _, id := range ids {
		if decided[id] != 1 {
			t.Fatalf("action %s decided %d times", id, decided[id])
		}
		if winners[id] {
			approved = append(approved, id)
		}
	}
	eventually(t, "approved applied", func() bool { return len(c.made()) >= len(approved) })
	made := c.made()
	seen := map[string]bool{}
	for _, id := range made {
		if seen[id] {
			t.Fatalf("%s applied twice", id)
		}
		seen[id] = true
		if !winners[id] {
			t.Fatalf("%s applied without approval", id)
		}
	}
	if len(made) != len(approved) {
		t.Fatalf("applied %d, approved %d", len(made), len(approved))
	}
	// Per binding, in Seq order: ids are in Seq order, and made, filtered
	// to one binding, must be a subsequence equal to it.
	for b := range 3 {
		var want, got []string
		for i, id := range ids {
			if i%3 == b && winners[id] {
				want = append(want, id)
			}
		}
		for _, id := range made {
			if i := slices.Index(ids, id); i%3 == b {
				got = append(got, id)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("binding %d applied %v, want %v", b, got, want)
		}
	}
}

func TestApplyErrorOrPanicFailsTheActionAndTheApplierGoesOn(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	var c calls
	n := 0
	apply := func(ctx context.Context, a gatekeepers.Action) (gatekeepers.Outcome, error) {
		n++ // one binding: one call at a time
		switch n {
		case 1:
			return gatekeepers.Outcome{}, errors.New("service said no: " + strings.Repeat("x", 5000))
		case 2:
			panic("kind bug")
		}
		return c.apply(ctx, a)
	}
	startApplier(t, l, apply, cannotTell)
	a, b, d := queue(t, l, "g1", "web"), queue(t, l, "g1", "web"), queue(t, l, "g1", "web")
	decide(t, l, "alice", true, a.ID, b.ID, d.ID)
	eventually(t, "third applied", func() bool { return state(t, l, "alice", d.ID) == gatekeepers.Applied })
	got, _ := l.Action(ctx, "alice", a.ID)
	if got.State != gatekeepers.Failed || !strings.HasPrefix(got.Outcome.Describe, "service said no") || len(got.Outcome.Describe) > maxErrorText {
		t.Fatalf("error: %s, %d bytes", stateName(got.State), len(got.Outcome.Describe))
	}
	got, _ = l.Action(ctx, "alice", b.ID)
	if got.State != gatekeepers.Failed || !strings.Contains(got.Outcome.Describe, "kind bug") {
		t.Fatalf("panic: %s %q", stateName(got.State), got.Outcome.Describe)
	}
	es, _ := l.Audit(ctx, "alice", AuditFilter{})
	if len(es) != 3 || !es[2].Failed || !es[1].Failed || es[0].Failed {
		t.Fatalf("audit = %+v", es)
	}
}

func TestInDoubtActionHoldsItsBindingUntilDecidedAgain(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	a, b := queue(t, l, "g1", "web"), queue(t, l, "g1", "web")
	decide(t, l, "alice", true, a.ID, b.ID)
	if _, err := l.Begin(ctx, a.ID); err != nil { // as if the process then died
		t.Fatal(err)
	}
	var c calls
	ap := startApplier(t, l, c.apply, cannotTell)
	ap.waitIdle()
	if got, _ := l.Action(ctx, "alice", a.ID); got.State != gatekeepers.InDoubt || got.Outcome.Describe == "" {
		t.Fatalf("interrupted action: %+v", got)
	}
	if made := c.made(); len(made) != 0 {
		t.Fatalf("applied %v behind an action in doubt", made)
	}
	decide(t, l, "alice", true, a.ID) // retry
	eventually(t, "both applied", func() bool { return len(c.made()) == 2 })
	if got := c.made(); !slices.Equal(got, []string{a.ID, b.ID}) {
		t.Fatalf("order %v", got)
	}
}

func TestCloseWaitsForTheCallInProgress(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	started, release := make(chan struct{}), make(chan struct{})
	ap := NewApplier(l, func(ctx context.Context, a gatekeepers.Action) (gatekeepers.Outcome, error) {
		close(started)
		<-release
		return gatekeepers.Outcome{Describe: "made"}, nil
	}, cannotTell)
	if err := ap.Start(ctx); err != nil {
		t.Fatal(err)
	}
	a, b := queue(t, l, "g1", "web"), queue(t, l, "g1", "web")
	decide(t, l, "alice", true, a.ID, b.ID)
	<-started
	closed := make(chan error)
	go func() { closed <- ap.Close(ctx) }()
	eventually(t, "Close began", func() bool { ap.mu.Lock(); defer ap.mu.Unlock(); return ap.closed })
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a call was in progress", err)
	default:
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if state(t, l, "alice", a.ID) != gatekeepers.Applied || state(t, l, "alice", b.ID) != gatekeepers.Approved {
		t.Fatal("Close did not record the call in progress, or began another")
	}
}

// An approval that commits while its binding's worker is deciding to stop
// (it found the head not yet approved) is not lost: the worker looks again.
// The window is short, so the test makes many bindings race through it,
// on a file without fsync to make commits as quick as the worker.
func TestNoApprovalIsLostWhileTheWorkerStops(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "nosync.db"))
	db.NoSync = true
	t.Cleanup(func() { db.Close() })
	l, err := Open(db)
	if err != nil {
		t.Fatal(err)
	}
	var c calls
	startApplier(t, l, c.apply, cannotTell)
	const goroutines, rounds = 4, 300
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range rounds {
				gadget := fmt.Sprint("g", g, "-", i)
				bind(t, l, gadget, "alice", "web")
				first, second := queue(t, l, gadget, "web"), queue(t, l, gadget, "web")
				decide(t, l, "alice", true, second.ID) // kicks a worker that finds first pending
				decide(t, l, "alice", true, first.ID)  // races with that worker stopping
			}
		})
	}
	wg.Wait()
	eventually(t, "every approved action applied", func() bool { return len(c.made()) == 2*goroutines*rounds })
}

func TestTheApplierOutlivesStartsContext(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	var c calls
	startCtx, cancel := context.WithCancel(ctx)
	ap := NewApplier(l, c.apply, cannotTell)
	if err := ap.Start(startCtx); err != nil {
		t.Fatal(err)
	}
	defer ap.Close(ctx)
	cancel()
	a := queue(t, l, "g1", "web")
	decide(t, l, "alice", true, a.ID)
	eventually(t, "applied after Start's context ended", func() bool { return len(c.made()) == 1 })
}
