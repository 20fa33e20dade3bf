package toolchain_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/blueprint/toolchain"
)

const counterPkg = "github.com/gadgetd/gadgetd/examples/counter"

// copyCounter copies examples/counter into a new directory of this module
// (under testdata, which ./... patterns skip), as an author who starts from
// the example does, and returns its path and Go package path. edit may
// rewrite each copied file, given the copy's package path.
func copyCounter(t *testing.T, edit func(name, body, pkg string) string) (dir, pkg string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(wd, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(filepath.Join(wd, "testdata")) }) // if empty
	dir, err = os.MkdirTemp(filepath.Join(wd, "testdata"), "copy-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	pkg = "github.com/gadgetd/gadgetd/internal/blueprint/toolchain/testdata/" + filepath.Base(dir)
	src := filepath.Join(blueprinttest.RepoRoot(), "examples", "counter")
	for _, name := range []string{"blueprint.json", "main.go", "ui.html", "counterpb/counter.capnp", "counterpb/counter.capnp.go", "counterpb/doc.go"} {
		raw, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		body := string(raw)
		if edit != nil {
			body = edit(name, body, pkg)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, pkg
}

func buildCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func requireErr(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error = %v\nwant it to contain %q", err, w)
		}
	}
}

// TestCopiedExampleIsNotBuiltAgainstTheOriginalsCode: a copy of
// examples/counter whose schema still says $Go.import(".../examples/counter/
// counterpb") would be built against the original's generated code, so a
// change to the copy's schema would change nothing. The build refuses it and
// says what to write instead, and nothing is built.
func TestCopiedExampleIsNotBuiltAgainstTheOriginalsCode(t *testing.T) {
	dir, pkg := copyCounter(t, nil)
	err := toolchain.Build(buildCtx(t), dir)
	requireErr(t, err, `$Go.import is "`+counterPkg+`/counterpb"`, `Write $Go.import("`+pkg+`/counterpb")`, "fresh id")
	if _, statErr := os.Stat(filepath.Join(dir, blueprint.WasmFile)); statErr == nil {
		t.Error("a refused build wrote gadget.wasm")
	}
}

// TestGuestThatImportsAnotherSchemasBindingsIsRefused: the copy's schema is
// fixed, but its main.go still imports the original's bindings.
func TestGuestThatImportsAnotherSchemasBindingsIsRefused(t *testing.T) {
	dir, pkg := copyCounter(t, fixGoImport)
	err := toolchain.Build(buildCtx(t), dir)
	requireErr(t, err, "does not import "+pkg+"/counterpb")
}

// fixGoImport points the copied schema's $Go.import at the copy.
func fixGoImport(name, body, pkg string) string {
	if name == "counterpb/counter.capnp" {
		return strings.Replace(body, counterPkg+"/counterpb", pkg+"/counterpb", 1)
	}
	return body
}

// TestBuildRegeneratesTheBindingsFromTheSchema: once the copy is its own
// (its $Go.import and main.go name its own bindings), an edit to its schema
// reaches the generated Go code with no other step: a method added to the
// schema and not to the guest fails the build, and builds once implemented.
func TestBuildRegeneratesTheBindingsFromTheSchema(t *testing.T) {
	dir, _ := copyCounter(t, func(name, body, pkg string) string {
		body = fixGoImport(name, body, pkg)
		switch name {
		case "main.go":
			return strings.Replace(body, counterPkg+"/counterpb", pkg+"/counterpb", 1)
		case "counterpb/counter.capnp":
			body = strings.Replace(body, "@0xf7280933ea552ee6;", "@0xc5a1e0ab2d6f3e41;", 1)
			return strings.Replace(body, "interface Counter {", "interface Counter {\n  reset @3 ();", 1)
		}
		return body
	})
	requireErr(t, toolchain.Build(buildCtx(t), dir), "missing method Reset")

	reset := "\nfunc (c *counter) Reset(ctx context.Context, call counterpb.Counter_reset) error { return store(ctx, 0) }\n"
	f, err := os.OpenFile(filepath.Join(dir, "main.go"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(reset)
	f.Close()
	if err := toolchain.Build(buildCtx(t), dir); err != nil {
		t.Fatal(err)
	}
	b, err := blueprint.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.SchemaSource, "reset @3") || !strings.HasPrefix(string(b.Wasm), "\x00asm") {
		t.Error("the built blueprint lacks the edited schema or the module")
	}
	// The synchronous stubs (internal/syncgen) are regenerated too.
	stubs, err := os.ReadFile(filepath.Join(dir, "counterpb", "counter.capnp.sync.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(stubs), "func (c Counter) ResetSync(") {
		t.Error("counter.capnp.sync.go has no stub for the new method")
	}
}

// TestMissingPluginIsExplained: without capnpc-go (on PATH or in GOBIN) the
// build says what is missing and how to install it.
func TestMissingPluginIsExplained(t *testing.T) {
	dir, _ := copyCounter(t, fixGoImport)
	var path []string
	for _, tool := range []string{"go", "capnp"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		path = append(path, filepath.Dir(p))
	}
	if _, err := exec.LookPath("capnpc-go"); err == nil {
		for _, d := range path {
			if _, err := os.Stat(filepath.Join(d, "capnpc-go")); err == nil {
				t.Skipf("capnpc-go is installed beside go or capnp (%s), so it cannot be hidden", d)
			}
		}
	}
	t.Setenv("PATH", strings.Join(path, string(os.PathListSeparator)))
	t.Setenv("GOBIN", t.TempDir())
	requireErr(t, toolchain.Build(buildCtx(t), dir), "capnpc-go, the Go plugin of the capnp compiler, is neither on PATH nor in", "go install capnproto.org/go/capnp/v3/capnpc-go@")
}
