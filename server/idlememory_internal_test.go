package server

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/schema"
)

// Clients that leave used to leave their gadgets' instances behind for
// wasmhost's idle timeout (5 minutes; 64 counters held 285 MiB over the
// baseline for that long), and the Go heap they used for minutes more. Now,
// once nothing holds a session, a gadget's shell and its instance go after
// WithIdleShellTimeout, and the server then hands its free heap back to the
// OS; an instance whose session is still held keeps running, with its
// watchers. The test leaves wasmhost's idle timeout at its default, so an
// instance gone within the test was let go by the server, not by wasmhost.
func TestClientsLeavingLetTheirInstancesGoAndTheHeapIsReturned(t *testing.T) {
	var returned atomic.Int64
	s := openTestServer(t,
		WithIdleShellTimeout(50*time.Millisecond),
		func(c *config) { c.returnMemory = func() { returned.Add(1) } })
	if _, err := s.InstallBuiltin(context.Background(), blueprinttest.Bundle(t, blueprinttest.TestCounter)); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.ServeCapnp(ln)
	token, err := s.IssueToken(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}

	// One client stays: it holds a session and watches its counter.
	stayer := dialLoggedIn(t, ln.Addr().String(), token)
	_, held := newGadget(t, stayer, "counter")
	heldSession, releaseHeld := openSession(t, held)
	defer releaseHeld()
	changes := make(chan int64, 16)
	watch(t, heldSession, changes)

	// Six clients come, each on its own connection and gadget, call, and go.
	for range 6 {
		ctx, cancel := context.WithCancel(context.Background())
		conn, err := client.Dial(ctx, ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		ws, release := conn.Login(ctx, token)
		_, g := newGadget(t, ws, "counter")
		session, releaseSession := openSession(t, g)
		increment(t, session)
		if s.rt.LiveInstances() < 2 {
			t.Fatal("the client's gadget has no live instance right after its call")
		}
		releaseSession()
		release()
		conn.Close()
		cancel()
	}

	eventually(t, "the departed clients' gadgets and instances are let go", func() bool {
		return s.liveShells() == 1 && s.rt.LiveInstances() == 1 && s.rpc.ConnCount() == 1
	})
	eventually(t, "the free heap is handed back to the OS", func() bool { return returned.Load() > 0 })

	// The stayer's instance was never stopped: its watcher still hears.
	if v := increment(t, heldSession); v != 1 {
		t.Fatalf("the held session counted %d, want 1", v)
	}
	select {
	case v := <-changes:
		if v != 1 {
			t.Fatalf("the watcher heard %d, want 1", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the held session's watcher heard nothing: its instance was stopped")
	}

	releaseHeld()
	eventually(t, "the last gadget and its instance go once its session is released", func() bool {
		return s.liveShells() == 0 && s.rt.LiveInstances() == 0
	})
}

// dialLoggedIn is a client on its own loopback connection, logged in with
// token.
func dialLoggedIn(t *testing.T, addr, token string) schema.Workspace {
	t.Helper()
	conn, err := client.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ws, release := conn.Login(context.Background(), token)
	t.Cleanup(release)
	return ws
}

// watch registers a listener on a counter session that sends every change
// to changes.
func watch(t *testing.T, session capnp.Client, changes chan<- int64) {
	t.Helper()
	l := counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, changeSink(changes)), nil, nil))
	f, release := counterpb.Counter(session).Watch(context.Background(), func(p counterpb.Counter_watch_Params) error {
		return p.SetListener(l)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	// The subscription lasts while its handle is held: for the test.
	t.Cleanup(res.Handle().AddRef().Release)
}

type changeSink chan<- int64

func (c changeSink) Changed(_ context.Context, call counterpb.Listener_changed) error {
	c <- call.Args().Value()
	return nil
}
