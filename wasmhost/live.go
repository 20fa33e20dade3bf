package wasmhost

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// liveSet tracks the gadgets that have a live instance, most recently used
// first, and asks the least recently used to evict theirs when there are too
// many, or when their memory together would exceed the budget. Eviction
// itself happens on each gadget's worker, which owns its instance. For the
// count cap a busy victim finishes its call first, so the cap can be
// exceeded briefly, by at most the number of calls in flight. For the memory
// budget only idle instances are asked, and the instance that needs the
// memory waits (briefly) until they have released it.
type liveSet struct {
	mu        sync.Mutex
	max       int
	order     list.List // of *Gadget; front is most recent
	nEvicting int       // entries already asked to evict

	budget uint64        // bytes for all instances (WithMemoryBudget)
	used   uint64        // bytes charged by all instances
	freed  chan struct{} // closed, and replaced, whenever memory is released
}

// lruEntry is a gadget's place in the liveSet, guarded by liveSet.mu.
type lruEntry struct {
	elem     *list.Element
	evicting bool
	memory   uint64 // bytes the gadget's instances have charged
}

// budgetWait bounds how long an instance that needs memory waits for others
// to release it: idle ones it asked to evict, or busy ones whose calls end.
const budgetWait = 2 * time.Second

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
		l.askToEvict(v)
	}
}

func (l *liveSet) askToEvict(v *Gadget) {
	v.lru.evicting = true
	l.nEvicting++
	select {
	case v.evict <- struct{}{}:
	default:
	}
}

// charge counts n more bytes for g's instance. If they do not fit in the
// budget, it asks idle instances, least recently used first, to evict, and
// waits for memory to be released until ctx ends or budgetWait passes. It
// reports whether the bytes were charged; force charges them regardless.
func (l *liveSet) charge(g *Gadget, n uint64, ctx context.Context, force bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	timeout := time.NewTimer(budgetWait)
	defer timeout.Stop()
	for {
		if force || l.used+n <= l.budget {
			l.used += n
			g.lru.memory += n
			return true
		}
		// Busy instances may finish, or die, meanwhile.
		l.evictIdle(g, l.used+n-l.budget)
		freed := l.freed
		l.mu.Unlock()
		select {
		case <-freed:
			l.mu.Lock()
		case <-ctx.Done():
			l.mu.Lock()
			return false
		case <-timeout.C:
			l.mu.Lock()
			return false
		}
	}
}

// evictIdle asks idle instances other than g's to evict, least recently
// used first, until they will release need bytes together with those
// already asked to. It asks none if evicting every idle instance would not
// release enough: only busy instances could, when their calls end.
func (l *liveSet) evictIdle(g *Gadget, need uint64) {
	var pending, idle uint64
	var victims []*Gadget
	for e := l.order.Back(); e != nil; e = e.Prev() {
		switch v := e.Value.(*Gadget); {
		case v.lru.evicting:
			pending += v.lru.memory
		case v != g && !v.busy.Load():
			idle += v.lru.memory
			victims = append(victims, v)
		}
	}
	if pending+idle < need {
		return
	}
	for _, v := range victims {
		if pending >= need {
			break
		}
		l.askToEvict(v)
		pending += v.lru.memory
	}
}

// uncharge returns n bytes g's instance charged.
func (l *liveSet) uncharge(g *Gadget, n uint64) {
	if n == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.used -= n
	g.lru.memory -= n
	close(l.freed)
	l.freed = make(chan struct{})
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
	g.lru = lruEntry{memory: g.lru.memory}
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

// MemoryInUse reports the bytes of host memory the live instances hold, as
// the memory budget counts them (WithMemoryBudget).
func (r *Runtime) MemoryInUse() uint64 {
	r.live.mu.Lock()
	defer r.live.mu.Unlock()
	return r.live.used
}

// gadgetSet is the gadgets of a Runtime that are not yet closed, so that
// Runtime.Close can close them.
type gadgetSet struct {
	mu sync.Mutex
	m  map[*Gadget]struct{}
}

func (s *gadgetSet) add(g *Gadget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[*Gadget]struct{}{}
	}
	s.m[g] = struct{}{}
}

func (s *gadgetSet) remove(g *Gadget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, g)
}

func (s *gadgetSet) all() []*Gadget {
	s.mu.Lock()
	defer s.mu.Unlock()
	gs := make([]*Gadget, 0, len(s.m))
	for g := range s.m {
		gs = append(gs, g)
	}
	return gs
}
