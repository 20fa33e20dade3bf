package wasmhost_test

// Each owner's share of the memory budget (WithMemoryShare, live.go): one
// user's gadgets, however many and however busy, cannot take the memory
// another user's gadgets need while that user stays within their share.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// ownedBox is a hostile gadget of owner (WithOwner).
func (w *hostileWorld) ownedBox(t *testing.T, name, owner string) *hostileBox {
	t.Helper()
	if _, ok := w.mods[hostilePkg]; !ok {
		w.newBox(t, hostilePkg, "compiler") // compiles the module
	}
	b := &hostileBox{host: memhost.New()}
	b.gadget = w.rt.NewSandbox(w.mods[hostilePkg], b.host.Client(),
		wasmhost.WithName(name), wasmhost.WithOwner(owner), wasmhost.WithCallScope(b.host.Begin))
	t.Cleanup(b.gadget.Close)
	return b
}

// declaredMemoryGuest is a module that declares pages of linear memory, all
// of which its instance holds from its start. It answers every call with
// the exception "held", which fails the call but leaves the instance live.
func declaredMemoryGuest(t *testing.T, pages int) []byte {
	return wat(t, fmt.Sprintf(`(module
  (memory (export "memory") %d)
  ;; Frame{exception: "held"}, as in deepGuest.
  (data (i32.const 0x100)
    "\00\00\00\00\04\00\00\00" "\00\00\00\00\01\00\01\00"
    "\02\00\00\00\00\00\00\00" "\01\00\00\00\2a\00\00\00" "held\00\00\00\00")
  (func (export "_initialize"))
  (func (export "gadgetd_alloc") (param i32) (result i32) i32.const 0x1000)
  (func (export "gadgetd_deliver") (param i32 i32) (result i64)
    (i64.const 0x0000010000000028)))`, pages))
}

// newDeclaredMemoryGadget is a gadget of owner that declares pages of
// linear memory (declaredMemoryGuest).
func (w *hostileWorld) newDeclaredMemoryGadget(t *testing.T, pages int, name string, opts ...wasmhost.SandboxOption) *wasmhost.Sandbox {
	t.Helper()
	mod, err := w.rt.Compile(context.Background(), declaredMemoryGuest(t, pages))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mod.Close(context.Background()) })
	g := w.rt.NewSandbox(mod, memhost.New().Client(), append([]wasmhost.SandboxOption{wasmhost.WithName(name)}, opts...)...)
	t.Cleanup(g.Close)
	return g
}

// Guards: the share in liveSet.charge (live.go). Alice's gadgets grab what
// they can (8 MiB each, then sleeping, busy) until her share stops them;
// bob, within his share, then starts a gadget that declares 8 MiB and grows
// another to hold 12 MiB. Without the share alice's busy instances held
// over 50 of the 64 MiB, and bob's start or growth failed on the budget.
func TestOneOwnersBusyInstancesCannotTakeTheMemoryAnotherOwnerNeedsWithinItsShare(t *testing.T) {
	const budget, share = 64 * mib, 32 * mib
	w := newHostileWorld(t, wasmhost.WithMemoryBudget(budget), wasmhost.WithMemoryShare(share),
		wasmhost.WithMemoryLimit(24*mib), wasmhost.WithCallTimeout(time.Minute))
	var busy []*hostileBox
	for i := range 5 {
		a := w.ownedBox(t, fmt.Sprintf("alice-%d", i), "alice")
		s := a.open(t, "alice")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := guestCommand(ctx, s, "hold:8")
		cancel()
		if err != nil {
			// Refused for want of memory; with the share in place, by
			// the share (the next test checks its error).
			wantErr(t, "alice's hold:8", err, "ran out of memory and was stopped")
			continue
		}
		goGuestCommand(s, sleepForever)
		waitLog(t, a.host, "sleep: started")
		busy = append(busy, a)
	}
	t.Logf("alice holds %d MiB in %d busy instances; %d MiB in use of %d", w.rt.MemoryInUseBy("alice")/mib, len(busy), w.rt.MemoryInUse()/mib, budget/mib)
	if len(busy) < 2 {
		t.Fatalf("only %d of alice's gadgets got their 8 MiB; the test wants her share filled with busy instances", len(busy))
	}

	big := w.newDeclaredMemoryGadget(t, 128, "bob-big", wasmhost.WithOwner("bob"))
	if err := openGuest(big); !big.Live() {
		t.Fatalf("bob's gadget declaring 8 MiB did not start while alice's busy instances held %d MiB: %v", w.rt.MemoryInUseBy("alice")/mib, err)
	}
	b := w.ownedBox(t, "bob", "bob")
	sb := b.open(t, "bob")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := guestCommand(ctx, sb, "hold:12"); err != nil {
		t.Fatalf("bob's gadget could not hold 12 MiB while alice's busy instances held %d MiB: %v", w.rt.MemoryInUseBy("alice")/mib, err)
	}
	if inUse := w.rt.MemoryInUseBy("alice"); inUse > share {
		t.Fatalf("alice holds %d MiB, over her share of %d MiB", inUse/mib, share/mib)
	}
	for _, a := range busy {
		if !a.gadget.Live() {
			t.Fatal("one of alice's busy instances was evicted")
		}
	}
	w.bystanderServes(t)
}

// Guards: evictIdle of the owner's own instances and the refusal with
// overShare (live.go), its explanation (busyHolders): an owner needing room
// past its share evicts its own least recently used idle instance, not an
// older one of someone else; when only its busy instances hold the share,
// its guest is stopped, and a gadget of it is not started, with errors that
// name the share. Without the share nothing was evicted and both fit in the
// budget.
func TestOwnerPastItsShareEvictsItsOwnIdleInstancesAndIsThenRefused(t *testing.T) {
	const share = 24 * mib
	w := newHostileWorld(t, wasmhost.WithMemoryBudget(64*mib), wasmhost.WithMemoryShare(share),
		wasmhost.WithMemoryLimit(16*mib), wasmhost.WithCallTimeout(time.Minute))
	idle := w.ownedBox(t, "alice-idle", "alice")
	si := idle.open(t, "alice")
	idleID := mustGuestCommand(t, si, "id")
	mustGuestCommand(t, si, "hold:8")
	// The bystander, which has no owner, is now the least recently used.

	a := w.ownedBox(t, "alice-busy", "alice")
	sa := a.open(t, "alice")
	mustGuestCommand(t, sa, "hold:8")
	if idle.gadget.Live() {
		t.Fatalf("alice's idle instance is live, and alice holds %d MiB, over her share of %d MiB", w.rt.MemoryInUseBy("alice")/mib, share/mib)
	}
	if !w.bystanderGadget.Live() {
		t.Fatal("the bystander was evicted for alice's share; her own idle instance was enough")
	}
	goGuestCommand(sa, sleepForever)
	waitLog(t, a.host, "sleep: started")

	g := w.ownedBox(t, "alice-grower", "alice")
	sg := g.open(t, "alice")
	r := w.attack(t, g, sg, "hold:12", "")
	wantErr(t, "hold:12", r.err, "alice-grower ran out of memory and was stopped: its owner's share of the server's memory budget (24 MiB per user) is in use by the owner's busy instances")

	big := w.newDeclaredMemoryGadget(t, 256, "alice-big", wasmhost.WithOwner("alice"))
	wantErr(t, "open", openGuest(big), "alice-big cannot start: it needs 16 MiB of memory, and its owner's share of the server's memory budget (24 MiB per user) is in use by the owner's busy instances")

	if inUse := w.rt.MemoryInUseBy("alice"); inUse > share {
		t.Fatalf("alice holds %d MiB, over her share of %d MiB", inUse/mib, share/mib)
	}
	if !a.gadget.Live() {
		t.Fatal("alice's busy instance was evicted")
	}
	idle.recoversOnFreshInstance(t, idleID)
	w.bystanderServes(t)
}

// Guards: the check in New (runtime.go): a share smaller than one instance
// may hold, or larger than the budget, is a configuration error.
func TestMemoryShareOutsideTheMemoryLimitAndTheBudgetIsRefused(t *testing.T) {
	for _, share := range []uint64{8 * mib, 128 * mib} {
		rt, err := wasmhost.New(context.Background(), wasmhost.WithMemoryLimit(16*mib), wasmhost.WithMemoryBudget(64*mib), wasmhost.WithMemoryShare(share))
		if err == nil {
			rt.Close(context.Background())
			t.Fatalf("a share of %d MiB with a 16 MiB limit and a 64 MiB budget was accepted", share/mib)
		}
		wantErr(t, "New", err, "invalid limits: memory share")
	}
}
