package server_test

import (
	"slices"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// The tests here drive the test counter's present (which asks every open
// session's SessionContext who it belongs to) and watch (a subscription
// that lasts while its handle is held).

// present asks session who is present, through the sessions' contexts.
func present(t *testing.T, session counterpb.Counter) []string {
	t.Helper()
	f, release := session.Present(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("present: %v", err)
	}
	list, err := res.UserNames()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range list.Len() {
		n, err := list.At(i)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

// openByID opens a session of gadget id through ws.
func openByID(t *testing.T, ws schema.Workspace, id string) counterpb.Counter {
	t.Helper()
	f, release := ws.Open(testCtx(t), func(p schema.Workspace_open_Params) error { return p.SetId(id) })
	t.Cleanup(release)
	return session(t, f.Gadget())
}

// A guest that holds a session learns, from the session's context, when the
// token the session was opened with is revoked: the context checks the
// credential on each call rather than remembering the caller from open.
func TestSessionContextStopsAnsweringOnceTheSessionsTokenIsRevoked(t *testing.T) {
	h := start(t, t.TempDir())
	ctx := testCtx(t)
	laptop := h.login(t, h.token("alice"))
	phone := h.login(t, h.token("alice"))
	g, id := create(t, laptop, "counter")
	onLaptop := session(t, g)
	onPhone := openByID(t, phone, id)

	if got := present(t, onPhone); !slices.Equal(got, []string{"alice", "alice"}) {
		t.Fatalf("present with two sessions open: %q, want alice twice", got)
	}
	if err := revokeToken(ctx, phone, currentTokenID(t, laptop)); err != nil {
		t.Fatal(err)
	}
	if got := present(t, onPhone); !slices.Equal(got, []string{"alice"}) {
		t.Fatalf("present after the laptop's token was revoked: %q, want alice once (the phone)", got)
	}
	// The laptop's session is refused outright, so only its context could
	// tell the guest; it did.
	if _, err := countertest.Increment(ctx, onLaptop); !capnp.IsDisconnected(err) {
		t.Fatalf("the revoked session's own call: %v, want disconnected", err)
	}
}

// watchUntilReleased subscribes a listener to session and returns the
// subscription's answer (its handle; release it to unsubscribe), what the
// listener hears, and a channel closed when the listener is released.
func watchUntilReleased(t *testing.T, session counterpb.Counter) (release capnp.ReleaseFunc, heard *listener, released <-chan struct{}) {
	t.Helper()
	heard = &listener{}
	done := make(chan struct{})
	l := counterpb.Listener(client.Export(counterpb.Listener_Methods(nil, heard), func() { close(done) }))
	f, release := session.Watch(testCtx(t), func(p counterpb.Counter_watch_Params) error { return p.SetListener(l) })
	if _, err := f.Struct(); err != nil {
		release()
		t.Fatalf("watch: %v", err)
	}
	t.Cleanup(release)
	return release, heard, done
}

// awaitClosed fails t unless c is closed within a generous bound (a hang
// guard, not a speed limit).
func awaitClosed(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(20 * time.Second):
		t.Fatalf("still not after 20 s: %s", what)
	}
}

// Dropping the handle watch returned ends the subscription: the gadget
// releases the listener, which is how the client learns it, and the
// listener hears no later change.
func TestDroppingTheWatchHandleUnsubscribesAndReleasesTheListener(t *testing.T) {
	h := start(t, t.TempDir())
	g, _ := create(t, h.login(t, h.token("alice")), "counter")
	c := session(t, g)
	ctx := testCtx(t)

	release, heard, released := watchUntilReleased(t, c)
	if _, err := countertest.Increment(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := heard.heard(); !slices.Equal(got, []int64{1}) {
		t.Fatalf("while subscribed the listener heard %v, want [1]", got)
	}
	release() // drops the handle
	awaitClosed(t, released, "the listener is released after its handle was dropped")
	if _, err := countertest.Increment(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := heard.heard(); !slices.Equal(got, []int64{1}) {
		t.Fatalf("after unsubscribing the listener heard %v, want only [1]", got)
	}
}

// When the instance that holds a subscription stops (here: evicted when
// idle), the subscription ends and the client is told: its listener is
// released. The session's context survives the instance: the session is
// reopened on a fresh instance with the same context, which still answers.
func TestAStoppedInstanceReleasesItsListenersAndReopenedSessionsKeepTheirContext(t *testing.T) {
	h := start(t, t.TempDir(), server.WithWasmOptions(wasmhost.WithIdleTimeout(50*time.Millisecond)))
	laptop := h.login(t, h.token("alice"))
	g, id := create(t, laptop, "counter")
	// other is open (present answered) before the watch is made, so the
	// instance that holds the watch is other's or a later one: once the
	// watch ends, other's instance has stopped too. (The 50 ms idle timeout
	// may also stop an instance in between; that changes nothing below.)
	other := openByID(t, laptop, id)
	if got := present(t, other); !slices.Contains(got, "alice") {
		t.Fatalf("present: %q, want alice among them", got)
	}
	_, heard, released := watchUntilReleased(t, session(t, g)) // the handle is held until the test ends
	awaitClosed(t, released, "the watcher's listener is released when the idle instance is evicted")

	// A fresh instance: only the session called is reopened, and its
	// context (the one saved with the session's open params) answers.
	if got := present(t, other); !slices.Equal(got, []string{"alice"}) {
		t.Fatalf("present after the instance restarted: %q, want alice once (the reopened session)", got)
	}
	if _, err := countertest.Increment(testCtx(t), other); err != nil {
		t.Fatal(err)
	}
	if got := heard.heard(); len(got) != 0 {
		t.Fatalf("the ended subscription's listener heard %v", got)
	}
}
