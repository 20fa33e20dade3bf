package wasmhost_test

// Calls whose caller gives up (issue 6.4). A caller that stops waiting must
// cost the gadget nothing more: a call still queued is never delivered into
// the guest, and the answer to a call the guest was already running is
// released, with every capability in it, instead of lying unread forever.
// Capability leaks are counted with capnp.SetClientLeakFunc
// (internal/leakcheck, installed in TestMain).

import (
	"context"
	"errors"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/leakcheck"
	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// abandoned is how many calls of each kind the tests give up on.
const abandoned = 20

// guestObjectSite is in the creation stack of every capability the host
// makes for an object a guest exported.
const guestObjectSite = "wasmhost.(*Sandbox).newGuestObject"

// gatedHost is a guest's Host that can hold every call the guest makes to it
// at a gate, so a test knows the guest is busy, and stays busy, until the
// test opens the gate.
type gatedHost struct {
	inner   schema.Host
	entered chan struct{} // receives when a call stops at the closed gate

	mu   sync.Mutex
	gate chan struct{} // nil while open
}

func newGatedHost(t *testing.T, inner *memhost.Host) *gatedHost {
	h := &gatedHost{inner: inner.Client(), entered: make(chan struct{}, 1)}
	t.Cleanup(func() {
		h.open()
		h.inner.Release()
	})
	return h
}

func (h *gatedHost) client() schema.Host {
	return schema.Host(capserver.New(schema.Host_Methods(nil, h), h, nil))
}

func (h *gatedHost) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gate == nil {
		h.gate = make(chan struct{})
	}
}

func (h *gatedHost) open() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gate != nil {
		close(h.gate)
		h.gate = nil
	}
}

// waitEntered waits until a guest's call stops at the closed gate.
func (h *gatedHost) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-h.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the guest never called its host")
	}
}

func (h *gatedHost) pass(ctx context.Context) error {
	h.mu.Lock()
	gate := h.gate
	h.mu.Unlock()
	if gate == nil {
		return nil
	}
	select {
	case h.entered <- struct{}{}:
	default:
	}
	select {
	case <-gate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *gatedHost) Storage(ctx context.Context, call schema.Host_storage) error {
	if err := h.pass(ctx); err != nil {
		return err
	}
	f, release := h.inner.Storage(ctx, nil)
	defer release()
	got, err := f.Struct()
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetStorage(got.Storage().AddRef())
}

// Gatekeeper: these tests bind nothing.
func (h *gatedHost) Gatekeeper(ctx context.Context, call schema.Host_gatekeeper) error {
	return errors.New("no such binding")
}

func (h *gatedHost) Log(ctx context.Context, call schema.Host_log) error {
	if err := h.pass(ctx); err != nil {
		return err
	}
	text, err := call.Args().Text()
	if err != nil {
		return err
	}
	f, release := h.inner.Log(ctx, func(p schema.Host_log_Params) error {
		p.SetLevel(call.Args().Level())
		return p.SetText(text)
	})
	defer release()
	_, err = f.Struct()
	return err
}

// openSession opens a session of g for user with ctx, and returns it
// resolved, or the error.
func openSession(ctx context.Context, g *wasmhost.Sandbox, user string) (capnp.Client, error) {
	guest := g.Guest()
	defer guest.Release()
	f, release := guest.Open(ctx, func(p schema.Guest_open_Params) error {
		c, err := p.NewCaller()
		if err != nil {
			return err
		}
		return c.SetUserId(user)
	})
	defer release()
	s := f.Session().AddRef()
	if err := s.Resolve(ctx); err != nil {
		s.Release()
		return capnp.Client{}, err
	}
	if _, err := f.Struct(); err != nil {
		s.Release()
		return capnp.Client{}, err
	}
	return s, nil
}

// wantGivenUp checks that every abandoned call failed with its context's
// error: none of them was answered.
func wantGivenUp(t *testing.T, what string, errs []error) {
	t.Helper()
	for i, err := range errs {
		if !errors.Is(err, context.Canceled) && (err == nil || !strings.Contains(err.Error(), context.Canceled.Error())) {
			t.Fatalf("abandoned %s %d: err = %v, want the caller's context.Canceled", what, i, err)
		}
	}
}

// Guards: the check of the caller's context before a queued call is
// delivered (delivery.skip in Gadget.handle). Without it the guest runs
// calls nobody waits for, and the sessions it opens for them leak.
func TestCallsGivenUpWhileQueuedNeverReachTheGuestAndLeakNothing(t *testing.T) {
	w := newHostileWorld(t)
	w.newBox(t, hostilePkg, "compiler")
	mod := w.mods[hostilePkg]
	mem := memhost.New()
	host := newGatedHost(t, mem)
	g := w.rt.NewSandbox(mod, host.client(), wasmhost.WithName("abandoned"), wasmhost.WithCallScope(mem.Begin))
	t.Cleanup(g.Close)
	s := mustOpen(t, g, "alice")

	// The worker is busy: the guest waits at the gate, inside sleep:0.
	host.close()
	holder := goGuestCommand(s, "sleep:0")
	host.waitEntered(t)
	mark := leakcheck.Now()

	ctx, cancel := context.WithCancel(context.Background())
	opens, calls := make([]error, abandoned), make([]error, abandoned)
	var wg sync.WaitGroup
	for i := range abandoned {
		wg.Go(func() {
			s, err := openSession(ctx, g, "mallory")
			if err == nil {
				s.Release()
			}
			opens[i] = err
		})
		wg.Go(func() { _, calls[i] = guestCommand(ctx, s, "sleep:0") })
	}
	cancel()
	wg.Wait()
	wantGivenUp(t, "open", opens)
	wantGivenUp(t, "call", calls)

	host.open()
	if r := <-holder; r.err != nil || r.out != "slept" {
		t.Fatalf("the call that held the worker: %q, %v", r.out, r.err)
	}
	// Queued behind every abandoned call: once it answers, the worker has
	// dealt with all of them.
	if got := mustGuestCommand(t, s, "ok"); got != "ok" {
		t.Fatalf("ok = %q", got)
	}

	started := 0
	for _, l := range mem.Logs() {
		if l == "sleep: started" {
			started++
		}
	}
	if started != 1 {
		t.Errorf("the guest ran sleep %d times; want once: the %d abandoned calls reached it", started, started-1)
	}
	if leaks := leakcheck.Since(mark, guestObjectSite); len(leaks) > 0 {
		t.Errorf("%d abandoned opens leaked %d guest capabilities; the first was created at:\n%s", abandoned, len(leaks), leaks[0])
	}
}

// Guards: the release of an answer nobody reads (delivery.answer, when
// delivery.abandon has answered the caller already). Each round's caller gives up
// while the guest is already working on its open (starting its instance,
// held at the gate); without the release, the session the guest answers
// with leaks, and the guest never gets the release frame that lets it free
// it.
func TestAnswersToCallersThatGaveUpAreReleased(t *testing.T) {
	const rounds = 5
	w := newHostileWorld(t)
	w.newBox(t, hostilePkg, "compiler")
	mod := w.mods[hostilePkg]
	mark := leakcheck.Now()
	var releases releaseFrames
	for range rounds {
		mem := memhost.New()
		host := newGatedHost(t, mem)
		host.close()
		g := w.rt.NewSandbox(mod, host.client(), wasmhost.WithName("abandoned"), wasmhost.WithCallScope(releases.counting(mem.Begin)))
		t.Cleanup(g.Close)

		ctx, cancel := context.WithCancel(context.Background())
		opened := make(chan error, 1)
		go func() {
			s, err := openSession(ctx, g, "mallory")
			if err == nil {
				s.Release()
			}
			opened <- err
		}()
		host.waitEntered(t) // the guest's initialization calls its host
		cancel()
		wantGivenUp(t, "open", []error{<-opened})
		host.open()
		// Queued behind the abandoned open: once it answers, the guest
		// has answered that one too.
		mustOpen(t, g, "alice")
	}
	if leaks := leakcheck.Since(mark, guestObjectSite); len(leaks) > 0 {
		t.Errorf("%d answers to callers that gave up leaked %d guest capabilities; the first was created at:\n%s", rounds, len(leaks), leaks[0])
	}
	// Each guest holds one session for a caller that is gone (alice's is
	// held until the test ends): each must be told to free it.
	for deadline := time.Now().Add(10 * time.Second); releases.n.Load() < rounds; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the guests got %d release frames; want %d, one for each session answered to a caller that gave up", releases.n.Load(), rounds)
		}
	}
}

// releaseFrames counts the release frames wasmhost sends guests. Each runs
// in a call scope of its own, opened in instance.releaseExport.
type releaseFrames struct{ n atomic.Int32 }

// counting wraps a WithCallScope callback.
func (r *releaseFrames) counting(begin func() func(error) error) func() func(error) error {
	return func() func(error) error {
		if strings.Contains(string(debug.Stack()), "(*instance).releaseExport") {
			r.n.Add(1)
		}
		return begin()
	}
}

// Control: opens whose callers wait for them and release what they get leak
// nothing, so the counts above measure giving up, not opening.
func TestSessionsReleasedByTheirCallersLeakNothing(t *testing.T) {
	w := newHostileWorld(t)
	b := w.newBox(t, hostilePkg, "control")
	mark := leakcheck.Now()
	for range abandoned {
		s, err := openSession(context.Background(), b.gadget, "alice")
		if err != nil {
			t.Fatal(err)
		}
		s.Release()
	}
	if leaks := leakcheck.Since(mark, guestObjectSite); len(leaks) > 0 {
		t.Errorf("%d released sessions leaked %d guest capabilities; the first was created at:\n%s", abandoned, len(leaks), leaks[0])
	}
}

// mustOpen opens a session of g for user; it is released when the test ends.
func mustOpen(t *testing.T, g *wasmhost.Sandbox, user string) capnp.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := openSession(ctx, g, user)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(s.Release)
	return s
}
