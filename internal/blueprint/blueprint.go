package blueprint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"capnproto.org/go/capnp/v3"
	capschema "capnproto.org/go/capnp/v3/std/capnp/schema"

	"github.com/gadgetd/gadgetd/schema"

	"github.com/gadgetd/gadgetd/gatekeepers"
)

// File names inside a blueprint directory.
const (
	ManifestFile = "blueprint.json"
	WasmFile     = "gadget.wasm"
	SchemaFile   = "schema.bin"
)

// Manifest is blueprint.json.
type Manifest struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description"`
	// Session names the session interface: "file.capnp:Interface" (the file
	// as given in Schema) or a 0x-prefixed interface id.
	Session string `json:"session"`
	// Schema is the .capnp file, relative to the directory.
	Schema string `json:"schema"`
	// UI is the HTML document, relative to the directory.
	UI string `json:"ui"`
	// Bindings are the gatekeepers its gadgets ask to be bound to.
	Bindings []gatekeepers.Request `json:"bindings,omitempty"`
	// Access declares the blueprint's own permissions and the roles that
	// bundle them ("permissions" and "roles").
	Access
}

// Bundle is everything a blueprint installs.
type Bundle struct {
	Manifest
	SessionInterface uint64
	Wasm             []byte
	UIHTML           string
	SchemaSource     string
	SchemaNodes      []byte
}

var nameSyntax = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)

// CheckName reports whether name is a valid blueprint name: lower-case
// letters, digits and dashes, 1 to 64 characters, not starting or ending
// with a dash.
func CheckName(name string) error {
	if !nameSyntax.MatchString(name) {
		return fmt.Errorf("blueprint name %q is invalid: use 1 to 64 lower-case letters, digits and dashes, starting and ending with a letter or digit", name)
	}
	return nil
}

var versionSyntax = regexp.MustCompile(`^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$`)

// CheckVersion reports whether version is a valid version string: 1 to 64
// letters, digits, dots, dashes, pluses and underscores.
func CheckVersion(version string) error {
	if !versionSyntax.MatchString(version) {
		return fmt.Errorf("blueprint version %q is invalid: use 1 to 64 letters, digits, '.', '-', '+' or '_', starting with a letter or digit", version)
	}
	return nil
}

// ReadManifest reads and checks dir/blueprint.json.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	raw, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return m, fmt.Errorf("%s is not a blueprint directory: it has no %s", dir, ManifestFile)
		}
		return m, err
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	where := filepath.Join(dir, ManifestFile)
	if err := CheckName(m.Name); err != nil {
		return m, fmt.Errorf("%s: %w", where, err)
	}
	if err := CheckVersion(m.Version); err != nil {
		return m, fmt.Errorf("%s: %w", where, err)
	}
	for field, p := range map[string]string{"schema": m.Schema, "ui": m.UI} {
		if p == "" {
			return m, fmt.Errorf("%s: %q is missing", where, field)
		}
		if !filepath.IsLocal(p) {
			return m, fmt.Errorf("%s: %q must be a path inside the blueprint directory, not %q", where, field, p)
		}
	}
	if m.Session == "" {
		return m, fmt.Errorf("%s: \"session\" is missing (the session interface, e.g. \"%s:MyInterface\")", where, m.Schema)
	}
	if err := gatekeepers.CheckRequests(m.Bindings); err != nil {
		return m, fmt.Errorf("%s: \"bindings\": %w", where, err)
	}
	if err := m.Access.Check(); err != nil {
		return m, fmt.Errorf("%s: %w", where, err)
	}
	return m, nil
}

// Load reads a built blueprint directory.
func Load(dir string) (*Bundle, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	b := &Bundle{Manifest: m}
	read := func(name, hint string) ([]byte, error) {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("blueprint %s: %s is missing%s", dir, name, hint)
		}
		return raw, err
	}
	buildHint := " (run `gadgetd blueprint build " + dir + "` first)"
	if b.Wasm, err = read(WasmFile, buildHint); err != nil {
		return nil, err
	}
	if b.SchemaNodes, err = read(SchemaFile, buildHint); err != nil {
		return nil, err
	}
	ui, err := read(m.UI, "")
	if err != nil {
		return nil, err
	}
	if ui, err = inlineBindings(dir, m, ui); err != nil {
		return nil, err
	}
	b.UIHTML = string(ui)
	src, err := read(m.Schema, "")
	if err != nil {
		return nil, err
	}
	b.SchemaSource = string(src)
	if b.SessionInterface, err = ResolveInterface(b.SchemaNodes, m.Session); err != nil {
		return nil, fmt.Errorf("blueprint %s: %w", dir, err)
	}
	return b, nil
}

// Marshal serializes b as a Blueprint message, as client.UploadBlueprint
// sends it.
func (b *Bundle) Marshal() ([]byte, error) {
	msg, seg, err := capnp.NewMessage(capnp.SingleSegment(nil))
	if err != nil {
		return nil, err
	}
	bp, err := schema.NewRootBlueprint(seg)
	if err != nil {
		return nil, err
	}
	if err := b.Fill(bp); err != nil {
		return nil, err
	}
	return msg.Marshal()
}

// Fill copies the bundle into a schema.Blueprint, the installBlueprint
// parameter.
func (b *Bundle) Fill(bp schema.Blueprint) error {
	bp.SetSessionInterface(b.SessionInterface)
	for _, set := range []func() error{
		func() error { return bp.SetName(b.Name) },
		func() error { return bp.SetVersion(b.Version) },
		func() error { return bp.SetDescription(b.Description) },
		func() error { return bp.SetWasm(b.Wasm) },
		func() error { return bp.SetUi(b.UIHTML) },
		func() error { return bp.SetSchemaSource(b.SchemaSource) },
		func() error { return bp.SetSchemaNodes(b.SchemaNodes) },
		func() error { return FillRequests(bp.NewBindings, b.Bindings) },
		func() error { return FillAccess(b.Access, bp.NewPermissions, bp.NewRoles) },
	} {
		if err := set(); err != nil {
			return err
		}
	}
	return nil
}

// FillRequests sets a list of binding requests made with newList.
func FillRequests(newList func(int32) (schema.BindingRequest_List, error), rs []gatekeepers.Request) error {
	list, err := newList(int32(len(rs)))
	if err != nil {
		return err
	}
	for i, r := range rs {
		dst := list.At(i)
		if err := dst.SetName(r.Name); err != nil {
			return err
		}
		if err := dst.SetKind(r.Kind); err != nil {
			return err
		}
		if err := dst.SetWhy(r.Why); err != nil {
			return err
		}
	}
	return nil
}

// ReadRequests reads a list of binding requests, and checks them.
func ReadRequests(list schema.BindingRequest_List) ([]gatekeepers.Request, error) {
	rs := make([]gatekeepers.Request, list.Len())
	for i := range rs {
		r := list.At(i)
		var err error
		if rs[i].Name, err = r.Name(); err != nil {
			return nil, err
		}
		if rs[i].Kind, err = r.Kind(); err != nil {
			return nil, err
		}
		if rs[i].Why, err = r.Why(); err != nil {
			return nil, err
		}
	}
	return rs, gatekeepers.CheckRequests(rs)
}

// Interfaces returns the interface nodes of a serialized
// CodeGeneratorRequest, id to display name ("file.capnp:Name").
func Interfaces(nodes []byte) (map[uint64]string, error) {
	msg, err := capnp.Unmarshal(nodes)
	if err != nil {
		return nil, fmt.Errorf("schema is not a serialized CodeGeneratorRequest: %w", err)
	}
	req, err := capschema.ReadRootCodeGeneratorRequest(msg)
	if err != nil {
		return nil, fmt.Errorf("schema is not a serialized CodeGeneratorRequest: %w", err)
	}
	list, err := req.Nodes()
	if err != nil {
		return nil, fmt.Errorf("schema is not a serialized CodeGeneratorRequest: %w", err)
	}
	out := make(map[uint64]string)
	for i := 0; i < list.Len(); i++ {
		n := list.At(i)
		if n.Which() != capschema.Node_Which_interface {
			continue
		}
		name, err := n.DisplayName()
		if err != nil {
			return nil, fmt.Errorf("schema node %#x: %w", n.Id(), err)
		}
		out[n.Id()] = name
	}
	return out, nil
}

// CheckInterface reports whether id is an interface in the schema nodes.
func CheckInterface(nodes []byte, id uint64) error {
	ifaces, err := Interfaces(nodes)
	if err != nil {
		return err
	}
	if _, ok := ifaces[id]; !ok {
		return fmt.Errorf("session interface %#016x is not an interface in the blueprint's schema (it has %s)", id, describe(ifaces))
	}
	return nil
}

// ResolveInterface finds the interface spec names: a 0x id, or
// "file.capnp:Name" where file may be given by its path or base name.
func ResolveInterface(nodes []byte, spec string) (uint64, error) {
	ifaces, err := Interfaces(nodes)
	if err != nil {
		return 0, err
	}
	if strings.HasPrefix(spec, "0x") {
		id, err := strconv.ParseUint(spec[2:], 16, 64)
		if err != nil {
			return 0, fmt.Errorf("session %q is not a valid interface id", spec)
		}
		if _, ok := ifaces[id]; !ok {
			return 0, fmt.Errorf("session interface %s is not in the schema (it has %s)", spec, describe(ifaces))
		}
		return id, nil
	}
	file, name, ok := strings.Cut(spec, ":")
	if !ok || name == "" {
		return 0, fmt.Errorf("session %q must be \"file.capnp:Interface\" or a 0x interface id", spec)
	}
	var found []uint64
	for id, display := range ifaces {
		dfile, dname, _ := strings.Cut(display, ":")
		if dname == name && (dfile == file || path.Base(dfile) == path.Base(file)) {
			found = append(found, id)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return 0, fmt.Errorf("session interface %q is not in the schema (it has %s)", spec, describe(ifaces))
	default:
		return 0, fmt.Errorf("session interface %q is ambiguous in the schema; give its 0x id", spec)
	}
}

func describe(ifaces map[uint64]string) string {
	if len(ifaces) == 0 {
		return "no interfaces"
	}
	var names []string
	for id, n := range ifaces {
		names = append(names, fmt.Sprintf("%s (%#016x)", n, id))
	}
	slices.Sort(names)
	return "interfaces " + strings.Join(names, ", ")
}
