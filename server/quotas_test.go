package server_test

import (
	"testing"

	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
)

func createErr(t *testing.T, ws schema.Workspace, blueprint string) error {
	t.Helper()
	f, release := ws.Create(testCtx(t), func(p schema.Workspace_create_Params) error { return p.SetBlueprint(blueprint) })
	defer release()
	_, err := f.Struct()
	return err
}

// Before, a user could create gadgets without bound.
func TestGadgetsPerUserAreBoundedAndRemovingOneMakesRoom(t *testing.T) {
	h := start(t, t.TempDir(), server.WithUserQuotas(3, 0))
	alice := h.login(t, h.token("alice"))
	var ids []string
	for range 3 {
		_, id := create(t, alice, "counter")
		ids = append(ids, id)
	}
	requireErrorContains(t, createErr(t, alice, "counter"), "you have 3 gadgets, the limit is 3; remove one first")

	// Another user is not affected.
	bob := h.login(t, h.token("bob"))
	if err := createErr(t, bob, "counter"); err != nil {
		t.Fatalf("bob's first gadget: %v", err)
	}

	f, release := removeByID(testCtx(t), alice, ids[0])
	defer release()
	if _, err := f.Struct(); err != nil {
		t.Fatal(err)
	}
	if err := createErr(t, alice, "counter"); err != nil {
		t.Fatalf("after removing one: %v", err)
	}
}
