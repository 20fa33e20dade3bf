package server_test

import (
	"net"
	"slices"
	"testing"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/schema"
)

// The tests here pass a listener into the counter through a session of a
// user whose access is then revoked, and watch whether the guest can still
// reach it.

// releasedListener is a listener that also reports when the last reference
// to it is gone: the guest, holding it, dropped it.
type releasedListener struct {
	listener
	released chan struct{}
}

func (l *releasedListener) Shutdown() { close(l.released) }

// watchWith subscribes a new listener to the counter of session c.
func watchWith(t *testing.T, c counterpb.Counter) *releasedListener {
	t.Helper()
	l := &releasedListener{released: make(chan struct{})}
	f, release := c.Watch(testCtx(t), func(p counterpb.Counter_watch_Params) error {
		return p.SetListener(counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, l), l, l)))
	})
	t.Cleanup(release) // the handle: the subscription lasts while it is held
	if _, err := f.Struct(); err != nil {
		t.Fatalf("watch: %v", err)
	}
	return l
}

// requireRevokedListenerHearsNothingMore has bob watch the counter of
// alice's gadget through a session of bobs, alice watch it too, then runs
// revoke and has alice increment: alice hears it, bob does not, and the
// guest drops bob's listener, as it drops any that fails.
func requireRevokedListenerHearsNothingMore(t *testing.T, alices schema.Gadget, bobs schema.Gadget, revoke func()) {
	t.Helper()
	ctx := testCtx(t)
	alice := session(t, alices)
	bobsListener := watchWith(t, session(t, bobs))
	alicesListener := watchWith(t, alice)
	if _, err := countertest.Increment(ctx, alice); err != nil {
		t.Fatal(err)
	}
	if heard := bobsListener.heard(); !slices.Equal(heard, []int64{1}) {
		t.Fatalf("before the revocation bob's listener heard %v, want [1]", heard)
	}

	revoke()
	if _, err := countertest.Increment(ctx, alice); err != nil {
		t.Fatal(err)
	}
	// The counter tells every watcher before increment returns.
	if heard := alicesListener.heard(); !slices.Equal(heard, []int64{1, 2}) {
		t.Fatalf("alice's listener heard %v, want [1 2]", heard)
	}
	if heard := bobsListener.heard(); !slices.Equal(heard, []int64{1}) {
		t.Fatalf("after the revocation bob's listener heard %v, want [1] alone", heard)
	}
	select {
	case <-bobsListener.released:
	case <-ctx.Done():
		t.Fatal("the guest still holds bob's listener after calling it failed")
	}
}

func TestARevokedUsersListenerHearsNothingMore(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	requireRevokedListenerHearsNothingMore(t, g, openGadget(t, ws["bob"], id), func() {
		if n, err := unshare(t, g, "bob"); err != nil || n != 1 {
			t.Fatalf("unsharing: %d, %v", n, err)
		}
	})
}

func TestTheListenerOfARevokedTokenHearsNothingMore(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	bob := ws["bob"]
	requireRevokedListenerHearsNothingMore(t, g, openGadget(t, bob, id), func() {
		if err := revokeToken(testCtx(t), h.login(t, h.token("bob")), currentTokenID(t, bob)); err != nil {
			t.Fatal(err)
		}
	})
	// bob's share stands: only the token's capabilities died.
	if _, err := countertest.Increment(testCtx(t), session(t, openGadget(t, h.login(t, h.token("bob")), id))); err != nil {
		t.Fatalf("bob's session on a new token: %v", err)
	}
}

func TestTheListenerOfARevokedLinksRedeemerHearsNothingMore(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	g, _ := create(t, ws["alice"], "counter")
	secret, linkID := mustLink(t, g, schema.Role_viewer, linkOpts{})
	requireRevokedListenerHearsNothingMore(t, g, mustRedeem(t, ws["bob"], secret), func() {
		if n, err := revokeLink(t, g, linkID); err != nil || n != 1 {
			t.Fatalf("revoking the link: %d, %v", n, err)
		}
	})
}

// openFrame opens a session of g the way a gadget's frame in the browser
// does, through a frame ticket, on a websocket that is here a pipe.
func (h *harness) openFrame(t *testing.T, g schema.Gadget) (counterpb.Counter, *client.Conn) {
	t.Helper()
	f, release := g.FrameTicket(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	ticket, _ := res.Ticket()
	serverSide, clientSide := net.Pipe()
	go h.srv.ServeFrameConn(testCtx(t), "pipe", ticket, func() (net.Conn, error) { return serverSide, nil })
	frame := client.NewConn(clientSide)
	t.Cleanup(func() { frame.Close() })
	return counterpb.Counter(frame.Gateway()), frame
}

// requireClosed waits for the server to close frame's connection.
func requireClosed(t *testing.T, frame *client.Conn, after string) {
	t.Helper()
	select {
	case <-frame.Done():
	case <-testCtx(t).Done():
		t.Fatalf("the frame's websocket is still open %s", after)
	}
}

// A frame that only listens learns of the revocation when the gadget next
// calls its listener: the server closes its websocket.
func TestARevokedFramesWebsocketClosesWhenTheGadgetNextCallsIt(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	bobs, frame := h.openFrame(t, openGadget(t, ws["bob"], id))
	l := watchWith(t, bobs)
	alice := session(t, g)
	if _, err := countertest.Increment(testCtx(t), alice); err != nil {
		t.Fatal(err)
	}
	if heard := l.heard(); !slices.Equal(heard, []int64{1}) {
		t.Fatalf("bob's frame heard %v, want [1]", heard)
	}

	if _, err := unshare(t, g, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := countertest.Increment(testCtx(t), alice); err != nil {
		t.Fatal(err)
	}
	requireClosed(t, frame, "after the gadget's call to its listener failed")
	if heard := l.heard(); !slices.Equal(heard, []int64{1}) {
		t.Fatalf("bob's frame heard %v, want [1] alone", heard)
	}
}
