// Package scaffold writes a new blueprint directory: the start of a gadget
// that builds, installs and passes its own test as it is (`gadgetd blueprint
// new`). The files are text/template templates embedded from files/.
package scaffold

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/gadgetd/gadgetd/internal/blueprint"
)

//go:embed files/*.tmpl
var files embed.FS

var templates = template.Must(template.ParseFS(files, "files/*.tmpl"))

// Options says what to scaffold.
type Options struct {
	// Name is the blueprint's name (blueprint.CheckName), starting with a
	// letter: it also names the session interface and the Go package.
	Name string
	// Module is the blueprint's Go module path ("example.com/me/hello").
	Module string
	// GoVersion is the go directive of go.mod ("1.26").
	GoVersion string
	// GadgetdVersion and CapnpVersion are the versions of
	// github.com/gadgetd/gadgetd and capnproto.org/go/capnp/v3 to require.
	GadgetdVersion, CapnpVersion string
	// SDKDir, if set, is a gadgetd checkout that go.mod replaces
	// github.com/gadgetd/gadgetd with: for a development build of gadgetd,
	// whose version no module proxy serves.
	SDKDir string
}

// data is what the templates see.
type data struct {
	Options
	Title      string // "Hello world", for people
	Interface  string // "HelloWorld", the session interface
	GoPackage  string // "helloworldpb", the bindings' package and directory
	SchemaBase string // "hello-world.capnp"
	SchemaFile string // "helloworldpb/hello-world.capnp", as blueprint.json names it
	SchemaID   string // "@0x...", fresh
}

// Write creates the blueprint in dir, which must not exist or be empty, and
// returns the files it wrote, relative to dir. It writes nothing unless the
// options are valid, and never overwrites a file.
func Write(dir string, o Options) ([]string, error) {
	d, err := newData(o)
	if err != nil {
		return nil, err
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%s is not empty: a new blueprint needs a directory of its own", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	out := []struct{ path, tmpl string }{
		{"go.mod", "go.mod.tmpl"},
		{blueprint.ManifestFile, "blueprint.json.tmpl"},
		{d.SchemaFile, "schema.capnp.tmpl"},
		{filepath.Join(d.GoPackage, "doc.go"), "doc.go.tmpl"},
		{"main.go", "main.go.tmpl"},
		{"main_test.go", "main_test.go.tmpl"},
		{"ui.html", "ui.html.tmpl"},
		{".gitignore", "gitignore.tmpl"},
	}
	var written []string
	for _, f := range out {
		var buf bytes.Buffer
		if err := templates.ExecuteTemplate(&buf, f.tmpl, d); err != nil {
			return written, err
		}
		p := filepath.Join(dir, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return written, err
		}
		file, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return written, err
		}
		_, err = file.Write(buf.Bytes())
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return written, err
		}
		written = append(written, f.path)
	}
	return written, nil
}

func newData(o Options) (data, error) {
	if err := blueprint.CheckName(o.Name); err != nil {
		return data{}, err
	}
	if o.Name[0] < 'a' || o.Name[0] > 'z' {
		return data{}, fmt.Errorf("blueprint name %q must start with a letter: it also names a Go package and a Cap'n Proto interface", o.Name)
	}
	for field, v := range map[string]string{"module path": o.Module, "Go version": o.GoVersion, "gadgetd version": o.GadgetdVersion, "go-capnp version": o.CapnpVersion} {
		if v == "" || strings.ContainsAny(v, " \t\n\"`") {
			return data{}, fmt.Errorf("scaffold: %s %q is invalid", field, v)
		}
	}
	if o.SDKDir != "" && !filepath.IsAbs(o.SDKDir) {
		return data{}, fmt.Errorf("scaffold: the SDK directory %q must be absolute", o.SDKDir)
	}
	words := strings.Split(o.Name, "-")
	var iface strings.Builder
	for _, w := range words {
		if w != "" {
			iface.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	pkg := strings.ReplaceAll(o.Name, "-", "") + "pb"
	base := o.Name + ".capnp"
	title := strings.ToUpper(o.Name[:1]) + strings.ReplaceAll(o.Name[1:], "-", " ")
	return data{
		Options:    o,
		Title:      title,
		Interface:  iface.String(),
		GoPackage:  pkg,
		SchemaBase: base,
		SchemaFile: pkg + "/" + base,
		SchemaID:   fmt.Sprintf("@%#016x", NewSchemaID()),
	}, nil
}

// NewSchemaID returns a fresh Cap'n Proto file id, made as `capnp id` makes
// one: 64 random bits with the top bit set (capnp refuses ids without it).
func NewSchemaID() uint64 {
	var b [8]byte
	rand.Read(b[:]) // crypto/rand.Read never fails
	return binary.BigEndian.Uint64(b[:]) | 1<<63
}
