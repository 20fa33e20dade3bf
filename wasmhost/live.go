package wasmhost

import (
	"container/list"
	"sync"
)

// liveSet tracks the gadgets that have a live instance, most recently used
// first, and asks the least recently used to evict theirs when there are too
// many. Eviction itself happens on each gadget's worker, which owns its
// instance; a busy victim finishes its call first, so the cap can be
// exceeded briefly, by at most the number of calls in flight.
type liveSet struct {
	mu        sync.Mutex
	max       int
	order     list.List // of *Gadget; front is most recent
	nEvicting int       // entries already asked to evict
}

// lruEntry is a gadget's place in the liveSet, guarded by liveSet.mu.
type lruEntry struct {
	elem     *list.Element
	evicting bool
}

func (l *liveSet) add(g *Gadget) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g.lru.elem != nil {
		return
	}
	g.lru.elem = l.order.PushFront(g)
	for e := l.order.Back(); e != nil && l.order.Len()-l.nEvicting > l.max; e = e.Prev() {
		v := e.Value.(*Gadget)
		if v == g || v.lru.evicting {
			continue
		}
		v.lru.evicting = true
		l.nEvicting++
		select {
		case v.evict <- struct{}{}:
		default:
		}
	}
}

func (l *liveSet) touch(g *Gadget) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g.lru.elem != nil && !g.lru.evicting {
		l.order.MoveToFront(g.lru.elem)
	}
}

func (l *liveSet) remove(g *Gadget) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g.lru.elem == nil {
		return
	}
	l.order.Remove(g.lru.elem)
	if g.lru.evicting {
		l.nEvicting--
	}
	g.lru = lruEntry{}
}

// evicting reports whether g was asked to evict and still should.
func (l *liveSet) evicting(g *Gadget) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return g.lru.evicting
}

func (l *liveSet) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len()
}

// LiveInstances reports how many gadget instances are live right now.
func (r *Runtime) LiveInstances() int { return r.live.len() }
