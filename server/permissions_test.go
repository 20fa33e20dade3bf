package server_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/examples/notes/notespb"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/schema"
)

// The tests here install the notes example with permissions of their own
// (blueprint.Access, in Blueprint.permissions and .roles as the command line
// sends them) and read what the guest was told: notes' info answers with the
// caller's permissions as SessionContext.caller gives them, and canWrite
// with whether Caller.permissions at open held "edit".

// teamNotes is the notes example as a user's blueprint declaring three
// permissions: a viewer may comment, an editor also edit, only an owner
// moderate.
func teamNotes(t *testing.T) blueprint.Bundle {
	b := *blueprinttest.ExampleBundle(t, "notes")
	b.Name = "team-notes"
	b.Access = blueprint.Access{
		Permissions: []blueprint.Permission{
			{Name: "comment", Title: "Comment"},
			{Name: "edit", Title: "Edit notes"},
			{Name: "moderate", Title: "Moderate", Description: "Remove anyone's comments."},
		},
		Roles: map[string][]string{"viewer": {"comment"}, "editor": {"edit"}},
	}
	return b
}

// notesInfo opens a session of g and returns what notes' info says.
func notesInfo(t *testing.T, g schema.Gadget) (perms []string, canWrite bool, err error) {
	t.Helper()
	return notesSessionInfo(t, notespb.Notes(session(t, g)))
}

func notesSessionInfo(t *testing.T, s notespb.Notes) (perms []string, canWrite bool, err error) {
	t.Helper()
	f, release := s.Info(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return nil, false, err
	}
	list, err := res.Permissions()
	if err != nil {
		t.Fatal(err)
	}
	perms = []string{}
	for i := range list.Len() {
		p, _ := list.At(i)
		perms = append(perms, p)
	}
	return perms, res.CanWrite(), nil
}

func requirePermissions(t *testing.T, who string, g schema.Gadget, want []string, wantWrite bool) {
	t.Helper()
	perms, canWrite, err := notesInfo(t, g)
	if err != nil {
		t.Fatalf("%s's notes info: %v", who, err)
	}
	if !slices.Equal(perms, want) || canWrite != wantWrite {
		t.Fatalf("%s's session: permissions %q, canWrite %v; want %q, %v", who, perms, canWrite, want, wantWrite)
	}
}

func TestInstallRejectsEachBadPermissionDeclarationNamingIt(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	many := make([]blueprint.Permission, blueprint.MaxPermissions+1)
	for i := range many {
		many[i] = blueprint.Permission{Name: fmt.Sprintf("p%d", i), Title: "P"}
	}
	for _, tc := range []struct {
		name   string
		access blueprint.Access
		want   string
	}{
		{"too many", blueprint.Access{Permissions: many}, `blueprint team-notes 1.0.0: "permissions": 33 permissions, at most 32`},
		{"bad identifier", blueprint.Access{Permissions: []blueprint.Permission{{Name: "Edit!", Title: "E"}}},
			`"permissions"[0]: name "Edit!" is invalid: use 1 to 32 lower-case letters, digits and dashes, starting with a letter`},
		{"duplicate", blueprint.Access{Permissions: []blueprint.Permission{{Name: "edit", Title: "E"}, {Name: "edit", Title: "E"}}},
			`"permissions": "edit" is declared twice`},
		{"no title", blueprint.Access{Permissions: []blueprint.Permission{{Name: "edit"}}}, `"permissions": "edit" has no "title"`},
		{"unknown permission in a role", blueprint.Access{
			Permissions: []blueprint.Permission{{Name: "edit", Title: "E"}},
			Roles:       map[string][]string{"editor": {"edit", "delete"}},
		}, `"roles": "editor" lists "delete", which is not in "permissions"`},
		{"permission twice in a role", blueprint.Access{
			Permissions: []blueprint.Permission{{Name: "edit", Title: "E"}},
			Roles:       map[string][]string{"viewer": {"edit", "edit"}},
		}, `"roles": "viewer" lists "edit" twice`},
		{"owner mapped", blueprint.Access{
			Permissions: []blueprint.Permission{{Name: "edit", Title: "E"}},
			Roles:       map[string][]string{"owner": {}},
		}, `"roles": "owner" holds every permission; leave it out`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := teamNotes(t)
			b.Access = tc.access
			// Not wasm: the declarations are refused before any compile.
			b.Wasm = []byte("not wasm")
			requireErrorContains(t, install(t, ws, b), tc.want)
		})
	}
	// What the command line cannot send: a role the schema does not have,
	// or one listed twice.
	for _, tc := range []struct {
		name  string
		roles []schema.Role
		want  string
	}{
		{"unknown role", []schema.Role{7}, `blueprint team-notes 1.0.0: "roles": unknown role 7`},
		{"role twice", []schema.Role{schema.Role_viewer, schema.Role_viewer}, `blueprint team-notes 1.0.0: "roles": "viewer" is listed twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := teamNotes(t)
			b.Wasm = []byte("not wasm")
			_, err := installEdited(t, ws, b, func(bp schema.Blueprint) error {
				roles, err := bp.NewRoles(int32(len(tc.roles)))
				for i, r := range tc.roles {
					roles.At(i).SetRole(r)
				}
				return err
			})
			requireErrorContains(t, err, tc.want)
		})
	}
	if err := install(t, ws, teamNotes(t)); err != nil {
		t.Fatalf("the good declarations: %v", err)
	}
}

// installEdited uploads b as the command line would, changed by edit, and
// returns what the server answers.
func installEdited(t *testing.T, ws schema.Workspace, b blueprint.Bundle, edit func(schema.Blueprint) error) (schema.BlueprintInfo, error) {
	t.Helper()
	msg, seg, _ := capnp.NewMessage(capnp.SingleSegment(nil))
	bp, err := schema.NewRootBlueprint(seg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Fill(bp); err != nil {
		t.Fatal(err)
	}
	if err := edit(bp); err != nil {
		t.Fatal(err)
	}
	raw, err := msg.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	info, release, err := client.UploadBlueprint(testCtx(t), ws, raw)
	if err == nil {
		t.Cleanup(release)
	}
	return info, err
}

// The declarations come back in BlueprintInfo, from the upload and from
// the workspace's listing, so a sharer can say what each role may do.
func TestBlueprintInfoReturnsTheDeclaredPermissionsAndRoles(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	b := teamNotes(t)
	info, err := installEdited(t, ws, b, func(schema.Blueprint) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	requireAccess(t, "the upload's answer", info, b.Access)
	f, release := ws.Blueprints(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	list, _ := res.Blueprints()
	for i := range list.Len() {
		if name, _ := list.At(i).Name(); name == b.Name {
			requireAccess(t, "the listing", list.At(i), b.Access)
			return
		}
	}
	t.Fatalf("%s is not listed", b.Name)
}

func requireAccess(t *testing.T, where string, info schema.BlueprintInfo, want blueprint.Access) {
	t.Helper()
	perms, _ := info.Permissions()
	roles, _ := info.Roles()
	got, err := blueprint.ReadAccess(perms, roles)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: %+v, %v; want %+v", where, got, err, want)
	}
}

// A module carrying the custom section that once held the declarations
// (gadgetd.access) declares nothing by it: its gadgets' callers hold no
// permissions.
func TestAStrayAccessSectionInTheWasmIsIgnored(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.login(t, h.token("alice"))
	b := teamNotes(t)
	payload, _ := json.Marshal(b.Access)
	b.Access = blueprint.Access{}
	b.Wasm = appendCustomSection(b.Wasm, "gadgetd.access", payload)
	if err := install(t, ws, b); err != nil {
		t.Fatal(err)
	}
	g, _ := create(t, ws, "team-notes")
	requirePermissions(t, "alice, the owner", g, []string{}, false)
}

func appendCustomSection(wasm []byte, name string, payload []byte) []byte {
	body := binary.AppendUvarint(nil, uint64(len(name)))
	body = append(append(body, name...), payload...)
	out := append(slices.Clip(wasm), 0) // section id 0: custom
	out = binary.AppendUvarint(out, uint64(len(body)))
	return append(out, body...)
}

func TestEachRoleCarriesExactlyItsPermissionsAndOwnerAll(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob", "carol", "dave")
	if err := install(t, ws["alice"], teamNotes(t)); err != nil {
		t.Fatal(err)
	}
	g, id := create(t, ws["alice"], "team-notes")
	mustShare(t, g, "bob", schema.Role_viewer)
	mustShare(t, g, "carol", schema.Role_editor)
	mustShare(t, g, "dave", schema.Role_owner)
	requirePermissions(t, "alice, the creator", g, []string{"comment", "edit", "moderate"}, true)
	requirePermissions(t, "bob, a viewer", openGadget(t, ws["bob"], id), []string{"comment"}, false)
	requirePermissions(t, "carol, an editor", openGadget(t, ws["carol"], id), []string{"comment", "edit"}, true)
	requirePermissions(t, "dave, an owner by share", openGadget(t, ws["dave"], id), []string{"comment", "edit", "moderate"}, true)
}

// Lowering bob's share ends his session opened as editor; a new open, and
// its SessionContext.caller, carry the viewer's set.
func TestANewOpenAfterARoleChangeCarriesTheNewPermissions(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	if err := install(t, ws["alice"], teamNotes(t)); err != nil {
		t.Fatal(err)
	}
	g, id := create(t, ws["alice"], "team-notes")
	mustShare(t, g, "bob", schema.Role_editor)
	bobs := openGadget(t, ws["bob"], id)
	asEditor := notespb.Notes(session(t, bobs))
	if perms, _, err := notesSessionInfo(t, asEditor); err != nil || !slices.Equal(perms, []string{"comment", "edit"}) {
		t.Fatalf("bob as editor: %q, %v", perms, err)
	}
	mustShare(t, g, "bob", schema.Role_viewer)
	if _, _, err := notesSessionInfo(t, asEditor); !capnp.IsDisconnected(err) {
		t.Fatalf("bob's session opened as editor, after his share was lowered: %v, want disconnected", err)
	}
	requirePermissions(t, "bob, lowered to viewer", bobs, []string{"comment"}, false)
	mustShare(t, g, "bob", schema.Role_editor)
	requirePermissions(t, "bob, raised to editor again", openGadget(t, ws["bob"], id), []string{"comment", "edit"}, true)
}

// Without declarations every Caller's permissions are empty, whatever the
// role: such a guest decides by Caller.role alone.
func TestABlueprintWithoutDeclarationsGivesNoPermissions(t *testing.T) {
	h := start(t, t.TempDir())
	ws := h.users(t, "alice", "bob")
	b := teamNotes(t)
	b.Access = blueprint.Access{}
	if err := install(t, ws["alice"], b); err != nil {
		t.Fatal(err)
	}
	g, id := create(t, ws["alice"], "team-notes")
	mustShare(t, g, "bob", schema.Role_editor)
	requirePermissions(t, "alice, the owner", g, []string{}, false)
	requirePermissions(t, "bob, an editor", openGadget(t, ws["bob"], id), []string{}, false)
}

// The notes example declares "edit" for editors and enforces it: a viewer
// cannot add a note, an editor can.
func TestTheNotesExampleLetsEditorsEditAndNotViewers(t *testing.T) {
	h := start(t, t.TempDir())
	if _, err := h.srv.InstallBuiltin(context.Background(), blueprinttest.ExampleBundle(t, "notes")); err != nil {
		t.Fatal(err)
	}
	ws := h.users(t, "alice", "bob", "carol")
	g, id := create(t, ws["alice"], "notes")
	mustShare(t, g, "bob", schema.Role_viewer)
	mustShare(t, g, "carol", schema.Role_editor)
	add := func(g schema.Gadget) error {
		f, release := notespb.Notes(session(t, g)).Add(testCtx(t), func(p notespb.Notes_add_Params) error { return p.SetTitle("hello") })
		defer release()
		_, err := f.Struct()
		return err
	}
	requireErrorContains(t, add(openGadget(t, ws["bob"], id)), "notes: permission denied")
	if err := add(openGadget(t, ws["carol"], id)); err != nil {
		t.Fatalf("carol, an editor, adding a note: %v", err)
	}
	requirePermissions(t, "bob, a viewer", openGadget(t, ws["bob"], id), []string{}, false)
	requirePermissions(t, "carol, an editor", openGadget(t, ws["carol"], id), []string{"edit"}, true)
}
