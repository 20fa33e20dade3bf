package blueprint

// A blueprint's own permissions travel from its manifest to the server
// inside its wasm, as a custom section (WasmWithAccess): the bundle both
// install paths send has no field of its own for them, and a custom section
// is the module format's own place for data the runtime ignores. The server
// reads the section back (AccessOf) and validates it as ReadManifest does.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/gadgetd/gadgetd/schema"
)

// Bounds on the declarations, so a Caller stays small.
const (
	MaxPermissions           = 32
	maxPermissionTitle       = 100
	maxPermissionDescription = 500
)

// AccessSection is the name of the wasm custom section that carries a
// blueprint's Access.
const AccessSection = "gadgetd.access"

// Permission is one permission a blueprint defines for itself, as
// Sandstorm's PermissionDef: the guest checks it by Name in
// Caller.permissions.
type Permission struct {
	// Name is what the guest checks: 1 to 32 lower-case letters, digits
	// and dashes, starting with a letter.
	Name string `json:"name"`
	// Title and Description are for the people who share the gadget.
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

// Access is what a blueprint's manifest declares about its own
// permissions: the permissions, and which of them the platform's viewer
// and editor roles bundle. An owner holds every permission. A role missing
// from Roles holds none of its own, and each role also holds what the roles
// below it hold (an editor what a viewer does), so a share at a lower role
// never carries more.
type Access struct {
	Permissions []Permission `json:"permissions,omitempty"`
	// Roles maps "viewer" and "editor" to names in Permissions.
	Roles map[string][]string `json:"roles,omitempty"`
}

var permissionName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// Check reports the first thing wrong with a, naming it.
func (a Access) Check() error {
	if len(a.Permissions) > MaxPermissions {
		return fmt.Errorf("\"permissions\": %d permissions, at most %d", len(a.Permissions), MaxPermissions)
	}
	declared := make(map[string]bool, len(a.Permissions))
	for i, p := range a.Permissions {
		switch {
		case !permissionName.MatchString(p.Name):
			return fmt.Errorf("\"permissions\"[%d]: name %q is invalid: use 1 to 32 lower-case letters, digits and dashes, starting with a letter", i, p.Name)
		case declared[p.Name]:
			return fmt.Errorf("\"permissions\": %q is declared twice", p.Name)
		case p.Title == "":
			return fmt.Errorf("\"permissions\": %q has no \"title\"", p.Name)
		case len(p.Title) > maxPermissionTitle:
			return fmt.Errorf("\"permissions\": the title of %q is %d bytes, at most %d", p.Name, len(p.Title), maxPermissionTitle)
		case len(p.Description) > maxPermissionDescription:
			return fmt.Errorf("\"permissions\": the description of %q is %d bytes, at most %d", p.Name, len(p.Description), maxPermissionDescription)
		}
		declared[p.Name] = true
	}
	for _, role := range slices.Sorted(maps.Keys(a.Roles)) {
		if role == "owner" {
			return errors.New("\"roles\": \"owner\" holds every permission; leave it out")
		}
		if role != "viewer" && role != "editor" {
			return fmt.Errorf("\"roles\": unknown role %q; the roles are \"viewer\" and \"editor\" (an owner holds every permission)", role)
		}
		seen := map[string]bool{}
		for _, name := range a.Roles[role] {
			switch {
			case !declared[name]:
				return fmt.Errorf("\"roles\": %q lists %q, which is not in \"permissions\"", role, name)
			case seen[name]:
				return fmt.Errorf("\"roles\": %q lists %q twice", role, name)
			}
			seen[name] = true
		}
	}
	return nil
}

// Of returns the names of the permissions role holds, in declaration
// order; nil if a declares none.
func (a Access) Of(role schema.Role) []string {
	held := map[string]bool{}
	if role >= schema.Role_viewer {
		for _, n := range a.Roles["viewer"] {
			held[n] = true
		}
	}
	if role >= schema.Role_editor {
		for _, n := range a.Roles["editor"] {
			held[n] = true
		}
	}
	var names []string
	for _, p := range a.Permissions {
		if role == schema.Role_owner || held[p.Name] {
			names = append(names, p.Name)
		}
	}
	return names
}

func (a Access) declared() bool { return len(a.Permissions) > 0 || len(a.Roles) > 0 }

// WasmWithAccess returns wasm with a appended as its AccessSection, or wasm
// itself if a declares nothing.
func WasmWithAccess(wasm []byte, a Access) ([]byte, error) {
	if !a.declared() {
		return wasm, nil
	}
	payload, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	var body []byte
	body = binary.AppendUvarint(body, uint64(len(AccessSection)))
	body = append(body, AccessSection...)
	body = append(body, payload...)
	out := slices.Clip(wasm)
	out = append(out, 0) // custom section
	out = binary.AppendUvarint(out, uint64(len(body)))
	return append(out, body...), nil
}

// AccessOf reads and checks the Access a module carries (WasmWithAccess);
// none is the zero Access. wasm must be a module that compiled.
func AccessOf(wasm []byte) (Access, error) {
	var a Access
	found := false
	rest, ok := bytes.CutPrefix(wasm, []byte("\x00asm\x01\x00\x00\x00"))
	for ok && len(rest) > 0 {
		id := rest[0]
		size, n := binary.Uvarint(rest[1:])
		if n <= 0 || size > uint64(len(rest)-1-n) {
			return a, errors.New("wasm: a section runs past the end of the module")
		}
		body := rest[1+n : 1+n+int(size)]
		rest = rest[1+n+int(size):]
		if id != 0 {
			continue
		}
		nameLen, m := binary.Uvarint(body)
		if m <= 0 || nameLen > uint64(len(body)-m) || string(body[m:m+int(nameLen)]) != AccessSection {
			continue
		}
		if found {
			return a, fmt.Errorf("wasm: more than one %q section", AccessSection)
		}
		found = true
		dec := json.NewDecoder(bytes.NewReader(body[m+int(nameLen):]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			return a, fmt.Errorf("wasm: the %q section: %w", AccessSection, err)
		}
	}
	return a, a.Check()
}
