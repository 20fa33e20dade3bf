package server_test

import (
	"testing"

	"github.com/gadgetd/gadgetd/schema"
)

// A guest learns who calls it only as a per-gadget pseudonym: stable for one
// user in one gadget, different in another gadget and for another user, and
// never the user's internal id.
func TestGuestsSeeAPerGadgetPseudonymNotTheUserID(t *testing.T) {
	h := start(t, t.TempDir())
	ctx := testCtx(t)
	type user struct {
		ws schema.Workspace
		id string
	}
	login := func(name string) user {
		f, release := dial(t, h.addr).Gateway().Login(ctx, func(p schema.Gateway_login_Params) error {
			return p.SetToken(h.token(name))
		})
		t.Cleanup(release)
		res, err := f.Struct()
		if err != nil {
			t.Fatal(err)
		}
		info, _ := res.User()
		id, _ := info.Id()
		return user{res.Workspace(), id}
	}
	alice, bob := login("alice"), login("bob")
	for _, u := range []user{alice, bob} {
		if err := install(t, u.ws, hostileBundle(t)); err != nil {
			t.Fatal(err)
		}
	}
	whoami := func(u user, g schema.Gadget) string {
		t.Helper()
		id, err := command(ctx, openHostile(t, g), "whoami")
		if err != nil {
			t.Fatal(err)
		}
		if id == "" || id == u.id {
			t.Fatalf("the guest saw user id %q (internal id %q)", id, u.id)
		}
		return id
	}
	g1, g1ID := create(t, alice.ws, "hostile")
	g2, _ := create(t, alice.ws, "hostile")
	g3, _ := create(t, bob.ws, "hostile")
	first := whoami(alice, g1)
	if again := whoami(alice, g1); again != first {
		t.Errorf("alice is %q, then %q in the same gadget", first, again)
	}
	if other := whoami(alice, g2); other == first {
		t.Errorf("alice is %q in two gadgets: they can link her", first)
	}
	if b := whoami(bob, g3); b == first {
		t.Errorf("alice and bob are both %q", b)
	}

	// The pseudonym survives a restart: a guest may key its data by it.
	h.stop()
	h2 := start(t, h.dir)
	f, release := h2.login(t, h2.token("alice")).Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(g1ID) })
	defer release()
	if after := whoami(alice, f.Gadget()); after != first {
		t.Errorf("alice is %q after a restart, %q before", after, first)
	}
}
