package syncgen_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gadgetd/gadgetd/internal/syncgen"
)

// compile runs the capnp compiler on testdata/name with capnpc-go, as
// make schema does, and returns the request and capnpc-go's code.
func compile(t *testing.T, name string) (req, bindings []byte) {
	t.Helper()
	for _, tool := range []string{"capnp", "capnpc-go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH (scripts/deps.sh): %v", tool, err)
		}
	}
	std, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "capnproto.org/go/capnp/v3").Output()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cmd := exec.Command("capnp", "compile", "-I"+filepath.Join(strings.TrimSpace(string(std)), "std"), "-I../..",
		"-ogo:"+out, "-o-", "--src-prefix=testdata", "testdata/"+name)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if req, err = cmd.Output(); err != nil {
		t.Fatalf("capnp compile: %v\n%s", err, stderr.Bytes())
	}
	if bindings, err = os.ReadFile(filepath.Join(out, name+".go")); err != nil {
		t.Fatal(err)
	}
	return req, bindings
}

// TestStubsUseCapnpcGosNames: every stub is a method of a client type
// capnpc-go declared and takes and returns parameter and result types it
// declared (or schema's, for an inherited method), for nested, renamed,
// explicit-struct and inherited methods; streaming and generic methods get
// none.
func TestStubsUseCapnpcGosNames(t *testing.T) {
	req, bindings := compile(t, "stubs.capnp")
	files, err := syncgen.Generate(req)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Name != "stubs.capnp.sync.go" {
		t.Fatalf("generated %d files (%v), want stubs.capnp.sync.go", len(files), files)
	}
	code := string(files[0].Code)
	if !strings.HasPrefix(code, "// Code generated ") || !strings.Contains(code, "DO NOT EDIT.") {
		t.Error("the file is not marked as generated")
	}

	declared := declaredTypes(t, bindings)
	schemaCode, err := os.ReadFile("../../schema/gatekeeper.capnp.go")
	if err != nil {
		t.Fatal(err)
	}
	for name := range declaredTypes(t, schemaCode) {
		declared["schema."+name] = true
	}

	f, err := parser.ParseFile(token.NewFileSet(), "stubs.capnp.sync.go", files[0].Code, 0)
	if err != nil {
		t.Fatalf("the generated code does not parse: %v", err)
	}
	var stubs []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil {
			continue
		}
		recv := exprString(fn.Recv.List[0].Type)
		stubs = append(stubs, recv+"."+fn.Name.Name)
		params := fn.Type.Params.List[1].Type.(*ast.FuncType).Params.List[0].Type
		results := fn.Type.Results.List[0].Type
		for _, typ := range []string{recv, exprString(params), exprString(results)} {
			if !declared[typ] {
				t.Errorf("%s.%s uses %s, which capnpc-go did not declare", recv, fn.Name.Name, typ)
			}
		}
	}
	slices.Sort(stubs)
	want := []string{"Child.DescribeSync", "Child.ExtraSync", "Outer.FetchSync", "Outer.OtherNameSync", "Outer.PingSync", "Outer_Box_Inner.GetSync"}
	if !slices.Equal(stubs, want) {
		t.Errorf("stubs %v, want %v", stubs, want)
	}
	for _, want := range []string{
		"InterfaceID:   0x94841423a66a6f08,",                          // Gatekeeper's, for the inherited describe
		`InterfaceName: "schema/gatekeeper.capnp:Gatekeeper",`,        // as capnpc-go names it
		`s.ArgsSize = capnp.ObjectSize{DataSize: 8, PointerCount: 0}`, // ping's n :UInt32
		`MethodName:    "renamed",`,
	} {
		if !strings.Contains(code, want) {
			t.Errorf("the code lacks %s", want)
		}
	}
}

func TestAStubThatWouldClashIsRefused(t *testing.T) {
	req, _ := compile(t, "clash.capnp")
	_, err := syncgen.Generate(req)
	if err == nil || !strings.Contains(err.Error(), "Clash.GetSync would clash") {
		t.Fatalf("Generate = %v, want the clash named", err)
	}
}

func TestGarbageIsAnError(t *testing.T) {
	if _, err := syncgen.Generate([]byte("not a capnp message")); err == nil {
		t.Fatal("Generate accepted garbage")
	}
}

// declaredTypes returns the names of the types code declares.
func declaredTypes(t *testing.T, code []byte) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "", code, 0)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
			for _, s := range g.Specs {
				names[s.(*ast.TypeSpec).Name.Name] = true
			}
		}
	}
	return names
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	}
	return "?"
}
