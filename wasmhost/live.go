package wasmhost

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"
)

// liveSet tracks the gadgets that have a live instance, most recently used
// first, and asks the least recently used to evict theirs when there are too
// many, or when their memory together would exceed the budget or their
// owner's share of it. Eviction itself happens on each gadget's worker,
// which owns its instance. For the count cap a busy victim finishes its call
// first, so the cap can be exceeded briefly, by at most the number of calls
// in flight. For memory only idle instances are asked, and the instance that
// needs the memory waits (briefly) until they have released it.
//
// Locking: mu guards every field, and each gadget's lru entry. Sandbox.busy is
// an atomic the worker sets; a gadget found idle here may start a call before
// its eviction request arrives, and its worker then evicts it after the call
// (Sandbox.run), so memory asked for is released either way. The owner of a
// gadget (WithOwner) never changes, so reading it needs no lock.
//
// Shares: the instances of one owner (WithOwner) together hold at most
// share (WithMemoryShare) of the budget, and an owner over its share makes
// room from its own idle instances only. So an owner within its share finds
// room, by evicting idle instances, whenever everyone else's busy instances
// hold at most budget - share: with the default share, half the budget, no
// single other owner can take it. Gadgets without an owner (the operator's
// own, or a library user's that names none) are bounded by the budget
// alone.
type liveSet struct {
	mu        sync.Mutex
	max       int
	order     list.List // of *Sandbox; front is most recent
	nEvicting int       // entries already asked to evict

	budget uint64            // bytes for all instances (WithMemoryBudget)
	share  uint64            // bytes for all instances of one owner (WithMemoryShare)
	used   uint64            // bytes charged by all instances
	owners map[string]uint64 // bytes charged by each owner's instances; no "" key
	freed  chan struct{}     // closed, and replaced, whenever memory is released
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

func (l *liveSet) add(g *Sandbox) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g.lru.elem != nil {
		return
	}
	g.lru.elem = l.order.PushFront(g)
	for e := l.order.Back(); e != nil && l.order.Len()-l.nEvicting > l.max; e = e.Prev() {
		v := e.Value.(*Sandbox)
		if v == g || v.lru.evicting {
			continue
		}
		l.askToEvict(v)
	}
}

func (l *liveSet) askToEvict(v *Sandbox) {
	v.lru.evicting = true
	l.nEvicting++
	select {
	case v.evict <- struct{}{}:
	default:
	}
}

// memoryBound names the bound a charge did not fit in.
type memoryBound int

const (
	withinBounds memoryBound = iota
	overBudget               // WithMemoryBudget, for all instances
	overShare                // WithMemoryShare, for one owner's instances
)

// busyHolders says who holds the memory that bound b refused, for errors.
func (b memoryBound) busyHolders(cfg *config) string {
	if b == overShare {
		return fmt.Sprintf("its owner's share of the server's memory budget (%d MiB per user) is in use by the owner's busy instances", cfg.memoryShare>>20)
	}
	return fmt.Sprintf("the server's memory budget for all gadgets (%d MiB) is in use by busy instances", cfg.memoryBudget>>20)
}

// charge counts n more bytes for g's instance. If they do not fit in the
// budget, or in the share of g's owner, it asks idle instances to evict (see
// evictIdle), and waits for memory to be released until ctx ends or
// budgetWait passes. It returns withinBounds if the bytes were charged, else
// the bound they did not fit in; force charges them regardless.
func (l *liveSet) charge(g *Sandbox, n uint64, ctx context.Context, force bool) memoryBound {
	owner := g.cfg.owner
	l.mu.Lock()
	defer l.mu.Unlock()
	timeout := time.NewTimer(budgetWait)
	defer timeout.Stop()
	for {
		bound := withinBounds
		switch {
		case owner != "" && l.owners[owner]+n > l.share:
			bound = overShare
		case l.used+n > l.budget:
			bound = overBudget
		}
		if force || bound == withinBounds {
			l.used += n
			if owner != "" {
				l.owners[owner] += n
			}
			g.lru.memory += n
			return withinBounds
		}
		// The owner makes room within its share first, from its own idle
		// instances; only then may it evict others' for room in the budget.
		if bound == overShare {
			l.evictIdle(g, l.owners[owner]+n-l.share, owner)
		} else {
			l.evictIdle(g, l.used+n-l.budget, "")
		}
		// Busy instances may finish, or die, meanwhile.
		freed := l.freed
		l.mu.Unlock()
		select {
		case <-freed:
			l.mu.Lock()
		case <-ctx.Done():
			l.mu.Lock()
			return bound
		case <-timeout.C:
			l.mu.Lock()
			return bound
		}
	}
}

// evictIdle asks idle instances other than g's, of owner only unless owner
// is "", to evict, least recently used first, until they will release need
// bytes together with those of them already asked to. It asks none if
// evicting every one of them would not release enough: only busy instances
// could, when their calls end.
func (l *liveSet) evictIdle(g *Sandbox, need uint64, owner string) {
	var pending, idle uint64
	var victims []*Sandbox
	for e := l.order.Back(); e != nil; e = e.Prev() {
		switch v := e.Value.(*Sandbox); {
		case owner != "" && v.cfg.owner != owner:
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
func (l *liveSet) uncharge(g *Sandbox, n uint64) {
	if n == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.used -= n
	if owner := g.cfg.owner; owner != "" {
		if l.owners[owner] -= n; l.owners[owner] == 0 {
			delete(l.owners, owner)
		}
	}
	g.lru.memory -= n
	close(l.freed)
	l.freed = make(chan struct{})
}

func (l *liveSet) touch(g *Sandbox) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if g.lru.elem != nil && !g.lru.evicting {
		l.order.MoveToFront(g.lru.elem)
	}
}

func (l *liveSet) remove(g *Sandbox) {
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
func (l *liveSet) evicting(g *Sandbox) bool {
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

// MemoryInUseBy reports the bytes of host memory the live instances of
// owner's gadgets hold (WithOwner), as their share of the budget counts them
// (WithMemoryShare).
func (r *Runtime) MemoryInUseBy(owner string) uint64 {
	r.live.mu.Lock()
	defer r.live.mu.Unlock()
	return r.live.owners[owner]
}

// gadgetSet is the gadgets of a Runtime that are not yet closed, so that
// Runtime.Close can close them.
type gadgetSet struct {
	mu sync.Mutex
	m  map[*Sandbox]struct{}
}

func (s *gadgetSet) add(g *Sandbox) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[*Sandbox]struct{}{}
	}
	s.m[g] = struct{}{}
}

func (s *gadgetSet) remove(g *Sandbox) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, g)
}

func (s *gadgetSet) all() []*Sandbox {
	s.mu.Lock()
	defer s.mu.Unlock()
	gs := make([]*Sandbox, 0, len(s.m))
	for g := range s.m {
		gs = append(gs, g)
	}
	return gs
}
