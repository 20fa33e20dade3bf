package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/server"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/schema"
)

// instancePool keeps instances of one module started and initialized before
// any gadget needs one (WithInstancePool). Most of a cold start is the
// guest's initialization (a Go guest's runtime and init functions); a
// gadget that takes a pooled instance skips it.
//
// A pooled instance is started under stand, a gadget that is never run: it
// gives the instance the same deadline, memory limit and context-bound
// termination as any start (newInstance), a Host that fails every call
// (hostStandIn), no storage scope and no owner. When a gadget takes the
// instance, handTo binds it to that gadget: its Host, its generation, its
// owner's share of the budget. What the host keeps per instance is thus
// bound at hand-off, never at fill; what the guest keeps (its memory) was
// never seen by any gadget. An instance is handed out once and never comes
// back.
//
// Filling never costs a live instance memory: a fill takes only free
// budget, and an instance that needs room closes ready instances and then
// ends the fills in progress (cancelFills, live.go), whose memory is
// released as their guest stops; a fill so ended is the budget's doing, not
// the module's, and the pool tries again only when next wanted. At most
// maxFills instances initialize at once across the Runtime (live.fillSlots),
// so many modules' pools together hold at most that many initializations'
// memory and CPU, not one per module.
//
// Goroutines and locking: run, one goroutine per pool, alone starts
// instances, one at a time, and owns each until it puts it in ready. ready
// and fill are guarded by the Runtime's live.mu, since the liveSet takes
// ready instances and ends fills to make room (takePooled, cancelFills);
// whoever removes an instance from ready owns it (a gadget's worker through
// take, or makeRoom, or close). stand.ctx is the current fill's context;
// only run sets and reads it (newInstance). The pool's state for PoolStats
// is guarded by live.mu too.
type instancePool struct {
	mod   *Module
	size  int
	stand *Sandbox // the stand-in gadget pooled instances start under

	ctx    context.Context // ends fills in progress; canceled by close
	cancel context.CancelFunc
	want   chan struct{} // a gadget started an instance, or one left the pool
	done   chan struct{} // closed when run returns
	once   sync.Once

	// Guarded by mod.rt.live.mu.
	ready     []*instance // initialized, belonging to no gadget; oldest first
	fill      *poolFill   // the initialization in progress, if any
	started   uint64      // initializations begun
	failed    uint64      // initializations that failed (not for want of room)
	handedOut uint64
	stopped   error // why the pool stopped filling for good, if it did

	calledHost chan struct{} // closed by hostStandIn: this module's init calls the host
}

// poolFill is a pool's initialization in progress. Guarded by live.mu.
type poolFill struct {
	held    *holding           // what the instance has charged so far
	cancel  context.CancelFunc // ends the initialization, and so the guest
	evicted bool               // makeRoom ended it for its memory
}

// Pool tuning. A refill begins poolRefillDelay after it is wanted, so that
// it does not compete for the CPU with the first call of the gadget that
// took an instance, and a burst of hand-offs is refilled in one round. An
// initialization that fails is retried after poolRetryDelay, doubling, and
// the pool stops after poolMaxFailures failures in a row: an untrusted init
// that traps or loops costs at most that many deadlines.
const (
	poolRefillDelay = 10 * time.Millisecond
	poolRetryDelay  = 100 * time.Millisecond
	poolMaxFailures = 3
	// maxFills bounds the initializations in progress across a Runtime's
	// pools: one, so that a user with many modules whose initialization is
	// slow or hungry holds at most one fill's memory and one core.
	maxFills = 1
)

var (
	errPoolEvicted   = errors.New("pooled instance closed to make room in the memory budget")
	errPoolClosed    = errors.New("instance pool closed")
	errPoolIdle      = errors.New("pooled instance unused for the idle timeout")
	errInitCallsHost = errors.New("the module's initialization calls the host, which a pooled instance, belonging to no gadget yet, cannot offer: instances are started on demand instead")
)

func newInstancePool(m *Module, size int) *instancePool {
	p := &instancePool{
		mod:        m,
		size:       size,
		want:       make(chan struct{}, 1),
		done:       make(chan struct{}),
		calledHost: make(chan struct{}),
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.stand = &Sandbox{rt: m.rt, mod: m, ctx: p.ctx, host: p.hostStandIn(), cfg: gadgetConfig{name: "pooled instance"}}
	l := &m.rt.live
	l.mu.Lock()
	l.pools[p] = struct{}{}
	if l.fillSlots == nil {
		l.fillSlots = make(chan struct{}, maxFills)
	}
	l.mu.Unlock()
	go p.run()
	return p
}

// hostStandIn is the Host of instances while they are pooled. A call to it
// marks the module as one whose initialization needs the host (and so
// cannot be pooled) and fails.
func (p *instancePool) hostStandIn() schema.Host {
	var once sync.Once
	srv := capserver.NewServer(nil, nil, nil)
	srv.HandleUnknownMethod = func(m capnp.Method) *server.Method {
		return &server.Method{Method: m, Impl: func(context.Context, *server.Call) error {
			once.Do(func() { close(p.calledHost) })
			return errInitCallsHost
		}}
	}
	return schema.Host(capnp.NewClient(srv))
}

// take removes a ready instance, the most recently initialized, and returns
// it, or nil if there is none. Either way the pool refills.
func (p *instancePool) take() *instance {
	l := &p.mod.rt.live
	l.mu.Lock()
	var inst *instance
	if n := len(p.ready); n > 0 {
		inst = p.ready[n-1]
		p.ready = p.ready[:n-1]
		p.handedOut++
	}
	l.mu.Unlock()
	p.kick()
	return inst
}

// kick tells run the pool may be short.
func (p *instancePool) kick() {
	select {
	case p.want <- struct{}{}:
	default:
	}
}

// run fills the pool whenever it is wanted, and empties it when it has not
// been for the idle timeout.
func (p *instancePool) run() {
	defer close(p.done)
	idle := time.NewTimer(p.mod.rt.cfg.idleTimeout)
	defer idle.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-idle.C:
			p.drain(errPoolIdle)
			continue
		case <-p.want:
		}
		idle.Reset(p.mod.rt.cfg.idleTimeout)
		if !p.sleep(poolRefillDelay) || !p.refill() {
			return
		}
	}
}

// refill starts instances until the pool is full. It stops early, to try
// again when next wanted, when the budget has no room or a live instance
// took the fill's memory back; it returns false when the pool is closed or
// has stopped for good.
func (p *instancePool) refill() bool {
	l := &p.mod.rt.live
	failures := 0
	delay := poolRetryDelay
	for {
		l.mu.Lock()
		full := len(p.ready) >= p.size
		l.mu.Unlock()
		if full {
			return true
		}
		inst, kept, evicted, err := p.fillOne()
		switch {
		case isClosed(p.calledHost):
			p.stop(errInitCallsHost)
			return false
		case p.ctx.Err() != nil:
			return false
		case kept:
			failures, delay = 0, poolRetryDelay
			continue
		case evicted || inst.refused != withinBounds:
			return true // no room: not the guest's fault
		}
		l.mu.Lock()
		p.failed++
		l.mu.Unlock()
		if failures++; failures >= poolMaxFailures {
			p.stop(fmt.Errorf("its initialization failed %d times in a row: %w", failures, err))
			return false
		}
		if !p.sleep(delay) {
			return false
		}
		delay *= 2
	}
}

// fillOne initializes one instance, once it has one of the Runtime's
// maxFills slots, under a context that makeRoom cancels to take its memory
// back (cancelFills). It puts the instance in ready, and reports kept, only
// if it started and was neither evicted meanwhile nor made by a closing pool
// or a host-calling initialization; otherwise it closes it. inst is nil only
// if the pool closed before the fill began.
func (p *instancePool) fillOne() (inst *instance, kept, evicted bool, err error) {
	l := &p.mod.rt.live
	select {
	case l.fillSlots <- struct{}{}:
	case <-p.ctx.Done():
		return nil, false, false, errPoolClosed
	}
	defer func() { <-l.fillSlots }()
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	fill := &poolFill{held: &holding{}, cancel: cancel}
	l.mu.Lock()
	p.started++
	p.fill = fill
	l.mu.Unlock()

	p.stand.ctx = ctx
	inst, err = newInstance(p.stand, fill.held)
	hostCalled := isClosed(p.calledHost)

	l.mu.Lock()
	p.fill = nil
	evicted = fill.evicted
	kept = err == nil && !evicted && !hostCalled && p.ctx.Err() == nil
	if kept {
		p.ready = append(p.ready, inst)
	}
	l.mu.Unlock()
	if err == nil && !kept {
		cause := errPoolEvicted
		switch {
		case hostCalled:
			cause = errInitCallsHost
		case p.ctx.Err() != nil:
			cause = errPoolClosed
		}
		inst.close(cause)
	}
	return inst, kept, evicted, err
}

// isClosed reports whether c is closed.
func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// sleep waits for d, and reports false if the pool closed meanwhile.
func (p *instancePool) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// stop records why the pool stopped filling for good.
func (p *instancePool) stop(why error) {
	l := &p.mod.rt.live
	l.mu.Lock()
	p.stopped = why
	l.mu.Unlock()
}

// drain closes the ready instances.
func (p *instancePool) drain(cause error) {
	l := &p.mod.rt.live
	l.mu.Lock()
	ready := p.ready
	p.ready = nil
	l.mu.Unlock()
	for _, inst := range ready {
		inst.close(cause)
	}
}

// close stops the pool and closes its instances, the one being started
// included: it waits for run, whose start ends with p.ctx.
func (p *instancePool) close() {
	p.once.Do(func() {
		p.cancel()
		<-p.done
		l := &p.mod.rt.live
		l.mu.Lock()
		delete(l.pools, p)
		l.mu.Unlock()
		p.drain(errPoolClosed)
		p.stand.host.Release()
	})
}

// handTo gives pooled instance inst to gadget g, which has no live
// instance: from here on it is g's, as if g had started it. If g's owner's
// share has no room for it, even after evicting the owner's idle instances,
// inst is closed and the start fails as any start would.
func (inst *instance) handTo(g *Sandbox) error {
	if bound := g.rt.live.adopt(inst.held, g, g.ctx); bound != withinBounds {
		err := cannotStart(g, inst.memoryHeld(), bound)
		inst.close(err)
		return err
	}
	// The pool's stand-in Host is import 0 and the only import: the
	// guest had none to call while pooled.
	standIn := inst.imports[0]
	inst.imports[0] = importEntry{client: capnp.Client(g.host).AddRef(), trusted: true}
	standIn.client.Release()
	inst.g = g
	g.gen++
	inst.gen = g.gen
	return nil
}

// memoryHeld is what inst has charged to the budget.
func (inst *instance) memoryHeld() uint64 {
	l := &inst.rt.live
	l.mu.Lock()
	defer l.mu.Unlock()
	return inst.held.bytes
}

// start gives g a live instance: a pooled one if its module's pool has one
// ready, else a new one.
func (g *Sandbox) start() (*instance, error) {
	if p := g.mod.pool; p != nil {
		if inst := p.take(); inst != nil {
			if err := inst.handTo(g); err != nil {
				return nil, err
			}
			return inst, nil
		}
	}
	return g.instantiate()
}

// PoolStats describes a module's instance pool (WithInstancePool).
type PoolStats struct {
	Ready     int    // initialized instances waiting for a gadget
	Started   uint64 // initializations the pool began
	Failed    uint64 // of those, the ones that failed (not for want of room)
	HandedOut uint64 // instances handed to gadgets
	// Stopped says why the pool stopped filling for good, if it did: the
	// module's initialization calls the host, or keeps failing.
	Stopped error
}

// PoolStats reports on m's instance pool; zero without WithInstancePool.
func (m *Module) PoolStats() PoolStats {
	p := m.pool
	if p == nil {
		return PoolStats{}
	}
	l := &m.rt.live
	l.mu.Lock()
	defer l.mu.Unlock()
	return PoolStats{Ready: len(p.ready), Started: p.started, Failed: p.failed, HandedOut: p.handedOut, Stopped: p.stopped}
}
