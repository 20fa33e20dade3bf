package blueprint_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
)

func TestMain(m *testing.M) {
	code := m.Run()
	blueprinttest.RemoveAll()
	os.Exit(code)
}

func TestABuiltBlueprintLoadsWithItsSessionSchemaAndUI(t *testing.T) {
	b := blueprinttest.Bundle(t, blueprinttest.TestCounter)
	if b.Name != "counter" || b.SessionInterface != counterpb.Counter_TypeID {
		t.Fatalf("loaded %s with session %#x, want counter with Counter (%#x)", b.Name, b.SessionInterface, uint64(counterpb.Counter_TypeID))
	}
	if !strings.HasPrefix(string(b.Wasm), "\x00asm") {
		t.Fatal("gadget.wasm is not a wasm module")
	}
	if !strings.Contains(b.SchemaSource, "interface Counter") || b.UIHTML == "" {
		t.Fatal("schema source or UI missing from the bundle")
	}
}

// writeDir makes a blueprint directory from files.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func requireErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error = %v, want it to contain %q", err, want)
	}
}

func TestLoadExplainsWhatIsWrong(t *testing.T) {
	built := blueprinttest.Built(t, blueprinttest.TestCounter)
	schemaBin, err := os.ReadFile(filepath.Join(built, blueprint.SchemaFile))
	if err != nil {
		t.Fatal(err)
	}
	good := `{"name":"c","version":"1","schema":"counter.capnp","session":"counter.capnp:Counter","ui":"ui.html"}`
	complete := func(manifest string) map[string]string {
		return map[string]string{
			"blueprint.json": manifest, "counter.capnp": "# source", "ui.html": "<p>",
			"gadget.wasm": "\x00asm", "schema.bin": string(schemaBin),
		}
	}
	if _, err := blueprint.Load(writeDir(t, complete(good))); err != nil {
		t.Fatalf("a good directory failed: %v", err)
	}

	_, err = blueprint.Load(t.TempDir())
	requireErr(t, err, "has no blueprint.json")

	_, err = blueprint.Load(writeDir(t, complete(`{"name": "c",`)))
	requireErr(t, err, "blueprint.json: unexpected EOF")

	_, err = blueprint.Load(writeDir(t, complete(strings.Replace(good, `"counter.capnp:Counter"`, `"counter.capnp:Nope"`, 1))))
	requireErr(t, err, `session interface "counter.capnp:Nope" is not in the schema`)

	_, err = blueprint.Load(writeDir(t, complete(strings.Replace(good, `"name":"c"`, `"name":"Bad Name"`, 1))))
	requireErr(t, err, `blueprint name "Bad Name" is invalid`)

	_, err = blueprint.Load(writeDir(t, complete(strings.Replace(good, `"ui.html"`, `"../ui.html"`, 1))))
	requireErr(t, err, `must be a path inside the blueprint directory`)

	files := complete(good)
	delete(files, "gadget.wasm")
	_, err = blueprint.Load(writeDir(t, files))
	requireErr(t, err, "gadget.wasm is missing (run `gadgetd blueprint build")

	withBindings := func(bindings string) string {
		return strings.Replace(good, `"ui":"ui.html"`, `"ui":"ui.html","bindings":`+bindings, 1)
	}
	b, err := blueprint.Load(writeDir(t, complete(withBindings(`[{"name":"repo","kind":"github","why":"to list its issues"}]`))))
	if err != nil || len(b.Bindings) != 1 || b.Bindings[0].Name != "repo" {
		t.Fatalf("a binding request: %+v, %v", b, err)
	}
	for bindings, want := range map[string]string{
		`[{"name":"Repo","kind":"github","why":"w"}]`:                                         `binding name "Repo"`,
		`[{"name":"repo","kind":"github","why":""}]`:                                          `"why" must say`,
		`[{"name":"repo","kind":"","why":"w"}]`:                                               `kind name ""`,
		`[{"name":"repo","kind":"github","why":"w"},{"name":"repo","kind":"http","why":"w"}]`: `"repo" is requested twice`,
		`[{"name":"repo","kind":"github","why":"` + strings.Repeat("w", 501) + `"}]`:          `at most 500 bytes`,
		`[{"name":"repo","kind":"github","why":"w","secret":"x"}]`:                            `unknown field "secret"`,
	} {
		_, err = blueprint.Load(writeDir(t, complete(withBindings(bindings))))
		requireErr(t, err, want)
	}

	id := fmt.Sprintf(`"%#016x"`, uint64(counterpb.Counter_TypeID))
	if _, err := blueprint.Load(writeDir(t, complete(strings.Replace(good, `"counter.capnp:Counter"`, id, 1)))); err != nil {
		t.Fatalf("a 0x session id failed: %v", err)
	}
}

func TestCheckInterfaceRefusesNonInterfaces(t *testing.T) {
	b := blueprinttest.Bundle(t, blueprinttest.TestCounter)
	if err := blueprint.CheckInterface(b.SchemaNodes, counterpb.Counter_TypeID); err != nil {
		t.Fatal(err)
	}
	requireErr(t, blueprint.CheckInterface(b.SchemaNodes, 0x1234), "is not an interface in the blueprint's schema")
	requireErr(t, blueprint.CheckInterface(b.SchemaNodes, counterpb.Counter_increment_Params_TypeID), "is not an interface")
	requireErr(t, blueprint.CheckInterface([]byte("garbage!"), 1), "not a serialized CodeGeneratorRequest")
}

// TestLoadInlinesTheUIsJSBindings: the UI's source keeps an empty
// <script data-gadgetd-bindings> element, and the bundle's UI has the
// schema's JS bindings (SCHEMA.js, beside it) inside it, with a "</script"
// in them escaped so it cannot end the element. Without the bindings file,
// Load says how to make it.
func TestLoadInlinesTheUIsJSBindings(t *testing.T) {
	built := blueprinttest.Built(t, blueprinttest.TestCounter)
	schemaBin, err := os.ReadFile(filepath.Join(built, blueprint.SchemaFile))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"blueprint.json":   `{"name":"c","version":"1","schema":"pb/counter.capnp","session":"pb/counter.capnp:Counter","ui":"ui.html"}`,
		"pb/counter.capnp": "# source", "gadget.wasm": "\x00asm", "schema.bin": string(schemaBin),
		"ui.html":             "<p>before</p>\n<script data-gadgetd-bindings></script>\n<script>use()</script>\n",
		"pb/counter.capnp.js": "var bindings = 1; // a '</script>' in a string\n",
	}
	b, err := blueprint.Load(writeDir(t, files))
	if err != nil {
		t.Fatal(err)
	}
	want := "<p>before</p>\n<script data-gadgetd-bindings>\nvar bindings = 1; // a '<\\/script>' in a string\n</script>\n<script>use()</script>\n"
	if b.UIHTML != want {
		t.Fatalf("the bundle's UI:\n%s\nwant:\n%s", b.UIHTML, want)
	}

	delete(files, "pb/counter.capnp.js")
	_, err = blueprint.Load(writeDir(t, files))
	requireErr(t, err, "ui.html asks for the JavaScript bindings of pb/counter.capnp, but pb/counter.capnp.js is missing (run `gadgetd blueprint build")
}
