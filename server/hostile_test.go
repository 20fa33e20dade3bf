package server_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// hostileBundle is the wasmhost test guest that misbehaves on command; its
// sessions speak schema.Storage, get(command) running the command.
func hostileBundle(t testing.TB) blueprint.Bundle {
	return blueprint.Bundle{
		Manifest:         blueprint.Manifest{Name: "hostile", Version: "1"},
		SessionInterface: schema.Storage_TypeID,
		Wasm:             blueprinttest.Wasm(t, "wasmhost/internal/testguests/hostile"),
		SchemaNodes:      blueprinttest.Schema(t, "schema", "gadget.capnp"),
	}
}

func command(ctx context.Context, s schema.Storage, cmd string) (string, error) {
	f, release := s.Get(ctx, func(p schema.Storage_get_Params) error { return p.SetKey(cmd) })
	defer release()
	res, err := f.Struct()
	if err != nil {
		return "", err
	}
	v, err := res.Value()
	return string(v), err
}

func openHostile(t *testing.T, g schema.Gadget) schema.Storage {
	t.Helper()
	f, release := g.Open(testCtx(t), nil)
	t.Cleanup(release)
	return schema.Storage(f.Session())
}

func TestMisbehavingGuestFailsClearlyAndOthersKeepBeingServed(t *testing.T) {
	// Long enough that alice's increment, started once the spin has, ends
	// before the spin's deadline even on a busy 2-core machine under -race
	// (the spin case checks that she is served while it runs, not after):
	// an increment there takes milliseconds to a second or two.
	const callTimeout = 20 * time.Second
	h := start(t, t.TempDir(), server.WithWasmOptions(
		wasmhost.WithCallTimeout(callTimeout),
		wasmhost.WithMemoryLimit(64<<20),
	))
	mallory := h.login(t, h.token("mallory"))
	if err := install(t, mallory, hostileBundle(t)); err != nil {
		t.Fatal(err)
	}
	hostile, _ := create(t, mallory, "hostile")

	alice := h.login(t, h.token("alice"))
	counterGadget, _ := create(t, alice, "counter")
	counter := session(t, counterGadget)

	for _, tc := range []struct {
		cmd  string
		want []string // any of these; which limit trips first depends on the machine
		// started is what the guest logs once it is inside the attack; the
		// attacks that end at once (panic, exit) log nothing.
		started string
		// untilDeadline: the attack runs until callTimeout stops it.
		untilDeadline bool
	}{
		{"spin", []string{"call exceeded its deadline of 20s and the instance was stopped"}, "spin: started", true},
		{"alloc", []string{"ran out of memory (limit 64 MiB) and was stopped", "call exceeded its deadline"}, "alloc: started", false},
		{"recurse", []string{"ran out of memory (limit 64 MiB) and was stopped", "call exceeded its deadline"}, "recurse: started", false},
		{"panic", []string{"crashed: panic: hostile gadget panics on purpose"}, "", false},
		{"exit", []string{"crashed: exited with code 3"}, "", false},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			ctx := testCtx(t)
			s := openHostile(t, hostile)
			if got, err := command(ctx, s, "ok"); err != nil || got != "ok" {
				t.Fatalf("the hostile gadget does not work at all: %q %v", got, err)
			}
			errc := make(chan error, 1)
			begin := time.Now()
			go func() {
				_, err := command(ctx, s, tc.cmd)
				errc <- err
			}()
			// Once the guest is inside the attack, other gadgets are served.
			if tc.started != "" {
				waitGadgetLog(t, hostile, tc.started)
			}
			if _, err := countertest.Increment(ctx, counter); err != nil {
				t.Fatalf("alice's counter failed while mallory's gadget ran %s: %v", tc.cmd, err)
			}
			if tc.untilDeadline {
				select {
				case err := <-errc:
					t.Fatalf("alice's counter was served only once %s had ended (%v), not while it ran", tc.cmd, err)
				default:
				}
			}
			err := <-errc
			t.Logf("%s: %v after %v", tc.cmd, err, time.Since(begin).Round(time.Millisecond))
			if err == nil {
				t.Fatalf("%s succeeded", tc.cmd)
			}
			if !slices.ContainsFunc(tc.want, func(w string) bool { return strings.Contains(err.Error(), w) }) {
				t.Fatalf("%s failed with %q, want one of %q", tc.cmd, err, tc.want)
			}
			// A hang guard, not a timing: the attack ended at its deadline
			// or before, not at some later one.
			if d := time.Since(begin); d > callTimeout+time.Minute {
				t.Fatalf("%s took %v to fail", tc.cmd, d)
			}
			// The gadget itself recovers on a fresh session.
			if got, err := command(ctx, openHostile(t, hostile), "ok"); err != nil || got != "ok" {
				t.Fatalf("after %s the gadget did not recover: %q %v", tc.cmd, got, err)
			}
			if _, err := countertest.Increment(ctx, counter); err != nil {
				t.Fatalf("alice's counter failed after %s: %v", tc.cmd, err)
			}
		})
	}

	// What the guest logged on its way down is in its log.
	f, release := hostile.Logs(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := res.Lines()
	found := false
	for i := 0; i < lines.Len(); i++ {
		if text, _ := lines.At(i).Text(); text == "spin: started" {
			found = true
		}
	}
	if !found {
		t.Fatalf("Gadget.logs does not show the guest's \"spin: started\" (%d lines)", lines.Len())
	}
}
