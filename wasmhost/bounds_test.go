package wasmhost_test

// Bounded waits: a guest that sleeps, and a client that never answers, hold
// nothing past their bounds. Like hostile_test.go, each test names the
// protection it guards; removing it makes the test fail.

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/internal/wasmbuild"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// sleepForever is far past every bound in these tests: a test that waits
// for it to end has failed.
const sleepForever = "sleep:3600000"

// Guards: pollOneoff (wasi.go), which sleeps under the call's context.
// wazero's own poll_oneoff sleeps with time.Sleep, which no deadline ends.
func TestSleepingGuestIsStoppedAtTheCallDeadline(t *testing.T) {
	const timeout = 500 * time.Millisecond
	w := newHostileWorld(t, wasmhost.WithCallTimeout(timeout))
	b := w.newBox(t, hostilePkg, "sleeper")
	s := b.open(t, "alice")
	id := mustGuestCommand(t, s, "id")
	r := w.attack(t, b, s, sleepForever, "sleep: started")
	wantErr(t, "sleep", r.err, "sleeper: call exceeded its deadline of 500ms while the guest slept and the instance was stopped")
	b.recoversOnFreshInstance(t, id)
}

// Guards: pollOneoff (wasi.go) for a guest without the SDK or Go's runtime:
// raw poll_oneoff with the longest clock timeout there is, during
// initialization.
func TestRawPollOneoffSleepIsStoppedAtTheCallDeadline(t *testing.T) {
	const timeout = 300 * time.Millisecond
	w := newHostileWorld(t, wasmhost.WithCallTimeout(timeout))
	mod, err := w.rt.Compile(context.Background(), wat(t, `(module
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; One subscription at 0: a relative clock (tag 0 at 8) with timeout
  ;; 2^63-1 ns (at 24); its event goes to 64, the event count to 128.
  (data (i32.const 24) "\ff\ff\ff\ff\ff\ff\ff\7f")
  (func (export "_initialize")
    (drop (call $poll (i32.const 0) (i32.const 64) (i32.const 1) (i32.const 128))))
  (func (export "gadgetd_alloc") (param i32) (result i32) i32.const 1024)
  (func (export "gadgetd_deliver") (param i32 i32) (result i64) i64.const 0))`))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(context.Background())
	g := w.rt.NewSandbox(mod, memhost.New().Client(), wasmhost.WithName("raw-sleeper"))
	defer g.Close()
	errc := make(chan error, 1)
	go func() { errc <- openGuest(g) }()
	select {
	case err := <-errc:
		wantErr(t, "open", err, "raw-sleeper: call exceeded its deadline of 300ms while the guest slept")
	case <-time.After(30 * time.Second):
		t.Fatal("the sleeping guest was not stopped at its deadline")
	}
	w.bystanderServes(t)
}

// openGuest opens a session on g and returns the error.
func openGuest(g *wasmhost.Sandbox) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	main := g.Guest()
	defer main.Release()
	f, release := main.Open(ctx, func(p schema.Guest_open_Params) error {
		_, err := p.NewCaller()
		return err
	})
	defer release()
	_, err := f.Struct()
	return err
}

// Guards: Sandbox.Close cancels the call in the guest (sandbox.go, through
// the context enter derives from g.ctx). Without that, Close waits for the
// sleep to end or for the deadline (here a minute), or for WithCloseTimeout.
func TestClosingAGadgetStopsItsSleepingGuestAtOnce(t *testing.T) {
	w := newHostileWorld(t, wasmhost.WithCallTimeout(time.Minute), wasmhost.WithCloseTimeout(time.Minute))
	b := w.newBox(t, hostilePkg, "sleeper")
	s := b.open(t, "alice")
	ch := goGuestCommand(s, sleepForever)
	waitLog(t, b.host, "sleep: started")
	closed := make(chan struct{})
	start := time.Now()
	go func() {
		b.gadget.Close()
		close(closed)
	}()
	select {
	case <-closed:
		t.Logf("Close returned after %v", time.Since(start).Round(time.Millisecond))
	case <-time.After(30 * time.Second):
		t.Fatal("Close of a gadget whose guest sleeps did not return in 30s")
	}
	// (The guest logs before it falls asleep, so Close may catch it just
	// before; the error says "while the guest slept" only if it did not.)
	r := <-ch
	wantErr(t, "the sleeping call", r.err, "sleeper: gadget is closed: the call was stopped")
	w.bystanderServes(t)
}

// Guards: Runtime.Close closes the gadgets still open (runtime.go), each
// canceling its call, so shutdown is not held by a sleeping guest.
func TestRuntimeCloseIsNotHeldBySleepingGuests(t *testing.T) {
	w := newHostileWorld(t, wasmhost.WithCallTimeout(time.Minute), wasmhost.WithCloseTimeout(time.Minute))
	var calls []<-chan attackOutcome
	for i := range 3 {
		b := w.newBox(t, hostilePkg, "sleeper")
		s := b.open(t, "user")
		calls = append(calls, goGuestCommand(s, sleepForever))
		if !b.host.WaitLog("sleep: started", 10*time.Second) {
			t.Fatalf("sleeper %d never slept", i)
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- w.rt.Close(context.Background()) }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Runtime.Close with sleeping guests did not return in 30s")
	}
	for _, ch := range calls {
		wantErr(t, "a sleeping call", (<-ch).err, "gadget is closed")
	}
}

// stuckScope is a call scope whose end blocks until released: a host
// service that ignores every context, the one thing canceling a call cannot
// interrupt. Only the first scope to end after arm blocks (the session's
// open before it does not), and says so on entered.
type stuckScope struct {
	armed            atomic.Bool
	entered, release chan struct{}
}

func (s *stuckScope) arm() { s.armed.Store(true) }

func (s *stuckScope) begin() func(error) error {
	return func(error) error {
		if s.armed.CompareAndSwap(true, false) {
			s.entered <- struct{}{}
			<-s.release
		}
		return nil
	}
}

// Guards: the WithCloseTimeout bound in Sandbox.Close and abandon
// (sandbox.go): a worker stuck where no context reaches is abandoned, and its
// instance's memory is released, instead of holding Close.
func TestCloseAbandonsAWorkerStuckPastItsBound(t *testing.T) {
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, wasmhost.WithCompilationCacheDir(sharedCacheDir(t)), wasmhost.WithCloseTimeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	mod, err := rt.Compile(ctx, wasmbuild.ForTest(t, hostilePkg))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	scope := &stuckScope{entered: make(chan struct{}), release: make(chan struct{})}
	defer close(scope.release) // lets the abandoned worker finish
	g := rt.NewSandbox(mod, memhost.New().Client(), wasmhost.WithName("stuck"), wasmhost.WithCallScope(scope.begin))
	b := &hostileBox{gadget: g}
	s := b.open(t, "alice")
	held := rt.MemoryInUse()
	if held == 0 {
		t.Fatal("a live instance uses no memory by the budget's count")
	}
	scope.arm()
	go guestCommand(ctx, s, "ok")
	select {
	case <-scope.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the call never reached its scope's end")
	}
	closed := make(chan struct{})
	go func() {
		g.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close waited for a stuck worker past its bound")
	}
	if inUse := rt.MemoryInUse(); inUse >= held {
		t.Fatalf("after abandoning the worker %d bytes are in use, as before (%d): its memory was not released", inUse, held)
	}
}

// hangingListener is a client Listener that never answers.
type hangingListener struct{ calls chan struct{} }

func (l *hangingListener) Changed(ctx context.Context, call counterpb.Listener_changed) error {
	call.Go()
	l.calls <- struct{}{}
	<-ctx.Done()
	return ctx.Err()
}

// countingListener is a client Listener that records what it hears.
type countingListener struct{ heard chan int64 }

func (l *countingListener) Changed(ctx context.Context, call counterpb.Listener_changed) error {
	l.heard <- call.Args().Value()
	return nil
}

func watch(t *testing.T, c counterpb.Counter, l counterpb.Listener) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, release := c.Watch(ctx, func(p counterpb.Counter_watch_Params) error { return p.SetListener(l) })
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	// The subscription lasts while its handle is held: for the test.
	t.Cleanup(res.Handle().AddRef().Release)
}

// Guards: the WithClientCallTimeout deadline on calls to a client's
// capability (startOutbound and wait, hostfuncs.go). Without it the hanging
// listener holds the shared counter until the call deadline, which kills
// the instance and drops every other watcher with it.
func TestSlowClientFailsOnlyItsOwnCallAndTheGadgetGoesOn(t *testing.T) {
	const clientTimeout = 300 * time.Millisecond
	w := newHostileWorld(t, wasmhost.WithCallTimeout(20*time.Second), wasmhost.WithClientCallTimeout(clientTimeout))
	b := w.newBox(t, counterPkg, "shared-counter")
	alice := counterpb.Counter(b.open(t, "alice"))
	bob := counterpb.Counter(b.open(t, "bob"))

	good := &countingListener{heard: make(chan int64, 16)}
	watch(t, bob, counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, good), good, nil)))
	slow := &hangingListener{calls: make(chan struct{}, 16)}
	watch(t, alice, counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, slow), slow, nil)))

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// Bob's increment notifies both listeners; the hanging one fails after
	// the client timeout, the gadget drops it and answers.
	start := time.Now()
	if v, err := countertest.Increment(ctx, bob); err != nil || v != 1 {
		t.Fatalf("increment with a hanging listener = %d, %v; want 1", v, err)
	}
	t.Logf("the increment with a hanging listener took %v", time.Since(start).Round(time.Millisecond))
	select {
	case <-slow.calls:
	default:
		t.Fatal("the hanging listener was never called")
	}
	if v := <-good.heard; v != 1 {
		t.Fatalf("the good listener heard %d, want 1", v)
	}
	waitLog(t, b.host, "dropping a listener that failed")
	if !hasLog(b.host, clientTimeout.String()) {
		t.Errorf("the guest's log does not say the client timed out after %v: %q", clientTimeout, b.host.Logs())
	}
	w.bystanderServes(t)

	// The instance lived on: the good listener, which lives in its memory,
	// still hears about the next increment, from another session.
	if v, err := countertest.Increment(ctx, alice); err != nil || v != 2 {
		t.Fatalf("the next increment = %d, %v; want 2", v, err)
	}
	select {
	case v := <-good.heard:
		if v != 2 {
			t.Fatalf("the good listener heard %d, want 2", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the good listener was dropped: the instance did not survive the slow client")
	}
}

func hasLog(h *memhost.Host, s string) bool {
	for _, l := range h.Logs() {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}
