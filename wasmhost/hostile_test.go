package wasmhost_test

// Hostile guests: each test runs a gadget that attacks the sandbox (see
// internal/testguests) and proves three things: the caller gets a clear
// error, other gadgets on the same Runtime keep being served, and the
// attacking gadget itself serves the next call (on a fresh instance where the
// attack killed it). Each test names the protection it guards; removing that
// protection makes the test fail.
//
// docs/SECURITY.md maps every security claim to the test here that proves it.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/internal/wasmbuild"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

const (
	testguests = "github.com/gadgetd/gadgetd/wasmhost/internal/testguests/"
	hostilePkg = testguests + "hostile" // attacks and probes on command
	rawPkg     = testguests + "rawabi"  // speaks the ABI by hand
)

// hostileWorld is one Runtime, as a server has, with a well-behaved counter
// gadget (the bystander) that must keep working whatever the others do.
type hostileWorld struct {
	rt              *wasmhost.Runtime
	mods            map[string]*wasmhost.Module
	bystander       counterpb.Counter
	bystanderGadget *wasmhost.Sandbox
	count           int64
}

// hostileBox is one gadget in a hostileWorld, with its own test host and
// storage.
type hostileBox struct {
	gadget *wasmhost.Sandbox
	host   *memhost.Host
}

func newHostileWorld(t *testing.T, opts ...wasmhost.Option) *hostileWorld {
	t.Helper()
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, append([]wasmhost.Option{wasmhost.WithCompilationCacheDir(sharedCacheDir(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	w := &hostileWorld{rt: rt, mods: map[string]*wasmhost.Module{}}
	counter := w.newBox(t, counterPkg, "bystander")
	s := counter.open(t, "bystander-user")
	w.bystander = counterpb.Counter(s)
	w.bystanderGadget = counter.gadget
	w.bystanderServes(t) // warm: its instance is live before any attack
	return w
}

// newBox creates a gadget of the guest package pkg. Everything is closed
// when the test ends.
func (w *hostileWorld) newBox(t *testing.T, pkg, name string) *hostileBox {
	t.Helper()
	ctx := context.Background()
	mod, ok := w.mods[pkg]
	if !ok {
		var err error
		mod, err = w.rt.Compile(ctx, wasmbuild.ForTest(t, pkg))
		if err != nil {
			t.Fatal(err)
		}
		w.mods[pkg] = mod
		t.Cleanup(func() { mod.Close(ctx) })
	}
	b := &hostileBox{host: memhost.New()}
	b.gadget = w.rt.NewSandbox(mod, b.host.Client(), wasmhost.WithName(name), wasmhost.WithCallScope(b.host.Begin))
	t.Cleanup(b.gadget.Close)
	return b
}

// bystanderServes proves the counter gadget on the same Runtime still
// answers, and correctly. (How fast is for make bench: a busy machine makes
// any bound here flaky.)
func (w *hostileWorld) bystanderServes(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	v, err := countertest.Increment(ctx, w.bystander)
	if err != nil {
		t.Fatalf("the bystander counter gadget failed: %v", err)
	}
	if v != w.count+1 {
		t.Fatalf("the bystander counter = %d, want %d", v, w.count+1)
	}
	w.count = v
}

// open opens a session for user; it is released when the test ends.
func (b *hostileBox) open(t *testing.T, user string) capnp.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g := b.gadget.Guest()
	defer g.Release()
	f, release := g.Open(ctx, func(p schema.Guest_open_Params) error {
		c, err := p.NewCaller()
		if err != nil {
			return err
		}
		c.SetRole(schema.Role_owner)
		return c.SetUserId(user)
	})
	defer release()
	s := f.Session().AddRef()
	if err := s.Resolve(ctx); err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(s.Release)
	return s
}

// command runs cmd on a test guest's session. The test guests' sessions use
// schema.Storage as a generic command interface: get(key) runs the command
// named key and answers with what it observed as value.
func guestCommand(ctx context.Context, session capnp.Client, cmd string) (string, error) {
	f, release := schema.Storage(session).Get(ctx, func(p schema.Storage_get_Params) error {
		return p.SetKey(cmd)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return "", err
	}
	v, err := res.Value()
	return string(v), err
}

func mustGuestCommand(t *testing.T, session capnp.Client, cmd string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := guestCommand(ctx, session, cmd)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return out
}

type attackOutcome struct {
	out     string
	err     error
	elapsed time.Duration
}

// goGuestCommand runs cmd in the background.
func goGuestCommand(session capnp.Client, cmd string) <-chan attackOutcome {
	ch := make(chan attackOutcome, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		start := time.Now()
		out, err := guestCommand(ctx, session, cmd)
		ch <- attackOutcome{out, err, time.Since(start)}
	}()
	return ch
}

// waitLog waits until the gadget logged a line containing s.
func waitLog(t *testing.T, h *memhost.Host, s string) {
	t.Helper()
	if !h.WaitLog(s, 10*time.Second) {
		t.Fatalf("the gadget never logged %q", s)
	}
}

// maxHeld is the most memory the hostile guest's alloc command logged it
// held, in MiB.
func maxHeld(h *memhost.Host) int {
	held := 0
	for _, l := range h.Logs() {
		var n int
		if _, err := fmt.Sscanf(l, "alloc: holding %d MiB", &n); err == nil && n > held {
			held = n
		}
	}
	return held
}

func wantErr(t *testing.T, what string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want one containing %q", what, want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("%s: error %q does not contain %q", what, err, w)
		}
	}
}

// attack runs a hostile command that must fail, checks the bystander is
// served while it runs (when duringLog is set) and afterwards, and returns the
// failure.
func (w *hostileWorld) attack(t *testing.T, b *hostileBox, session capnp.Client, cmd, duringLog string) attackOutcome {
	t.Helper()
	ch := goGuestCommand(session, cmd)
	if duringLog != "" {
		waitLog(t, b.host, duringLog)
		w.bystanderServes(t)
		select {
		case r := <-ch:
			t.Fatalf("%s finished (%v, %v) before the bystander was checked; raise the limit so the check happens during the attack", cmd, r.out, r.err)
		default:
		}
	}
	var r attackOutcome
	select {
	case r = <-ch:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: no answer after 60s: the sandbox did not stop it", cmd)
	}
	if r.err == nil {
		t.Fatalf("%s succeeded with %q; want an error", cmd, r.out)
	}
	t.Logf("%s failed after %v: %v", cmd, r.elapsed.Round(time.Millisecond), r.err)
	w.bystanderServes(t)
	return r
}

// recoversOnFreshInstance proves the gadget serves a new session again, on
// an instance other than the one with id oldID.
func (b *hostileBox) recoversOnFreshInstance(t *testing.T, oldID string) {
	t.Helper()
	s := b.open(t, "alice")
	if got := mustGuestCommand(t, s, "ok"); got != "ok" {
		t.Fatalf("after the attack, ok = %q", got)
	}
	if id := mustGuestCommand(t, s, "id"); id == oldID {
		t.Fatalf("after the attack the gadget still runs instance %s; want a fresh one", id)
	}
}

// ---- What a guest can observe of the machine it runs on ----

// Guards: instantiate's ModuleConfig (instance.go) mounts no file system, so
// a guest has no preopened directories. Adding WithFSConfig there fails this.
func TestGuestSeesNoFilesOrDirectories(t *testing.T) {
	w := newHostileWorld(t)
	b := w.newBox(t, hostilePkg, "probe")
	s := b.open(t, "alice")
	marker := filepath.Join(t.TempDir(), "gadget-was-here")
	for _, probe := range []string{
		"readfile:/etc/passwd",
		"readfile:/proc/self/environ",
		"readfile:" + filepath.Join(mustGetwd(t), "hostile_test.go"),
		"readfile:hostile_test.go",
		"readdir:/",
		"readdir:.",
		"readdir:/tmp",
		"writefile:" + marker,
	} {
		got := mustGuestCommand(t, s, probe)
		t.Logf("%s: %s", probe, got)
		if !strings.HasPrefix(got, "error: ") {
			t.Errorf("%s: the guest observed %q, want an error", probe, got)
		}
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the guest created %s on the host (stat: %v)", marker, err)
	}
	// Only stdin, stdout and stderr exist: no preopened directory (fd 3+),
	// no socket, nothing inherited.
	if got := mustGuestCommand(t, s, "fds"); got != "0,1,2" {
		t.Errorf("the guest sees file descriptors %q, want only 0,1,2", got)
	}
	w.bystanderServes(t)
}

func mustGetwd(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// Guards: instantiate passes no environment and only argv[0] "gadget"
// (WithArgs in instance.go). WithEnv or more args there fail this.
func TestGuestSeesNoEnvironmentAndNoArguments(t *testing.T) {
	t.Setenv("GADGETD_SECRET_FOR_TEST", "must-not-leak")
	w := newHostileWorld(t)
	b := w.newBox(t, hostilePkg, "probe")
	s := b.open(t, "alice")
	if got := mustGuestCommand(t, s, "environ"); got != "" {
		t.Errorf("the guest sees environment %q, want none", got)
	}
	if got := mustGuestCommand(t, s, "args"); got != "gadget" {
		t.Errorf("the guest sees arguments %q, want only \"gadget\"", got)
	}
}

// Guards: wasip1 has no call that opens a socket and instantiate hands the
// guest no preopened one (the fds probe above), so the guest's net package
// falls back to Go's in-process fake network. A listener the test opens on
// loopback must never see a connection, and a port the guest "listens" on
// must not open on the host.
func TestGuestCannotOpenSocketsOrProcesses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.Addr().String()
	free.Close()

	w := newHostileWorld(t)
	b := w.newBox(t, hostilePkg, "probe")
	s := b.open(t, "alice")
	for _, probe := range []string{
		"dial:" + ln.Addr().String(),
		"dial:1.1.1.1:443",
		"dial:localhost:22",
		"exec",
	} {
		got := mustGuestCommand(t, s, probe)
		t.Logf("%s: %s", probe, got)
		if !strings.HasPrefix(got, "error: ") {
			t.Errorf("%s: the guest observed %q, want an error", probe, got)
		}
	}
	select {
	case <-accepted:
		t.Fatal("the guest connected to the host's loopback listener")
	case <-time.After(100 * time.Millisecond):
	}
	got := mustGuestCommand(t, s, "listen:"+freeAddr)
	t.Logf("listen:%s: %s", freeAddr, got)
	if c, err := net.DialTimeout("tcp", freeAddr, time.Second); err == nil {
		c.Close()
		t.Fatalf("the guest listened on %s (it observed %q) and the host reached it", freeAddr, got)
	}
	w.bystanderServes(t)
}

// Guards: WithSysWalltime in instantiate. wazero's default clock is fake
// (fixed at 2022-01-01), which this test would catch.
func TestGuestReadsTheRealClock(t *testing.T) {
	w := newHostileWorld(t)
	b := w.newBox(t, hostilePkg, "probe")
	s := b.open(t, "alice")
	before := time.Now()
	got := mustGuestCommand(t, s, "now")
	after := time.Now()
	ns, err := strconv.ParseInt(got, 10, 64)
	if err != nil {
		t.Fatalf("now = %q: %v", got, err)
	}
	// The guest read the clock during the call: between what the host read
	// before and after it.
	if guest := time.Unix(0, ns); guest.Before(before.Truncate(time.Microsecond)) || guest.After(after) {
		t.Fatalf("the guest read %v during a call from %v to %v", guest.UTC(), before.UTC(), after.UTC())
	}
}

// Guards: WithRandSource(crypto/rand.Reader) in instantiate. wazero's default
// source is deterministic, which makes every instance draw the same
// crypto/rand bytes and seed math/rand identically: each part of the probe
// would then be equal across instances.
func TestGuestRandomnessDiffersBetweenInstances(t *testing.T) {
	w := newHostileWorld(t)
	var draws [][]string
	for i := range 2 {
		b := w.newBox(t, hostilePkg, fmt.Sprintf("probe-%d", i))
		draws = append(draws, strings.Fields(mustGuestCommand(t, b.open(t, "alice"), "rand")))
	}
	names := []string{"crypto/rand", "math/rand", "math/rand/v2"}
	if len(draws[0]) != 3 || len(draws[1]) != 3 {
		t.Fatalf("rand probes = %q and %q, want three values each", draws[0], draws[1])
	}
	for i, name := range names {
		if draws[0][i] == draws[1][i] {
			t.Errorf("two instances drew the same %s value %s", name, draws[0][i])
		}
	}
}

// ---- Guests that never return ----

// Guards: WithCloseOnContextDone(true) (runtime.go) and the per-call
// deadline in deliverTop (instance.go). Without either the spin never ends.
func TestSpinningGuestIsStoppedAtTheCallDeadline(t *testing.T) {
	const timeout = 500 * time.Millisecond
	w := newHostileWorld(t, wasmhost.WithCallTimeout(timeout))
	b := w.newBox(t, hostilePkg, "spinner")
	s := b.open(t, "alice")
	id := mustGuestCommand(t, s, "id")
	r := w.attack(t, b, s, "spin", "spin: started")
	wantErr(t, "spin", r.err, "spinner: call exceeded its deadline of 500ms and the instance was stopped")
	if r.elapsed < timeout {
		t.Errorf("the spinning call ended after %v, before its deadline of %v", r.elapsed, timeout)
	}
	b.recoversOnFreshInstance(t, id)
}

// Guards: the deadline check in wait (hostfuncs.go) and the call deadline:
// a guest that keeps the host busy with calls is stopped like one that
// spins, and other gadgets are served meanwhile.
func TestGuestCallingTheHostInATightLoopIsStoppedAtTheDeadline(t *testing.T) {
	const timeout = 500 * time.Millisecond
	w := newHostileWorld(t, wasmhost.WithCallTimeout(timeout))
	b := w.newBox(t, hostilePkg, "chatty")
	s := b.open(t, "alice")
	id := mustGuestCommand(t, s, "id")
	r := w.attack(t, b, s, "hostloop", "hostloop: started")
	wantErr(t, "hostloop", r.err, "chatty: call exceeded its deadline of 500ms")
	if r.elapsed < timeout {
		t.Errorf("the looping call ended after %v, before its deadline of %v", r.elapsed, timeout)
	}
	n := len(b.host.Logs())
	t.Logf("the guest made %d host calls before its deadline", n)
	b.recoversOnFreshInstance(t, id)
}

// ---- Guests that exhaust resources ----

// memoryTestTimeout is far longer than running out of memory takes (about a
// second; several under the race detector), so these tests prove the memory
// limit stops the guest, not the deadline.
const memoryTestTimeout = 30 * time.Second

// Guards: WithMemoryLimitPages (runtime.go), set from WithMemoryLimit, and
// the "out of memory" case of explain (instance.go).
func TestAllocatingPastTheMemoryLimitStopsOnlyThatInstance(t *testing.T) {
	w := newHostileWorld(t, wasmhost.WithMemoryLimit(32<<20), wasmhost.WithCallTimeout(memoryTestTimeout))
	b := w.newBox(t, hostilePkg, "hog")
	s := b.open(t, "alice")
	id := mustGuestCommand(t, s, "id")
	r := w.attack(t, b, s, "alloc", "")
	wantErr(t, "alloc", r.err, "hog ran out of memory (limit 32 MiB) and was stopped")
	if held := maxHeld(b.host); held < 1 || held >= 32 {
		t.Errorf("the guest held %d MiB before it was stopped, want between 1 and 32", held)
	}
	b.recoversOnFreshInstance(t, id)
}

// Guards: the memory limit, which also bounds Go's goroutine stacks (they
// live in linear memory). Unbounded recursion ends the instance with an
// error, not the server.
func TestUnboundedRecursionStopsOnlyThatInstance(t *testing.T) {
	w := newHostileWorld(t, wasmhost.WithMemoryLimit(32<<20), wasmhost.WithCallTimeout(memoryTestTimeout))
	b := w.newBox(t, hostilePkg, "recursive")
	s := b.open(t, "alice")
	id := mustGuestCommand(t, s, "id")
	r := w.attack(t, b, s, "recurse", "")
	// A Go guest's stack lives in its linear memory, so today the memory
	// limit is what stops it; a guest whose runtime caps its stack first
	// would fail with "stack overflow".
	if e := r.err.Error(); !strings.Contains(e, "recursive ran out of memory (limit 32 MiB)") && !strings.Contains(e, "stack overflow") {
		t.Fatalf("recurse: error %q names neither the memory limit nor the stack", r.err)
	}
	b.recoversOnFreshInstance(t, id)
}

// Guards: the memory limit. Goroutines cost guest memory, so starting them
// without bound ends that instance with an out-of-memory error.
func TestUnboundedGoroutinesStopOnlyThatInstance(t *testing.T) {
	w := newHostileWorld(t, wasmhost.WithMemoryLimit(32<<20), wasmhost.WithCallTimeout(memoryTestTimeout))
	b := w.newBox(t, hostilePkg, "forker")
	s := b.open(t, "alice")
	id := mustGuestCommand(t, s, "id")
	r := w.attack(t, b, s, "goroutines", "")
	wantErr(t, "goroutines", r.err, "forker ran out of memory (limit 32 MiB)")
	b.recoversOnFreshInstance(t, id)
}

// Guards: the result-size check in invoke (instance.go) and the params-size
// check in callFrame (instance.go), both from WithMaxFrameSize. The limit
// fails the call only: the instance survives, since its state is sound.
func TestFramesPastTheSizeLimitAreRefused(t *testing.T) {
	const limit = 1 << 20
	w := newHostileWorld(t, wasmhost.WithMaxFrameSize(limit))
	b := w.newBox(t, hostilePkg, "bloated")
	s := b.open(t, "alice")
	id := mustGuestCommand(t, s, "id")

	r := w.attack(t, b, s, "huge:"+strconv.Itoa(2*limit), "")
	wantErr(t, "huge result", r.err, "bloated: result of", "exceeds the limit of 1048576 bytes")

	// Params past the limit never reach the guest.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := guestCommand(ctx, s, "ok:"+strings.Repeat("x", 2*limit))
	wantErr(t, "huge params", err, "exceeds the limit of 1048576 bytes")

	// The same instance keeps serving the same session.
	if got := mustGuestCommand(t, s, "huge:1000"); len(got) != 1000 {
		t.Fatalf("a result under the limit has %d bytes, want 1000", len(got))
	}
	if got := mustGuestCommand(t, s, "id"); got != id {
		t.Fatalf("the instance changed from %s to %s: an oversized frame should fail only that call", id, got)
	}
	w.bystanderServes(t)
}

// ---- Guests that die mid-call ----

// Guards: die/kill (instance.go, sandbox.go): a trap fails the call with the
// guest's own panic message and the next call gets a fresh instance.
func TestPanicInAMethodFailsTheCallAndTheNextCallGetsAFreshInstance(t *testing.T) {
	w := newHostileWorld(t)
	b := w.newBox(t, hostilePkg, "panicky")
	s := b.open(t, "alice")
	id := mustGuestCommand(t, s, "id")
	r := w.attack(t, b, s, "panic", "")
	wantErr(t, "panic", r.err, "panicky crashed", "panic: hostile gadget panics on purpose")
	b.recoversOnFreshInstance(t, id)
}

func TestExitInAMethodFailsTheCallAndTheNextCallGetsAFreshInstance(t *testing.T) {
	w := newHostileWorld(t)
	b := w.newBox(t, hostilePkg, "quitter")
	s := b.open(t, "alice")
	id := mustGuestCommand(t, s, "id")
	r := w.attack(t, b, s, "exit", "")
	wantErr(t, "exit", r.err, "quitter crashed: exited with code 3")
	b.recoversOnFreshInstance(t, id)
}

// Guards: deliverTop passes the call's error to the call scope's end
// (instance.go), so the storage transaction is discarded when the guest
// traps or fails after writing.
func TestStorageWritesOfAFailedCallAreDiscarded(t *testing.T) {
	w := newHostileWorld(t)
	b := w.newBox(t, hostilePkg, "writer")
	s := b.open(t, "alice")
	r := w.attack(t, b, s, "put-then-panic", "")
	wantErr(t, "put-then-panic", r.err, "panic: hostile gadget panics after a storage write")
	if v, ok := b.host.Get("k1"); ok {
		t.Fatalf("storage holds k1 = %q written by a call that trapped", v)
	}
	s = b.open(t, "alice")
	r = w.attack(t, b, s, "put-then-fail", "")
	wantErr(t, "put-then-fail", r.err, "hostile gadget fails after a storage write")
	if v, ok := b.host.Get("k1"); ok {
		t.Fatalf("storage holds k1 = %q written by a call that failed", v)
	}
	if got := mustGuestCommand(t, s, "ok"); got != "ok" {
		t.Fatalf("ok = %q", got)
	}
}

// Guards: releaseExport runs inside a call scope (instance.go), so guest code
// that runs when the host drops one of its objects (a Shutdown hook) cannot
// write storage outside a transaction, and its writes are discarded if it
// traps.
func TestStorageWritesOfAGuestThatDiesHandlingAReleaseAreDiscarded(t *testing.T) {
	w := newHostileWorld(t)
	b := w.newBox(t, rawPkg, "release-hook")
	s := b.open(t, "alice")
	if got := mustGuestCommand(t, s, "arm-release"); got != "armed" {
		t.Fatalf("arm-release = %q", got)
	}
	s.Release() // the host tells the guest, which writes and traps
	for deadline := time.Now().Add(10 * time.Second); b.gadget.Live(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the instance survived trapping on a release")
		}
	}
	if v, ok := b.host.Get("release-key"); ok {
		t.Fatalf("storage holds release-key = %q written by a release hook that trapped", v)
	}
	w.bystanderServes(t)
	if got := mustGuestCommand(t, b.open(t, "alice"), "call:0"); got != "returned" {
		t.Fatalf("after the trap, Host.log = %q", got)
	}
}

// Guards: instantiate runs the guest's initialization inside a call scope
// and with the instance's context (instance.go), so host calls made from a
// guest's init functions are bounded like any call and their storage writes
// are discarded when init fails.
func TestStorageWritesOfAGuestThatDiesDuringInitAreDiscarded(t *testing.T) {
	w := newHostileWorld(t)
	b := w.newBox(t, hostilePkg, "badinit")
	mustPut(t, b.host, "init-mode", []byte("put-then-panic")) // read by the guest's init
	g := b.gadget.Guest()
	defer g.Release()
	for i := range 2 { // every call instantiates afresh, and fails the same way
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		f, release := g.Open(ctx, nil)
		_, err := f.Struct()
		release()
		cancel()
		wantErr(t, fmt.Sprintf("open #%d", i+1), err, "badinit failed to start", "panic: hostile gadget panics during initialization after a storage write")
	}
	if v, ok := b.host.Get("init-key"); ok {
		t.Fatalf("storage holds init-key = %q written by an instance that died in init", v)
	}
	w.bystanderServes(t)
	if err := b.host.Delete("init-mode"); err != nil {
		t.Fatal(err)
	}
	if got := mustGuestCommand(t, b.open(t, "alice"), "ok"); got != "ok" {
		t.Fatalf("once init succeeds, ok = %q", got)
	}
}

// Guards: the generation check in handle (sandbox.go) and resolve: guest
// export indices are per instance, so a session of an instance that died
// can never reach the object with the same index in its successor (here,
// another user's session).
func TestSessionOfAStoppedInstanceNeverReachesItsSuccessorsObjects(t *testing.T) {
	w := newHostileWorld(t)
	b := w.newBox(t, hostilePkg, "shared")
	alice := b.open(t, "alice")
	if got := mustGuestCommand(t, alice, "whoami"); got != "alice" {
		t.Fatalf("whoami = %q", got)
	}
	w.attack(t, b, alice, "panic", "")
	bob := b.open(t, "bob") // same export index as alice's, in the new instance
	if got := mustGuestCommand(t, bob, "whoami"); got != "bob" {
		t.Fatalf("whoami = %q", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := guestCommand(ctx, alice, "whoami")
	switch {
	case err == nil && got == "alice":
		// Re-opened for alice on the new instance: also safe.
	case err != nil:
		if !errors.Is(err, wasmhost.ErrRestarted) && !strings.Contains(err.Error(), wasmhost.ErrRestarted.Error()) {
			t.Fatalf("alice's old session failed with %v, want %v", err, wasmhost.ErrRestarted)
		}
	default:
		t.Fatalf("alice's session from the stopped instance reached %q's session", got)
	}
}

// ---- Guests that forge capabilities (raw ABI) ----

// Guards: the import table lookups in startOutbound and resolve
// (hostfuncs.go, instance.go): an index the host never granted names no
// object, in a call target, a params capability table or a results table.
func TestForgedHostCapabilityIndicesAreRefused(t *testing.T) {
	w := newHostileWorld(t)
	b := w.newBox(t, rawPkg, "forger")
	s := b.open(t, "alice")
	if got := mustGuestCommand(t, s, "call:0"); got != "returned" {
		t.Fatalf("Host.log through import 0 = %q, want returned", got) // control
	}
	for _, idx := range []string{"1", "7", "4294967295"} {
		got := mustGuestCommand(t, s, "call:"+idx)
		want := "exception: unknown host capability index " + idx + " (never granted, or already released)"
		if got != want {
			t.Errorf("call through forged index %s: the guest saw %q, want %q", idx, got, want)
		}
	}
	if got := mustGuestCommand(t, s, "forge-param:99"); got != "exception: unknown host capability index 99 (never granted, or already released)" {
		t.Errorf("params naming forged index 99: the guest saw %q", got)
	}
	if v, ok := b.host.Get("forged-param"); ok {
		t.Errorf("a call with a forged capability in its params reached storage: %q", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := guestCommand(ctx, s, "forge-result:99")
	wantErr(t, "results naming forged index 99", err, "forger: unknown host capability index 99")
	// None of this is fatal: the same instance still serves the session.
	if got := mustGuestCommand(t, s, "call:0"); got != "returned" {
		t.Fatalf("after the forgeries, Host.log = %q", got)
	}
	w.bystanderServes(t)
}

// Guards: release (hostfuncs.go) deletes the import and describe never
// reuses an index (nextImport only grows).
func TestReleasedHostCapabilityIndexIsNeverReused(t *testing.T) {
	w := newHostileWorld(t)
	b := w.newBox(t, rawPkg, "releaser")
	s := b.open(t, "alice")
	got := mustGuestCommand(t, s, "stale")
	want := "first=1 second=2\n" +
		"before release: returned\n" +
		"after release: exception: unknown host capability index 1 (never granted, or already released)"
	if got != want {
		t.Fatalf("stale scenario transcript:\n%s\nwant:\n%s", got, want)
	}
	if _, ok := b.host.Get("stale-before"); !ok {
		t.Error("the write before release is missing")
	}
	if v, ok := b.host.Get("stale-after"); ok {
		t.Errorf("a write through a released index reached storage: %q", v)
	}
}

// Guards: import tables are per instance (instance.imports): gadget B naming
// an index that is live in gadget A reaches nothing, or B's own object.
func TestGadgetCannotReachAnotherGadgetsCapabilities(t *testing.T) {
	w := newHostileWorld(t)
	a := w.newBox(t, rawPkg, "gadget-a")
	bb := w.newBox(t, rawPkg, "gadget-b")
	sa, sb := a.open(t, "alice"), bb.open(t, "mallory")
	if got := mustGuestCommand(t, sa, "grab"); got != "storage=1 put: returned" {
		t.Fatalf("A grabbing its storage: %q", got)
	}
	if got := mustGuestCommand(t, sb, "put:1:from-b"); got != "exception: unknown host capability index 1 (never granted, or already released)" {
		t.Fatalf("B using A's index 1: %q", got)
	}
	if got := mustGuestCommand(t, sb, "grab"); got != "storage=1 put: returned" {
		t.Fatalf("B grabbing its own storage: %q", got)
	}
	if got := mustGuestCommand(t, sb, "put:1:from-b"); got != "returned" {
		t.Fatalf("B using its own index 1: %q", got)
	}
	if _, ok := a.host.Get("from-b"); ok {
		t.Fatal("B's write reached A's storage")
	}
	if _, ok := bb.host.Get("from-b"); !ok {
		t.Fatal("B's write through its own storage is missing")
	}
	if _, ok := a.host.Get("grabbed"); !ok {
		t.Fatal("A's own write is missing")
	}
}

// Guards: WithMaxImports, checked in describe (instance.go): a guest cannot
// make the host hold capabilities for it without bound.
func TestHostCapabilitiesAGuestHoldsAreBounded(t *testing.T) {
	w := newHostileWorld(t, wasmhost.WithMaxImports(100))
	b := w.newBox(t, rawPkg, "hoarder")
	s := b.open(t, "alice")
	got := mustGuestCommand(t, s, "hoard")
	// Import 0 is the Host itself, so 99 more fit.
	if !strings.HasPrefix(got, "held 99 storage imports, then") || !strings.Contains(got, "hoarder holds 100 host capabilities, the limit") {
		t.Fatalf("hoard: %q", got)
	}
	w.bystanderServes(t)
}

// Guards: the frame and memory checks in invoke, exchange and take
// (instance.go, hostfuncs.go): bytes that are not a frame, pointers outside
// the guest's memory, oversized frames or a take with nothing pending kill
// that instance with an error naming the ABI, and nothing else.
func TestABIViolationsStopOnlyThatInstance(t *testing.T) {
	w := newHostileWorld(t)
	b := w.newBox(t, rawPkg, "broken")
	for _, tc := range []struct{ scenario, want string }{
		{"garbage-answer", "broken broke the guest ABI: answer to a call: malformed frame"},
		{"garbage-exchange", "broke the guest ABI: exchange: malformed frame"},
		{"take-twice", "broke the guest ABI: take without a pending frame"},
		{"wild-answer", "broke the guest ABI: answer at 0xffff0000+65536 is outside its memory"},
		{"exchange-huge", "broke the guest ABI: sent a frame of 4294967295 bytes, over the limit of"},
	} {
		s := b.open(t, "alice")
		r := w.attack(t, b, s, tc.scenario, "")
		wantErr(t, tc.scenario, r.err, tc.want)
	}
	s := b.open(t, "alice")
	if got := mustGuestCommand(t, s, "arm-wild-alloc"); got != "armed" {
		t.Fatalf("arm-wild-alloc = %q", got)
	}
	r := w.attack(t, b, s, "call:0", "")
	wantErr(t, "the call after arm-wild-alloc", r.err, "broke the guest ABI: gadgetd_alloc(", ") returned 0xfffffff0, outside its memory")

	// A capability table past WithMaxCapTable's default fails that call
	// only; the instance is sound.
	s = b.open(t, "alice")
	_, err := guestCommand(context.Background(), s, "captable:"+strconv.Itoa(wasmhost.DefaultMaxCapTable+1))
	wantErr(t, "captable", err, "cap table of 1025 entries exceeds the limit of 1024")
	if got := mustGuestCommand(t, s, "captable:3"); got != "many capabilities" {
		t.Fatalf("a small capability table: %q", got)
	}
	if got := mustGuestCommand(t, s, "call:0"); got != "returned" {
		t.Fatalf("after the violations, Host.log = %q", got)
	}
}

// abandoner is a client Listener that calls back into the gadget while the
// gadget waits for it.
type abandoner struct {
	session capnp.Client
	nested  chan error
}

func (l *abandoner) Changed(ctx context.Context, call counterpb.Listener_changed) error {
	call.Go()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := guestCommand(ctx, l.session, "call:0")
	l.nested <- err
	return nil
}

// Guards: the check in deliverTop (instance.go) that a guest answering a
// call has no calls open inside it. A guest that walks away from a call the
// host delivered into it while it waited (and from its own call) must not
// leave that caller hanging or the instance's call stacks inconsistent.
func TestGuestThatAbandonsANestedCallIsStopped(t *testing.T) {
	w := newHostileWorld(t, wasmhost.WithCallTimeout(3*time.Second))
	b := w.newBox(t, rawPkg, "abandoner")
	s := b.open(t, "alice")
	l := &abandoner{session: s, nested: make(chan error, 1)}
	lc := counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, l), l, nil))
	defer lc.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, release := counterpb.Counter(s).Watch(ctx, func(p counterpb.Counter_watch_Params) error {
		return p.SetListener(lc.AddRef())
	})
	start := time.Now()
	_, err := f.Struct()
	release()
	t.Logf("watch failed after %v: %v", time.Since(start).Round(time.Millisecond), err)
	wantErr(t, "watch", err, "abandoner broke the guest ABI", "unanswered")
	select {
	case err := <-l.nested:
		t.Logf("the abandoned nested call failed after %v: %v", time.Since(start).Round(time.Millisecond), err)
		wantErr(t, "the abandoned nested call", err, "abandoner broke the guest ABI")
	case <-time.After(5 * time.Second):
		t.Fatal("the call delivered into the guest and abandoned never got an answer")
	}
	s = b.open(t, "alice")
	if got := mustGuestCommand(t, s, "call:0"); got != "returned" {
		t.Fatalf("after the violation, Host.log = %q", got)
	}
	w.bystanderServes(t)
}

// ---- Callers that flood a gadget ----

// Guards: enqueue's non-blocking send into the inbox, sized by
// WithQueueLimit (sandbox.go): calls past the queue fail at once with
// ErrOverloaded instead of piling up.
func TestCallsPastTheQueueLimitFailFastWithErrOverloaded(t *testing.T) {
	w := newHostileWorld(t, wasmhost.WithQueueLimit(1), wasmhost.WithCallTimeout(time.Minute))
	b := w.newBox(t, hostilePkg, "slow")
	s := b.open(t, "alice")
	slow := goGuestCommand(s, "sleep:5000")
	waitLog(t, b.host, "sleep: started")
	const extra = 4
	results := make(chan attackOutcome, extra)
	for range extra {
		go func() { results <- <-goGuestCommand(s, "ok") }()
	}
	var overloaded, served int
	for range extra {
		r := <-results
		switch {
		case r.err == nil && r.out == "ok":
			served++
		case r.err != nil && (errors.Is(r.err, wasmhost.ErrOverloaded) || strings.Contains(r.err.Error(), wasmhost.ErrOverloaded.Error())):
			overloaded++
			wantErr(t, "overloaded call", r.err, "slow: gadget is overloaded: 1 calls are already waiting")
			// Refused at once, not queued: the slow call is still asleep.
			if len(slow) != 0 {
				t.Errorf("an overloaded call failed only after the call ahead of it ended (it took %v)", r.elapsed)
			}
		default:
			t.Fatalf("extra call: %q, %v", r.out, r.err)
		}
		if overloaded == extra-1 {
			// Refused calls come back while the slow one still runs.
			w.bystanderServes(t)
		}
	}
	if overloaded != extra-1 || served != 1 {
		t.Fatalf("%d calls refused and %d served; want %d refused and the one that fit in the queue served", overloaded, served, extra-1)
	}
	if r := <-slow; r.err != nil || r.out != "slept" {
		t.Fatalf("the slow call: %q, %v", r.out, r.err)
	}
	if got := mustGuestCommand(t, s, "ok"); got != "ok" {
		t.Fatalf("after the flood, ok = %q", got)
	}
}

// ---- Guests that ask for more than the host provides ----

// Guards: validate (runtime.go) refuses, at Compile, a guest that imports
// anything but WASI and the host's own functions, so no other host module
// (present or future) is reachable from a guest.
func TestCompileRefusesGuestsThatImportAnythingElse(t *testing.T) {
	const exports = `
  (memory (export "memory") 1)
  (func (export "_initialize"))
  (func (export "gadgetd_alloc") (param i32) (result i32) i32.const 0)
  (func (export "gadgetd_deliver") (param i32 i32) (result i64) i64.const 0)`
	ctx := context.Background()
	rt, err := wasmhost.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	for _, tc := range []struct{ name, imports, want string }{
		{"control", ``, ""},
		{"another module", `(import "env" "steal" (func))`, `guest imports env.steal: only "wasi_snapshot_preview1" and "gadgetd" are provided`},
		{"an unknown host function", `(import "gadgetd" "spawn" (func))`, `guest imports unknown host function gadgetd.spawn`},
	} {
		m, err := rt.Compile(ctx, wat(t, "(module "+tc.imports+exports+")"))
		if tc.want == "" {
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			m.Close(ctx)
			continue
		}
		if err == nil {
			m.Close(ctx)
		}
		wantErr(t, tc.name, err, tc.want)
	}
}

// wat assembles WebAssembly text (see wasmhost.AssembleWAT).
var wat = wasmhost.AssembleWAT
