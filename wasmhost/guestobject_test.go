package wasmhost_test

import (
	"context"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// Guards: a guest object tells the guest it is released only after the
// calls in flight on it are answered (guestObject.Shutdown and callDone).
// Each round sends a call on a session and drops the session at once, while
// the worker is busy with another call; without the guard, the release and
// the call wait for the worker together, it takes either first, and a
// release taken first makes the guest refuse the call. Rounds make losing
// that coin toss every time unlikely (2^-16).
func TestACallSentJustBeforeItsSessionIsReleasedIsAnsweredFirst(t *testing.T) {
	const rounds = 16
	w := newHostileWorld(t)
	w.newBox(t, hostilePkg, "compiler")
	mod := w.mods[hostilePkg]
	mem := memhost.New()
	host := newGatedHost(t, mem)
	var releases releaseFrames
	g := w.rt.NewSandbox(mod, host.client(), wasmhost.WithName("released"), wasmhost.WithCallScope(releases.counting(mem.Begin)))
	t.Cleanup(g.Close)
	busy := mustOpen(t, g, "alice")

	for i := range rounds {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		s, err := openSession(ctx, g, "bob")
		if err != nil {
			t.Fatalf("round %d: open: %v", i, err)
		}
		host.close()
		holder := goGuestCommand(busy, "sleep:0")
		host.waitEntered(t)

		f, release := schema.Storage(s).Get(ctx, func(p schema.Storage_get_Params) error {
			return p.SetKey("ok")
		})
		s.Release() // the call is queued: Send returned
		host.open()
		if r := <-holder; r.err != nil {
			t.Fatalf("round %d: the call that held the worker: %v", i, r.err)
		}
		res, err := f.Struct()
		if err != nil {
			t.Fatalf("round %d: the call sent before its session was released: %v", i, err)
		}
		if v, err := res.Value(); err != nil || string(v) != "ok" {
			t.Fatalf("round %d: the call sent before its session was released: %q, %v", i, v, err)
		}
		release()
		cancel()
	}
	// And each session is released in the guest once its call is done.
	for deadline := time.Now().Add(10 * time.Second); releases.n.Load() < rounds; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the guest got %d release frames; want %d, one per released session", releases.n.Load(), rounds)
		}
	}
}
