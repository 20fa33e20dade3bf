package server_test

// Exception types reach clients over a real TCP connection (issue 6, item
// 6): a client can tell "try again later" (overloaded) and "get a new
// capability" (disconnected) from a call that failed.

import (
	"context"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// waitGadgetLog waits until gadget g's log (Gadget.logs) has a line text.
func waitGadgetLog(t *testing.T, g schema.Gadget, text string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f, release := g.Logs(testCtx(t), nil)
		res, err := f.Struct()
		if err != nil {
			release()
			t.Fatal(err)
		}
		lines, _ := res.Lines()
		for i := 0; i < lines.Len(); i++ {
			if l, _ := lines.At(i).Text(); l == text {
				release()
				return
			}
		}
		release()
		if time.Now().After(deadline) {
			t.Fatalf("the gadget never logged %q", text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAFullGadgetQueueIsAnOverloadedExceptionForTheClient(t *testing.T) {
	h := start(t, t.TempDir(), server.WithWasmOptions(wasmhost.WithQueueLimit(1), wasmhost.WithCallTimeout(20*time.Second)))
	// A builtin, installed without a client's deadline: compiling the
	// guest takes long under -race on a busy machine, and that is not
	// what this test is about.
	hostile := hostileBundle(t)
	if _, err := h.srv.InstallBuiltin(context.Background(), &hostile); err != nil {
		t.Fatal(err)
	}
	g, _ := create(t, h.login(t, h.token("mallory")), "hostile")
	s := openHostile(t, g)
	ctx := testCtx(t)
	slow := make(chan error, 1)
	go func() {
		_, err := command(ctx, s, "sleep:2000")
		slow <- err
	}()
	waitGadgetLog(t, g, "sleep: started") // the gadget's one worker is busy

	const extra = 4
	errs := make(chan error, extra)
	for range extra {
		go func() {
			_, err := command(ctx, s, "ok")
			errs <- err
		}()
	}
	var overloaded, served int
	for range extra {
		switch err := <-errs; {
		case err == nil:
			served++
		case exc.TypeOf(err) == exc.Overloaded:
			overloaded++
			if !strings.Contains(err.Error(), "gadget is overloaded") {
				t.Errorf("overloaded call: %q, want the reason", err)
			}
		default:
			t.Fatalf("a call past the queue failed with a %v exception: %v; want overloaded", exc.TypeOf(err), err)
		}
	}
	if overloaded != extra-1 || served != 1 {
		t.Fatalf("%d calls overloaded and %d served; want %d overloaded and the one that fit in the queue served", overloaded, served, extra-1)
	}
	if err := <-slow; err != nil {
		t.Fatalf("the slow call: %v", err)
	}
}

func TestARemovedGadgetsSessionIsDisconnectedForTheClient(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	g, id := create(t, ws, "counter")
	c := session(t, g)
	ctx := testCtx(t)
	if _, err := countertest.Increment(ctx, c); err != nil {
		t.Fatal(err)
	}
	rf, release := removeByID(ctx, ws, id)
	defer release()
	if _, err := rf.Struct(); err != nil {
		t.Fatal(err)
	}
	_, err := countertest.Increment(ctx, c)
	if !capnp.IsDisconnected(err) {
		t.Fatalf("increment on the session of a removed gadget: a %v exception (%v), want disconnected", exc.TypeOf(err), err)
	}
}

// What a guest answers keeps its type too: an unknown method is
// unimplemented, a refused argument failed.
func TestGuestExceptionTypesReachClientsOverTCP(t *testing.T) {
	h := start(t, t.TempDir())
	g, _ := create(t, h.login(t, h.token("alice")), "counter")
	c := session(t, g)
	ctx := testCtx(t)
	err := callMethod(ctx, capnp.Client(c), counterpb.Counter_TypeID, 77)
	if !capnp.IsUnimplemented(err) {
		t.Errorf("Counter method @77: a %v exception (%v), want unimplemented", exc.TypeOf(err), err)
	}
	f, release := c.Watch(ctx, nil) // a null listener: the guest refuses it
	defer release()
	if _, err := f.Struct(); err == nil || exc.TypeOf(err) != exc.Failed {
		t.Errorf("watch(null): %v (%v), want a failed exception", exc.TypeOf(err), err)
	}
}

// A capability whose token was revoked is gone for good: disconnected, so a
// client knows to log in again rather than retry.
func TestCapabilitiesOfARevokedTokenAreDisconnected(t *testing.T) {
	h := start(t, t.TempDir())
	ctx := testCtx(t)
	victim := h.login(t, h.token("alice"))
	if err := revokeToken(ctx, h.login(t, h.token("alice")), currentTokenID(t, victim)); err != nil {
		t.Fatal(err)
	}
	if err := workspaceWorks(t, victim); !capnp.IsDisconnected(err) {
		t.Fatalf("a workspace call after its token was revoked: a %v exception (%v), want disconnected", exc.TypeOf(err), err)
	}
}
