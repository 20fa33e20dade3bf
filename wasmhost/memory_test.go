package wasmhost_test

// Host memory: one budget for all live instances of a Runtime, counting
// linear memory, tables and native stacks (memory.go, live.go). Each test
// proves a bound by what happens (an eviction, an error), not by RSS.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/wasmhost"
)

const mib = 1 << 20

// Guards: liveSet.charge and evictIdle (live.go), called from
// linearMemory.Reallocate (memory.go): a guest growing past the budget
// evicts the least recently used idle instance instead of adding to the
// total.
func TestGrowingPastTheMemoryBudgetEvictsTheLeastRecentlyUsedIdleInstance(t *testing.T) {
	w := newHostileWorld(t, wasmhost.WithMemoryBudget(40*mib), wasmhost.WithMemoryLimit(32*mib))
	a := w.newBox(t, hostilePkg, "a")
	sa := a.open(t, "alice")
	aID := mustGuestCommand(t, sa, "id")
	mustGuestCommand(t, sa, "hold:12")
	w.bystanderServes(t) // now a is the least recently used
	b := w.newBox(t, hostilePkg, "b")
	sb := b.open(t, "bob")
	before := w.rt.MemoryInUse()
	t.Logf("in use before b grows: %d MiB", before/mib)
	if got := mustGuestCommand(t, sb, "hold:20"); got != "held" {
		t.Fatalf("hold:20 = %q", got)
	}
	if a.gadget.Live() {
		t.Fatalf("a, idle and least recently used, is still live with %d MiB in use of a 40 MiB budget", w.rt.MemoryInUse()/mib)
	}
	if !w.bystanderGadget.Live() {
		t.Fatal("the bystander was evicted too, though evicting a was enough")
	}
	if inUse := w.rt.MemoryInUse(); inUse > 40*mib {
		t.Fatalf("%d MiB in use, over the 40 MiB budget", inUse/mib)
	}
	w.bystanderServes(t)
	a.recoversOnFreshInstance(t, aID)
}

// Guards: charge refusing what eviction cannot free (live.go), the failed
// memory.grow in Reallocate (memory.go) and its explanation (explain,
// instance.go): busy instances are not evicted, so a guest that needs
// memory they hold is stopped, with an error that names the budget.
func TestGuestPastTheMemoryBudgetHeldByBusyInstancesIsStopped(t *testing.T) {
	w := newHostileWorld(t, wasmhost.WithMemoryBudget(40*mib), wasmhost.WithMemoryLimit(32*mib), wasmhost.WithCallTimeout(time.Minute))
	a := w.newBox(t, hostilePkg, "busy")
	sa := a.open(t, "alice")
	mustGuestCommand(t, sa, "hold:12")
	sleeping := goGuestCommand(sa, sleepForever)
	waitLog(t, a.host, "sleep: started")

	b := w.newBox(t, hostilePkg, "grower")
	sb := b.open(t, "bob")
	id := mustGuestCommand(t, sb, "id")
	r := w.attack(t, b, sb, "hold:24", "")
	wantErr(t, "hold:24", r.err, "grower ran out of memory and was stopped: the server's memory budget for all gadgets (40 MiB) is in use by busy instances")
	if !a.gadget.Live() {
		t.Fatal("the busy instance was evicted")
	}
	b.recoversOnFreshInstance(t, id)
	a.gadget.Close()
	wantErr(t, "the sleeping call", (<-sleeping).err, "gadget is closed")
}

// Guards: reserveMemory (memory.go): an instance whose declared memory does
// not fit in the budget, even after evicting every idle instance, is not
// started.
func TestInstanceThatCannotFitInTheMemoryBudgetIsNotStarted(t *testing.T) {
	w := newHostileWorld(t, wasmhost.WithMemoryBudget(40*mib), wasmhost.WithMemoryLimit(32*mib), wasmhost.WithCallTimeout(time.Minute))
	a := w.newBox(t, hostilePkg, "busy")
	sa := a.open(t, "alice")
	mustGuestCommand(t, sa, "hold:16")
	sleeping := goGuestCommand(sa, sleepForever)
	waitLog(t, a.host, "sleep: started")

	g := w.newDeclaredMemoryGadget(t, 384, "big") // 24 MiB
	wantErr(t, "open", openGuest(g), "big cannot start: it needs 24 MiB of memory, and the server's memory budget for all gadgets (40 MiB) is in use by busy instances")
	w.bystanderServes(t)
	a.gadget.Close()
	<-sleeping
}

// deepGuest recurses depth calls deep on every delivery (no SDK, no Go: the
// stack is wazero's native stack), then answers with an exception frame,
// which fails the call but leaves the instance sound.
func deepGuest(t *testing.T, depth int) []byte {
	return wat(t, fmt.Sprintf(`(module
  (memory (export "memory") 1)
  ;; Frame{exception: "deep"}: stream header, root pointer, Frame's data word
  ;; (union tag 2), its pointer to the 5-byte text, the text.
  (data (i32.const 0x100)
    "\00\00\00\00\04\00\00\00" "\00\00\00\00\01\00\01\00"
    "\02\00\00\00\00\00\00\00" "\01\00\00\00\2a\00\00\00" "deep\00\00\00\00")
  (func $recurse (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (i32.add (i32.const 1) (call $recurse (i32.sub (local.get $n) (i32.const 1)))))))
  (func (export "_initialize"))
  (func (export "gadgetd_alloc") (param i32) (result i32) i32.const 0x1000)
  (func (export "gadgetd_deliver") (param i32 i32) (result i64)
    (drop (call $recurse (i32.const %d)))
    (i64.const 0x0000010000000028)))`, depth))
}

// Guards: settle (memory.go), which drops an api.Function whose native stack
// grew past maxRetainedStack. Without it the instance keeps the stack its
// deepest call needed (tens of MiB here) for as long as it lives.
func TestDeepRecursionDoesNotLeaveItsNativeStackBehind(t *testing.T) {
	w := newHostileWorld(t)
	mod, err := w.rt.Compile(context.Background(), deepGuest(t, 1_000_000))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(context.Background())
	g := w.rt.NewSandbox(mod, memhost.New().Client(), wasmhost.WithName("deep"))
	defer g.Close()
	base := w.rt.MemoryInUse()
	for range 2 {
		wantErr(t, "a deep call", openGuest(g), "deep")
	}
	if !g.Live() {
		t.Fatal("the deep guest's instance died; it should have answered")
	}
	if grew := w.rt.MemoryInUse() - base; grew > 4*mib {
		t.Fatalf("after deep calls the instance holds %d MiB more than its 64 KiB of linear memory", grew/mib)
	}
	w.bystanderServes(t)
}

// Guards: settle (memory.go), which counts tables against the memory limit:
// an instance whose tables and linear memory together exceed it is stopped.
func TestTablesCountAgainstTheMemoryLimit(t *testing.T) {
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, wasmhost.WithMemoryLimit(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	mod, err := rt.Compile(ctx, wat(t, `(module
  (table 100000 100000 funcref)
  (memory (export "memory") 1)
  (func (export "_initialize"))
  (func (export "gadgetd_alloc") (param i32) (result i32) i32.const 0)
  (func (export "gadgetd_deliver") (param i32 i32) (result i64) i64.const 0))`))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	g := rt.NewSandbox(mod, memhost.New().Client(), wasmhost.WithName("tabled"))
	defer g.Close()
	wantErr(t, "open", openGuest(g), "tabled holds 64 KiB of linear memory and 781 KiB of tables, over its memory limit of 64 KiB, and was stopped")
	if g.Live() || rt.MemoryInUse() != 0 {
		t.Fatalf("after the refusal: live %v, %d bytes in use; want no instance and nothing in use", g.Live(), rt.MemoryInUse())
	}
}

// Guards: nativeStackBytes and tableBytes (wazero_internals.go), which read
// wazero's internals by reflection: if wazero's layout changes they read
// zero, and the budget would silently stop counting stacks and tables.
func TestWazeroInternalsAreMeasured(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	mod, err := r.Instantiate(ctx, wat(t, `(module
  (table 1000 funcref)
  (func $recurse (export "recurse") (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (i32.add (i32.const 1) (call $recurse (i32.sub (local.get $n) (i32.const 1))))))))`))
	if err != nil {
		t.Fatal(err)
	}
	if got := wasmhost.TableBytes(mod); got < 1000*8 {
		t.Errorf("a table of 1000 entries measures %d bytes, want at least 8000", got)
	}
	fn := mod.ExportedFunction("recurse")
	small := wasmhost.NativeStackBytes(fn)
	if _, err := fn.Call(ctx, 1_000_000); err != nil {
		t.Fatal(err)
	}
	deep := wasmhost.NativeStackBytes(fn)
	t.Logf("native stack: %d bytes at first, %d after recursing a million calls deep", small, deep)
	if small == 0 || deep <= wasmhost.MaxRetainedStack {
		t.Errorf("native stack measures %d bytes at first and %d after deep recursion; want a small stack that grew past %d", small, deep, wasmhost.MaxRetainedStack)
	}
}
