package ledger

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/gatekeepers"
)

// events collects what a watcher is told.
type events struct {
	mu     sync.Mutex
	got    []gatekeepers.Action
	missed int
}

func (e *events) add(a gatekeepers.Action) { e.mu.Lock(); e.got = append(e.got, a); e.mu.Unlock() }
func (e *events) miss()                    { e.mu.Lock(); e.missed++; e.mu.Unlock() }
func (e *events) len() int                 { e.mu.Lock(); defer e.mu.Unlock(); return len(e.got) }
func (e *events) all() []gatekeepers.Action {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.got)
}

// Queues committed concurrently reach a watcher in commit order (Seq is
// taken inside the transaction, so it is the commit order), and each
// action's states in the order they happened; another owner's never.
func TestWatchDeliversEveryChangeInCommitOrder(t *testing.T) {
	l := newLedger(t, WithWatchBuffer(10000))
	for g := range 4 {
		bind(t, l, fmt.Sprint("g", g), "alice", "web")
	}
	bind(t, l, "bobs", "bob", "web")
	var seen events
	cancel := l.Watch("alice", seen.add, seen.miss)
	defer cancel()

	const perGadget = 40
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for range perGadget {
				queue(t, l, fmt.Sprint("g", g), "web")
				queue(t, l, "bobs", "web")
			}
		})
	}
	wg.Wait()
	eventually(t, "every queue seen", func() bool { return seen.len() == 4*perGadget })
	var last uint64
	for _, a := range seen.all() {
		if a.OwnerID != "alice" {
			t.Fatalf("alice's watcher saw %s's action", a.OwnerID)
		}
		if a.Seq <= last {
			t.Fatalf("seq %d after %d: not in commit order", a.Seq, last)
		}
		last = a.Seq
	}

	// Each action's life, as the watcher sees it.
	queued := seen.all()
	var c calls
	startApplier(t, l, c.apply, cannotTell)
	var ids []string
	for _, a := range queued {
		ids = append(ids, a.ID)
	}
	decide(t, l, "alice", true, ids...)
	eventually(t, "every change seen", func() bool { return seen.len() == 4*4*perGadget })
	states := map[string][]gatekeepers.ActionState{}
	for _, a := range seen.all() {
		states[a.ID] = append(states[a.ID], a.State)
	}
	want := []gatekeepers.ActionState{gatekeepers.Pending, gatekeepers.Approved, gatekeepers.Applying, gatekeepers.Applied}
	for id, s := range states {
		if !slices.Equal(s, want) {
			t.Fatalf("%s went through %v, want %v", id, s, want)
		}
	}
	if seen.missed != 0 {
		t.Fatal("missed events with room to spare")
	}
}

// A watcher that does not return holds up neither commits nor other
// watchers; when its buffer overflows it is told it missed events, and
// then hears of new ones.
func TestSlowWatcherDoesNotStallCommits(t *testing.T) {
	l := newLedger(t, WithWatchBuffer(4))
	bind(t, l, "g1", "alice", "web")
	release := make(chan struct{})
	var slow, fast events
	cancelSlow := l.Watch("alice", func(a gatekeepers.Action) {
		<-release
		slow.add(a)
	}, slow.miss)
	defer cancelSlow()
	cancelFast := l.Watch("alice", fast.add, fast.miss)
	defer cancelFast()

	// Each commit waits for the fast watcher only, to keep it within its
	// small buffer on a busy machine.
	queued := make(chan error, 1)
	go func() {
		for i := range 50 {
			if _, err := l.Queue(ctx, gatekeepers.Action{GadgetID: "g1", Binding: "web", Method: "post"}); err != nil {
				queued <- err
				return
			}
			for fast.len() < i+1 {
				time.Sleep(time.Millisecond)
			}
		}
		queued <- nil
	}()
	select {
	case err := <-queued:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("commits stalled behind a slow watcher")
	}
	close(release)
	eventually(t, "the slow watcher was told it missed events", func() bool {
		slow.mu.Lock()
		defer slow.mu.Unlock()
		return slow.missed == 1
	})
	last := queue(t, l, "g1", "web")
	eventually(t, "the slow watcher hears of new events", func() bool {
		got := slow.all()
		return len(got) > 0 && got[len(got)-1].ID == last.ID
	})
	if n := slow.len(); n > 4+4+1 { // the batch it was stuck in, a buffer, the last
		t.Fatalf("slow watcher got %d events; it should have missed most", n)
	}
	if fast.missed != 0 {
		t.Fatal("the fast watcher missed events")
	}
}

func TestCancelledWatcherHearsNothingMore(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	var seen events
	var cancel func()
	cancel = l.Watch("alice", func(a gatekeepers.Action) {
		seen.add(a)
		cancel() // from inside fn: must not deadlock
	}, nil)
	queue(t, l, "g1", "web")
	eventually(t, "first event", func() bool { return seen.len() == 1 })
	for range 5 {
		queue(t, l, "g1", "web")
	}
	// A watcher still running would see these: the watch below is set
	// after them, and its event proves they were published.
	var after events
	defer l.Watch("alice", after.add, nil)()
	queue(t, l, "g1", "web")
	eventually(t, "a later watcher's event", func() bool { return after.len() == 1 })
	if n := seen.len(); n != 1 {
		t.Fatalf("cancelled watcher got %d events", n)
	}
}

// A watcher's buffer holds events, not bodies: a gadget queuing large
// payloads cannot make a slow watcher hold them.
func TestWatchedActionsCarryNoPayload(t *testing.T) {
	l := newLedger(t)
	bind(t, l, "g1", "alice", "web")
	var seen events
	defer l.Watch("alice", seen.add, nil)()
	a, err := l.Queue(ctx, gatekeepers.Action{GadgetID: "g1", Binding: "web", Method: "post", Payload: make([]byte, 100<<10)})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the event", func() bool { return seen.len() == 1 })
	if got := seen.all()[0]; got.ID != a.ID || got.Payload != nil {
		t.Fatalf("event for %s carries %d bytes of payload", got.ID, len(got.Payload))
	}
	if kept, _ := l.Action(ctx, "alice", a.ID); len(kept.Payload) != 100<<10 {
		t.Fatal("the payload was not kept")
	}
}
