package ledger

// The hub hands what each committed write transaction changed to the
// watchers of the actions' owners and to running Appliers, in commit order.
//
// Commit order: Ledger.update numbers each transaction inside it (bbolt runs
// one writer at a time) and publishes its batch after bbolt returns, which is
// after bbolt released its writer lock, so batches may reach publish out of
// order. publish holds a batch until every earlier one was released.
//
// Locks: hub.mu guards the watchers, the subscribers and the held batches.
// Under it, publish only appends to a watcher's buffer (watcher.mu, never
// held while calling out) and calls the Appliers' kick, which takes only the
// Applier's own mutex and never blocks. Nothing is called back under hub.mu
// that could take it again.
//
// Goroutines: each watcher has one goroutine, started by Watch and ended by
// its cancel, which calls its fn and missed with no lock held. So a slow fn
// holds up only its own watcher, never a commit: its buffer is bounded, and
// when it is full the buffered events are dropped and missed is called before
// the next event, to say the watcher must re-list.

import (
	"sync"

	"github.com/gadgetd/gadgetd/gatekeepers"
)

// batch is what one write transaction changed.
type batch struct {
	actions []gatekeepers.Action
	queues  []queueKey
}

type hub struct {
	mu       sync.Mutex
	next     uint64           // the serial of the next batch to release
	held     map[uint64]batch // published before their turn
	watchers map[string]map[*watcher]struct{}
	kicks    map[*Applier]struct{}
	buffer   int
}

func (h *hub) init() {
	h.held = make(map[uint64]batch)
	h.watchers = make(map[string]map[*watcher]struct{})
	h.kicks = make(map[*Applier]struct{})
}

// publish releases batch serial once every batch before it was released.
func (h *hub) publish(serial uint64, b batch) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held[serial] = b
	for {
		b, ok := h.held[h.next]
		if !ok {
			return
		}
		delete(h.held, h.next)
		h.next++
		for _, a := range b.actions {
			// Listeners want what happened, not the bodies: without them
			// a watcher's buffer holds a few KiB an event at most.
			a.Payload, a.Outcome.Result = nil, nil
			for w := range h.watchers[a.OwnerID] {
				w.push(a)
			}
		}
		for _, q := range b.queues {
			for ap := range h.kicks {
				ap.kick(q)
			}
		}
	}
}

func (h *hub) subscribe(ap *Applier) {
	h.mu.Lock()
	h.kicks[ap] = struct{}{}
	h.mu.Unlock()
}

func (h *hub) unsubscribe(ap *Applier) {
	h.mu.Lock()
	delete(h.kicks, ap)
	h.mu.Unlock()
}

// Watch calls fn, on a goroutine of its own, for every action of the owner
// that is queued or changes state, after its transaction committed, in
// commit order. The action is given without its Payload and Outcome.Result
// (Action has them). If fn falls more than the watch buffer (WithWatchBuffer)
// behind, the events not yet delivered are dropped and missed (if not nil)
// is called before the next one: the watcher should re-list the actions.
// Commits never wait for fn. cancel stops the watcher: when it returns, a
// call of fn may still be running, or about to run, but no other follows.
// cancel may be called from fn.
func (l *Ledger) Watch(ownerID string, fn func(gatekeepers.Action), missed func()) (cancel func()) {
	w := &watcher{max: l.cfg.watchBuffer, wake: make(chan struct{}, 1), done: make(chan struct{})}
	h := &l.hub
	h.mu.Lock()
	if h.watchers[ownerID] == nil {
		h.watchers[ownerID] = make(map[*watcher]struct{})
	}
	h.watchers[ownerID][w] = struct{}{}
	h.mu.Unlock()
	go w.run(fn, missed)
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.watchers[ownerID], w)
			if len(h.watchers[ownerID]) == 0 {
				delete(h.watchers, ownerID)
			}
			h.mu.Unlock()
			close(w.done)
		})
	}
}

type watcher struct {
	max  int
	wake chan struct{} // one pending signal: there is something to deliver
	done chan struct{} // closed by cancel

	mu     sync.Mutex
	buf    []gatekeepers.Action
	missed bool
}

// push queues a for delivery. It never blocks.
func (w *watcher) push(a gatekeepers.Action) {
	w.mu.Lock()
	if len(w.buf) >= w.max {
		w.buf, w.missed = w.buf[:0], true
	} else {
		w.buf = append(w.buf, a)
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *watcher) run(fn func(gatekeepers.Action), missed func()) {
	var events []gatekeepers.Action
	for {
		select {
		case <-w.done:
			return
		case <-w.wake:
		}
		w.mu.Lock()
		events, w.buf = w.buf, events[:0]
		lost := w.missed
		w.missed = false
		w.mu.Unlock()
		if lost && missed != nil && !w.canceled() {
			missed()
		}
		for _, a := range events {
			if w.canceled() {
				return
			}
			fn(a)
		}
	}
}

func (w *watcher) canceled() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}
