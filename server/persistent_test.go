package server_test

import (
	"bytes"
	"encoding/base64"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/std/capnp/persistent"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/server/internal/testguests/delegate/delegatepb"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// The tests here save gadgets and sessions on one real server and restore
// them over connections of their own, most of which never log in.

// save saves c (a Gadget or a session) and returns its token.
func save(t *testing.T, c capnp.Client) (string, error) {
	t.Helper()
	return client.Save(testCtx(t), c)
}

func mustSave(t *testing.T, c capnp.Client) string {
	t.Helper()
	token, err := save(t, c)
	if err != nil {
		t.Fatalf("save: %v", err)
	}
	return token
}

// restore restores token over a fresh connection that never logs in, and
// waits for the answer.
func (h *harness) restore(t *testing.T, token string) (capnp.Client, error) {
	t.Helper()
	f, release := dial(t, h.addr).Gateway().Restore(testCtx(t), func(p schema.Gateway_restore_Params) error { return p.SetToken(token) })
	t.Cleanup(release)
	res, err := f.Struct()
	if err != nil {
		return capnp.Client{}, err
	}
	return res.Cap(), nil
}

func (h *harness) mustRestore(t *testing.T, token string) capnp.Client {
	t.Helper()
	c, err := h.restore(t, token)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	return c
}

// savedIDs lists ws's saved tokens' ids.
func savedIDs(t *testing.T, ws schema.Workspace) []string {
	t.Helper()
	f, release := ws.Saved(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("saved: %v", err)
	}
	list, _ := res.Saved()
	var out []string
	for i := range list.Len() {
		id, _ := list.At(i).Id()
		out = append(out, id)
	}
	return out
}

func dropSaved(t *testing.T, ws schema.Workspace, id string) error {
	t.Helper()
	f, release := ws.DropSaved(testCtx(t), func(p schema.Workspace_dropSaved_Params) error { return p.SetId(id) })
	defer release()
	_, err := f.Struct()
	return err
}

func increment(t *testing.T, c capnp.Client) (int64, error) {
	t.Helper()
	return countertest.Increment(testCtx(t), counterpb.Counter(c))
}

func TestASavedGadgetAndSessionRestoreOnAConnectionThatNeverLoggedIn(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	g, _ := create(t, ws, "counter")
	gadgetToken := mustSave(t, capnp.Client(g))
	sessionToken := mustSave(t, capnpClient(session(t, g)))
	if gadgetToken == sessionToken || len(gadgetToken) < 20 || gadgetToken[:4] != "gds_" {
		t.Fatalf("tokens %q and %q", gadgetToken, sessionToken)
	}

	restored := schema.Gadget(h.mustRestore(t, gadgetToken))
	if role, err := infoRole(t, restored); err != nil || role != schema.Role_owner {
		t.Fatalf("the restored gadget: role %v, %v", role, err)
	}
	if v, err := increment(t, capnpClient(session(t, restored))); err != nil || v != 1 {
		t.Fatalf("a session of the restored gadget: %d, %v", v, err)
	}
	if v, err := increment(t, h.mustRestore(t, sessionToken)); err != nil || v != 2 {
		t.Fatalf("the restored session: %d, %v", v, err)
	}
	if got := savedIDs(t, ws); len(got) != 2 {
		t.Fatalf("alice lists %d saved tokens, want 2", len(got))
	}
}

// TestARestoredCapabilityHasTheLesserOfTheSavedRoleAndTheSaversRoleNow:
// raising the saver gives a token no more; lowering them gives it less.
func TestARestoredCapabilityHasTheLesserOfTheSavedRoleAndTheSaversRoleNow(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_viewer)
	viewerToken := mustSave(t, capnp.Client(openGadget(t, ws["bob"], id)))
	mustShare(t, g, "bob", schema.Role_editor)
	editorToken := mustSave(t, capnp.Client(openGadget(t, ws["bob"], id)))

	if role, err := infoRole(t, schema.Gadget(h.mustRestore(t, viewerToken))); err != nil || role != schema.Role_viewer {
		t.Fatalf("saved as viewer, restored with bob an editor: %v, %v", role, err)
	}
	if role, err := infoRole(t, schema.Gadget(h.mustRestore(t, editorToken))); err != nil || role != schema.Role_editor {
		t.Fatalf("saved as editor: %v, %v", role, err)
	}
	mustShare(t, g, "bob", schema.Role_viewer)
	restored := schema.Gadget(h.mustRestore(t, editorToken))
	if role, err := infoRole(t, restored); err != nil || role != schema.Role_viewer {
		t.Fatalf("saved as editor, restored with bob a viewer: %v, %v", role, err)
	}
	if err := logsErr(t, restored); err == nil {
		t.Fatal("the restored viewer read the logs, an editor's power")
	}
}

// losses are the ways a saver loses access to a gadget alice owns and
// bob reaches: bob's share revoked, the link he redeemed revoked, the
// gadget removed.
var losses = []struct {
	name string
	// give gives bob access; take takes it away.
	give func(t *testing.T, alice, bob schema.Workspace, g schema.Gadget) (linkID string)
	take func(t *testing.T, alice schema.Workspace, g schema.Gadget, id, linkID string)
}{
	{
		"unshare",
		func(t *testing.T, _, _ schema.Workspace, g schema.Gadget) string {
			mustShare(t, g, "bob", schema.Role_editor)
			return ""
		},
		func(t *testing.T, _ schema.Workspace, g schema.Gadget, _, _ string) {
			if _, err := unshare(t, g, "bob"); err != nil {
				t.Fatal(err)
			}
		},
	},
	{
		"link revoked",
		func(t *testing.T, _, bob schema.Workspace, g schema.Gadget) string {
			secret, linkID := mustLink(t, g, schema.Role_editor, linkOpts{})
			mustRedeem(t, bob, secret)
			return linkID
		},
		func(t *testing.T, _ schema.Workspace, g schema.Gadget, _, linkID string) {
			f, release := g.RevokeLink(testCtx(t), func(p schema.Gadget_revokeLink_Params) error { return p.SetId(linkID) })
			defer release()
			if _, err := f.Struct(); err != nil {
				t.Fatal(err)
			}
		},
	},
	{
		"gadget removed",
		func(t *testing.T, _, _ schema.Workspace, g schema.Gadget) string {
			mustShare(t, g, "bob", schema.Role_editor)
			return ""
		},
		func(t *testing.T, alice schema.Workspace, _ schema.Gadget, id, _ string) {
			f, release := removeByID(testCtx(t), alice, id)
			defer release()
			if _, err := f.Struct(); err != nil {
				t.Fatal(err)
			}
		},
	},
}

// TestASaverWhoLostAccessRestoresNothing, and the capabilities restored
// before the loss fail from their next call, disconnected: a gadget, a
// session of it, and a restored session. The token stays dead when the
// saver is given access again.
func TestASaverWhoLostAccessRestoresNothing(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	for _, loss := range losses {
		t.Run(loss.name, func(t *testing.T) {
			g, id := create(t, ws["alice"], "counter")
			linkID := loss.give(t, ws["alice"], ws["bob"], g)
			bobs := openGadget(t, ws["bob"], id)
			gadgetToken := mustSave(t, capnp.Client(bobs))
			sessionToken := mustSave(t, capnpClient(session(t, bobs)))
			restored := schema.Gadget(h.mustRestore(t, gadgetToken))
			sessionOfRestored := capnpClient(session(t, restored))
			restoredSession := h.mustRestore(t, sessionToken)
			if _, err := increment(t, sessionOfRestored); err != nil {
				t.Fatal(err)
			}
			if _, err := increment(t, restoredSession); err != nil {
				t.Fatal(err)
			}

			loss.take(t, ws["alice"], g, id, linkID)

			for _, token := range []string{gadgetToken, sessionToken} {
				if _, err := h.restore(t, token); reason(err) != "invalid token" {
					t.Fatalf("restoring a token of a saver who lost access: %v", err)
				}
			}
			if _, err := infoRole(t, restored); !capnp.IsDisconnected(err) {
				t.Errorf("the restored gadget after the loss: %v, want disconnected", err)
			}
			for name, c := range map[string]capnp.Client{"a session of the restored gadget": sessionOfRestored, "the restored session": restoredSession} {
				if _, err := increment(t, c); !capnp.IsDisconnected(err) {
					t.Errorf("%s after the loss: %v, want disconnected", name, err)
				}
			}
			if loss.name == "gadget removed" {
				return
			}
			mustShare(t, g, "bob", schema.Role_editor)
			if _, err := h.restore(t, gadgetToken); reason(err) != "invalid token" {
				t.Fatalf("the token of a saver given access again: %v", err)
			}
		})
	}
}

// TestARestoredCapabilityDiesWithTheGrantItsTokenWasSavedThrough: bob
// saves as carol's editor, and keeps dave's viewer share when carol
// revokes hers; what he restored before fails all the same.
func TestARestoredCapabilityDiesWithTheGrantItsTokenWasSavedThrough(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol", "dave")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "carol", schema.Role_editor)
	mustShare(t, g, "dave", schema.Role_editor)
	mustShare(t, openGadget(t, ws["dave"], id), "bob", schema.Role_viewer)
	mustShare(t, openGadget(t, ws["carol"], id), "bob", schema.Role_editor)
	token := mustSave(t, capnp.Client(openGadget(t, ws["bob"], id)))
	restored := schema.Gadget(h.mustRestore(t, token))
	if role, err := infoRole(t, restored); err != nil || role != schema.Role_editor {
		t.Fatalf("restored: %v, %v", role, err)
	}

	if _, err := unshare(t, openGadget(t, ws["carol"], id), "bob"); err != nil {
		t.Fatal(err)
	}
	if role, err := infoRole(t, openGadget(t, ws["bob"], id)); err != nil || role != schema.Role_viewer {
		t.Fatalf("bob after carol's revocation: %v, %v; want dave's viewer share", role, err)
	}
	if _, err := infoRole(t, restored); !capnp.IsDisconnected(err) {
		t.Fatalf("the capability restored before: %v, want disconnected", err)
	}
	if _, err := h.restore(t, token); reason(err) != "invalid token" {
		t.Fatalf("restoring after: %v", err)
	}
}

func TestDroppingASavedTokenKillsItAndWhatItRestored(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	g, _ := create(t, ws, "counter")
	gadgetToken := mustSave(t, capnp.Client(g))
	sessionToken := mustSave(t, capnpClient(session(t, g)))
	restored := schema.Gadget(h.mustRestore(t, gadgetToken))
	sessionOfRestored := capnpClient(session(t, restored))
	restoredSession := h.mustRestore(t, sessionToken)
	if _, err := increment(t, restoredSession); err != nil {
		t.Fatal(err)
	}

	ids := savedIDs(t, ws)
	for _, id := range ids {
		if err := dropSaved(t, ws, id); err != nil {
			t.Fatal(err)
		}
	}
	for _, token := range []string{gadgetToken, sessionToken} {
		if _, err := h.restore(t, token); reason(err) != "invalid token" {
			t.Fatalf("restoring a dropped token: %v", err)
		}
	}
	if _, err := infoRole(t, restored); !capnp.IsDisconnected(err) {
		t.Errorf("the restored gadget after the drop: %v, want disconnected", err)
	}
	for name, c := range map[string]capnp.Client{"a session of the restored gadget": sessionOfRestored, "the restored session": restoredSession} {
		if _, err := increment(t, c); !capnp.IsDisconnected(err) {
			t.Errorf("%s after the drop: %v, want disconnected", name, err)
		}
	}
	if _, err := increment(t, capnpClient(session(t, g))); err != nil {
		t.Fatalf("alice's own gadget after the drop: %v", err)
	}
	if err := dropSaved(t, ws, ids[0]); reason(err) != `unknown saved token id "`+ids[0]+`"` {
		t.Fatalf("dropping a token twice: %v", err)
	}
}

func TestAnotherUserCannotDropYourSavedToken(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	g, _ := create(t, ws["alice"], "counter")
	token := mustSave(t, capnp.Client(g))
	id := savedIDs(t, ws["alice"])[0]
	err := dropSaved(t, ws["bob"], id)
	if want := `unknown saved token id "` + id + `"`; reason(err) != want {
		t.Fatalf("bob dropping alice's token: %v, want %q, as for an id that never was", err, want)
	}
	if _, err := infoRole(t, schema.Gadget(h.mustRestore(t, token))); err != nil {
		t.Fatalf("alice's token after bob's attempt: %v", err)
	}
}

func TestSaveWithSealForFails(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	g, _ := create(t, ws, "counter")
	for name, c := range map[string]capnp.Client{"gadget": capnp.Client(g), "session": capnpClient(session(t, g))} {
		f, release := persistent.Persistent(c).Save(testCtx(t), func(p persistent.Persistent_SaveParams) error {
			owner, err := capnp.NewText(p.Segment(), "bob")
			if err != nil {
				return err
			}
			return p.SetSealFor(owner.ToPtr())
		})
		_, err := f.Struct()
		release()
		requireErrorContains(t, err, "sealFor is not supported")
		_ = name
	}
	if got := savedIDs(t, ws); len(got) != 0 {
		t.Fatalf("a sealed save was kept: %q", got)
	}
}

// TestASessionsSaveIsAnsweredByTheHost: the test counter's guest
// implements no Persistent, so a save that reached it would fail
// unimplemented; the host answers it with a token that restores a session.
func TestASessionsSaveIsAnsweredByTheHost(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	g, _ := create(t, ws, "counter")
	s := session(t, g)
	if _, err := countertest.Increment(testCtx(t), s); err != nil {
		t.Fatal(err)
	}
	token := mustSave(t, capnpClient(s))
	if v, err := increment(t, h.mustRestore(t, token)); err != nil || v != 2 {
		t.Fatalf("the restored session: %d, %v", v, err)
	}
}

// TestARestoredCapabilityCannotBeSavedAgain: else a token's holder could
// mint tokens that outlive the one its saver drops.
func TestARestoredCapabilityCannotBeSavedAgain(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	g, _ := create(t, ws, "counter")
	restored := schema.Gadget(h.mustRestore(t, mustSave(t, capnp.Client(g))))
	for _, c := range []capnp.Client{capnp.Client(restored), capnpClient(session(t, restored))} {
		_, err := save(t, c)
		requireErrorContains(t, err, "restored from a saved token")
	}
	if got := savedIDs(t, ws); len(got) != 1 {
		t.Fatalf("alice has %d saved tokens, want the one", len(got))
	}
}

func TestSavedTokensAreBoundPerUser(t *testing.T) {
	h := start(t, t.TempDir(), server.WithMaxSavedPerUser(2))
	ws := h.users(t, "alice", "bob")
	g, id := create(t, ws["alice"], "counter")
	mustSave(t, capnp.Client(g))
	mustSave(t, capnpClient(session(t, g)))
	_, err := save(t, capnp.Client(g))
	requireErrorContains(t, err, "you have 2 saved tokens, the limit is 2; drop one first")
	mustShare(t, g, "bob", schema.Role_viewer)
	mustSave(t, capnp.Client(openGadget(t, ws["bob"], id)))
	if err := dropSaved(t, ws["alice"], savedIDs(t, ws["alice"])[0]); err != nil {
		t.Fatal(err)
	}
	mustSave(t, capnp.Client(g))
}

// TestAWrongAndADroppedTokenFailAlike: a restore says nothing of why a
// token restores nothing.
func TestAWrongAndADroppedTokenFailAlike(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	g, _ := create(t, ws, "counter")
	token := mustSave(t, capnp.Client(g))
	if err := dropSaved(t, ws, savedIDs(t, ws)[0]); err != nil {
		t.Fatal(err)
	}
	_, dropped := h.restore(t, token)
	_, wrong := h.restore(t, "gds_AAAAAAAAAAAAAAAAAAAAAA")
	_, garbage := h.restore(t, "not a token")
	if dropped == nil || dropped.Error() != wrong.Error() || wrong.Error() != garbage.Error() {
		t.Fatalf("dropped: %v; wrong: %v; garbage: %v; want one error", dropped, wrong, garbage)
	}
	requireErrorContains(t, dropped, "invalid token")
}

// TestARestoringConnectionCountsAsTheSaversConnection: a stranger's
// connection that restores is the saver's from then on, within the saver's
// connection bound, so tokens buy no more than a login would.
func TestARestoringConnectionCountsAsTheSaversConnection(t *testing.T) {
	h := start(t, t.TempDir(), server.WithMaxConnectionsPerUser(1))
	ws := h.login(t, h.token("alice")) // alice's one connection
	g, _ := create(t, ws, "counter")
	token := mustSave(t, capnp.Client(g))
	_, err := h.restore(t, token)
	requireErrorContains(t, err, "connections logged in, the most one user may have")
}

// TestASavedTokenOutlivesARestartAndOnlyItsKeyedHashIsStored: the data
// file holds the token's record, not its secret in any form.
func TestASavedTokenOutlivesARestartAndOnlyItsKeyedHashIsStored(t *testing.T) {
	dir := t.TempDir()
	h := start(t, dir)
	ws := h.login(t, h.token("alice"))
	g, _ := create(t, ws, "counter")
	token := mustSave(t, capnp.Client(g))
	id := savedIDs(t, ws)[0]
	h.stop()
	raw, err := os.ReadFile(filepath.Join(dir, "gadgetd.db"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(id)) {
		t.Fatal("the saved token's id is not in the data file: the scan is blind")
	}
	secret, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(token, "gds_"))
	if err != nil || len(secret) != 16 {
		t.Fatalf("token %q is not gds_ and base64url of 128 bits: %v", token, err)
	}
	for _, s := range []string{token, strings.TrimPrefix(token, "gds_"), string(secret)} {
		if bytes.Contains(raw, []byte(s)) {
			t.Fatal("a saved token's secret is in the data file")
		}
	}

	h = start(t, dir)
	if role, err := infoRole(t, schema.Gadget(h.mustRestore(t, token))); err != nil || role != schema.Role_owner {
		t.Fatalf("restored after a restart: %v, %v", role, err)
	}
}

// TestAFramesSessionCannotBeSaved: the session of a gadget's frame is held
// by the gadget's own UI script, whose author must not get a token that
// opens sessions as the user later.
func TestAFramesSessionCannotBeSaved(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	g, _ := create(t, ws, "counter")
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
	defer frame.Close()
	session := capnp.Client(frame.Gateway())
	if _, err := increment(t, session); err != nil {
		t.Fatalf("the frame's session: %v", err)
	}
	_, err = save(t, session)
	requireErrorContains(t, err, "a gadget frame's session cannot be saved")
	if got := savedIDs(t, ws); len(got) != 0 {
		t.Fatalf("alice has saved tokens %q", got)
	}
}

// TestAGuestCannotMintACredentialFromACapabilityItIsHanded: bob hands a
// gadget's guest his session and his Gadget capability of alice's gadget.
// The guest cannot turn them into anything that outlives them: save, a
// frame ticket, a link or a share are each refused, and bob, a client, may
// do each himself. (An outside tester's guest saved both; after save was
// refused, it took a frame ticket and opened a session of alice's gadget as
// bob, from its author's browser, after bob had let go.)
func TestAGuestCannotMintACredentialFromACapabilityItIsHanded(t *testing.T) {
	h := startWithDelegate(t)
	ws := h.users(t, "alice", "bob", "carol")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	bobs := openGadget(t, ws["bob"], id)
	handed := map[string]capnp.Client{"bob's session": capnpClient(session(t, bobs)), "bob's gadget": capnp.Client(bobs)}
	delegate, _ := create(t, ws["bob"], "delegate")
	guest, _ := openDelegate(t, delegate)
	const refusal = "a gadget cannot make a lasting credential"

	for name, c := range handed {
		f, release := guest.Save(testCtx(t), func(p delegatepb.Delegate_save_Params) error { return p.SetCap(c.AddRef()) })
		res, err := f.Struct()
		if err == nil {
			token, _ := res.Token()
			t.Errorf("the guest saved %s: token %q", name, token)
		} else if !strings.Contains(err.Error(), refusal) {
			t.Errorf("the guest saving %s: %v, want the refusal", name, err)
		}
		release()
	}
	for _, how := range []string{"frameTicket", "createLink", "share"} {
		f, release := guest.Mint(testCtx(t), func(p delegatepb.Delegate_mint_Params) error {
			if err := p.SetGadget(capnp.Client(bobs).AddRef()); err != nil {
				return err
			}
			return p.SetHow(how)
		})
		res, err := f.Struct()
		if err == nil {
			got, _ := res.Credential()
			t.Errorf("the guest's %s on bob's gadget gave %q", how, got)
		} else if !strings.Contains(err.Error(), refusal) {
			t.Errorf("the guest's %s on bob's gadget: %v, want the refusal", how, err)
		}
		release()
	}

	if got := savedIDs(t, ws["bob"]); len(got) != 0 {
		t.Fatalf("bob has saved tokens %q", got)
	}
	sf, release := g.Shares(testCtx(t), nil)
	defer release()
	lf, release := g.Links(testCtx(t), nil)
	defer release()
	shares, err := sf.Struct()
	if err != nil {
		t.Fatal(err)
	}
	links, err := lf.Struct()
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := shares.Shares(); list.Len() != 1 {
		t.Fatalf("alice's gadget has %d shares, want bob's alone", list.Len())
	}
	if list, _ := links.Links(); list.Len() != 0 {
		t.Fatalf("alice's gadget has %d links, want none", list.Len())
	}
	for name, c := range handed {
		if _, err := save(t, c); err != nil {
			t.Fatalf("bob saving %s himself: %v", name, err)
		}
	}
	tf, release := bobs.FrameTicket(testCtx(t), nil)
	defer release()
	if _, err := tf.Struct(); err != nil {
		t.Fatalf("bob's own frame ticket: %v", err)
	}
}

// TestACallQueuedBeforeItsTokenEndsNeverReachesTheGuest: a session's call
// waits in the gadget's queue, behind a slow one, when the token it came
// through ends: the saved token it was restored from is dropped, or the
// login token it was opened with is revoked. It fails, disconnected,
// without reaching the guest. (It ran, after the drop or revocation had
// returned: only a share was checked again at the queue.)
func TestACallQueuedBeforeItsTokenEndsNeverReachesTheGuest(t *testing.T) {
	// A call may run as long as the longest hold (queuedWhenAccessEnds).
	h := start(t, t.TempDir(), server.WithWasmOptions(wasmhost.WithCallTimeout(2*time.Minute)))
	installHostile(t, h)
	ws := h.login(t, h.token("alice"))
	ends := []struct {
		name string
		// victim returns a session of gadget id and what ends its token.
		victim func(t *testing.T, g schema.Gadget, id string) (schema.Storage, func(*testing.T))
	}{
		{"saved token dropped", func(t *testing.T, g schema.Gadget, _ string) (schema.Storage, func(*testing.T)) {
			restored := schema.Storage(h.mustRestore(t, mustSave(t, capnp.Client(openHostile(t, g)))))
			return restored, func(t *testing.T) {
				for _, id := range savedIDs(t, ws) {
					if err := dropSaved(t, ws, id); err != nil {
						t.Fatal(err)
					}
				}
			}
		}},
		{"login token revoked", func(t *testing.T, _ schema.Gadget, id string) (schema.Storage, func(*testing.T)) {
			secret, info, err := newToken(testCtx(t), ws, "queued", 0)
			if err != nil {
				t.Fatal(err)
			}
			return openSession(t, h.login(t, secret), id), func(t *testing.T) {
				if err := revokeToken(testCtx(t), ws, info.id); err != nil {
					t.Fatal(err)
				}
			}
		}},
	}
	for _, end := range ends {
		t.Run(end.name, func(t *testing.T) {
			queuedWhenAccessEnds(t, func(t *testing.T) (schema.Gadget, schema.Storage, func(*testing.T)) {
				g, id := create(t, ws, "hostile")
				victim, endToken := end.victim(t, g, id)
				return g, victim, endToken
			})
		})
	}
}

// TestDeadSavedTokensNeitherCountNorList: bob saves to his bound; alice
// unshares and shares again, which kills his tokens. He lists none of them
// and may save again.
func TestDeadSavedTokensNeitherCountNorList(t *testing.T) {
	h := start(t, t.TempDir(), server.WithMaxSavedPerUser(2))
	ws := h.users(t, "alice", "bob")
	g, id := create(t, ws["alice"], "counter")
	mustShare(t, g, "bob", schema.Role_editor)
	bobs := openGadget(t, ws["bob"], id)
	dead := []string{mustSave(t, capnp.Client(bobs)), mustSave(t, capnpClient(session(t, bobs)))}
	_, err := save(t, capnp.Client(bobs))
	requireErrorContains(t, err, "you have 2 saved tokens, the limit is 2")

	if _, err := unshare(t, g, "bob"); err != nil {
		t.Fatal(err)
	}
	mustShare(t, g, "bob", schema.Role_editor)
	if got := savedIDs(t, ws["bob"]); len(got) != 0 {
		t.Fatalf("bob lists his dead tokens %q", got)
	}
	live := mustSave(t, capnp.Client(openGadget(t, ws["bob"], id)))
	if got := savedIDs(t, ws["bob"]); len(got) != 1 {
		t.Fatalf("bob lists %q, want his one live token", got)
	}
	for _, token := range dead {
		if _, err := h.restore(t, token); reason(err) != "invalid token" {
			t.Fatalf("restoring a dead token: %v", err)
		}
	}
	if _, err := infoRole(t, schema.Gadget(h.mustRestore(t, live))); err != nil {
		t.Fatalf("the live token: %v", err)
	}
}
