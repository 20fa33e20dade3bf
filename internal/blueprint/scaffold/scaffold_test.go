package scaffold_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/scaffold"
)

func options(name string) scaffold.Options {
	return scaffold.Options{
		Name: name, Module: "example.com/me/" + name, GoVersion: "1.26",
		GadgetdVersion: "v1.2.3", CapnpVersion: "v3.1.0-alpha.2",
	}
}

var schemaID = regexp.MustCompile(`(?m)^@(0x[0-9a-f]{16});$`)

// TestEachBlueprintGetsAFreshSchemaID: two blueprints never share a schema
// id (so neither can be mistaken for the other), and each id is one capnp
// accepts (top bit set).
func TestEachBlueprintGetsAFreshSchemaID(t *testing.T) {
	seen := map[string]bool{}
	for i := range 2 {
		dir := filepath.Join(t.TempDir(), "b")
		if _, err := scaffold.Write(dir, options("hello")); err != nil {
			t.Fatal(err)
		}
		src, err := os.ReadFile(filepath.Join(dir, "hellopb", "hello.capnp"))
		if err != nil {
			t.Fatal(err)
		}
		m := schemaID.FindSubmatch(src)
		if m == nil {
			t.Fatalf("no @0x...; line in the schema:\n%s", src)
		}
		id := string(m[1])
		if id[2] < '8' {
			t.Errorf("schema id %s lacks the top bit", id)
		}
		if seen[id] {
			t.Fatalf("blueprint %d got the schema id %s again", i, id)
		}
		seen[id] = true
	}
}

func TestNewBlueprintIsNamedConsistently(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	files, err := scaffold.Write(dir, options("my-gadget2"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"go.mod", "blueprint.json", "mygadget2pb/my-gadget2.capnp", "mygadget2pb/doc.go", "main.go", "main_test.go", "ui.html", ".gitignore"}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Errorf("wrote %q, want %q", files, want)
	}
	m, err := blueprint.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "my-gadget2" || m.Schema != "mygadget2pb/my-gadget2.capnp" || m.Session != "mygadget2pb/my-gadget2.capnp:MyGadget2" {
		t.Errorf("manifest = %+v", m)
	}
	for file, wants := range map[string][]string{
		"go.mod":                       {"module example.com/me/my-gadget2\n", "github.com/gadgetd/gadgetd v1.2.3\n", "capnproto.org/go/capnp/v3 v3.1.0-alpha.2\n"},
		"mygadget2pb/my-gadget2.capnp": {`$Go.package("mygadget2pb");`, `$Go.import("example.com/me/my-gadget2/mygadget2pb");`, "interface MyGadget2 {"},
		"main.go":                      {`"example.com/me/my-gadget2/mygadget2pb"`, "mygadget2pb.MyGadget2_ServerToClient(s)"},
	} {
		raw, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range wants {
			if !strings.Contains(string(raw), w) {
				t.Errorf("%s lacks %q:\n%s", file, w, raw)
			}
		}
	}
	if raw, _ := os.ReadFile(filepath.Join(dir, "go.mod")); strings.Contains(string(raw), "replace") {
		t.Errorf("go.mod replaces gadgetd although no SDK directory was given:\n%s", raw)
	}
}

func TestSDKDirectoryBecomesAReplace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "x")
	o := options("hello")
	o.SDKDir = "/src/gadgetd"
	if _, err := scaffold.Write(dir, o); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "\nreplace github.com/gadgetd/gadgetd => /src/gadgetd\n") {
		t.Errorf("go.mod has no replace of gadgetd by the SDK directory:\n%s", raw)
	}
	o.SDKDir = "relative/dir"
	if _, err := scaffold.Write(filepath.Join(t.TempDir(), "y"), o); err == nil || !strings.Contains(err.Error(), "must be absolute") {
		t.Errorf("a relative SDK directory: %v", err)
	}
}

// TestWriteLosesNothing: a directory that holds anything is refused and
// left as it was, and so is a name that cannot name a Go package and an
// interface.
func TestWriteLosesNothing(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "main.go")
	if err := os.WriteFile(mine, []byte("my work"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := scaffold.Write(dir, options("hello")); err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Fatalf("writing into a non-empty directory: %v", err)
	}
	if raw, _ := os.ReadFile(mine); string(raw) != "my work" {
		t.Fatalf("the existing file now holds %q", raw)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the refused write left %d entries", len(entries))
	}
	for name, want := range map[string]string{
		"9lives":   "must start with a letter",
		"Hello":    "is invalid",
		"a/b":      "is invalid",
		"-x":       "is invalid",
		"":         "is invalid",
		"ok-name-": "is invalid",
	} {
		empty := filepath.Join(t.TempDir(), "b")
		_, err := scaffold.Write(empty, options(name))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("name %q: %v, want an error containing %q", name, err, want)
		}
		if _, statErr := os.Stat(empty); statErr == nil {
			t.Errorf("name %q: the refused write created the directory", name)
		}
	}
}
