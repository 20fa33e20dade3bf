package server_test

import (
	"bytes"
	"context"
	"encoding/base32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gadgetd/gadgetd/internal/store"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
)

func TestLoginWithAWrongTokenFailsWithInvalidToken(t *testing.T) {
	h := start(t, t.TempDir())
	good := h.token("alice")
	ctx := testCtx(t)
	for _, bad := range []string{"", "gdt_wrong", good + "x", good[:len(good)-1]} {
		f, release := h.loginPipelined(t, bad).Gadgets(ctx, nil)
		_, err := f.Struct()
		release()
		if reason(err) != "invalid token" {
			t.Errorf("login(%q) then gadgets() = %v, want exactly \"invalid token\"", bad, err)
		}
	}
	f, release := h.login(t, good).Gadgets(ctx, nil)
	defer release()
	if _, err := f.Struct(); err != nil {
		t.Fatalf("the good token failed: %v", err)
	}
}

func TestTokensAreStoredOnlyHashedInTheDataFile(t *testing.T) {
	dir := t.TempDir()
	token, err := server.AddUser(context.Background(), dir, "carol")
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, dir)
	devToken := h.token("carol")
	ctx := testCtx(t)
	for _, tok := range []string{token, devToken} {
		f, release := h.login(t, tok).Gadgets(ctx, nil)
		if _, err := f.Struct(); err != nil {
			t.Fatalf("token does not log in: %v", err)
		}
		release()
	}
	h.stop()
	raw, err := os.ReadFile(filepath.Join(dir, "gadgetd.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{token, devToken, token[4:], devToken[4:]} {
		if bytes.Contains(raw, []byte(tok)) {
			t.Fatalf("a raw token is in the database file")
		}
	}
	if _, err := server.AddUser(context.Background(), dir, "carol"); err == nil {
		t.Fatal("adding an existing user succeeded")
	}
}

func TestUnknownGadgetIDIsRefused(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	ctx := testCtx(t)
	f, release := ws.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId("nope") })
	defer release()
	info, release2 := f.Gadget().Info(ctx, nil)
	defer release2()
	if _, err := info.Struct(); reason(err) != `unknown gadget id "nope"` {
		t.Fatalf("open(nope).info() = %v", err)
	}
}

// errorsFor collects what each gadget method says about id for ws.
func errorsFor(t *testing.T, ws schema.Workspace, id string) []string {
	ctx := testCtx(t)
	var out []string
	of, release := ws.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(id) })
	defer release()
	_, err := of.Struct()
	out = append(out, reason(err))
	rf, release := removeByID(ctx, ws, id)
	defer release()
	_, err = rf.Struct()
	out = append(out, reason(err))
	return out
}

func TestAnotherUsersGadgetIDGivesTheSameErrorAsANonexistentOne(t *testing.T) {
	h := start(t, t.TempDir())
	alice := h.login(t, h.token("alice"))
	bob := h.login(t, h.token("bob"))
	_, aliceID := create(t, alice, "counter")

	const fakeID = "aaaaaaaaaaaaaaaaaaaaaaaaaa"
	forAlices := errorsFor(t, bob, aliceID)
	forFake := errorsFor(t, bob, fakeID)
	for i := range forAlices {
		want := `unknown gadget id "` + aliceID + `"`
		if forAlices[i] != want {
			t.Fatalf("bob naming alice's gadget: %q, want %q", forAlices[i], want)
		}
		if forFake[i] != `unknown gadget id "`+fakeID+`"` {
			t.Fatalf("bob naming a fake gadget: %q", forFake[i])
		}
	}
	ctx := testCtx(t)
	lf, release := bob.Gadgets(ctx, nil)
	defer release()
	res, err := lf.Struct()
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := res.Gadgets(); list.Len() != 0 {
		t.Fatal("bob's gadget list shows alice's gadget")
	}
	// And alice's gadget survived bob's remove attempt.
	if g := errorsFor(t, alice, aliceID); g[0] != "" {
		t.Fatalf("alice lost her gadget: %v", g)
	}
}

// TestGadgetIDsAreUnguessable checks the form and the spread of gadget ids:
// each is 128 bits in lower-case base32, and across 32 of them every one of
// the 128 bits takes both values and no two share their first 40 bits. A
// counter, a timestamp or a shorter random number padded out fails this; 128
// random bits fail it with a probability below 1e-7.
func TestGadgetIDsAreUnguessable(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	const n = 32
	b32 := base32.StdEncoding.WithPadding(base32.NoPadding)
	var ones, zeros [16]byte // the bits set in some id, and clear in some id
	prefixes := map[string]string{}
	for range n {
		_, id := create(t, ws, "counter")
		if len(id) != 26 || strings.ToLower(id) != id {
			t.Fatalf("id %q: want 26 lower-case base32 characters (128 bits)", id)
		}
		raw, err := b32.DecodeString(strings.ToUpper(id))
		if err != nil || len(raw) != 16 {
			t.Fatalf("id %q is not 16 bytes in base32: %v", id, err)
		}
		for i, b := range raw {
			ones[i] |= b
			zeros[i] |= ^b
		}
		if other, ok := prefixes[id[:8]]; ok {
			t.Fatalf("ids %q and %q share their first 40 bits", other, id)
		}
		prefixes[id[:8]] = id
	}
	for i := range ones {
		if ones[i] != 0xff || zeros[i] != 0xff {
			t.Fatalf("byte %d of %d ids: bits %08b were never set, %08b never clear; want every bit to vary",
				i, n, ^ones[i], ^zeros[i])
		}
	}
}

func TestCounterStateSurvivesAServerRestart(t *testing.T) {
	dir := t.TempDir()
	h := start(t, dir)
	token := h.token("alice")
	ws := h.login(t, token)
	g, id := create(t, ws, "counter")
	ctx := testCtx(t)
	c := session(t, g)
	for range 3 {
		if _, err := countertest.Increment(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	h.stop()

	h2 := start(t, dir)
	ws2 := h2.login(t, token)
	of, release := ws2.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(id) })
	defer release()
	v, err := countertest.Get(ctx, session(t, of.Gadget()))
	if err != nil {
		t.Fatal(err)
	}
	if v != 3 {
		t.Fatalf("after restart the counter is %d, want 3", v)
	}
}

func TestGadgetInfoRecordsTheBlueprintVersion(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	g, id := create(t, ws, "counter")
	f, release := g.Info(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	info, _ := res.Info()
	gotID, _ := info.Id()
	bp, _ := info.Blueprint()
	version, _ := info.BlueprintVersion()
	owner, _ := info.Owner()
	if gotID != id || bp != "counter" || version != "1.0.0" || owner != "alice" ||
		info.Role() != schema.Role_owner || info.SessionInterface() != counterpb.Counter_TypeID {
		t.Fatalf("info = %v", info)
	}
}

func TestListenerPassedToWatchIsCalledBackFromInsideTheSandbox(t *testing.T) {
	h := start(t, t.TempDir())
	g, _ := create(t, h.login(t, h.token("alice")), "counter")
	c := session(t, g)
	ctx := testCtx(t)
	l := &listener{}
	wf, release := c.Watch(ctx, func(p counterpb.Counter_watch_Params) error {
		return p.SetListener(l.client())
	})
	defer release()
	if _, err := wf.Struct(); err != nil {
		t.Fatal(err)
	}
	for want := int64(1); want <= 3; want++ {
		if _, err := countertest.Increment(ctx, c); err != nil {
			t.Fatal(err)
		}
		// The counter tells every watcher before increment returns.
		if heard := l.heard(); !slices.Equal(heard, seq(1, want)) {
			t.Fatalf("after increment %d the listener heard %v", want, heard)
		}
	}
}

func TestListenerMayCallBackIntoTheGadgetWhileBeingNotified(t *testing.T) {
	h := start(t, t.TempDir())
	g, _ := create(t, h.login(t, h.token("alice")), "counter")
	c := session(t, g)
	ctx := testCtx(t)
	readBack := make(chan int64, 10)
	l := &listener{onChanged: func(ctx context.Context, v int64) error {
		got, err := countertest.Get(ctx, c)
		if err != nil {
			return err
		}
		readBack <- got
		return nil
	}}
	wf, release := c.Watch(ctx, func(p counterpb.Counter_watch_Params) error { return p.SetListener(l.client()) })
	defer release()
	if _, err := wf.Struct(); err != nil {
		t.Fatal(err)
	}
	if _, err := countertest.Increment(ctx, c); err != nil {
		t.Fatalf("increment with a re-entrant listener: %v", err)
	}
	select {
	case v := <-readBack:
		if v != 1 {
			t.Fatalf("the listener read %d from inside changed(1)", v)
		}
	case <-ctx.Done():
		t.Fatal("the listener's call back into the gadget never completed")
	}
}

func seq(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestRemovedGadgetBreaksItsCapabilitiesAndSessions(t *testing.T) {
	dir := t.TempDir()
	h := start(t, dir)
	ws := h.login(t, h.token("alice"))
	g, id := create(t, ws, "counter")
	kept, keptID := create(t, ws, "counter")
	c := session(t, g)
	ctx := testCtx(t)
	for _, s := range []counterpb.Counter{c, session(t, kept)} {
		if _, err := countertest.Increment(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	rf, release := removeByID(ctx, ws, id)
	defer release()
	if _, err := rf.Struct(); err != nil {
		t.Fatal(err)
	}
	if _, err := countertest.Increment(ctx, c); err == nil {
		t.Fatal("a session of a removed gadget still works")
	}
	inf, release2 := g.Info(ctx, nil)
	defer release2()
	if _, err := inf.Struct(); reason(err) != `unknown gadget id "`+id+`"` {
		t.Fatalf("info of a removed gadget: %v", err)
	}

	// The removed gadget's data is gone from the store file; the gadget
	// beside it keeps its own (which shows the reading below sees data).
	h.stop()
	st, err := store.Open(filepath.Join(dir, "gadgetd.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for gadgetID, wantData := range map[string]bool{id: false, keptID: true} {
		entries, _, err := st.List(ctx, gadgetID, "", "", 10, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		size, err := st.DataSize(ctx, gadgetID)
		if err != nil {
			t.Fatal(err)
		}
		if hasData := len(entries) > 0 || size > 0; hasData != wantData {
			t.Errorf("gadget %s (removed: %v) has %d entries, %d bytes of data in the store", gadgetID, !wantData, len(entries), size)
		}
	}
}

func TestGadgetUIAndSchemaComeFromItsBlueprint(t *testing.T) {
	h := start(t, t.TempDir())
	g, _ := create(t, h.login(t, h.token("alice")), "counter")
	ctx := testCtx(t)
	uf, r1 := g.Ui(ctx, nil)
	defer r1()
	ui, err := uf.Struct()
	if err != nil {
		t.Fatal(err)
	}
	if html, _ := ui.Html(); len(html) == 0 {
		t.Fatal("empty UI")
	}
	sf, r2 := g.Schema(ctx, nil)
	defer r2()
	sc, err := sf.Struct()
	if err != nil {
		t.Fatal(err)
	}
	if nodes, _ := sc.Nodes(); len(nodes) == 0 || sc.SessionInterface() != counterpb.Counter_TypeID {
		t.Fatalf("schema: %d bytes, session %#x", len(nodes), sc.SessionInterface())
	}
}
