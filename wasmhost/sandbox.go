package wasmhost

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/schema"
)

// Sandbox is one gadget's sandbox: a module, the Host capability lent to it,
// and at most one live instance, created on first use.
//
// Goroutines and locking: every call into the guest goes through inbox and is
// run by the gadget's one worker goroutine (run), which alone owns the
// instance and everything in it. Capabilities for guest objects (guestObject,
// guestobject.go) only enqueue deliveries, on their caller's goroutine, and
// the worker answers each through its caller's Returner, so nothing else
// touches instance state and no goroutine waits in between. mu guards the few
// fields other goroutines write: releases and closed; enqueue holds it so
// that no call lands in inbox after run has drained it for the last time.
// Close reaches into a running call only through ctx (every call derives from
// it) and, past its bound, through running's wazero module, which is safe to
// close from any goroutine.
type Sandbox struct {
	rt   *Runtime
	mod  *Module
	cfg  gadgetConfig
	host schema.Host

	ctx    context.Context         // parent of every call; canceled by Close
	cancel context.CancelCauseFunc // cancels ctx with ErrClosed

	inbox chan *delivery
	wake  chan struct{} // a release is pending
	evict chan struct{} // the runtime wants the instance gone
	quit  chan struct{} // closed by Close
	done  chan struct{} // closed when run returns

	mu       sync.Mutex
	releases []guestRef
	closed   bool

	// Owned by run.
	inst    *instance
	gen     uint64                   // generation of the newest instance; 0 means none yet
	lru     lruEntry                 // guarded by the runtime's live.mu
	live    atomic.Bool              // inst != nil, for readers outside run
	running atomic.Pointer[instance] // inst, for Close to abandon
	busy    atomic.Bool              // run is handling a call
	// lastActive is the UnixNano of when run last began or ended a call or
	// a release, for IdleSince.
	lastActive atomic.Int64
}

// guestRef names a guest export in one instance generation.
type guestRef struct {
	gen   uint64
	index uint32
}

// Errors callers can test for with errors.Is. Their Cap'n Proto exception
// types reach clients (errors.go): a full queue is overloaded (retry later);
// a closed gadget or a stopped instance is disconnected (get a new
// capability).
var (
	ErrClosed     error = exc.New(exc.Disconnected, "", "gadget is closed")
	ErrOverloaded error = exc.New(exc.Overloaded, "", "gadget is overloaded")
	ErrRestarted  error = exc.New(exc.Disconnected, "", "capability belongs to a gadget instance that has since stopped; open a new session")
)

// NewSandbox prepares a gadget of module m. host becomes host import 0 in every
// instance; NewSandbox takes ownership of that reference.
func (r *Runtime) NewSandbox(m *Module, host schema.Host, opts ...SandboxOption) *Sandbox {
	g := &Sandbox{
		rt:    r,
		mod:   m,
		host:  host,
		inbox: make(chan *delivery, r.cfg.queueLimit),
		wake:  make(chan struct{}, 1),
		evict: make(chan struct{}, 1),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	for _, o := range opts {
		o(&g.cfg)
	}
	parent := g.cfg.values
	if parent == nil {
		parent = context.Background()
	}
	g.ctx, g.cancel = context.WithCancelCause(parent)
	if g.cfg.name == "" {
		g.cfg.name = "gadget"
	}
	g.lastActive.Store(time.Now().UnixNano())
	r.gadgets.add(g)
	go g.run()
	return g
}

// Guest returns a capability for the guest's main object. It stays valid
// across instance restarts; the caller releases it.
func (g *Sandbox) Guest() schema.Guest {
	return schema.Guest(g.newGuestObject(guestRef{gen: 0, index: 0}, nil))
}

// Live reports whether the gadget has a live instance right now.
func (g *Sandbox) Live() bool { return g.live.Load() }

// IdleSince reports whether the gadget has handled no call and no release
// since t and is not handling one now. Its instance may still be live: that
// is WithIdleTimeout's to end.
func (g *Sandbox) IdleSince(t time.Time) bool {
	return !g.busy.Load() && g.lastActive.Load() < t.UnixNano()
}

// Close kills the instance and breaks every capability that came from it.
// Calls waiting for the gadget fail with ErrClosed, and so does the call in
// the guest, if any: Close cancels it. Close waits for the worker to stop,
// but no longer than WithCloseTimeout: past it the worker is abandoned (it
// stops on its own whenever whatever holds it returns) and its instance is
// closed from here, which frees its linear memory. Close is safe to call
// more than once.
func (g *Sandbox) Close() {
	g.mu.Lock()
	if !g.closed {
		g.closed = true
		g.cancel(fmt.Errorf("%s: %w", g.cfg.name, ErrClosed))
		close(g.quit)
	}
	g.mu.Unlock()
	defer g.rt.gadgets.remove(g)
	t := time.NewTimer(g.rt.cfg.closeTimeout)
	defer t.Stop()
	select {
	case <-g.done:
	case <-t.C:
		g.abandon()
	}
}

// abandon closes the instance of a worker that did not stop in time. wazero
// allows closing a module from another goroutine while it runs: the guest
// exits at its next check, and its linear memory is released now
// (linearMemory.Free).
func (g *Sandbox) abandon() {
	if inst := g.running.Load(); inst != nil && inst.mod != nil {
		inst.mod.CloseWithExitCode(context.Background(), exitCodeAbandoned)
	}
}

// exitCodeAbandoned is the exit code of an instance closed by abandon.
const exitCodeAbandoned = 0xdead

// run is the worker: the only goroutine that touches the instance.
func (g *Sandbox) run() {
	defer close(g.done)
	defer g.host.Release()
	idle := time.NewTimer(g.rt.cfg.idleTimeout)
	defer idle.Stop()
	for {
		select {
		case d := <-g.inbox:
			g.setBusy(true)
			g.handle(d)
			g.setBusy(false)
		case <-g.wake:
			g.setBusy(true)
			g.deliverReleases()
			g.setBusy(false)
		case <-g.evict:
			if g.rt.live.evicting(g) {
				g.kill(nil)
			}
		case <-idle.C:
			g.kill(nil)
		case <-g.quit:
			g.kill(fmt.Errorf("%s: %w", g.cfg.name, ErrClosed))
			for {
				select {
				case d := <-g.inbox:
					d.fail(fmt.Errorf("%s: %w", g.cfg.name, ErrClosed))
				default:
					return
				}
			}
		}
		idle.Reset(g.rt.cfg.idleTimeout)
	}
}

// setBusy marks the worker as handling a call or a release, or done with
// it, and notes when.
func (g *Sandbox) setBusy(busy bool) {
	g.lastActive.Store(time.Now().UnixNano())
	g.busy.Store(busy)
}

// enqueue hands d to the worker without blocking.
func (g *Sandbox) enqueue(d *delivery) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return fmt.Errorf("%s: %w", g.cfg.name, ErrClosed)
	}
	select {
	case g.inbox <- d:
		return nil
	default:
		return fmt.Errorf("%s: %w: %d calls are already waiting", g.cfg.name, ErrOverloaded, cap(g.inbox))
	}
}

func (g *Sandbox) handle(d *delivery) {
	if d.skip() {
		return
	}
	if g.inst == nil {
		inst, err := g.start()
		if err != nil {
			d.fail(err)
			return
		}
		g.inst = inst
		g.running.Store(inst)
		g.live.Store(true)
		g.rt.live.add(g)
	}
	g.rt.live.touch(g)
	if ref := d.target.currentRef(); ref.index != 0 && ref.gen != g.inst.gen {
		if err := g.reopen(d.target); err != nil {
			d.fail(err)
			return
		}
	}
	g.inst.deliverTop(d)
	if err := g.inst.fatal; err != nil {
		g.kill(err)
	}
}

// reopen gives a session whose instance has stopped (evicted, crashed) a new
// life on the live instance, by calling Guest.open again with the params it
// was first opened with. Anything else from a stopped instance is gone: its
// state lived in guest memory.
func (g *Sandbox) reopen(o *guestObject) error {
	d, err := g.reopenDelivery(o, nil)
	if err != nil {
		return err
	}
	g.inst.deliverTop(d)
	if err := g.inst.fatal; err != nil {
		g.kill(err)
	}
	return g.adoptSession(o, <-d.reply)
}

// reopenDelivery builds the Guest.open call that reopens session o. then is
// the call that waits for it, if it is to run next.
func (g *Sandbox) reopenDelivery(o *guestObject, then *delivery) (*delivery, error) {
	// Copy under o.mu: release, when a client drops the session meanwhile,
	// releases openParams under it (a race the stress test found).
	o.mu.Lock()
	params := o.openParams
	if !params.IsValid() {
		o.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", g.cfg.name, ErrRestarted)
	}
	p, err := copyStruct(params)
	o.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return &delivery{
		ctx:           context.Background(),
		target:        g.main(),
		method:        guestOpen,
		params:        p,
		releaseParams: func() { releaseStruct(p) },
		reply:         make(chan reply, 1),
		reopens:       o,
		then:          then,
	}, nil
}

// adoptSession points o at the session that a reopening Guest.open returned.
func (g *Sandbox) adoptSession(o *guestObject, r reply) error {
	if r.err != nil {
		return fmt.Errorf("%s: reopening a session after the instance restarted: %w", g.cfg.name, r.err)
	}
	defer releaseStruct(r.content)
	ptr, err := r.content.Ptr(0)
	if err != nil {
		return err
	}
	fresh, ok := guestObjectOf(ptr.Interface().Client())
	if !ok || g.inst == nil || fresh.currentRef().gen != g.inst.gen {
		return fmt.Errorf("%s: reopening a session: Guest.open returned no session from this instance", g.cfg.name)
	}
	// o takes over fresh's export; fresh must not release it when the
	// reply above is released.
	fresh.mu.Lock()
	ref := fresh.ref
	fresh.adopted = true
	fresh.mu.Unlock()
	o.mu.Lock()
	o.ref = ref
	o.mu.Unlock()
	return nil
}

// main is the guestObject for the main object, which any instance serves.
func (g *Sandbox) main() *guestObject { return &guestObject{g: g} }

// kill stops the live instance, if any, failing everything in flight in it
// with err (nil for an orderly eviction).
func (g *Sandbox) kill(err error) {
	if g.inst != nil {
		if err == nil {
			err = fmt.Errorf("%s: %w", g.cfg.name, ErrRestarted)
		}
		g.inst.close(err)
		g.inst = nil
		g.running.Store(nil)
		g.live.Store(false)
		g.rt.live.remove(g)
	}
	g.mu.Lock()
	g.releases = nil
	g.mu.Unlock()
}

// deliverReleases tells the live instance which of its exports the host
// dropped, so the guest can free them.
func (g *Sandbox) deliverReleases() {
	g.mu.Lock()
	rs := g.releases
	g.releases = nil
	g.mu.Unlock()
	if g.inst == nil {
		return
	}
	for _, r := range rs {
		if r.gen == g.inst.gen {
			g.inst.releaseExport(r.index)
			if err := g.inst.fatal; err != nil {
				g.kill(err)
				return
			}
		}
	}
}

// copyStruct copies s, and the capabilities it points to, into a message of
// its own.
func copyStruct(s capnp.Struct) (capnp.Struct, error) {
	dst, err := newRootStruct(s.Size())
	if err != nil {
		return capnp.Struct{}, err
	}
	if err := dst.CopyFrom(s); err != nil {
		releaseStruct(dst)
		return capnp.Struct{}, fmt.Errorf("copy struct: %w", rootCause(err))
	}
	return dst, nil
}

// newRootStruct returns a struct of size sz at the root of a message of its
// own.
func newRootStruct(sz capnp.ObjectSize) (capnp.Struct, error) {
	_, seg, err := capnp.NewMessage(capnp.MultiSegment(nil))
	if err != nil {
		return capnp.Struct{}, err
	}
	return capnp.NewRootStruct(seg, sz)
}

// releaseStruct releases s's message and the capabilities it holds.
func releaseStruct(s capnp.Struct) {
	if msg := s.Message(); msg != nil {
		msg.Release()
	}
}
