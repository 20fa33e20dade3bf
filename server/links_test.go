package server_test

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
)

// The tests here create share links on one real server and redeem them
// from other users' workspaces, each on a connection of its own.

type linkOpts struct {
	expiresIn uint64
	singleUse bool
	label     string
}

// createLink returns a new link's secret and id.
func createLink(t *testing.T, g schema.Gadget, role schema.Role, o linkOpts) (secret, id string, err error) {
	t.Helper()
	f, release := g.CreateLink(testCtx(t), func(p schema.Gadget_createLink_Params) error {
		p.SetRole(role)
		p.SetExpiresInSeconds(o.expiresIn)
		p.SetSingleUse(o.singleUse)
		return p.SetLabel(o.label)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return "", "", err
	}
	secret, _ = res.Secret()
	info, _ := res.Link()
	id, _ = info.Id()
	return secret, id, nil
}

func mustLink(t *testing.T, g schema.Gadget, role schema.Role, o linkOpts) (secret, id string) {
	t.Helper()
	secret, id, err := createLink(t, g, role, o)
	if err != nil {
		t.Fatalf("creating a %s link: %v", role, err)
	}
	return secret, id
}

// redeem returns the gadget ws got for secret, at the role it was given.
func redeem(t *testing.T, ws schema.Workspace, secret string) (g schema.Gadget, role schema.Role, redeemed bool, err error) {
	t.Helper()
	f, release := ws.Redeem(testCtx(t), func(p schema.Workspace_redeem_Params) error { return p.SetSecret(secret) })
	t.Cleanup(release)
	res, err := f.Struct()
	if err != nil {
		return schema.Gadget{}, 0, false, err
	}
	info, _ := res.Info()
	return res.Gadget(), info.Role(), res.Redeemed(), nil
}

func mustRedeem(t *testing.T, ws schema.Workspace, secret string) schema.Gadget {
	t.Helper()
	g, _, redeemed, err := redeem(t, ws, secret)
	if err != nil || !redeemed {
		t.Fatalf("redeeming: redeemed %v, %v", redeemed, err)
	}
	return g
}

func revokeLink(t *testing.T, g schema.Gadget, id string) (uint32, error) {
	t.Helper()
	f, release := g.RevokeLink(testCtx(t), func(p schema.Gadget_revokeLink_Params) error { return p.SetId(id) })
	defer release()
	res, err := f.Struct()
	if err != nil {
		return 0, err
	}
	return res.Revoked(), nil
}

const invalidLink = "invalid or expired link"

func TestAViewerCannotCreateALink(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_viewer)
	_, _, err := createLink(t, openGadget(t, ws["bob"], id), schema.Role_viewer, linkOpts{})
	requireErrorContains(t, err, "a viewer may not create links")
}

func TestALinkAboveItsCreatorsRoleCannotBeCreated(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	_, _, err := createLink(t, openGadget(t, ws["bob"], id), schema.Role_owner, linkOpts{})
	requireErrorContains(t, err, "the owner role is above your own editor role")
}

func TestRedeemingPutsTheGadgetInTheRedeemersWorkspaceAtTheLinksRole(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	g, id := create(t, ws["alice"], "counter")
	secret, _ := mustLink(t, g, schema.Role_viewer, linkOpts{label: "for bob"})
	if !strings.HasPrefix(secret, "gdl_") {
		t.Fatalf("secret %q lacks its prefix", secret)
	}
	bobs, role, redeemed, err := redeem(t, ws["bob"], secret)
	if err != nil || !redeemed || role != schema.Role_viewer {
		t.Fatalf("bob redeeming: role %s, redeemed %v, %v; want the viewer role", role, redeemed, err)
	}
	l, ok := reached(t, ws["bob"], id)
	if !ok || l.role != schema.Role_viewer || l.sharedBy != "alice" {
		t.Fatalf("bob's listing: %+v (found %v), want the gadget as viewer from alice", l, ok)
	}
	if err := logsErr(t, bobs); err == nil {
		t.Fatal("a viewer's capability from a link read the logs, an editor's right")
	}
	if _, err := countertest.Increment(testCtx(t), session(t, bobs)); err != nil {
		t.Fatalf("bob's session through the link: %v", err)
	}
	// The creator redeeming their own link: nothing to gain, nothing done.
	if _, role, redeemed, err := redeem(t, ws["alice"], secret); err != nil || redeemed || role != schema.Role_owner {
		t.Fatalf("alice redeeming her own link: role %s, redeemed %v, %v; want a no-op as owner", role, redeemed, err)
	}
}

// bob (editor by alice's share) makes an editor link, carol redeems it.
// Lowering bob lowers carol; revoking bob ends carol, her capability and
// her session at once.
func TestALinkIsNeverWorthMoreThanItsCreatorHoldsNow(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	secret, _ := mustLink(t, openGadget(t, ws["bob"], id), schema.Role_editor, linkOpts{})
	carols := mustRedeem(t, ws["carol"], secret)
	carolSession := session(t, carols)
	if _, err := countertest.Increment(testCtx(t), carolSession); err != nil { // opened before bob is lowered
		t.Fatalf("carol's session: %v", err)
	}

	mustShare(t, g, "bob", schema.Role_viewer)
	if role, err := infoRole(t, openGadget(t, ws["carol"], id)); err != nil || role != schema.Role_viewer {
		t.Fatalf("carol's role after bob was lowered to viewer: %s, %v; want viewer", role, err)
	}
	if _, err := countertest.Increment(testCtx(t), carolSession); !capnp.IsDisconnected(err) {
		t.Fatalf("carol's editor session after bob was lowered: %v, want disconnected", err)
	}
	if _, err := unshare(t, g, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := infoRole(t, carols); !capnp.IsDisconnected(err) {
		t.Fatalf("carol's capability after bob's share was revoked: %v, want disconnected", err)
	}
	if _, ok := reached(t, ws["carol"], id); ok {
		t.Fatal("carol still lists the gadget after bob's share was revoked")
	}
}

func TestRedeemingARevokedExpiredOrConsumedLinkFailsAlike(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol")
	g, _ := create(t, ws["alice"], "counter")
	revoked, revokedID := mustLink(t, g, schema.Role_viewer, linkOpts{})
	if _, err := revokeLink(t, g, revokedID); err != nil {
		t.Fatal(err)
	}
	once, _ := mustLink(t, g, schema.Role_viewer, linkOpts{singleUse: true})
	mustRedeem(t, ws["bob"], once)
	expiring, _ := mustLink(t, g, schema.Role_viewer, linkOpts{expiresIn: 1})
	time.Sleep(1100 * time.Millisecond)
	unknown := "gdl_" + strings.Repeat("A", 22)
	for what, secret := range map[string]string{"revoked": revoked, "replayed single-use": once, "expired": expiring, "unknown": unknown, "malformed": "hello"} {
		if _, _, _, err := redeem(t, ws["carol"], secret); reason(err) != invalidLink {
			t.Errorf("redeeming a %s link: %v, want %q", what, err, invalidLink)
		}
	}
}

func TestConcurrentRedemptionsOfASingleUseLinkHaveExactlyOneWinner(t *testing.T) {
	h := start(t, t.TempDir())
	names := []string{"alice", "bob", "carol", "dave", "erin"}
	ws := h.users(t, names...)
	g, _ := create(t, ws["alice"], "counter")
	secret, _ := mustLink(t, g, schema.Role_editor, linkOpts{singleUse: true})
	var wg sync.WaitGroup
	errs := make([]error, len(names)-1)
	for i, n := range names[1:] {
		wg.Go(func() {
			f, release := ws[n].Redeem(testCtx(t), func(p schema.Workspace_redeem_Params) error { return p.SetSecret(secret) })
			defer release()
			_, errs[i] = f.Struct()
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case reason(err) != invalidLink:
			t.Fatal(err)
		}
	}
	if won != 1 {
		t.Fatalf("%d concurrent redemptions of a single-use link succeeded, want exactly 1", won)
	}
}

// bob and carol redeem one link; revoking it ends both, their capabilities
// and open sessions at once, and the gadget is gone from their workspaces
// as if it never existed; the link does not redeem again.
func TestRevokingALinkEndsEveryRedemptionAtOnce(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol")
	g, id := create(t, ws["alice"], "counter")
	secret, linkID := mustLink(t, g, schema.Role_editor, linkOpts{})
	bobs := mustRedeem(t, ws["bob"], secret)
	carols := mustRedeem(t, ws["carol"], secret)
	carolSession := session(t, carols)
	if _, err := countertest.Increment(testCtx(t), carolSession); err != nil { // opened before the revocation
		t.Fatalf("carol's session: %v", err)
	}

	n, err := revokeLink(t, g, linkID)
	if err != nil || n != 2 {
		t.Fatalf("revoking the link: %d, %v; want both redemptions ended", n, err)
	}
	for name, c := range map[string]schema.Gadget{"bob": bobs, "carol": carols} {
		if _, err := infoRole(t, c); !capnp.IsDisconnected(err) {
			t.Errorf("%s's capability after the link was revoked: %v, want disconnected", name, err)
		}
		if got := errorsFor(t, ws[name], id); got[0] != `unknown gadget id "`+id+`"` {
			t.Errorf("%s opening the gadget after the link was revoked: %q, want unknown gadget id", name, got[0])
		}
	}
	if _, err := countertest.Increment(testCtx(t), carolSession); !capnp.IsDisconnected(err) {
		t.Fatalf("carol's open session after the link was revoked: %v, want disconnected", err)
	}
	if _, _, _, err := redeem(t, ws["bob"], secret); reason(err) != invalidLink {
		t.Fatalf("redeeming the revoked link again: %v, want %q", err, invalidLink)
	}
}

func TestALinksSecretIsNotInTheDataFile(t *testing.T) {
	dir := t.TempDir()
	h := start(t, dir)
	ws := h.users(t, "alice", "bob")
	g, _ := create(t, ws["alice"], "counter")
	secret, _ := mustLink(t, g, schema.Role_viewer, linkOpts{label: "scan me"})
	mustRedeem(t, ws["bob"], secret)
	h.stop()
	raw, err := os.ReadFile(filepath.Join(dir, "gadgetd.db"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte("scan me")) {
		t.Fatal("the link's label is not in the data file: the scan is blind")
	}
	secretBytes, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(secret, "gdl_"))
	if err != nil || len(secretBytes) != 16 {
		t.Fatalf("secret %q is not gdl_ and base64url of 128 bits: %v", secret, err)
	}
	for _, s := range []string{secret, strings.TrimPrefix(secret, "gdl_"), string(secretBytes)} {
		if bytes.Contains(raw, []byte(s)) {
			t.Fatal("a link's secret is in the data file")
		}
	}
}

func TestLiveLinksAreBoundedPerUserAndPerGadget(t *testing.T) {
	h := start(t, t.TempDir(), server.WithLinkLimits(2, 1))
	ws := h.users(t, "alice", "bob", "carol")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	mustShare(t, g, "carol", schema.Role_editor)
	_, aliceLink := mustLink(t, g, schema.Role_viewer, linkOpts{})
	_, _, err := createLink(t, g, schema.Role_viewer, linkOpts{})
	requireErrorContains(t, err, "you have 1 live links, the limit is 1")
	mustLink(t, openGadget(t, ws["bob"], id), schema.Role_viewer, linkOpts{})
	_, _, err = createLink(t, openGadget(t, ws["carol"], id), schema.Role_viewer, linkOpts{})
	requireErrorContains(t, err, "has 2 live links, the limit is 2")
	if _, err := revokeLink(t, g, aliceLink); err != nil {
		t.Fatal(err)
	}
	mustLink(t, openGadget(t, ws["carol"], id), schema.Role_viewer, linkOpts{})
}

func TestLinksShowsAnOwnerEveryLinkAndAnEditorTheirOwn(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	bobs := openGadget(t, ws["bob"], id)
	mustLink(t, g, schema.Role_editor, linkOpts{label: "alice's"})
	mustLink(t, bobs, schema.Role_viewer, linkOpts{label: "bob's"})
	labels := func(g schema.Gadget) []string {
		f, release := g.Links(testCtx(t), nil)
		defer release()
		res, err := f.Struct()
		if err != nil {
			t.Fatal(err)
		}
		list, _ := res.Links()
		var out []string
		for i := range list.Len() {
			l, _ := list.At(i).Label()
			by, _ := list.At(i).CreatedBy()
			out = append(out, l+" by "+by)
		}
		slices.Sort(out) // links made in one millisecond may list either way
		return out
	}
	if got := strings.Join(labels(g), ", "); got != "alice's by alice, bob's by bob" {
		t.Errorf("the owner's links: %s", got)
	}
	if got := strings.Join(labels(bobs), ", "); got != "bob's by bob" {
		t.Errorf("an editor's links: %s, want only his own", got)
	}
	// An id that is no link of the gadget is an ordinary error: the
	// capability still reaches the gadget, so it must not answer
	// disconnected, which tells a client to drop it. (An outside tester's
	// editor got disconnected, and the gadget's creator "unknown gadget".)
	for _, c := range []schema.Gadget{g, bobs} {
		_, err := revokeLink(t, c, "nosuchlink")
		requireErrorContains(t, err, `has no link "nosuchlink": it never had, or the link was revoked`)
		if capnp.IsDisconnected(err) {
			t.Errorf("revoking an unknown link id answered disconnected: %v", err)
		}
		if _, err := infoRole(t, c); err != nil {
			t.Errorf("the capability after revoking an unknown link id: %v", err)
		}
	}
}

// bob, an editor, made a link; lowered to viewer he could make none, so
// his link redeems nothing (the same "invalid or expired link"), while
// what was redeemed before goes on at no more than bob holds. (It stayed
// redeemable.)
func TestALinkIsNotRedeemableOnceItsCreatorCouldNotMakeIt(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol", "dave")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	secret, _ := mustLink(t, openGadget(t, ws["bob"], id), schema.Role_viewer, linkOpts{})
	carols := mustRedeem(t, ws["carol"], secret)

	mustShare(t, g, "bob", schema.Role_viewer)
	if _, _, _, err := redeem(t, ws["dave"], secret); err == nil || !strings.Contains(err.Error(), "invalid or expired link") {
		t.Fatalf("dave redeeming bob's link once bob is a viewer: %v, want invalid or expired link", err)
	}
	if _, ok := reached(t, ws["dave"], id); ok {
		t.Fatal("dave reaches the gadget")
	}
	if role, err := infoRole(t, carols); err != nil || role != schema.Role_viewer {
		t.Fatalf("carol's redemption made before: %s, %v; want viewer", role, err)
	}
	// An editor again, bob could make the link again: it redeems.
	mustShare(t, g, "bob", schema.Role_editor)
	mustRedeem(t, ws["dave"], secret)
}

// Of a gadget's links a quarter is its owner's alone: each other user may
// hold a quarter, and all of them together three quarters, so the owner can
// always make links however many editors make theirs. (One editor could
// make all of them.)
func TestUsersAGadgetIsSharedWithCannotUseUpItsOwnersLinks(t *testing.T) {
	h := start(t, t.TempDir(), server.WithLinkLimits(4, 100))
	ws := h.users(t, "alice", "bob", "carol", "dave", "erin")
	g, id := create(t, ws["alice"], "counter")
	editors := map[string]schema.Gadget{}
	for _, name := range []string{"bob", "carol", "dave", "erin"} {
		mustShare(t, g, name, schema.Role_editor)
		editors[name] = openGadget(t, ws[name], id)
	}
	mustLink(t, editors["bob"], schema.Role_viewer, linkOpts{})
	_, _, err := createLink(t, editors["bob"], schema.Role_viewer, linkOpts{})
	requireErrorContains(t, err, "you have 1 live links on gadget "+`"`+id+`"`+", the most a user other than its owner may")
	mustLink(t, editors["carol"], schema.Role_viewer, linkOpts{})
	mustLink(t, editors["dave"], schema.Role_viewer, linkOpts{})
	_, _, err = createLink(t, editors["erin"], schema.Role_viewer, linkOpts{})
	requireErrorContains(t, err, "has 3 live links made by users other than its owner, the most they may make together")
	mustLink(t, g, schema.Role_viewer, linkOpts{})
}

// bob redeemed alice's link and shared the gadget on with carol; then
// alice shared with bob directly. The direct share is a grant apart:
// revoking the link ends the redemption and carol's share made on it,
// while bob keeps the direct share. (The re-share had replaced the
// redemption in place, so revoking the link ended nothing.)
func TestADirectShareToARedeemerIsAGrantApartFromTheRedemption(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol")
	g, id := create(t, ws["alice"], "counter")
	secret, link := mustLink(t, g, schema.Role_editor, linkOpts{})
	mustShare(t, mustRedeem(t, ws["bob"], secret), "carol", schema.Role_editor)
	mustShare(t, g, "bob", schema.Role_viewer)
	if l, _ := reached(t, ws["bob"], id); l.role != schema.Role_editor {
		t.Fatalf("bob's role with the redemption and a viewer share: %s, want the better, editor", l.role)
	}
	if n, err := revokeLink(t, g, link); err != nil || n != 2 {
		t.Fatalf("revoking the link: %d, %v; want bob's redemption and carol's share on it revoked", n, err)
	}
	if _, ok := reached(t, ws["carol"], id); ok {
		t.Fatal("carol still reaches the gadget through bob's redemption")
	}
	if l, ok := reached(t, ws["bob"], id); !ok || l.role != schema.Role_viewer {
		t.Fatalf("bob after the link was revoked: %+v (reached %v), want his direct viewer share", l, ok)
	}
}
