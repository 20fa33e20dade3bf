package wasmhost_test

// The instance pool (WithInstancePool, pool.go): instances initialized
// ahead of need, handed to one gadget each, charged to the budget but the
// first to go, and bounded in what a failing initialization can cost.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"go.uber.org/goleak"

	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/internal/wasmbuild"
	"github.com/gadgetd/gadgetd/wasmhost"
)

const poolPkg = "github.com/gadgetd/gadgetd/wasmhost/internal/testguests/poolguest"

// poolWorld is a Runtime whose modules have instance pools.
type poolWorld struct{ rt *wasmhost.Runtime }

func newPoolWorld(t *testing.T, opts ...wasmhost.Option) *poolWorld {
	t.Helper()
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, append([]wasmhost.Option{wasmhost.WithCompilationCacheDir(sharedCacheDir(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	return &poolWorld{rt: rt}
}

func (w *poolWorld) compile(t *testing.T, wasm []byte) *wasmhost.Module {
	t.Helper()
	mod, err := w.rt.Compile(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mod.Close(context.Background()) })
	return mod
}

// gadget is a gadget of mod, closed when the test ends.
func (w *poolWorld) gadget(t *testing.T, mod *wasmhost.Module, name string, opts ...wasmhost.SandboxOption) *hostileBox {
	b := &hostileBox{host: memhost.New()}
	opts = append([]wasmhost.SandboxOption{wasmhost.WithName(name), wasmhost.WithCallScope(b.host.Begin)}, opts...)
	b.gadget = w.rt.NewSandbox(mod, b.host.Client(), opts...)
	t.Cleanup(b.gadget.Close)
	return b
}

// waitPool waits until mod's pool satisfies cond. The bound only guards
// against a hang: a pool fill on a busy machine can take a while.
func waitPool(t *testing.T, mod *wasmhost.Module, what string, cond func(wasmhost.PoolStats) bool) wasmhost.PoolStats {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := mod.PoolStats()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for the pool: %s (now %+v)", what, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func readyIs(n int) func(wasmhost.PoolStats) bool {
	return func(s wasmhost.PoolStats) bool { return s.Ready == n }
}

func wantCount(t *testing.T, session capnp.Client, want string) {
	t.Helper()
	if got := mustGuestCommand(t, session, "count"); got != want {
		t.Fatalf("count = %s, want %s", got, want)
	}
}

// Guards: an instance is handed out once and never returns to the pool
// (instancePool.take, Sandbox.kill). Gadget a counts in guest memory; b
// and, after a is closed, c each take a pooled instance and count from
// zero: no gadget sees memory another gadget's calls touched.
func TestPooledInstanceIsHandedToOneGadgetAndNeverReused(t *testing.T) {
	w := newPoolWorld(t, wasmhost.WithInstancePool(2))
	mod := w.compile(t, wasmbuild.ForTest(t, poolPkg))
	a := w.gadget(t, mod, "a")
	sa := a.open(t, "alice")
	wantCount(t, sa, "1")
	wantCount(t, sa, "2")
	waitPool(t, mod, "full after the first start", readyIs(2))

	b := w.gadget(t, mod, "b")
	sb := b.open(t, "bob")
	if s := mod.PoolStats(); s.HandedOut != 1 {
		t.Fatalf("b's start took no pooled instance: %+v", s)
	}
	wantCount(t, sb, "1")
	wantCount(t, sa, "3")

	waitPool(t, mod, "refilled after b", readyIs(2))
	a.gadget.Close()
	c := w.gadget(t, mod, "c")
	sc := c.open(t, "carol")
	if s := mod.PoolStats(); s.HandedOut != 2 {
		t.Fatalf("c's start took no pooled instance: %+v", s)
	}
	wantCount(t, sc, "1")
}

// Guards: take asks run to refill (instancePool.kick). After each hand-off
// the pool starts another instance in the background.
func TestPoolRefillsAfterAHandOff(t *testing.T) {
	w := newPoolWorld(t, wasmhost.WithInstancePool(2))
	mod := w.compile(t, wasmbuild.ForTest(t, poolPkg))
	if s := mod.PoolStats(); s.Started != 0 {
		t.Fatalf("the pool filled before any gadget started: %+v", s)
	}
	w.gadget(t, mod, "first").open(t, "alice")
	waitPool(t, mod, "full after the first start", readyIs(2))
	for i := range 3 {
		w.gadget(t, mod, "next").open(t, "bob")
		s := waitPool(t, mod, "refilled", readyIs(2))
		if want := uint64(i + 1); s.HandedOut != want || s.Started != 2+want {
			t.Fatalf("after %d hand-offs: %+v", want, s)
		}
	}
}

// Guards: a gadget restarted after its instance died takes a pooled
// instance too (Sandbox.start), and its session is reopened on it.
func TestRestartedGadgetTakesAPooledInstance(t *testing.T) {
	w := newPoolWorld(t, wasmhost.WithInstancePool(1))
	mod := w.compile(t, wasmbuild.ForTest(t, poolPkg))
	g := w.gadget(t, mod, "crasher")
	s := g.open(t, "alice")
	wantCount(t, s, "1")
	waitPool(t, mod, "full", readyIs(1))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := guestCommand(ctx, s, "crash"); err == nil {
		t.Fatal("crash returned no error")
	}
	wantCount(t, s, "1")
	if st := mod.PoolStats(); st.HandedOut != 1 {
		t.Fatalf("the restart took no pooled instance: %+v", st)
	}
}

// Guards: makeRoom closing pooled instances (takePooled, live.go) before it
// asks any idle live instance to evict. The pool of an 8 MiB module holds 3
// instances and an idle gadget holds another 8 MiB of a 48 MiB budget; a
// gadget that needs 24 MiB must close pooled instances. Without that,
// the idle gadget was evicted instead. The pools then stay within what is
// free: they never fill into the budget a live instance holds.
func TestPooledInstancesAreEvictedBeforeIdleLiveOnes(t *testing.T) {
	w := newPoolWorld(t, wasmhost.WithInstancePool(3), wasmhost.WithMemoryBudget(48*mib), wasmhost.WithMemoryLimit(32*mib))
	small := w.compile(t, declaredMemoryGuest(t, 128)) // 8 MiB
	idle := w.gadget(t, small, "idle")
	wantErr(t, "open idle", openGuest(idle.gadget), "held")
	waitPool(t, small, "full", readyIs(3))
	if inUse := w.rt.MemoryInUse(); inUse/mib != 32 {
		t.Fatalf("%d MiB in use, want 8 live and 24 pooled", inUse/mib)
	}

	big := w.gadget(t, w.compile(t, declaredMemoryGuest(t, 384)), "big") // 24 MiB
	wantErr(t, "open big", openGuest(big.gadget), "held")
	if !big.gadget.Live() {
		t.Fatal("big did not start")
	}
	if !idle.gadget.Live() {
		t.Fatalf("the idle gadget was evicted while the pool held %d instances", small.PoolStats().Ready)
	}
	if s := small.PoolStats(); s.Ready == 3 {
		t.Fatalf("no pooled instance was closed for big: %+v", s)
	}

	// A hand-off asks the pool to refill, but the budget is full.
	next := w.gadget(t, small, "next")
	wantErr(t, "open next", openGuest(next.gadget), "held")
	s := waitPool(t, small, "a refill attempt", func(s wasmhost.PoolStats) bool { return s.Started > 3 })
	if inUse := w.rt.MemoryInUse(); inUse > 48*mib {
		t.Fatalf("%d MiB in use, over the 48 MiB budget; pool %+v", inUse/mib, s)
	}
	if !idle.gadget.Live() || !big.gadget.Live() || !next.gadget.Live() {
		t.Fatal("a pool refill evicted a live instance")
	}
}

// Guards: the owner's share in liveSet.adopt. A pooled instance counts
// against no owner until handed out; then against its gadget's owner, who,
// at the share (20 MiB: two 8 MiB instances and their stacks), makes room
// from its own idle instances as on any start.
func TestPooledInstanceCountsAgainstItsOwnersShareOnceHandedOut(t *testing.T) {
	w := newPoolWorld(t, wasmhost.WithInstancePool(2), wasmhost.WithMemoryBudget(64*mib),
		wasmhost.WithMemoryLimit(16*mib), wasmhost.WithMemoryShare(20*mib))
	mod := w.compile(t, declaredMemoryGuest(t, 128)) // 8 MiB
	a1 := w.gadget(t, mod, "a1", wasmhost.WithOwner("alice"))
	wantErr(t, "open a1", openGuest(a1.gadget), "held")
	waitPool(t, mod, "full", readyIs(2))
	if got := w.rt.MemoryInUseBy("alice"); got/mib != 8 {
		t.Fatalf("alice holds %d MiB with one instance and the pool full, want 8", got/mib)
	}
	a2 := w.gadget(t, mod, "a2", wasmhost.WithOwner("alice"))
	wantErr(t, "open a2", openGuest(a2.gadget), "held")
	if got := w.rt.MemoryInUseBy("alice"); got/mib != 16 {
		t.Fatalf("alice holds %d MiB after a hand-off, want 16", got/mib)
	}
	waitPool(t, mod, "refilled", readyIs(2))
	a3 := w.gadget(t, mod, "a3", wasmhost.WithOwner("alice"))
	wantErr(t, "open a3", openGuest(a3.gadget), "held")
	if s := mod.PoolStats(); s.HandedOut != 2 {
		t.Fatalf("a3 took no pooled instance: %+v", s)
	}
	if a1.gadget.Live() || !a2.gadget.Live() || !a3.gadget.Live() {
		t.Fatalf("live: a1 %v a2 %v a3 %v; want alice's least recently used, a1, evicted for a3", a1.gadget.Live(), a2.gadget.Live(), a3.gadget.Live())
	}
	if got := w.rt.MemoryInUseBy("alice"); got > 20*mib {
		t.Fatalf("alice holds %d MiB, over her 20 MiB share", got/mib)
	}
}

// Guards: refill's bound on failures in a row (poolMaxFailures, pool.go).
// An initialization that traps, or loops until its deadline, is tried a
// few times, backing off, and then the pool stops for good; without the
// bound it retried forever. Gadgets of the module still start on demand and
// get the initialization's error.
func TestPoolOfAFailingInitializationStopsAfterAFewAttempts(t *testing.T) {
	for _, tc := range []struct{ name, init, err string }{
		{"trap", "unreachable", "failed to start"},
		{"loop", "(loop br 0)", "deadline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newPoolWorld(t, wasmhost.WithInstancePool(4), wasmhost.WithCallTimeout(200*time.Millisecond))
			mod := w.compile(t, wat(t, `(module
  (memory (export "memory") 1)
  (func (export "_initialize") `+tc.init+`)
  (func (export "gadgetd_alloc") (param i32) (result i32) i32.const 0)
  (func (export "gadgetd_deliver") (param i32 i32) (result i64) i64.const 0))`))
			g := w.gadget(t, mod, "failing")
			wantErr(t, "open", openGuest(g.gadget), tc.err)
			s := waitPool(t, mod, "stopped", func(s wasmhost.PoolStats) bool { return s.Stopped != nil })
			time.Sleep(time.Second) // time for many more attempts, had it not stopped
			if s2 := mod.PoolStats(); s2.Started != s.Started || s.Started != 3 || s.Failed != 3 || s.Ready != 0 {
				t.Fatalf("pool %+v, a second later %+v; want 3 attempts, all failed, then none", s, s2)
			}
			if !strings.Contains(s.Stopped.Error(), "failed 3 times in a row") {
				t.Fatalf("stopped: %v", s.Stopped)
			}
			wantErr(t, "open again", openGuest(g.gadget), tc.err)
		})
	}
}

// Guards: hostStandIn (pool.go). A pooled instance belongs to no gadget, so
// an initialization that calls the host (hostile's reads its storage)
// cannot run ahead of need: the pool stops and says why, and the gadget,
// started on demand, sees its own storage as without a pool.
func TestModuleWhoseInitializationCallsTheHostIsNotPooled(t *testing.T) {
	w := newPoolWorld(t, wasmhost.WithInstancePool(2))
	mod := w.compile(t, wasmbuild.ForTest(t, hostilePkg))
	g := w.gadget(t, mod, "host-caller")
	s := g.open(t, "alice")
	st := waitPool(t, mod, "stopped", func(s wasmhost.PoolStats) bool { return s.Stopped != nil })
	if !strings.Contains(st.Stopped.Error(), "initialization calls the host") || st.Ready != 0 || st.Started != 1 {
		t.Fatalf("pool: %+v", st)
	}
	mustPut(t, g.host, "init-mode", []byte("put-then-panic"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := guestCommand(ctx, s, "panic"); err == nil {
		t.Fatal("panic returned no error")
	}
	// The restart runs init on demand, with the gadget's storage.
	if _, err := guestCommand(ctx, s, "ok"); err == nil || !strings.Contains(err.Error(), "panics during initialization") {
		t.Fatalf("after a restart with init-mode set: %v", err)
	}
}

// Guards: Module.Close and Runtime.Close closing their pools
// (instancePool.close): no pooled instance keeps memory, and no pool
// goroutine outlives them.
func TestClosingReleasesPooledInstancesAndGoroutines(t *testing.T) {
	for _, closer := range []string{"module", "runtime"} {
		t.Run(closer, func(t *testing.T) {
			before := goleak.IgnoreCurrent()
			ctx := context.Background()
			rt, err := wasmhost.New(ctx, wasmhost.WithCompilationCacheDir(sharedCacheDir(t)), wasmhost.WithInstancePool(2))
			if err != nil {
				t.Fatal(err)
			}
			mod, err := rt.Compile(ctx, wasmbuild.ForTest(t, poolPkg))
			if err != nil {
				t.Fatal(err)
			}
			g := rt.NewSandbox(mod, memhost.New().Client())
			if err := openGuest(g); err != nil {
				t.Fatal(err)
			}
			waitPool(t, mod, "full", readyIs(2))
			g.Close()
			if rt.MemoryInUse() == 0 {
				t.Fatal("the pool holds no memory: nothing to prove")
			}
			if closer == "module" {
				mod.Close(ctx)
				if inUse := rt.MemoryInUse(); inUse != 0 {
					t.Fatalf("%d bytes in use after Module.Close", inUse)
				}
			}
			rt.Close(ctx)
			if inUse := rt.MemoryInUse(); inUse != 0 {
				t.Fatalf("%d bytes in use after Runtime.Close", inUse)
			}
			if s := mod.PoolStats(); s.Ready != 0 {
				t.Fatalf("pool after close: %+v", s)
			}
			goleak.VerifyNone(t, before)
		})
	}
}

// Guards: run's idle timer (instancePool.drain). A pool whose module no
// gadget has started for the idle timeout is emptied, releasing its
// memory, and refilled only when a gadget next starts.
func TestPoolUnusedForTheIdleTimeoutIsEmptied(t *testing.T) {
	w := newPoolWorld(t, wasmhost.WithInstancePool(2), wasmhost.WithIdleTimeout(300*time.Millisecond))
	mod := w.compile(t, declaredMemoryGuest(t, 16))
	g := w.gadget(t, mod, "once")
	wantErr(t, "open", openGuest(g.gadget), "held")
	waitPool(t, mod, "full", readyIs(2))
	waitPool(t, mod, "emptied", readyIs(0))
	waitFor(t, "no memory in use", func() bool { return w.rt.MemoryInUse() == 0 })
	wantErr(t, "open again", openGuest(g.gadget), "held")
	waitPool(t, mod, "refilled", readyIs(2))
}

// hogInitGuest is a module whose initialization grows its memory 64 KiB at
// a time up to pages pages, stopping quietly when refused, and then spins
// until its deadline: the pool-hog attack's blueprint (F1).
func hogInitGuest(t *testing.T, pages int) []byte {
	return wat(t, fmt.Sprintf(`(module
  (memory (export "memory") 1)
  (func (export "_initialize")
    (local $n i32)
    (block $done (loop $grow
      (br_if $done (i32.ge_u (local.get $n) (i32.const %d)))
      (br_if $done (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br $grow)))
    (loop $spin (br $spin)))
  (func (export "gadgetd_alloc") (param i32) (result i32) i32.const 0)
  (func (export "gadgetd_deliver") (param i32 i32) (result i64) i64.const 0))`, pages))
}

// poolHogWorld is the pool-hog attack in miniature: mallory's gadgets of
// modules whose initialization grows to 8 MiB and spins fill her 24 MiB
// share of a 48 MiB budget with busy instances, and each start wakes its
// module's pool, whose fills run the same initialization. It returns once
// mallory's share is full and a fill holds its 8 MiB, with the modules.
func poolHogWorld(t *testing.T, modules int) (*poolWorld, []*wasmhost.Module) {
	t.Helper()
	w := newPoolWorld(t, wasmhost.WithInstancePool(2), wasmhost.WithMemoryBudget(48*mib),
		wasmhost.WithMemoryShare(24*mib), wasmhost.WithMemoryLimit(24*mib), wasmhost.WithCallTimeout(10*time.Second))
	var opens sync.WaitGroup
	t.Cleanup(opens.Wait) // after the gadgets' cleanups close them
	var mods []*wasmhost.Module
	for i := range modules {
		mods = append(mods, w.compile(t, hogInitGuest(t, 128)))
		hog := w.gadget(t, mods[i], fmt.Sprintf("hog%d", i), wasmhost.WithOwner("mallory"))
		opens.Add(1)
		go func() {
			defer opens.Done()
			openGuest(hog.gadget) // spins until its deadline, or the gadget closes
		}()
	}
	waitFor(t, "mallory's share full and a fill holding 8 MiB", func() bool {
		mallory := w.rt.MemoryInUseBy("mallory")
		return mallory >= 23*mib && w.rt.MemoryInUse()-mallory >= 8*mib
	})
	return w, mods
}

// Guards: makeRoom ending pool fills in progress (cancelFills, live.go)
// before it evicts or waits, and a fill ended so not counting as the
// module's failure. Mallory's busy gadgets hold her whole share and her
// pools' fills are initializing; bob, who holds nothing, starts a gadget
// that needs 20 MiB, which fits only if the fills give their memory back.
// Without that, the fills held the budget until their deadline and bob's
// start failed: "is in use by busy instances".
func TestPoolFillsInProgressGiveWayToALiveStart(t *testing.T) {
	w, hogs := poolHogWorld(t, 4)
	bob := w.gadget(t, w.compile(t, declaredMemoryGuest(t, 320)), "bob", wasmhost.WithOwner("bob")) // 20 MiB
	wantErr(t, "open bob", openGuest(bob.gadget), "held")
	if got := w.rt.MemoryInUseBy("bob"); got < 20*mib {
		t.Fatalf("bob holds %d MiB, want his 20", got/mib)
	}
	for _, hog := range hogs {
		if s := hog.PoolStats(); s.Failed != 0 || s.Stopped != nil {
			t.Fatalf("a fill ended for bob counted as the module's failure: %+v", s)
		}
	}
}

// Guards: maxFills, the Runtime's bound on pool fills in progress
// (instancePool.fillOne). Mallory's four modules' pools all want filling,
// and the budget has room for three of their fills; only one runs at a
// time, so her pools never hold more than one fill's 8 MiB. Without the
// bound every pool filled at once, together taking all the free budget.
func TestPoolFillsAcrossModulesRunOneAtATime(t *testing.T) {
	w, _ := poolHogWorld(t, 4)
	const oneFill = 8*mib + 2*mib // its memory, its first page and slack
	var most uint64
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		most = max(most, w.rt.MemoryInUse()-w.rt.MemoryInUseBy("mallory"))
	}
	if most > oneFill {
		t.Fatalf("pool fills held %d MiB at once, more than one fill's 8", most/mib)
	}
}
