package server

// Design: letting idle gadgets go.
//
// A live gadget (a "shell": its wasmhost.Sandbox with a worker goroutine and
// an idle timer, its Host and Storage, its log ring, a use of its module)
// is kept while anything may still call into it, and let go once nothing
// can:
//
//   - no session it handed out is still referenced, and no Guest capability
//     from Guest() is (a Gadget.open in progress holds one);
//   - it has not been looked up (liveFor), and its sandbox has handled no
//     call or release, for WithIdleShellTimeout.
//
// Its instance goes with it: an instance nobody holds a session of is only
// memory (about 4 to 6 MiB for a Go guest) that the next session can start
// again in a few milliseconds, so it need not wait for wasmhost's own idle
// timeout (minutes), which is for instances whose sessions are held.
//
// wasmhost does not report when a session is released, so the server counts
// them itself (shellUse.refs): Guest() hands out a proxy whose open wraps the
// returned session in a countedHook, a capnp.ClientHook that forwards every
// call straight to the session (same goroutine, no queue) and reports its
// Brand, so wasmhost still recognizes its own session when it comes back,
// and whose Shutdown, run by go-capnp when the last reference anywhere is
// gone, gives the count back. The quiet period covers the only moment a
// shell is in use without a count: between liveFor and Guest() in
// Gadget.open, a few lines apart.
//
// One goroutine per Server (sweepShells) looks every half period and closes
// the shells that qualify, outside Server.mu. When it has closed some, it
// hands the Go heap's free pages back to the OS (WithReturnMemoryWhenIdle):
// the runtime would otherwise keep what 200 departed clients used for
// minutes (docs/BENCHMARKS.md, idle memory). A Storage or Host a gadget
// delegated to a client outlives its shell (the client holds it); it stays
// registered in Server.storages until its last reference is gone, so
// removeGadget can still cut it off.

import (
	"context"
	"sync/atomic"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// shellUse says whether a live gadget is in use. Safe for concurrent use.
type shellUse struct {
	refs     atomic.Int64 // sessions and Guest capabilities outstanding
	lastUsed atomic.Int64 // UnixNano of the last liveFor or release
}

func (u *shellUse) touch() { u.lastUsed.Store(time.Now().UnixNano()) }

func (u *shellUse) hold() { u.refs.Add(1); u.touch() }

func (u *shellUse) release() { u.touch(); u.refs.Add(-1) }

// idle reports whether nothing holds the shell and it has been quiet since
// before cutoff.
func (u *shellUse) idle(cutoff time.Time) bool {
	return u.refs.Load() == 0 && u.lastUsed.Load() < cutoff.UnixNano()
}

// sandbox is a live gadget's wasmhost.Sandbox whose Guest counts the
// sessions it opens.
type sandbox struct {
	*wasmhost.Sandbox
	lg *liveGadget
}

// Guest returns a capability for the guest's main object that holds the
// shell until it is released, and counts the sessions its open returns.
func (sb *sandbox) Guest() schema.Guest {
	sb.lg.use.hold()
	p := &guestProxy{use: &sb.lg.use, guest: sb.Sandbox.Guest()}
	return schema.Guest(capserver.New(schema.Guest_Methods(nil, p), p, p))
}

// guestProxy forwards Guest.open to the guest and counts the session.
type guestProxy struct {
	use   *shellUse
	guest schema.Guest
}

func (p *guestProxy) Shutdown() {
	p.guest.Release()
	p.use.release()
}

func (p *guestProxy) Open(ctx context.Context, call schema.Guest_open) error {
	call.Go()
	// All of the params, as they are: the caller, the session's context,
	// and whatever later fields the schema adds.
	ans, release := p.guest.Open(ctx, func(params schema.Guest_open_Params) error {
		return capnp.Struct(params).CopyFrom(capnp.Struct(call.Args()))
	})
	defer release()
	opened, err := ans.Struct()
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	session := opened.Session()
	if !session.IsValid() {
		return nil // the caller reports a missing session
	}
	p.use.hold()
	return res.SetSession(capnp.NewClient(&countedHook{session: session.AddRef(), use: p.use}))
}

// countedHook is a session that gives its count back when its last
// reference is gone.
type countedHook struct {
	session capnp.Client
	use     *shellUse
}

func (h *countedHook) Send(ctx context.Context, s capnp.Send) (*capnp.Answer, capnp.ReleaseFunc) {
	return h.session.SendCall(ctx, s)
}

func (h *countedHook) Recv(ctx context.Context, r capnp.Recv) capnp.PipelineCaller {
	return h.session.RecvCall(ctx, r)
}

// Brand is the session's own, so wasmhost (guestObjectOf) knows it.
func (h *countedHook) Brand() capnp.Brand {
	snap := h.session.Snapshot()
	defer snap.Release()
	return snap.Brand()
}

func (h *countedHook) Shutdown() {
	h.session.Release()
	h.use.release()
}

func (h *countedHook) String() string { return "counted " + h.session.String() }

// sweepShells lets idle shells go every half WithIdleShellTimeout until
// stop is closed.
func (s *Server) sweepShells(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(s.cfg.idleShellTimeout / 2)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			if s.dropIdleShells(now.Add(-s.cfg.idleShellTimeout)) > 0 && s.cfg.returnMemory != nil {
				s.cfg.returnMemory()
			}
		}
	}
}

// dropIdleShells closes the shells that nothing holds and that have been
// quiet since before cutoff, and reports how many.
func (s *Server) dropIdleShells(cutoff time.Time) int {
	var idle []*liveGadget
	s.mu.Lock()
	for id, lg := range s.live {
		if lg.use.idle(cutoff) && lg.sandbox.IdleSince(cutoff) {
			delete(s.live, id)
			idle = append(idle, lg)
		}
	}
	s.mu.Unlock()
	for _, lg := range idle {
		s.closeShell(lg)
	}
	return len(idle)
}

// closeShell closes a shell that is out of Server.live: its sandbox, which
// waits for a running call, then its use of the module.
func (s *Server) closeShell(lg *liveGadget) {
	lg.sandbox.Close()
	s.releaseModule(lg.module)
}

// closeAllShells closes every shell and module for Server.Close.
func (s *Server) closeAllShells() {
	s.mu.Lock()
	live := s.live
	s.live = map[string]*liveGadget{}
	for _, sts := range s.storages {
		for st := range sts {
			st.close()
		}
	}
	s.mu.Unlock()
	for _, lg := range live {
		s.closeShell(lg)
	}
	s.mu.Lock()
	var all []*moduleEntry
	for k, e := range s.modules {
		all = append(all, e)
		delete(s.modules, k)
	}
	s.mu.Unlock()
	closeModules(all)
}

// liveShells and loadedModules report what the server holds, for tests.
func (s *Server) liveShells() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}

func (s *Server) loadedModules() int {
	s.mu.Lock()
	var es []*moduleEntry
	for _, e := range s.modules {
		es = append(es, e)
	}
	s.mu.Unlock()
	n := 0
	for _, e := range es {
		e.mu.Lock()
		if e.mod != nil {
			n++
		}
		e.mu.Unlock()
	}
	return n
}
