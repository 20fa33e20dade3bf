package countertest_test

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/examples/counter/counterpb"
	"github.com/gadgetd/gadgetd/examples/counter/countertest"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
)

// The counter example's own test: the example built as `gadgetd blueprint
// build` builds it, installed in a real server, called over loopback TCP
// through the public client package, as counter-client does.

func TestMain(m *testing.M) {
	code := m.Run()
	blueprinttest.RemoveAll()
	os.Exit(code)
}

// session starts a server with the counter example, creates a counter and
// returns a session of it.
func session(t *testing.T, ctx context.Context) counterpb.Counter {
	t.Helper()
	srv, err := server.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	if _, err := srv.InstallBuiltin(ctx, blueprinttest.ExampleBundle(t, "counter")); err != nil {
		t.Fatal(err)
	}
	token, err := srv.IssueToken(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.ServeCapnp(ln)
	conn, err := client.Dial(ctx, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ws, release := conn.Login(ctx, token)
	t.Cleanup(release)
	created, release := ws.Create(ctx, func(p schema.Workspace_create_Params) error { return p.SetBlueprint("counter") })
	t.Cleanup(release)
	opened, release := created.Gadget().Open(ctx, nil)
	t.Cleanup(release)
	return counterpb.Counter(opened.Session())
}

// listener records the values a watch hears.
type listener chan int64

func (l listener) Changed(ctx context.Context, call counterpb.Listener_changed) error {
	l <- call.Args().Value()
	return nil
}

func TestTheCounterCountsAndEveryWatcherHearsEachChange(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a cold wasm build is slow
	defer cancel()
	c := session(t, ctx)

	heard := make(listener, 10)
	l := counterpb.Listener(client.Export(counterpb.Listener_Methods(nil, heard), nil))
	wf, release := c.Watch(ctx, func(p counterpb.Counter_watch_Params) error { return p.SetListener(l) })
	defer release()
	if res, err := wf.Struct(); err != nil || res.Value() != 0 {
		t.Fatalf("watch on a new counter: %v, %v; want 0", res.Value(), err)
	}

	for want := int64(1); want <= 2; want++ {
		if v, err := countertest.Increment(ctx, c); err != nil || v != want {
			t.Fatalf("increment: %d, %v; want %d", v, err, want)
		}
		// increment returns only once every watcher has been told.
		select {
		case v := <-heard:
			if v != want {
				t.Fatalf("the watcher heard %d, want %d", v, want)
			}
		default:
			t.Fatalf("increment to %d returned before the watcher heard of it", want)
		}
	}
	f, release := c.Increment(ctx, func(p counterpb.Counter_increment_Params) error { p.SetBy(40); return nil })
	defer release()
	if res, err := f.Struct(); err != nil || res.Value() != 42 {
		t.Fatalf("increment by 40: %d, %v; want 42", res.Value(), err)
	}
	if v, err := countertest.Get(ctx, c); err != nil || v != 42 {
		t.Fatalf("get: %d, %v; want 42", v, err)
	}
}
