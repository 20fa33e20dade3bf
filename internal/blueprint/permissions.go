package blueprint

// A blueprint's own permissions travel from its manifest to the server in
// the Blueprint message's permissions and roles (FillAccess), and the
// server reads them back and checks them as ReadManifest does (ReadAccess).

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/gadgetd/gadgetd/schema"
)

// Bounds on the declarations, so a Caller stays small.
const (
	MaxPermissions           = 32
	maxPermissionTitle       = 100
	maxPermissionDescription = 500
)

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

// maxQuoted bounds how much of a name an error quotes.
const maxQuoted = 64

// quote quotes a name for an error, cut to its first maxQuoted bytes with
// its length said: an uploaded declaration may be megabytes, and an error
// as large would be an answer larger than any message the server accepts.
func quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:cut], len(s))
}

// Check reports the first thing wrong with a, naming it.
func (a Access) Check() error {
	if len(a.Permissions) > MaxPermissions {
		return fmt.Errorf("\"permissions\": %d permissions, at most %d", len(a.Permissions), MaxPermissions)
	}
	declared := make(map[string]bool, len(a.Permissions))
	for i, p := range a.Permissions {
		switch {
		case !permissionName.MatchString(p.Name):
			return fmt.Errorf("\"permissions\"[%d]: name %s is invalid: use 1 to 32 lower-case letters, digits and dashes, starting with a letter", i, quote(p.Name))
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
			return fmt.Errorf("\"roles\": unknown role %s; the roles are \"viewer\" and \"editor\" (an owner holds every permission)", quote(role))
		}
		seen := map[string]bool{}
		for _, name := range a.Roles[role] {
			switch {
			case !declared[name]:
				return fmt.Errorf("\"roles\": %q lists %s, which is not in \"permissions\"", role, quote(name))
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

// roleOrder is the order FillAccess lists roles in. It includes the owner,
// which Check refuses, so that the server is the one to say so.
var roleOrder = []schema.Role{schema.Role_viewer, schema.Role_editor, schema.Role_owner}

// FillAccess sets a's permissions and roles on a Blueprint or
// BlueprintInfo through its list constructors; a role a does not list is
// left out.
func FillAccess(a Access, newPermissions func(int32) (schema.PermissionDef_List, error), newRoles func(int32) (schema.RoleDef_List, error)) error {
	perms, err := newPermissions(int32(len(a.Permissions)))
	if err != nil {
		return err
	}
	for i, p := range a.Permissions {
		dst := perms.At(i)
		if err := dst.SetName(p.Name); err != nil {
			return err
		}
		if err := dst.SetTitle(p.Title); err != nil {
			return err
		}
		if err := dst.SetDescription(p.Description); err != nil {
			return err
		}
	}
	for name := range a.Roles {
		if schema.RoleFromString(name).String() != name {
			return fmt.Errorf("\"roles\": unknown role %s; the roles are \"viewer\" and \"editor\" (an owner holds every permission)", quote(name))
		}
	}
	var listed []schema.Role
	for _, r := range roleOrder {
		if _, ok := a.Roles[r.String()]; ok {
			listed = append(listed, r)
		}
	}
	roles, err := newRoles(int32(len(listed)))
	if err != nil {
		return err
	}
	for i, r := range listed {
		dst := roles.At(i)
		dst.SetRole(r)
		names, err := dst.NewPermissions(int32(len(a.Roles[r.String()])))
		if err != nil {
			return err
		}
		for j, n := range a.Roles[r.String()] {
			if err := names.Set(j, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReadAccess reads a Blueprint's permissions and roles, refusing what Access
// cannot hold (a role listed twice or one the schema does not have) and
// more permissions than Check allows, before copying them; the rest is
// Check's to refuse.
func ReadAccess(perms schema.PermissionDef_List, roles schema.RoleDef_List) (Access, error) {
	var a Access
	if perms.Len() > MaxPermissions {
		return a, fmt.Errorf("\"permissions\": %d permissions, at most %d", perms.Len(), MaxPermissions)
	}
	for i := range perms.Len() {
		p := perms.At(i)
		var d Permission
		var err error
		if d.Name, err = p.Name(); err != nil {
			return a, fmt.Errorf("\"permissions\"[%d]: %w", i, err)
		}
		if d.Title, err = p.Title(); err != nil {
			return a, fmt.Errorf("\"permissions\"[%d]: %w", i, err)
		}
		if d.Description, err = p.Description(); err != nil {
			return a, fmt.Errorf("\"permissions\"[%d]: %w", i, err)
		}
		a.Permissions = append(a.Permissions, d)
	}
	for i := range roles.Len() {
		rd := roles.At(i)
		name := rd.Role().String()
		switch {
		case name == "":
			return a, fmt.Errorf("\"roles\": unknown role %d; the roles are \"viewer\" and \"editor\" (an owner holds every permission)", rd.Role())
		case a.Roles[name] != nil:
			return a, fmt.Errorf("\"roles\": %q is listed twice", name)
		}
		list, err := rd.Permissions()
		if err != nil {
			return a, fmt.Errorf("\"roles\": %q: %w", name, err)
		}
		if list.Len() > MaxPermissions {
			return a, fmt.Errorf("\"roles\": %q lists %d permissions, at most %d", name, list.Len(), MaxPermissions)
		}
		names := make([]string, list.Len())
		for j := range names {
			if names[j], err = list.At(j); err != nil {
				return a, fmt.Errorf("\"roles\": %q: %w", name, err)
			}
		}
		if a.Roles == nil {
			a.Roles = map[string][]string{}
		}
		a.Roles[name] = names
	}
	return a, nil
}
