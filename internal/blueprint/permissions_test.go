package blueprint_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/schema"
)

func TestAManifestsBadPermissionsAreRefusedNamingTheFileAndTheProblem(t *testing.T) {
	dir := writeDir(t, map[string]string{blueprint.ManifestFile: `{"name":"c","version":"1","schema":"c.capnp","session":"c.capnp:C","ui":"ui.html",
		"permissions":[{"name":"edit","title":"Edit"}],"roles":{"editor":["edit","comment"]}}`})
	_, err := blueprint.ReadManifest(dir)
	requireErr(t, err, `blueprint.json: "roles": "editor" lists "comment", which is not in "permissions"`)
}

// The declarations survive the trip through the Blueprint message the
// server is sent, and each role gets its own plus the ones below it, in
// declaration order.
func TestAccessRoundTripsThroughTheBlueprintMessageAndBundlesRolesUpward(t *testing.T) {
	b := blueprint.Bundle{Manifest: blueprint.Manifest{Name: "c", Version: "1", Access: blueprint.Access{
		Permissions: []blueprint.Permission{{Name: "moderate", Title: "M", Description: "Remove comments."}, {Name: "edit", Title: "E"}, {Name: "comment", Title: "C"}},
		Roles:       map[string][]string{"viewer": {"comment"}, "editor": {"edit"}},
	}}}
	got := readBack(t, &b)
	if !reflect.DeepEqual(got, b.Access) {
		t.Fatalf("read back %+v, want %+v", got, b.Access)
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
	if none := readBack(t, &blueprint.Bundle{}); none.Of(schema.Role_owner) != nil {
		t.Fatalf("a bundle without declarations: %+v; want no permissions", none)
	}
}

// What Access cannot hold is refused as it is read: a role the schema does
// not have, or one listed twice; and a role name the schema does not have
// cannot be sent.
func TestReadingRefusesRolesAccessCannotHold(t *testing.T) {
	for _, tc := range []struct {
		name  string
		roles []schema.Role
		want  string
	}{
		{"unknown", []schema.Role{7}, `"roles": unknown role 7`},
		{"twice", []schema.Role{schema.Role_editor, schema.Role_editor}, `"roles": "editor" is listed twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, seg, _ := capnp.NewMessage(capnp.SingleSegment(nil))
			bp, _ := schema.NewRootBlueprint(seg)
			roles, _ := bp.NewRoles(int32(len(tc.roles)))
			for i, r := range tc.roles {
				roles.At(i).SetRole(r)
			}
			perms, _ := bp.Permissions()
			_, err := blueprint.ReadAccess(perms, roles)
			requireErr(t, err, tc.want)
		})
	}
	b := blueprint.Bundle{Manifest: blueprint.Manifest{Access: blueprint.Access{Roles: map[string][]string{"admin": nil}}}}
	_, err := b.Marshal()
	requireErr(t, err, `"roles": unknown role "admin"`)
}

// readBack marshals b as the command line sends it and reads its Access
// back as the server does.
func readBack(t *testing.T, b *blueprint.Bundle) blueprint.Access {
	t.Helper()
	raw, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	msg, err := capnp.Unmarshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	bp, err := schema.ReadRootBlueprint(msg)
	if err != nil {
		t.Fatal(err)
	}
	perms, _ := bp.Permissions()
	roles, _ := bp.Roles()
	a, err := blueprint.ReadAccess(perms, roles)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A declaration may be megabytes when a raw Blueprint is uploaded; the
// error refusing it quotes the start of the name and says its length, so
// it stays small and still says what is wrong.
func TestAnOversizedNameIsQuotedShortInTheError(t *testing.T) {
	huge := "x" + strings.Repeat("é", 10<<20) // cut mid-rune at any even byte
	for _, tc := range []struct {
		name   string
		access blueprint.Access
		want   string
	}{
		{"permission", blueprint.Access{Permissions: []blueprint.Permission{{Name: huge, Title: "T"}}},
			`"permissions"[0]: name "xéé`},
		{"role lists", blueprint.Access{Permissions: []blueprint.Permission{{Name: "edit", Title: "E"}}, Roles: map[string][]string{"editor": {"edit", huge}}},
			`"roles": "editor" lists "xéé`},
		{"role", blueprint.Access{Roles: map[string][]string{huge: nil}},
			`"roles": unknown role "xéé`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.access.Check()
			requireErr(t, err, tc.want)
			requireErr(t, err, fmt.Sprintf("… (%d bytes)", len(huge)))
			if msg := err.Error(); len(msg) > 300 || !utf8.ValidString(msg) {
				t.Fatalf("error is %d bytes (valid UTF-8: %v), want a short one: %.400s", len(msg), utf8.ValidString(msg), msg)
			}
		})
	}
}
