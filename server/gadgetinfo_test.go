package server_test

import (
	"reflect"
	"testing"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/schema"
)

// A GadgetInfo about one gadget (create, Gadget.info) carries the
// permissions and roles of the blueprint version its gadget runs, to
// whoever asks: a newer version the owner installed, or a same-named
// blueprint of the user it was shared with, changes nothing. The share
// dialog describes the roles by it. The workspace's listing leaves them
// out, so that a user others share many gadgets with can still list them.
func TestAGadgetsInfoCarriesItsOwnBlueprintVersionsDeclarations(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	v1 := teamNotes(t)
	v1.Version = "1.0.0"
	if err := install(t, ws["alice"], v1); err != nil {
		t.Fatal(err)
	}
	g1, id1 := create(t, ws["alice"], v1.Name)
	mustShare(t, g1, "bob", schema.Role_viewer)

	v2 := teamNotes(t)
	v2.Version = "2.0.0"
	v2.Access = blueprint.Access{
		Permissions: []blueprint.Permission{{Name: "edit", Title: "Edit notes"}},
		Roles:       map[string][]string{"editor": {"edit"}},
	}
	if err := install(t, ws["alice"], v2); err != nil {
		t.Fatal(err)
	}
	// bob's own team-notes declares something else again.
	bobs := teamNotes(t)
	bobs.Access = blueprint.Access{Permissions: []blueprint.Permission{{Name: "bobs", Title: "Bob's own"}}}
	if err := install(t, ws["bob"], bobs); err != nil {
		t.Fatal(err)
	}

	f, release := ws["alice"].Create(testCtx(t), func(p schema.Workspace_create_Params) error {
		return p.SetBlueprint(v2.Name)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	created, _ := res.Info()
	id2, _ := created.Id()
	requireGadgetAccess(t, "create's answer for a v2 gadget", created, v2.Access)

	requireGadgetAccess(t, "alice's Gadget.info of the v1 gadget", gadgetInfo(t, g1), v1.Access)
	requireGadgetAccess(t, "alice's Gadget.info of the v2 gadget", gadgetInfo(t, openGadget(t, ws["alice"], id2)), v2.Access)
	requireGadgetAccess(t, "bob's Gadget.info of alice's v1 gadget", gadgetInfo(t, openGadget(t, ws["bob"], id1)), v1.Access)
	for who, want := range map[string]int{"alice": 2, "bob": 1} {
		f, release := ws[who].Gadgets(testCtx(t), nil)
		defer release()
		res, err := f.Struct()
		if err != nil {
			t.Fatal(err)
		}
		list, _ := res.Gadgets()
		if list.Len() != want {
			t.Fatalf("%s lists %d gadgets, want %d", who, list.Len(), want)
		}
		for i := range list.Len() {
			info, _ := list.At(i).Info()
			id, _ := info.Id()
			requireGadgetAccess(t, who+"'s listing of "+id, info, blueprint.Access{})
		}
	}
}

func gadgetInfo(t *testing.T, g schema.Gadget) schema.GadgetInfo {
	t.Helper()
	f, release := g.Info(testCtx(t), nil)
	t.Cleanup(release)
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	info, err := res.Info()
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func requireGadgetAccess(t *testing.T, where string, info schema.GadgetInfo, want blueprint.Access) {
	t.Helper()
	perms, _ := info.Permissions()
	roles, _ := info.Roles()
	got, err := blueprint.ReadAccess(perms, roles)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: %+v, %v; want %+v", where, got, err, want)
	}
}
