package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// Guards: the owner the server gives each gadget (wasmhost.WithOwner in
// startLocked, registry.go): a user's gadgets share one part of the memory
// budget. Mallory's two busy gadgets fill her 32 MiB share, so her third is
// stopped with the per-user error, while alice's gadget holds 12 MiB.
// Without the owner, mallory's third held its 8 MiB too.
func TestAUsersGadgetsTogetherGetOnlyTheirShareOfTheMemoryBudget(t *testing.T) {
	h := start(t, t.TempDir(), server.WithWasmOptions(
		wasmhost.WithMemoryBudget(64<<20),
		wasmhost.WithMemoryShare(32<<20),
		wasmhost.WithMemoryLimit(24<<20),
		wasmhost.WithCallTimeout(time.Minute),
	))
	ctx := testCtx(t)
	mallory := h.login(t, h.token("mallory"))
	if err := install(t, mallory, hostileBundle(t)); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		g, _ := create(t, mallory, "hostile")
		s := openHostile(t, g)
		if _, err := command(ctx, s, "hold:8"); err != nil {
			t.Fatalf("mallory's gadget %d could not hold 8 MiB: %v", i, err)
		}
		go command(ctx, s, "sleep:3600000") // busy until the server stops
		waitGadgetLog(t, g, "sleep: started")
	}
	third, _ := create(t, mallory, "hostile")
	_, err := command(ctx, openHostile(t, third), "hold:8")
	if err == nil || !strings.Contains(err.Error(), "ran out of memory and was stopped: its owner's share of the server's memory budget (32 MiB per user) is in use by the owner's busy instances") {
		t.Fatalf("mallory's third gadget holding 8 MiB: %v; want the per-user share error", err)
	}

	alice := h.login(t, h.token("alice"))
	if err := install(t, alice, hostileBundle(t)); err != nil {
		t.Fatal(err)
	}
	g, _ := create(t, alice, "hostile")
	if got, err := command(ctx, openHostile(t, g), "hold:12"); err != nil || got != "held" {
		t.Fatalf("alice's gadget holding 12 MiB: %q, %v", got, err)
	}
}
