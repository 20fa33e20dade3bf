package server_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/membrane"
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
	l, err := tryWatch(t, c)
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	return l
}

// tryWatch is watchWith, returning the watch's error.
func tryWatch(t *testing.T, c counterpb.Counter) (*releasedListener, error) {
	l := &releasedListener{released: make(chan struct{})}
	f, release := c.Watch(testCtx(t), func(p counterpb.Counter_watch_Params) error {
		return p.SetListener(counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, l), l, l)))
	})
	t.Cleanup(release) // the handle: the subscription lasts while it is held
	_, err := f.Struct()
	return l, err
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
	session, frame, err := h.tryOpenFrame(t, g)
	if err != nil {
		t.Fatal(err)
	}
	return session, frame
}

// tryOpenFrame is openFrame, returning the frame ticket's error.
func (h *harness) tryOpenFrame(t *testing.T, g schema.Gadget) (counterpb.Counter, *client.Conn, error) {
	f, release := g.FrameTicket(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return counterpb.Counter{}, nil, err
	}
	ticket, _ := res.Ticket()
	serverSide, clientSide := net.Pipe()
	go h.srv.ServeFrameConn(testCtx(t), "pipe", ticket, func() (net.Conn, error) { return serverSide, nil })
	frame := client.NewConn(clientSide)
	t.Cleanup(func() { frame.Close() })
	return counterpb.Counter(frame.Gateway()), frame, nil
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

// leadingListener is a releasedListener that returns next from its first
// changed: the counter subscribes next too, a follow-up subscription the
// gadget holds from the results of its own call.
type leadingListener struct {
	*releasedListener
	mu   sync.Mutex
	next counterpb.Listener
}

func (l *leadingListener) Changed(ctx context.Context, call counterpb.Listener_changed) error {
	if err := l.releasedListener.Changed(ctx, call); err != nil {
		return err
	}
	l.mu.Lock()
	next := l.next
	l.next = counterpb.Listener{}
	l.mu.Unlock()
	if !next.IsValid() {
		return nil
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetNext(next)
}

// newReleasedListener returns a releasedListener and its capability.
func newReleasedListener() (*releasedListener, counterpb.Listener) {
	l := &releasedListener{released: make(chan struct{})}
	return l, counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, l), l, l))
}

// requireReleasedHearing waits for the gadget to let go of l and checks
// that l heard exactly want.
func requireReleasedHearing(t *testing.T, name string, l *releasedListener, want []int64) {
	t.Helper()
	select {
	case <-l.released:
	case <-testCtx(t).Done():
		t.Fatalf("the gadget still holds %s after bob's share was revoked", name)
	}
	if heard := l.heard(); !slices.Equal(heard, want) {
		t.Fatalf("%s heard %v, want %v", name, heard, want)
	}
}

// A listener a user's listener handed the gadget (in the results of the
// gadget's own call to it) is cut off with the user's access too. (It went
// on hearing every change: only what came in a call's params was guarded.)
func TestAFollowUpAListenerReturnedHearsNothingMoreOnceItsUserIsRevoked(t *testing.T) {
	ctx := testCtx(t)
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	followUp, followUpCap := newReleasedListener()
	lead := &leadingListener{releasedListener: &releasedListener{released: make(chan struct{})}, next: followUpCap}
	bob := session(t, openGadget(t, ws["bob"], id))
	f, release := bob.Watch(ctx, func(p counterpb.Counter_watch_Params) error {
		return p.SetListener(counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, lead), lead, lead)))
	})
	t.Cleanup(release)
	if _, err := f.Struct(); err != nil {
		t.Fatal(err)
	}
	alice := session(t, g)
	for range 2 { // the first hands the gadget the follow-up
		if _, err := countertest.Increment(ctx, alice); err != nil {
			t.Fatal(err)
		}
	}
	if heard := followUp.heard(); !slices.Equal(heard, []int64{2}) {
		t.Fatalf("before the revocation the follow-up heard %v, want [2]", heard)
	}

	if _, err := unshare(t, g, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := countertest.Increment(ctx, alice); err != nil {
		t.Fatal(err)
	}
	requireReleasedHearing(t, "bob's listener", lead.releasedListener, []int64{1, 2})
	requireReleasedHearing(t, "the follow-up bob's listener returned", followUp, []int64{2})
}

// An object a session handed its user (the watch handle) fails with the
// user's access, and so does every capability passed in through it: a
// listener passed through the handle before the revocation hears nothing
// after, one passed after is refused. (The handle went on answering, and
// both listeners went on hearing.)
func TestWhatASessionHandedOutIsCutOffWithItsUsersAccess(t *testing.T) {
	ctx := testCtx(t)
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	bob := session(t, openGadget(t, ws["bob"], id))
	first, firstCap := newReleasedListener()
	wf, releaseWatch := bob.Watch(ctx, func(p counterpb.Counter_watch_Params) error { return p.SetListener(firstCap) })
	t.Cleanup(releaseWatch)
	handle := wf.Handle()
	viaHandle, viaHandleCap := newReleasedListener()
	hf, releaseHandleWatch := handle.Watch(ctx, func(p counterpb.Handle_watch_Params) error { return p.SetListener(viaHandleCap) })
	t.Cleanup(releaseHandleWatch)
	if _, err := hf.Struct(); err != nil {
		t.Fatalf("watch through the handle: %v", err)
	}
	alice := session(t, g)
	if _, err := countertest.Increment(ctx, alice); err != nil {
		t.Fatal(err)
	}
	getThroughHandle := func() (int64, error) {
		f, release := handle.Get(ctx, nil)
		defer release()
		res, err := f.Struct()
		return res.Value(), err
	}
	if v, err := getThroughHandle(); err != nil || v != 1 {
		t.Fatalf("get through the handle before the revocation = %d, %v; want 1", v, err)
	}

	if _, err := unshare(t, g, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := getThroughHandle(); !capnp.IsDisconnected(err) {
		t.Fatalf("get through the handle after the revocation: err = %v, want disconnected", err)
	}
	late, lateCap := newReleasedListener()
	lf, releaseLate := handle.Watch(ctx, func(p counterpb.Handle_watch_Params) error { return p.SetListener(lateCap) })
	_, err := lf.Struct()
	releaseLate()
	if !capnp.IsDisconnected(err) {
		t.Fatalf("watch through the handle after the revocation: err = %v, want disconnected", err)
	}
	if _, err := countertest.Increment(ctx, alice); err != nil {
		t.Fatal(err)
	}
	requireReleasedHearing(t, "bob's listener", first, []int64{1})
	requireReleasedHearing(t, "the listener bob passed through the handle", viaHandle, []int64{1})
	if heard := late.heard(); len(heard) != 0 {
		t.Fatalf("a listener passed through the handle after the revocation heard %v", heard)
	}
}

// A revocation ends the sessions it cut off as it returns, with no call
// needed to find out: the revoked user's listener is released (the
// gadget dropped it), their frame's websocket closes, and the other
// user's session goes on as before. (Both waited for the gadget's next
// call, and a frame that only listened stayed open until then.)
func TestARevocationEndsTheSessionsItCutOffAsItReturns(t *testing.T) {
	for _, c := range []struct {
		name   string
		revoke func(t *testing.T, h *harness, g schema.Gadget, bob schema.Workspace, linkID string)
	}{
		{"unshare", func(t *testing.T, _ *harness, g schema.Gadget, _ schema.Workspace, _ string) {
			if _, err := unshare(t, g, "bob"); err != nil {
				t.Fatal(err)
			}
		}},
		{"a lowered role", func(t *testing.T, _ *harness, g schema.Gadget, _ schema.Workspace, _ string) {
			mustShare(t, g, "bob", schema.Role_viewer)
		}},
		{"a revoked link", func(t *testing.T, _ *harness, g schema.Gadget, _ schema.Workspace, linkID string) {
			if _, err := revokeLink(t, g, linkID); err != nil {
				t.Fatal(err)
			}
		}},
		{"a revoked token", func(t *testing.T, h *harness, _ schema.Gadget, bob schema.Workspace, _ string) {
			if err := revokeToken(testCtx(t), h.login(t, h.token("bob")), currentTokenID(t, bob)); err != nil {
				t.Fatal(err)
			}
		}},
		{"a dropped saved token", func(t *testing.T, _ *harness, _ schema.Gadget, bob schema.Workspace, _ string) {
			if err := dropSaved(t, bob, savedIDs(t, bob)[0]); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := start(t, t.TempDir())
			ws := h.users(t, "alice", "bob")
			g, id := create(t, ws["alice"], "counter")
			var bobs schema.Gadget
			var linkID string
			switch c.name {
			case "a revoked link":
				var secret string
				secret, linkID = mustLink(t, g, schema.Role_editor, linkOpts{})
				bobs = mustRedeem(t, ws["bob"], secret)
			case "a dropped saved token": // bob's sessions are opened from what it restored
				mustShare(t, g, "bob", schema.Role_editor)
				bobs = schema.Gadget(h.mustRestore(t, mustSave(t, capnp.Client(openGadget(t, ws["bob"], id)))))
			default:
				mustShare(t, g, "bob", schema.Role_editor)
				bobs = openGadget(t, ws["bob"], id)
			}
			bobsListener := watchWith(t, session(t, bobs))
			frameSession, frame := h.openFrame(t, bobs)
			framesListener := watchWith(t, frameSession)
			alicesListener := watchWith(t, session(t, g))

			c.revoke(t, h, g, ws["bob"], linkID)
			for name, l := range map[string]*releasedListener{"bob's listener": bobsListener, "bob's frame's listener": framesListener} {
				select {
				case <-l.released:
				case <-testCtx(t).Done():
					t.Fatalf("%s is still held after the revocation returned", name)
				}
			}
			requireClosed(t, frame, "after the revocation returned")
			select {
			case <-alicesListener.released:
				t.Fatal("alice's listener was released by bob's revocation")
			default:
			}
			if _, err := countertest.Increment(testCtx(t), session(t, g)); err != nil {
				t.Fatal(err)
			}
			if heard := alicesListener.heard(); !slices.Equal(heard, []int64{1}) {
				t.Fatalf("alice's listener heard %v, want [1]", heard)
			}
		})
	}
}

// A session opened with a token that expires ends when it expires, though
// no call announces it: its listener is released and its frame's
// websocket closes. (Both waited for the next call.)
func TestASessionEndsWhenItsTokenExpires(t *testing.T) {
	h := start(t, t.TempDir())
	ctx := testCtx(t)
	alice := h.login(t, h.token("alice"))
	_, id := create(t, alice, "counter")
	// The token must outlive the set-up, which a busy machine can stretch:
	// a set-up that finds it expired is tried again with a longer one.
	for _, validFor := range []uint64{2, 8, 32, 128} {
		token, _, err := newToken(ctx, alice, "short", validFor)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := tryLogin(t, h, token)
		if err != nil {
			continue
		}
		short := openGadget(t, ws, id)
		l, err := tryWatch(t, session(t, short))
		if err != nil {
			continue
		}
		frameSession, frame, err := h.tryOpenFrame(t, short)
		if err != nil {
			continue
		}
		framesListener, err := tryWatch(t, frameSession)
		if err != nil {
			continue
		}
		for name, l := range map[string]*releasedListener{"the session's listener": l, "the frame's listener": framesListener} {
			select {
			case <-l.released:
			case <-ctx.Done():
				t.Fatalf("%s is still held after the token expired", name)
			}
		}
		requireClosed(t, frame, "after its token expired")
		return
	}
	t.Fatal("the set-up outlasted every token lifetime tried")
}

// A capability a user bounces between two of their sessions of one gadget
// (kept through one, handed back through the other) gains a wrapper at
// each crossing; past the membrane's bound it is refused, with a reason,
// rather than making every call through it dearer without end. (An outside
// tester's 80,000 rounds made one call take 1.5 s and the server 1.26 GB.)
func TestACapabilityBouncedBetweenTwoSessionsIsRefusedPastTheBound(t *testing.T) {
	ctx := testCtx(t)
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_viewer)
	bobs := openGadget(t, ws["bob"], id)
	s1, s2 := session(t, bobs), session(t, bobs)
	l, lc := newReleasedListener()
	thing := capnp.Client(lc)
	defer func() { thing.Release() }()
	refusedAt := 0
	for round := 1; round <= 2*membrane.MaxDepth && refusedAt == 0; round++ {
		kf, release := s1.Keep(ctx, func(p counterpb.Counter_keep_Params) error { return p.SetThing(thing.AddRef()) })
		_, err := kf.Struct()
		release()
		if err != nil {
			t.Fatalf("round %d: keep: %v", round, err)
		}
		tf, release := s2.Kept(ctx, nil)
		res, err := tf.Struct()
		if err != nil {
			t.Fatalf("round %d: kept: %v", round, err)
		}
		thing.Release()
		thing = res.Thing().AddRef()
		release()
		cf, release := counterpb.Listener(thing).Changed(ctx, func(p counterpb.Listener_changed_Params) error {
			p.SetValue(int64(round))
			return nil
		})
		_, err = cf.Struct()
		release()
		switch {
		case err != nil && strings.Contains(err.Error(), "passed between sessions so many times"):
			refusedAt = round
		case err != nil:
			t.Fatalf("round %d: a call through what came back: %v", round, err)
		}
	}
	if refusedAt == 0 || refusedAt > membrane.MaxDepth/2+1 {
		t.Fatalf("refused at round %d, want within %d rounds", refusedAt, membrane.MaxDepth/2+1)
	}
	if heard := l.heard(); len(heard) != refusedAt-1 {
		t.Fatalf("the listener heard %v, want every round before the refusal", heard)
	}
}
