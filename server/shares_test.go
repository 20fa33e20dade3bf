package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/examples/issues/issuespb"
	"github.com/gadgetd/gadgetd/examples/notes/notespb"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// The tests here share gadgets between users of one real server, each user
// on a connection of their own, and watch what each can reach.

// users logs each name in over a connection of its own.
func (h *harness) users(t *testing.T, names ...string) map[string]schema.Workspace {
	t.Helper()
	out := map[string]schema.Workspace{}
	for _, n := range names {
		out[n] = h.login(t, h.token(n))
	}
	return out
}

func share(t *testing.T, g schema.Gadget, user string, role schema.Role) error {
	t.Helper()
	f, release := g.Share(testCtx(t), func(p schema.Gadget_share_Params) error {
		p.SetRole(role)
		return p.SetUser(user)
	})
	defer release()
	_, err := f.Struct()
	return err
}

func mustShare(t *testing.T, g schema.Gadget, user string, role schema.Role) {
	t.Helper()
	if err := share(t, g, user, role); err != nil {
		t.Fatalf("sharing with %s as %s: %v", user, role, err)
	}
}

func unshare(t *testing.T, g schema.Gadget, user string) (uint32, error) {
	t.Helper()
	f, release := g.Unshare(testCtx(t), func(p schema.Gadget_unshare_Params) error { return p.SetUser(user) })
	defer release()
	res, err := f.Struct()
	if err != nil {
		return 0, err
	}
	return res.Revoked(), nil
}

// listed is one entry of a workspace's gadget list.
type listed struct {
	id, owner, sharedBy string
	role                schema.Role
	gadget              schema.Gadget
}

func listing(t *testing.T, ws schema.Workspace) []listed {
	t.Helper()
	f, release := ws.Gadgets(testCtx(t), nil)
	t.Cleanup(release)
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("gadgets: %v", err)
	}
	list, _ := res.Gadgets()
	var out []listed
	for i := range list.Len() {
		info, _ := list.At(i).Info()
		id, _ := info.Id()
		owner, _ := info.Owner()
		by, _ := info.SharedBy()
		out = append(out, listed{id: id, owner: owner, sharedBy: by, role: info.Role(), gadget: list.At(i).Gadget()})
	}
	return out
}

// reached returns ws's listed entry of gadget id; ok is false if none.
func reached(t *testing.T, ws schema.Workspace, id string) (listed, bool) {
	t.Helper()
	for _, l := range listing(t, ws) {
		if l.id == id {
			return l, true
		}
	}
	return listed{}, false
}

func openGadget(t *testing.T, ws schema.Workspace, id string) schema.Gadget {
	t.Helper()
	f, release := ws.Open(testCtx(t), func(p schema.Workspace_open_Params) error { return p.SetId(id) })
	t.Cleanup(release)
	return f.Gadget()
}

func infoRole(t *testing.T, g schema.Gadget) (schema.Role, error) {
	t.Helper()
	f, release := g.Info(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return 0, err
	}
	info, _ := res.Info()
	return info.Role(), nil
}

func logsErr(t *testing.T, g schema.Gadget) error {
	t.Helper()
	f, release := g.Logs(testCtx(t), nil)
	defer release()
	_, err := f.Struct()
	return err
}

func TestSharingAboveOnesOwnRoleFails(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	bobs := openGadget(t, ws["bob"], id)

	err := share(t, bobs, "carol", schema.Role_owner)
	requireErrorContains(t, err, "the owner role is above the sharer's own editor role")
	if _, ok := reached(t, ws["carol"], id); ok {
		t.Fatal("carol reaches the gadget after bob's refused share")
	}
	mustShare(t, bobs, "carol", schema.Role_editor) // at his own role he may
}

func TestAViewerCannotShare(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_viewer)

	err := share(t, openGadget(t, ws["bob"], id), "carol", schema.Role_viewer)
	requireErrorContains(t, err, "a viewer may not share")
	if _, ok := reached(t, ws["carol"], id); ok {
		t.Fatal("carol reaches the gadget after a viewer's refused share")
	}
}

func TestSharingWithYourselfTheOwnerOrNobodyFailsClearly(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	g, id := create(t, ws["alice"], "counter")
	requireErrorContains(t, share(t, g, "alice", schema.Role_viewer), "sharing with oneself")
	requireErrorContains(t, share(t, g, "nobody", schema.Role_viewer), `no user named "nobody"`)
	mustShare(t, g, "bob", schema.Role_owner)
	requireErrorContains(t, share(t, openGadget(t, ws["bob"], id), "alice", schema.Role_viewer), "sharing with the gadget's owner")
}

// The notes example tells each session whether it may write, from the
// "edit" permission the role it was shared with bundles (Caller.permissions):
// a role changed by sharing again counts from the next open.
func TestTheRecipientFindsTheGadgetAndOpensItWithTheGrantedRole(t *testing.T) {
	h := start(t, t.TempDir())
	if _, err := h.srv.InstallBuiltin(context.Background(), blueprinttest.ExampleBundle(t, "notes")); err != nil {
		t.Fatal(err)
	}
	ws := h.users(t, "alice", "bob")
	g, id := create(t, ws["alice"], "notes")
	mustShare(t, g, "bob", schema.Role_viewer)

	l, ok := reached(t, ws["bob"], id)
	if !ok || l.role != schema.Role_viewer || l.sharedBy != "alice" || l.owner != "alice" {
		t.Fatalf("bob's listing of the gadget: %+v (found %v), want it as viewer, shared by and owned by alice", l, ok)
	}
	canWrite := func(g schema.Gadget) bool {
		t.Helper()
		f, release := notespb.Notes(session(t, g)).Info(testCtx(t), nil)
		defer release()
		res, err := f.Struct()
		if err != nil {
			t.Fatalf("notes info: %v", err)
		}
		if name, _ := res.UserName(); name != "bob" {
			t.Fatalf("the guest sees user %q, want bob", name)
		}
		return res.CanWrite()
	}
	if canWrite(l.gadget) {
		t.Fatal("the guest lets a viewer write")
	}
	mustShare(t, g, "bob", schema.Role_editor)
	if !canWrite(openGadget(t, ws["bob"], id)) {
		t.Fatal("the guest does not let bob write once the gadget is shared with him as editor")
	}
	if l, _ := reached(t, ws["bob"], id); l.role != schema.Role_editor {
		t.Fatalf("bob's listed role after sharing again: %s, want editor", l.role)
	}
}

// carol's share says owner, but she holds it through bob's: lowering bob
// lowers her, on her capability's next call, in her listing, and her
// session opened as owner ends at once, its context too.
func TestEffectiveRoleIsTheChainMinimumAndRecomputedOnEveryUse(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_owner)
	mustShare(t, openGadget(t, ws["bob"], id), "carol", schema.Role_owner)
	carols := openGadget(t, ws["carol"], id)
	asOwner := session(t, carols)
	if _, err := countertest.Increment(testCtx(t), asOwner); err != nil {
		t.Fatal(err)
	}
	if err := logsErr(t, carols); err != nil {
		t.Fatalf("carol's logs as owner: %v", err)
	}
	alicesSession := session(t, g)
	if got := present(t, alicesSession); !slices.Equal(got, []string{"alice", "carol"}) {
		t.Fatalf("present before lowering bob: %q, want alice and carol", got)
	}

	mustShare(t, g, "bob", schema.Role_viewer)
	// carol's context, of a session opened as owner, no longer answers.
	if got := present(t, alicesSession); !slices.Equal(got, []string{"alice"}) {
		t.Fatalf("present after lowering bob: %q, want alice alone", got)
	}
	if role, err := infoRole(t, carols); err != nil || role != schema.Role_viewer {
		t.Fatalf("carol's role below a viewer: %s, %v; want viewer", role, err)
	}
	requireErrorContains(t, logsErr(t, carols), "needs the editor or owner role")
	if l, _ := reached(t, ws["carol"], id); l.role != schema.Role_viewer {
		t.Fatalf("carol's listed role: %s, want viewer", l.role)
	}
	if _, err := countertest.Increment(testCtx(t), asOwner); !capnp.IsDisconnected(err) {
		t.Fatalf("carol's session opened as owner, after her role dropped: %v, want disconnected", err)
	}
	// She may still open a session, as a viewer.
	if _, err := countertest.Increment(testCtx(t), session(t, carols)); err != nil {
		t.Fatalf("carol's new session as viewer: %v", err)
	}
	// A session that failed as disconnected stays so when the role comes
	// back. (An outside tester's came back.)
	mustShare(t, g, "bob", schema.Role_owner)
	if _, err := countertest.Increment(testCtx(t), asOwner); !capnp.IsDisconnected(err) {
		t.Fatalf("carol's session opened as owner, once her role came back: %v, want still disconnected", err)
	}
}

// alice shared with bob, bob with carol. Revoking bob's share ends carol's
// too: her listing, her open, and at once her Gadget capability, her open
// session and its SessionContext.
func TestRevokingBsShareEndsCsEverywhereAtOnce(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	mustShare(t, openGadget(t, ws["bob"], id), "carol", schema.Role_editor)
	l, ok := reached(t, ws["carol"], id)
	if !ok || l.sharedBy != "bob" || l.role != schema.Role_editor {
		t.Fatalf("carol's listing: %+v (found %v), want the gadget as editor from bob", l, ok)
	}
	carols := l.gadget
	carolSession := session(t, carols)
	alicesSession := session(t, g)
	if got := present(t, alicesSession); !slices.Equal(got, []string{"alice", "carol"}) {
		t.Fatalf("present before revoking: %q, want alice and carol", got)
	}

	n, err := unshare(t, g, "bob")
	if err != nil || n != 2 {
		t.Fatalf("unshare bob: %d, %v; want bob's and carol's shares revoked", n, err)
	}
	if _, ok := reached(t, ws["carol"], id); ok {
		t.Fatal("carol's listing still shows the gadget")
	}
	if got := errorsFor(t, ws["carol"], id); got[0] != `unknown gadget id "`+id+`"` {
		t.Fatalf("carol opening the gadget: %q, want unknown gadget id", got[0])
	}
	if _, err := infoRole(t, carols); !capnp.IsDisconnected(err) {
		t.Fatalf("carol's Gadget capability: %v, want disconnected", err)
	}
	if _, err := countertest.Increment(testCtx(t), carolSession); !capnp.IsDisconnected(err) {
		t.Fatalf("carol's open session: %v, want disconnected", err)
	}
	// Her session's context stops answering, so the guest leaves her out.
	if got := present(t, alicesSession); !slices.Equal(got, []string{"alice"}) {
		t.Fatalf("present after revoking: %q, want alice alone", got)
	}
	if _, ok := reached(t, ws["bob"], id); ok {
		t.Fatal("bob's listing still shows the gadget")
	}

	// Shared again, carol gets it back through a new capability; the ones
	// that failed as disconnected stay so. (An outside tester's came back.)
	mustShare(t, g, "carol", schema.Role_editor)
	if _, err := infoRole(t, openGadget(t, ws["carol"], id)); err != nil {
		t.Fatalf("carol's new Gadget capability, shared again: %v", err)
	}
	if _, err := infoRole(t, carols); !capnp.IsDisconnected(err) {
		t.Fatalf("carol's old Gadget capability, shared again: %v, want still disconnected", err)
	}
	if _, err := countertest.Increment(testCtx(t), carolSession); !capnp.IsDisconnected(err) {
		t.Fatalf("carol's old session, shared again: %v, want still disconnected", err)
	}
}

func TestAThirdUserNamingASharedGadgetGetsUnknownGadgetID(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "mallory")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_owner)

	const fakeID = "aaaaaaaaaaaaaaaaaaaaaaaaaa"
	forShared, forFake := errorsFor(t, ws["mallory"], id), errorsFor(t, ws["mallory"], fakeID)
	for i := range forShared {
		if forShared[i] != `unknown gadget id "`+id+`"` || forFake[i] != `unknown gadget id "`+fakeID+`"` {
			t.Fatalf("mallory naming a shared gadget: %q; a fake one: %q", forShared[i], forFake[i])
		}
	}
	if got := listing(t, ws["mallory"]); len(got) != 0 {
		t.Fatalf("mallory's listing: %+v", got)
	}
}

func TestUnshareByANonSharerNonOwnerFails(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol", "dave")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	mustShare(t, g, "carol", schema.Role_editor)
	mustShare(t, openGadget(t, ws["bob"], id), "dave", schema.Role_viewer)

	_, err := unshare(t, openGadget(t, ws["carol"], id), "dave")
	requireErrorContains(t, err, `"dave" holds no share of gadget "`+id+`" that you may revoke`)
	if _, ok := reached(t, ws["dave"], id); !ok {
		t.Fatal("dave lost the gadget to carol's unshare")
	}
	// The owner may revoke anyone's share.
	if n, err := unshare(t, g, "dave"); err != nil || n != 1 {
		t.Fatalf("the owner revoking bob's share to dave: %d, %v", n, err)
	}
}

func TestOnlyTheCreatorRemovesASharedGadgetAndRemovalEndsItsShares(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_owner)
	bobs := openGadget(t, ws["bob"], id)

	f, release := bobs.Remove(testCtx(t), nil)
	_, err := f.Struct()
	release()
	requireErrorContains(t, err, "only its creator may")
	f, release = g.Remove(testCtx(t), nil)
	defer release()
	if _, err := f.Struct(); err != nil {
		t.Fatal(err)
	}
	if _, ok := reached(t, ws["bob"], id); ok {
		t.Fatal("bob's listing shows the removed gadget")
	}
	if _, err := infoRole(t, bobs); err == nil {
		t.Fatal("bob's capability to the removed gadget still works")
	}
}

func TestSharesListsWhoHoldsWhatForEditorsOnly(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	mustShare(t, openGadget(t, ws["bob"], id), "carol", schema.Role_viewer)

	shares := func(g schema.Gadget) ([]string, error) {
		f, release := g.Shares(testCtx(t), nil)
		defer release()
		res, err := f.Struct()
		if err != nil {
			return nil, err
		}
		list, _ := res.Shares()
		var out []string
		for i := range list.Len() {
			s := list.At(i)
			user, _ := s.User()
			by, _ := s.SharedBy()
			out = append(out, user+":"+s.Role().String()+":"+by)
		}
		slices.Sort(out)
		return out, nil
	}
	want := []string{"bob:editor:alice", "carol:viewer:bob"}
	for _, who := range []string{"alice", "bob"} {
		if got, err := shares(openGadget(t, ws[who], id)); err != nil || !slices.Equal(got, want) {
			t.Fatalf("shares as %s: %q, %v; want %q", who, got, err, want)
		}
	}
	_, err := shares(openGadget(t, ws["carol"], id))
	requireErrorContains(t, err, "needs the editor or owner role")
}

// TestOnlyTheCreatorBindsUnbindsOrAutoApprovesGatekeepers: a gadget's
// gatekeepers act with its creator's authority (audited as the creator's,
// their actions waiting for the creator's approval), so a user it is
// shared with, as editor or even as owner, may not bind, unbind or turn on
// auto-approval; the creator may. (An outside tester, as an editor, turned
// on auto-approval of the creator's binding, and the gadget's action
// reached the service unapproved, recorded as the creator's.)
func TestOnlyTheCreatorBindsUnbindsOrAutoApprovesGatekeepers(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_owner)
	mustShare(t, g, "carol", schema.Role_editor)
	calls := map[string]func(schema.Gadget) error{
		"binding a gatekeeper": func(g schema.Gadget) error {
			f, release := g.Bind(testCtx(t), func(p schema.Gadget_bind_Params) error {
				p.SetName("x")
				return p.SetService("nosuchservice")
			})
			defer release()
			_, err := f.Struct()
			return err
		},
		"unbinding a gatekeeper": func(g schema.Gadget) error {
			f, release := g.Unbind(testCtx(t), func(p schema.Gadget_unbind_Params) error { return p.SetName("x") })
			defer release()
			_, err := f.Struct()
			return err
		},
		"setting auto-approval": func(g schema.Gadget) error {
			f, release := g.SetAutoApprove(testCtx(t), func(p schema.Gadget_setAutoApprove_Params) error {
				p.SetOn(true)
				p.SetBinding("x")
				return p.SetMethod("send")
			})
			defer release()
			_, err := f.Struct()
			return err
		},
	}
	for what, call := range calls {
		for _, user := range []string{"bob", "carol"} {
			requireErrorContains(t, call(openGadget(t, ws[user], id)), what+` of gadget "`+id+`" is for its creator`)
		}
		// The creator gets past the check, to the desk, which knows no
		// such service or binding.
		if err := call(g); err == nil || strings.Contains(err.Error(), "is for its creator") {
			t.Fatalf("%s by the creator: %v, want the desk's own error", what, err)
		}
	}
}

// bob's call waits in the gadget's queue, behind alice's slow one, when
// alice revokes his share: it fails, disconnected, without reaching the
// guest. (It ran, after the unshare had returned: the share was checked
// only when the call arrived.)
func TestACallQueuedBeforeAnUnshareNeverReachesTheGuest(t *testing.T) {
	// A call may run as long as the longest hold (queuedWhenAccessEnds).
	h := start(t, t.TempDir(), server.WithWasmOptions(wasmhost.WithCallTimeout(2*time.Minute)))
	installHostile(t, h)
	ws := h.users(t, "alice", "bob")
	queuedWhenAccessEnds(t, func(t *testing.T) (schema.Gadget, schema.Storage, func(*testing.T)) {
		g, id := create(t, ws["alice"], "hostile")
		mustShare(t, g, "bob", schema.Role_editor)
		return g, openSession(t, ws["bob"], id), func(t *testing.T) {
			if n, err := unshare(t, g, "bob"); err != nil || n != 1 {
				t.Fatalf("unshare bob: %d, %v", n, err)
			}
		}
	})
}

// queuedWhenAccessEnds proves that a session's call queued behind a slow
// one when the session's access ends fails, disconnected, without reaching
// the guest. fresh makes a gadget of the hostile blueprint, the victim, a
// session of it, and what ends the victim's access. On a machine too busy
// for the call to be queued and the access ended within the hold, the hold
// ends first, proving nothing, and it tries again with a longer one.
func queuedWhenAccessEnds(t *testing.T, fresh func(*testing.T) (g schema.Gadget, victim schema.Storage, end func(*testing.T))) {
	t.Helper()
	for _, hold := range []time.Duration{5 * time.Second, 20 * time.Second, time.Minute} {
		g, victim, end := fresh(t)
		if endBehindAHold(t, g, victim, end, hold) {
			return
		}
		t.Logf("the %v hold ended before the access did; trying a longer one", hold)
	}
	t.Fatal("even a one-minute hold ended before the access did")
}

// endBehindAHold queues a call of victim, a session of g, behind a call
// that holds g for hold, then ends victim's access; it reports false if
// the hold ended too soon to prove anything.
func endBehindAHold(t *testing.T, g schema.Gadget, victim schema.Storage, end func(*testing.T), hold time.Duration) bool {
	if _, err := command(testCtx(t), victim, "ok"); err != nil { // resolved: the next call is not pipelined
		t.Fatal(err)
	}
	held := make(chan error, 1)
	go func() {
		_, err := command(context.Background(), openHostile(t, g), fmt.Sprintf("sleep:%d", hold.Milliseconds()))
		held <- err
	}()
	waitGuestLog(t, g, "sleep: started", 1)
	type answer struct {
		who string
		err error
	}
	queued := make(chan answer, 1)
	go func() {
		who, err := command(testCtx(t), victim, "whoami")
		queued <- answer{who, err}
	}()
	// Time for the call to pass the session's checks and reach the queue:
	// what is proved is that a queued call is refused, not an unsent one.
	time.Sleep(300 * time.Millisecond)
	end(t)
	select {
	case <-held:
		return false
	default:
	}
	if a := <-queued; !capnp.IsDisconnected(a.err) || a.who != "" {
		t.Fatalf("the call queued before the access ended: %q, %v; want disconnected, the guest never reached", a.who, a.err)
	}
	if err := <-held; err != nil {
		t.Fatalf("the call that held the gadget: %v", err)
	}
	return true
}

// bob's session, opened as editor, makes no call while alice lowers him to
// viewer and raises him back: its next call fails, disconnected, as if it
// had been made in between. Raising alone ends nothing. (It went on: the
// check compared roles only.)
func TestASessionWhoseRoleDroppedAndCameBackStaysEnded(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	mustShare(t, openGadget(t, ws["bob"], id), "carol", schema.Role_editor)
	bobs := session(t, openGadget(t, ws["bob"], id))
	carols := session(t, openGadget(t, ws["carol"], id))
	for who, s := range map[string]counterpb.Counter{"bob": bobs, "carol": carols} {
		if _, err := countertest.Increment(testCtx(t), s); err != nil {
			t.Fatalf("%s's session: %v", who, err)
		}
	}
	mustShare(t, g, "bob", schema.Role_owner)
	for who, s := range map[string]counterpb.Counter{"bob": bobs, "carol": carols} {
		if _, err := countertest.Increment(testCtx(t), s); err != nil {
			t.Fatalf("%s's session, once bob was raised: %v", who, err)
		}
	}
	mustShare(t, g, "bob", schema.Role_viewer)
	mustShare(t, g, "bob", schema.Role_editor)
	for who, s := range map[string]counterpb.Counter{"bob": bobs, "carol": carols} {
		if _, err := countertest.Increment(testCtx(t), s); !capnp.IsDisconnected(err) {
			t.Fatalf("%s's session, after bob was lowered and raised back: %v, want disconnected", who, err)
		}
	}
	if _, err := countertest.Increment(testCtx(t), session(t, openGadget(t, ws["carol"], id))); err != nil {
		t.Fatalf("carol's new session: %v", err)
	}
}

// bob, an editor of alice's issues gadget, lists and files issues through
// his session: the audit entries and the queued action name bob, while the
// action waits for alice, in alice's workspace; alice's own call is hers.
// (All were recorded as alice's.)
func TestAGatekeeperCallMadeInASharedUsersSessionIsRecordedAsTheirs(t *testing.T) {
	h := startIssues(t)
	alice := h.login(t, h.token("alice"))
	f, release := dial(t, h.addr).Gateway().Login(testCtx(t), func(p schema.Gateway_login_Params) error { return p.SetToken(h.token("bob")) })
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	bob := res.Workspace()
	bobInfo, _ := res.User()
	bobID, _ := bobInfo.Id()

	g, id := create(t, alice, "issues")
	if err := bindRepo(t, g, "acme/widgets"); err != nil {
		t.Fatal(err)
	}
	mustShare(t, g, "bob", schema.Role_editor)
	alicesOpen, releaseAlices := g.Open(testCtx(t), nil)
	defer releaseAlices()
	if _, err := listIssues(t, issuespb.Issues(alicesOpen.Session())); err != nil {
		t.Fatal(err)
	}
	bobsOpen, releaseBobs := openGadget(t, bob, id).Open(testCtx(t), nil)
	defer releaseBobs()
	bobs := issuespb.Issues(bobsOpen.Session())
	if _, err := listIssues(t, bobs); err != nil {
		t.Fatal(err)
	}
	action := fileIssue(t, bobs, "Filed by bob")

	af, releaseActions := alice.Actions(testCtx(t), nil)
	defer releaseActions()
	ares, err := af.Struct()
	if err != nil {
		t.Fatal(err)
	}
	actions, _ := ares.Actions()
	if actions.Len() != 1 {
		t.Fatalf("alice's workspace has %d actions, want bob's one", actions.Len())
	}
	if got, _ := actions.At(0).Id(); got != action {
		t.Fatalf("alice's action %s, want %s", got, action)
	}
	if user, _ := actions.At(0).User(); user != bobID {
		t.Fatalf("the action bob's session queued names user %q, want bob's %q", user, bobID)
	}
	if st := actions.At(0).State(); st != schema.ActionState_pending {
		t.Fatalf("the action is %v, want pending alice's approval", st)
	}

	entries := auditEntries(t, alice)
	// Newest first: bob's file and list, then alice's list.
	if len(entries) != 3 || entries[0].user != bobID || entries[0].actionID != action || entries[1].user != bobID || entries[2].user == bobID || entries[2].user == "" {
		t.Fatalf("alice's audit log: %+v; want bob's file and list, then alice's list", entries)
	}
}

type auditEntry struct{ user, method, actionID string }

// auditEntries returns ws's audit log, newest first.
func auditEntries(t *testing.T, ws schema.Workspace) []auditEntry {
	t.Helper()
	f, release := ws.Audit(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	list, _ := res.Entries()
	var out []auditEntry
	for i := range list.Len() {
		e := list.At(i)
		user, _ := e.User()
		method, _ := e.Method()
		id, _ := e.ActionId()
		out = append(out, auditEntry{user, method, id})
	}
	return out
}
