package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/schema"
)

// tokenInfo is what a test needs of a schema.TokenInfo.
type tokenInfo struct {
	id, label          string
	created, expiresAt int64
	current            bool
}

func listTokens(t *testing.T, ws schema.Workspace) ([]tokenInfo, error) {
	t.Helper()
	f, release := ws.Tokens(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return nil, err
	}
	list, err := res.Tokens()
	if err != nil {
		t.Fatal(err)
	}
	var out []tokenInfo
	for i := 0; i < list.Len(); i++ {
		ti := list.At(i)
		id, _ := ti.Id()
		label, _ := ti.Label()
		out = append(out, tokenInfo{id: id, label: label, created: ti.CreatedAt(), expiresAt: ti.ExpiresAt(), current: ti.Current()})
	}
	return out, nil
}

// currentTokenID is the id of the token ws was obtained with.
func currentTokenID(t *testing.T, ws schema.Workspace) string {
	t.Helper()
	list, err := listTokens(t, ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range list {
		if ti.current {
			return ti.id
		}
	}
	t.Fatalf("no token is marked current in %+v", list)
	return ""
}

func newToken(ctx context.Context, ws schema.Workspace, label string, validFor uint64) (string, tokenInfo, error) {
	f, release := ws.NewToken(ctx, func(p schema.Workspace_newToken_Params) error {
		p.SetValidForSeconds(validFor)
		return p.SetLabel(label)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return "", tokenInfo{}, err
	}
	token, _ := res.Token()
	info, _ := res.Info()
	id, _ := info.Id()
	l, _ := info.Label()
	return token, tokenInfo{id: id, label: l, created: info.CreatedAt(), expiresAt: info.ExpiresAt(), current: info.Current()}, nil
}

func revokeToken(ctx context.Context, ws schema.Workspace, id string) error {
	f, release := ws.RevokeToken(ctx, func(p schema.Workspace_revokeToken_Params) error { return p.SetId(id) })
	defer release()
	_, err := f.Struct()
	return err
}

// loginError logs in with token over a fresh connection and returns the
// error of the login itself.
func loginError(t *testing.T, h *harness, token string) error {
	t.Helper()
	_, err := tryLogin(t, h, token)
	return err
}

// workspaceWorks reports the error of one ordinary workspace call.
func workspaceWorks(t *testing.T, ws schema.Workspace) error {
	t.Helper()
	f, release := ws.Gadgets(testCtx(t), nil)
	defer release()
	_, err := f.Struct()
	return err
}

func TestRevokedTokenCannotLogIn(t *testing.T) {
	h := start(t, t.TempDir())
	ctx := testCtx(t)
	ws := h.login(t, h.token("alice"))
	token, info, err := newToken(ctx, ws, "laptop", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := workspaceWorks(t, h.login(t, token)); err != nil {
		t.Fatalf("the new token does not log in: %v", err)
	}
	if err := revokeToken(ctx, ws, info.id); err != nil {
		t.Fatal(err)
	}
	if err := loginError(t, h, token); reason(err) != "invalid token" {
		t.Fatalf("login with a revoked token: %v, want invalid token", err)
	}
	if err := workspaceWorks(t, ws); err != nil {
		t.Fatalf("the workspace of the token that revoked another: %v", err)
	}
}

func TestLiveCapabilitiesOfARevokedTokenFailTheirNextCall(t *testing.T) {
	h := start(t, t.TempDir())
	ctx := testCtx(t)
	victim := h.login(t, h.token("alice"))
	// A gadget capability from create, and one from open, both of the
	// token about to be revoked.
	created, id := create(t, victim, "counter")
	openF, release := victim.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(id) })
	defer release()
	opened := openF.Gadget()
	lf, releaseList := victim.Gadgets(ctx, nil)
	defer releaseList()
	lres, err := lf.Struct()
	if err != nil {
		t.Fatal(err)
	}
	llist, _ := lres.Gadgets()
	listed := llist.At(0).Gadget()
	for _, g := range []schema.Gadget{created, opened, listed} {
		f, release := g.Info(ctx, nil)
		if _, err := f.Struct(); err != nil {
			t.Fatalf("gadget info before revocation: %v", err)
		}
		release()
	}
	counter := session(t, created)
	inc, release := counter.Increment(ctx, nil)
	if _, err := inc.Struct(); err != nil {
		t.Fatalf("session call before revocation: %v", err)
	}
	release()
	victimID := currentTokenID(t, victim)

	other := h.login(t, h.token("alice"))
	if err := revokeToken(ctx, other, victimID); err != nil {
		t.Fatal(err)
	}

	const want = "the token this capability was obtained with was revoked"
	if err := workspaceWorks(t, victim); reason(err) != want {
		t.Fatalf("workspace call after revocation: %v, want %q", err, want)
	}
	for name, g := range map[string]schema.Gadget{"created": created, "opened": opened, "listed": listed} {
		f, release := g.Info(ctx, nil)
		if _, err := f.Struct(); reason(err) != want {
			t.Fatalf("%s gadget's info after revocation: %v, want %q", name, err, want)
		}
		release()
		s, release := g.Open(ctx, nil)
		if _, err := s.Struct(); reason(err) != want {
			t.Fatalf("%s gadget's open after revocation: %v, want %q", name, err, want)
		}
		release()
	}
	// A session opened before the revocation fails too, for a call made
	// after it.
	inc, release = counter.Increment(ctx, nil)
	if _, err := inc.Struct(); reason(err) != want {
		t.Fatalf("session call after revocation: %v, want %q", err, want)
	}
	release()
	// The same user's other token, and its capabilities, are untouched.
	if err := workspaceWorks(t, other); err != nil {
		t.Fatalf("another token's workspace: %v", err)
	}
	g, _ := create(t, other, "counter")
	f, release := session(t, g).Increment(ctx, nil)
	defer release()
	if _, err := f.Struct(); err != nil {
		t.Fatalf("another token's session: %v", err)
	}
}

func TestRevokingTheTokenInUseEndsOwnAccess(t *testing.T) {
	h := start(t, t.TempDir())
	ctx := testCtx(t)
	token := h.token("alice")
	ws := h.login(t, token)
	if err := revokeToken(ctx, ws, currentTokenID(t, ws)); err != nil {
		t.Fatalf("revoking the token in use: %v", err)
	}
	if err := workspaceWorks(t, ws); reason(err) != "the token this capability was obtained with was revoked" {
		t.Fatalf("the workspace after revoking its own token: %v", err)
	}
	if err := loginError(t, h, token); reason(err) != "invalid token" {
		t.Fatalf("logging in again: %v", err)
	}
}

func TestTokenListingShowsOnlyTheCallersTokensAndOthersCannotBeRevoked(t *testing.T) {
	h := start(t, t.TempDir())
	ctx := testCtx(t)
	alice := h.login(t, h.token("alice"))
	if _, _, err := newToken(ctx, alice, "phone", 0); err != nil {
		t.Fatal(err)
	}
	bobToken := h.token("bob")
	bob := h.login(t, bobToken)
	_, bobExtra, err := newToken(ctx, bob, "bob's laptop", 0)
	if err != nil {
		t.Fatal(err)
	}

	mine, err := listTokens(t, alice)
	if err != nil {
		t.Fatal(err)
	}
	if len(mine) != 2 || mine[0].current == mine[1].current || mine[0].label+mine[1].label != "phone" {
		t.Fatalf("alice's tokens = %+v, want her login token (current) and phone", mine)
	}
	bobs, _ := listTokens(t, bob)
	for _, b := range bobs {
		for _, a := range mine {
			if a.id == b.id {
				t.Fatalf("alice's listing shows bob's token %q", b.id)
			}
		}
	}

	unknown := revokeToken(ctx, alice, "nosuchtokenid")
	if reason(unknown) != `unknown token id "nosuchtokenid"` {
		t.Fatalf("revoking an unknown id: %v", unknown)
	}
	for _, b := range bobs {
		err := revokeToken(ctx, alice, b.id)
		if reason(err) != `unknown token id "`+b.id+`"` {
			t.Fatalf("alice revoking bob's token %s: %v, want the unknown-id error", b.id, err)
		}
	}
	if err := workspaceWorks(t, h.login(t, bobToken)); err != nil {
		t.Fatalf("bob's token after alice tried to revoke it: %v", err)
	}
	after, _ := listTokens(t, bob)
	if len(after) != 2 || (after[0].id != bobExtra.id && after[1].id != bobExtra.id) {
		t.Fatalf("bob's tokens after alice tried to revoke them: %+v", after)
	}
}

func TestExpiredTokenCannotLogInAndItsCapabilitiesFail(t *testing.T) {
	h := start(t, t.TempDir())
	ctx := testCtx(t)
	alice := h.login(t, h.token("alice"))
	token, info, err := newToken(ctx, alice, "short", 1)
	if err != nil {
		t.Fatal(err)
	}
	if info.expiresAt == 0 || info.expiresAt-info.created != 1000 {
		t.Fatalf("token info %+v, want it to expire 1 s after creation", info)
	}
	short := h.login(t, token)
	if err := workspaceWorks(t, short); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	time.Sleep(time.Until(time.UnixMilli(info.expiresAt)) + 50*time.Millisecond)
	if err := workspaceWorks(t, short); reason(err) != "the token this capability was obtained with has expired" {
		t.Fatalf("a live workspace after expiry: %v", err)
	}
	if err := loginError(t, h, token); reason(err) != "invalid token" {
		t.Fatalf("login after expiry: %v", err)
	}
}

func TestTokensPerUserAreBoundedAndLabelsToo(t *testing.T) {
	h := start(t, t.TempDir())
	ctx := testCtx(t)
	ws := h.login(t, h.token("alice"))
	if _, _, err := newToken(ctx, ws, strings.Repeat("x", 201), 0); err == nil || !strings.Contains(err.Error(), "longer than 200 bytes") {
		t.Fatalf("a 201-byte label: %v", err)
	}
	if _, _, err := newToken(ctx, ws, "forever", 101*365*24*3600); err == nil || !strings.Contains(err.Error(), "more than 100 years") {
		t.Fatalf("a lifetime over 100 years: %v", err)
	}
	var last tokenInfo
	for i := 1; i < 64; i++ { // alice already holds her login token
		_, info, err := newToken(ctx, ws, "", 0)
		if err != nil {
			t.Fatalf("token %d: %v", i+1, err)
		}
		last = info
	}
	_, _, err := newToken(ctx, ws, "", 0)
	if err == nil || !strings.Contains(err.Error(), "already holds 64 tokens") {
		t.Fatalf("token 65: %v", err)
	}
	if list, _ := listTokens(t, ws); len(list) != 64 {
		t.Fatalf("alice holds %d tokens after the refusal, want 64", len(list))
	}
	if _, _, err := newToken(ctx, h.login(t, h.token("bob")), "", 0); err != nil {
		t.Fatalf("another user at alice's limit: %v", err)
	}
	if err := revokeToken(ctx, ws, last.id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := newToken(ctx, ws, "", 0); err != nil {
		t.Fatalf("after revoking one: %v", err)
	}
}
