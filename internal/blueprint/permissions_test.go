package blueprint_test

import (
	"slices"
	"testing"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/schema"
)

func TestAManifestsBadPermissionsAreRefusedNamingTheFileAndTheProblem(t *testing.T) {
	dir := writeDir(t, map[string]string{blueprint.ManifestFile: `{"name":"c","version":"1","schema":"c.capnp","session":"c.capnp:C","ui":"ui.html",
		"permissions":[{"name":"edit","title":"Edit"}],"roles":{"editor":["edit","comment"]}}`})
	_, err := blueprint.ReadManifest(dir)
	requireErr(t, err, `blueprint.json: "roles": "editor" lists "comment", which is not in "permissions"`)
}

// The declarations survive the trip through the wasm the server is sent,
// and each role gets its own plus the ones below it, in declaration order.
func TestAccessRoundTripsThroughTheWasmAndBundlesRolesUpward(t *testing.T) {
	a := blueprint.Access{
		Permissions: []blueprint.Permission{{Name: "moderate", Title: "M"}, {Name: "edit", Title: "E"}, {Name: "comment", Title: "C"}},
		Roles:       map[string][]string{"viewer": {"comment"}, "editor": {"edit"}},
	}
	module := []byte("\x00asm\x01\x00\x00\x00")
	wasm, err := blueprint.WasmWithAccess(module, a)
	if err != nil {
		t.Fatal(err)
	}
	got, err := blueprint.AccessOf(wasm)
	if err != nil {
		t.Fatal(err)
	}
	for role, want := range map[schema.Role][]string{
		schema.Role_viewer: {"comment"},
		schema.Role_editor: {"edit", "comment"},
		schema.Role_owner:  {"moderate", "edit", "comment"},
	} {
		if held := got.Of(role); !slices.Equal(held, want) {
			t.Errorf("%s holds %q, want %q", role, held, want)
		}
	}
	if none, err := blueprint.AccessOf(module); err != nil || none.Of(schema.Role_owner) != nil {
		t.Fatalf("a module without the section: %+v, %v; want no permissions", none, err)
	}
	twice, _ := blueprint.WasmWithAccess(wasm, a)
	if _, err := blueprint.AccessOf(twice); err == nil {
		t.Fatal("a module with two access sections was accepted")
	}
}
