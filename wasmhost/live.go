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
//
// Pooled instances (WithInstancePool, pool.go) are charged to the budget
// too, but to no owner and no gadget: their holding names no gadget until a
// gadget takes one. They take only free budget, never evicting or waiting,
// and an instance that needs room closes the pools' ready instances, then
// ends the fills in progress, before it evicts any idle live one: pool
// filling never makes a live instance fail or wait for more than the fill's
// guest takes to stop. Each pool's ready list and fill are guarded by mu.
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

	pooled    uint64                     // bytes charged by pooled instances, part of used
	pools     map[*instancePool]struct{} // open pools, whose ready instances go first
	fillSlots chan struct{}              // one token per pool fill in progress (maxFills)
}

// holding is what one instance has charged to the budget, and to whom: g is
// the gadget whose instance it is, nil while the instance is pooled. The
// instance and its linear memory share it. Guarded by liveSet.mu.
type holding struct {
	g     *Sandbox
	bytes uint64
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

// charge counts n more bytes for the instance of holding h. If they do not
// fit in the budget, or in the share of the gadget's owner, it makes room
// (see makeRoom); a pooled instance only takes free budget, and none once
// its fill was ended (ctx). It returns withinBounds if the bytes were
// charged, else the bound they did not fit in; force charges them
// regardless.
func (l *liveSet) charge(h *holding, n uint64, ctx context.Context, force bool) memoryBound {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := h.g
	if g == nil {
		if !force && (l.used+n > l.budget || ctx.Err() != nil) {
			return overBudget
		}
		l.used += n
		l.pooled += n
		h.bytes += n
		return withinBounds
	}
	if bound := l.makeRoom(g, n, n, ctx, force); bound != withinBounds {
		return bound
	}
	l.used += n
	if owner := g.cfg.owner; owner != "" {
		l.owners[owner] += n
	}
	g.lru.memory += n
	h.bytes += n
	return withinBounds
}

// adopt moves the charge of pooled holding h to gadget g, which takes the
// instance: its bytes are in the budget already, and now count against g's
// owner's share, which makeRoom makes room in as for any start.
func (l *liveSet) adopt(h *holding, g *Sandbox, ctx context.Context) memoryBound {
	l.mu.Lock()
	defer l.mu.Unlock()
	if bound := l.makeRoom(g, h.bytes, 0, ctx, false); bound != withinBounds {
		return bound
	}
	l.pooled -= h.bytes
	if owner := g.cfg.owner; owner != "" {
		l.owners[owner] += h.bytes
	}
	g.lru.memory += h.bytes
	h.g = g
	return withinBounds
}

// makeRoom returns once share more bytes fit in the share of g's owner and
// budget more bytes fit in the budget. Otherwise it closes pooled instances,
// ends pool fills in progress (cancelFills), then asks idle instances to
// evict (see evictIdle), and waits for memory to
// be released until ctx ends or budgetWait passes; it then returns the
// bound that still has no room. With force it returns at once. l.mu is
// held, and released while it waits.
func (l *liveSet) makeRoom(g *Sandbox, share, budget uint64, ctx context.Context, force bool) memoryBound {
	owner := g.cfg.owner
	timeout := time.NewTimer(budgetWait)
	defer timeout.Stop()
	for {
		bound := withinBounds
		switch {
		case owner != "" && l.owners[owner]+share > l.share:
			bound = overShare
		case budget > 0 && l.used+budget > l.budget:
			bound = overBudget
		}
		if force || bound == withinBounds {
			return withinBounds
		}
		// The owner makes room within its share first, from its own idle
		// instances; only then may it evict others' for room in the budget,
		// pooled ones first: they belong to no gadget, and close at once.
		if bound == overShare {
			l.evictIdle(g, l.owners[owner]+share-l.share, owner)
		} else if pooled := l.takePooled(l.used + budget - l.budget); len(pooled) > 0 {
			l.mu.Unlock()
			for _, inst := range pooled {
				inst.close(errPoolEvicted)
			}
			l.mu.Lock()
			continue
		} else if need, ending := l.used+budget-l.budget, l.cancelFills(); ending < need {
			l.evictIdle(g, need-ending, "")
		}
		// Busy instances may finish, or die, meanwhile; ended fills will
		// release their memory as their guest stops.
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

// takePooled removes ready instances from the pools, each pool's oldest
// first, until
// they hold need bytes or none is left, and returns them for the caller to
// close once it has released mu. Their pools refill when next wanted.
func (l *liveSet) takePooled(need uint64) []*instance {
	var taken []*instance
	var freed uint64
	for p := range l.pools {
		for len(p.ready) > 0 && freed < need {
			inst := p.ready[0]
			p.ready = p.ready[1:]
			freed += inst.held.bytes
			taken = append(taken, inst)
		}
		if freed >= need {
			break
		}
	}
	return taken
}

// cancelFills ends the pools' initializations in progress that hold
// memory, and returns the bytes they hold, which their pool's goroutine
// releases once the guest has stopped. A fill so ended leaves its pool
// empty-handed until it is next wanted; it does not count as the module's
// failure.
func (l *liveSet) cancelFills() uint64 {
	var ending uint64
	for p := range l.pools {
		if f := p.fill; f != nil && f.held.bytes > 0 {
			if !f.evicted {
				f.evicted = true
				f.cancel()
			}
			ending += f.held.bytes
		}
	}
	return ending
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

// uncharge returns n bytes the instance of holding h charged.
func (l *liveSet) uncharge(h *holding, n uint64) {
	if n == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.used -= n
	h.bytes -= n
	if g := h.g; g == nil {
		l.pooled -= n
	} else {
		if owner := g.cfg.owner; owner != "" {
			if l.owners[owner] -= n; l.owners[owner] == 0 {
				delete(l.owners, owner)
			}
		}
		g.lru.memory -= n
	}
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

// MemoryInUse reports the bytes of host memory the live and pooled instances
// hold, as the memory budget counts them (WithMemoryBudget).
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
