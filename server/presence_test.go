package server_test

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/examples/notes/notespb"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server/internal/testguests/delegate/delegatepb"
)

// The tests here open sessions of one gadget as several users and ask,
// through a session, who is present (SessionContext.present): the notes
// example answers it for its own session (Notes.present), the delegate test
// guest for every session it holds (Delegate.present).

// presenceUser is one user logged in over a connection of their own.
type presenceUser struct {
	ws schema.Workspace
	id string // the internal user id, which no guest may see
}

func loginUser(t *testing.T, h *harness, name string) presenceUser {
	t.Helper()
	f, release := dial(t, h.addr).Gateway().Login(testCtx(t), func(p schema.Gateway_login_Params) error {
		return p.SetToken(h.token(name))
	})
	t.Cleanup(release)
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("login %s: %v", name, err)
	}
	info, _ := res.User()
	id, _ := info.Id()
	return presenceUser{ws: res.Workspace(), id: id}
}

// startWithNotes starts a server with the notes example installed.
func startWithNotes(t *testing.T) *harness {
	t.Helper()
	h := start(t, t.TempDir())
	if _, err := h.srv.InstallBuiltin(context.Background(), blueprinttest.ExampleBundle(t, "notes")); err != nil {
		t.Fatal(err)
	}
	return h
}

// openOpen opens a session of g and returns it once it is open, so that
// sessions opened one after the other are entered in that order; release
// lets go of it before the test ends (releasing twice is harmless).
func openOpen(t *testing.T, g schema.Gadget) (s capnp.Client, release func()) {
	t.Helper()
	f, releaseOpen := g.Open(testCtx(t), nil)
	defer releaseOpen()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	s = res.Session().AddRef()
	t.Cleanup(s.Release)
	return s, s.Release
}

func openNotes(t *testing.T, g schema.Gadget) (s notespb.Notes, release func()) {
	t.Helper()
	c, release := openOpen(t, g)
	return notespb.Notes(c), release
}

// person is one entry of Notes.present.
type person struct {
	userID, name string
	role         notespb.Role
}

func presentTo(t *testing.T, s notespb.Notes) []person {
	t.Helper()
	f, release := s.Present(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("present: %v", err)
	}
	list, _ := res.People()
	var out []person
	for i := range list.Len() {
		p := list.At(i)
		id, _ := p.UserId()
		name, _ := p.UserName()
		out = append(out, person{id, name, p.Role()})
	}
	return out
}

// awaitPresentSessions waits until the registry holds n sessions: a
// client's release reaches the server after its call returns. The bound is
// a hang guard, not a speed limit.
func awaitPresentSessions(t *testing.T, h *harness, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, gadgets := h.srv.PresentSessions()
		if got == n && (n > 0 || gadgets == 0) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("presence holds %d sessions of %d gadgets after 20 s, want %d", got, gadgets, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Each user with a session open is present once, as the pseudonym their own
// sessions see (never their internal id), with their role, in the order
// their oldest open session began; a released session's user is gone from
// the next answer, to everyone.
func TestPresentListsEachUserAsTheGadgetKnowsThemInArrivalOrder(t *testing.T) {
	h := startWithNotes(t)
	alice, bob := loginUser(t, h, "alice"), loginUser(t, h, "bob")
	g, id := create(t, alice.ws, "notes")
	mustShare(t, g, "bob", schema.Role_viewer)
	aliceIs := person{h.srv.Pseudonym(id, alice.id), "alice", notespb.Role_owner}
	bobIs := person{h.srv.Pseudonym(id, bob.id), "bob", notespb.Role_viewer}
	if aliceIs.userID == alice.id || bobIs.userID == bob.id || aliceIs.userID == bobIs.userID {
		t.Fatalf("pseudonyms %q and %q for users %q and %q", aliceIs.userID, bobIs.userID, alice.id, bob.id)
	}

	aliceFirst, releaseAliceFirst := openNotes(t, g)
	bobs, releaseBobs := openNotes(t, openGadget(t, bob.ws, id))
	for who, s := range map[string]notespb.Notes{"alice": aliceFirst, "bob": bobs} {
		if got := presentTo(t, s); !slices.Equal(got, []person{aliceIs, bobIs}) {
			t.Fatalf("present, asked by %s: %+v, want alice then bob: %+v", who, got, []person{aliceIs, bobIs})
		}
	}

	// alice opens a second session and closes her first: her oldest open
	// session now began after bob's.
	aliceSecond, _ := openNotes(t, g)
	releaseAliceFirst()
	awaitPresentSessions(t, h, 2)
	if got := presentTo(t, aliceSecond); !slices.Equal(got, []person{bobIs, aliceIs}) {
		t.Fatalf("present once alice's first session closed: %+v, want bob then alice", got)
	}
	releaseBobs()
	awaitPresentSessions(t, h, 1)
	if got := presentTo(t, aliceSecond); !slices.Equal(got, []person{aliceIs}) {
		t.Fatalf("present once bob's session closed: %+v, want alice alone", got)
	}
}

// A user with sessions opened at two roles is present once, at the higher;
// when that session closes, at the one left.
func TestAUserWithTwoSessionsIsPresentOnceAtTheHigherRole(t *testing.T) {
	h := startWithNotes(t)
	alice, bob := loginUser(t, h, "alice"), loginUser(t, h, "bob")
	g, id := create(t, alice.ws, "notes")
	aliceIs := person{h.srv.Pseudonym(id, alice.id), "alice", notespb.Role_owner}
	bobAs := func(role notespb.Role) person { return person{h.srv.Pseudonym(id, bob.id), "bob", role} }

	alices, _ := openNotes(t, g)
	mustShare(t, g, "bob", schema.Role_viewer)
	asViewer, _ := openNotes(t, openGadget(t, bob.ws, id))
	mustShare(t, g, "bob", schema.Role_editor)
	asEditor, releaseEditor := openNotes(t, openGadget(t, bob.ws, id))
	for _, s := range []notespb.Notes{alices, asViewer, asEditor} {
		if got := presentTo(t, s); !slices.Equal(got, []person{aliceIs, bobAs(notespb.Role_editor)}) {
			t.Fatalf("present with bob's viewer and editor sessions open: %+v, want alice, then bob once as editor", got)
		}
	}
	releaseEditor()
	awaitPresentSessions(t, h, 2)
	if got := presentTo(t, alices); !slices.Equal(got, []person{aliceIs, bobAs(notespb.Role_viewer)}) {
		t.Fatalf("present once bob's editor session closed: %+v, want bob as viewer", got)
	}
}

// A session a frame ticket opened (a gadget's UI in the browser) is
// present as any other, until its websocket (here a pipe) closes.
func TestAFramesSessionIsPresentUntilItsConnectionCloses(t *testing.T) {
	h := startWithNotes(t)
	alice, bob := loginUser(t, h, "alice"), loginUser(t, h, "bob")
	g, id := create(t, alice.ws, "notes")
	mustShare(t, g, "bob", schema.Role_editor)
	alices, _ := openNotes(t, g)

	f, release := openGadget(t, bob.ws, id).FrameTicket(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	ticket, _ := res.Ticket()
	serverSide, clientSide := net.Pipe()
	go h.srv.ServeFrameConn(testCtx(t), "pipe", ticket, func() (net.Conn, error) { return serverSide, nil })
	frame := client.NewConn(clientSide)
	defer frame.Close()
	bobs := notespb.Notes(frame.Gateway())
	aliceIs := person{h.srv.Pseudonym(id, alice.id), "alice", notespb.Role_owner}
	bobIs := person{h.srv.Pseudonym(id, bob.id), "bob", notespb.Role_editor}
	for who, s := range map[string]notespb.Notes{"alice": alices, "bob's frame": bobs} {
		if got := presentTo(t, s); !slices.Equal(got, []person{aliceIs, bobIs}) {
			t.Fatalf("present, asked by %s: %+v, want alice then bob", who, got)
		}
	}
	frame.Close()
	awaitPresentSessions(t, h, 1)
	if got := presentTo(t, alices); !slices.Equal(got, []person{aliceIs}) {
		t.Fatalf("present once bob's frame closed: %+v, want alice alone", got)
	}
}

// startWithDelegate starts a server with the delegate test guest installed.
func startWithDelegate(t *testing.T) *harness {
	t.Helper()
	h := start(t, t.TempDir())
	b := &blueprint.Bundle{
		Manifest:         blueprint.Manifest{Name: "delegate", Version: "1"},
		SessionInterface: delegatepb.Delegate_TypeID,
		Wasm:             blueprinttest.Wasm(t, "server/internal/testguests/delegate"),
		SchemaNodes:      blueprinttest.Schema(t, "server/internal/testguests/delegate/delegatepb", "delegate.capnp"),
	}
	if _, err := h.srv.InstallBuiltin(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	return h
}

func openDelegate(t *testing.T, g schema.Gadget) (s delegatepb.Delegate, release func()) {
	t.Helper()
	c, release := openOpen(t, g)
	return delegatepb.Delegate(c), release
}

// everyContextSays asks s's gadget what every session's context answers
// to present, sorted: an instance that stopped reopens its sessions in any
// order.
func everyContextSays(t *testing.T, s delegatepb.Delegate) []string {
	t.Helper()
	f, release := s.Present(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("present: %v", err)
	}
	list, _ := res.Answers()
	var out []string
	for i := range list.Len() {
		a, _ := list.At(i)
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// A revoked share takes its user out of presence at once, though their
// session is still held, and the context of their session, which a guest
// may keep, fails present as disconnected, as it fails caller.
func TestARevokedShareDropsItsUserOutOfPresenceAndItsContextDisconnects(t *testing.T) {
	h := startWithDelegate(t)
	alice, bob := loginUser(t, h, "alice"), loginUser(t, h, "bob")
	g, id := create(t, alice.ws, "delegate")
	mustShare(t, g, "bob", schema.Role_editor)
	alices, _ := openDelegate(t, g)
	bobs, release := openDelegate(t, openGadget(t, bob.ws, id))

	both := "alice:owner,bob:editor"
	if got := everyContextSays(t, bobs); !slices.Equal(got, []string{both, both}) {
		t.Fatalf("present, asked through alice's and bob's contexts: %q, want %q from both", got, both)
	}
	if _, err := unshare(t, g, "bob"); err != nil {
		t.Fatal(err)
	}
	if got := everyContextSays(t, alices); !slices.Equal(got, []string{"alice:owner", "disconnected"}) {
		t.Fatalf("present after bob's share was revoked, through alice's and bob's contexts: %q, want alice alone from hers, disconnected from his", got)
	}
	if _, _, err := bobs.PresentSync(testCtx(t), nil); !capnp.IsDisconnected(err) {
		t.Fatalf("bob's revoked session: %v, want disconnected", err)
	}
	// Still held by bob, so still entered; gone once he lets go.
	awaitPresentSessions(t, h, 2)
	release()
	awaitPresentSessions(t, h, 1)
}

// The registry holds the sessions open now and nothing else: many sessions
// of many gadgets opened and released, including ones whose connection
// simply closed, leave it empty.
func TestPresenceIsEmptyOnceEverySessionIsReleasedOrItsConnectionClosed(t *testing.T) {
	h := startWithNotes(t)
	alice, bob := loginUser(t, h, "alice"), loginUser(t, h, "bob")
	var ids []string
	for range 3 {
		g, id := create(t, alice.ws, "notes")
		mustShare(t, g, "bob", schema.Role_editor)
		ids = append(ids, id)
	}
	for round := range 10 {
		var releases []func()
		for _, id := range ids {
			for _, u := range []presenceUser{alice, bob} {
				s, release := openNotes(t, openGadget(t, u.ws, id))
				if got := presentTo(t, s); len(got) == 0 {
					t.Fatalf("round %d: a session's own user is not present", round)
				}
				releases = append(releases, release)
			}
		}
		for _, release := range releases {
			release()
		}
	}
	// A connection that closes with its sessions held releases them.
	conn := dial(t, h.addr)
	ws, release := conn.Login(testCtx(t), h.token("bob"))
	defer release()
	for _, id := range ids {
		openNotes(t, openGadget(t, ws, id))
	}
	awaitPresentSessions(t, h, len(ids))
	conn.Close()
	awaitPresentSessions(t, h, 0)
}
