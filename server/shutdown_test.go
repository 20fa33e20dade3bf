package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// Removing a gadget, and closing the server (what `gadgetd rm` and SIGTERM
// do), are not held by a guest asleep in its call: here the call may run
// for 10 minutes and the guest sleeps for 10. Before, a sleep was a plain
// time.Sleep that no deadline or close interrupted: rm blocked 58 s and the
// server took 44.6 s to stop, past its 10 s shutdown timeout.
func TestRemovingAGadgetAndClosingTheServerAreNotHeldByASleepingGuest(t *testing.T) {
	const bound = time.Minute // far below the sleep and the call deadline
	h := start(t, t.TempDir(), server.WithWasmOptions(wasmhost.WithCallTimeout(10*time.Minute)))
	ctx := testCtx(t)
	ws := h.login(t, h.token("alice"))
	if err := install(t, ws, hostileBundle(t)); err != nil {
		t.Fatal(err)
	}
	sleepIn := func(g schema.Gadget) <-chan error {
		done := make(chan error, 1)
		s := openHostile(t, g)
		go func() {
			_, err := command(context.Background(), s, "sleep:600000")
			done <- err
		}()
		waitGadgetLog(t, g, "sleep: started")
		return done
	}

	g, id := create(t, ws, "hostile")
	slept := sleepIn(g)
	begin := time.Now()
	f, release := removeByID(ctx, ws, id)
	_, err := f.Struct()
	release()
	if err != nil {
		t.Fatalf("remove: %v", err)
	}
	if d := time.Since(begin); d > bound {
		t.Fatalf("remove took %v: it waited for the sleeping guest", d)
	}
	select {
	case err := <-slept:
		if err == nil {
			t.Errorf("the call of a removed gadget's sleeping guest succeeded")
		}
	case <-time.After(bound):
		t.Fatalf("the sleeping call did not end when its gadget was removed")
	}

	g2, _ := create(t, ws, "hostile")
	sleepIn(g2)
	closeCtx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	begin = time.Now()
	h.srv.Close(closeCtx)
	if d := time.Since(begin); d > bound {
		t.Fatalf("closing the server took %v: it waited for the sleeping guest", d)
	}
}
