package toolchain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"capnproto.org/go/capnp/v3"
	capschema "capnproto.org/go/capnp/v3/std/capnp/schema"
	gocapnp "capnproto.org/go/capnp/v3/std/go"

	"github.com/gadgetd/gadgetd/internal/syncgen"
)

// GenerateBindings regenerates the Go code of the schema file (relative to
// dir) next to it, as `make schema` does in the gadgetd repository, and
// returns the bindings' import path. nodes is the file compiled by
// CompileSchema.
//
// The file's $Go.import must name the package of the file's own directory:
// otherwise the guest would import code generated from some other schema
// (the case of a copied example, whose $Go.import still names the
// original), and an edit to this schema would silently change nothing.
func GenerateBindings(ctx context.Context, dir, file string, nodes []byte) (string, error) {
	goPkg, goImport, err := goAnnotations(nodes)
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	schemaDir := filepath.Dir(file)
	listed, err := goCmd(ctx, dir, nil, "list", "-e", "-f", "{{.ImportPath}}", "./"+filepath.ToSlash(schemaDir))
	if err != nil {
		return "", fmt.Errorf("finding the Go package of %s (is the blueprint a Go module? `gadgetd blueprint new` makes one): %w", file, err)
	}
	if dirPkg := strings.TrimSpace(listed); dirPkg != goImport {
		return "", fmt.Errorf("%s: $Go.import is %q, but the Go package in that file's directory is %q: "+
			"the bindings are generated there, so the guest would be built against another schema's code. "+
			"Write $Go.import(%q); if the file was copied from another blueprint, also give it a fresh id (capnp id)",
			file, goImport, dirPkg, dirPkg)
	}
	plugin, err := findPlugin(ctx, dir)
	if err != nil {
		return "", err
	}
	std, err := goCapnpStd(ctx, dir)
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "gadgetd-bindings-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	// --src-prefix as in scripts/schema.sh, so the names compiled into the
	// code do not depend on where the blueprint is. -o- hands the same
	// request to syncgen, which make schema runs as capnpc-gadget.
	var req bytes.Buffer
	if err := runCapnp(ctx, dir, &req, "compile", "-I"+std, "-o"+plugin+":"+tmp, "-o-", "--src-prefix="+schemaDir, file); err != nil {
		return "", fmt.Errorf("generating the Go bindings of %s: %w", filepath.Join(dir, file), err)
	}
	name := filepath.Base(file) + ".go"
	code, err := os.ReadFile(filepath.Join(tmp, name))
	if err != nil {
		return "", fmt.Errorf("generating the Go bindings of %s: capnpc-go wrote no %s: %w", file, name, err)
	}
	if !bytes.Contains(code, []byte("package "+goPkg+"\n")) {
		return "", fmt.Errorf("generating the Go bindings of %s: the generated code is not package %s", file, goPkg)
	}
	if err := writeIfChanged(filepath.Join(dir, schemaDir, name), code); err != nil {
		return "", err
	}
	return goImport, writeStubs(filepath.Join(dir, schemaDir, name[:len(name)-len(".go")]+syncgen.FileSuffix), req.Bytes())
}

// writeStubs writes the synchronous client stubs (internal/syncgen) of the
// compiled schema req at path, or removes path if the schema has no
// interface to stub.
func writeStubs(path string, req []byte) error {
	stubs, err := syncgen.Generate(req)
	if err != nil {
		return fmt.Errorf("generating the synchronous stubs of %s: %w", path, err)
	}
	if len(stubs) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return writeIfChanged(path, stubs[0].Code)
}

// findPlugin returns the path of capnpc-go, the capnp compiler's Go plugin:
// on PATH, or where go install puts it ($(go env GOBIN), else
// $(go env GOPATH)/bin), which is often not on PATH.
func findPlugin(ctx context.Context, dir string) (string, error) {
	const name = "capnpc-go"
	if p, err := exec.LookPath(name); err == nil {
		return filepath.Abs(p)
	}
	env, err := goCmd(ctx, dir, nil, "env", "GOBIN", "GOPATH")
	if err == nil {
		gobin, gopath, _ := strings.Cut(strings.TrimRight(env, "\n"), "\n")
		if gobin == "" {
			gobin = filepath.Join(gopath, "bin")
		}
		p := filepath.Join(gobin, name)
		if _, err := exec.LookPath(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("capnpc-go, the Go plugin of the capnp compiler, is neither on PATH nor in $(go env GOPATH)/bin " +
		"(go install capnproto.org/go/capnp/v3/capnpc-go@VERSION, with the go-capnp version of the blueprint's go.mod; in a gadgetd checkout, make deps)")
}

// goAnnotations returns the $Go.package and $Go.import of the file a
// CodeGeneratorRequest was made for.
func goAnnotations(nodes []byte) (pkg, imp string, err error) {
	msg, err := capnp.Unmarshal(nodes)
	if err != nil {
		return "", "", err
	}
	req, err := capschema.ReadRootCodeGeneratorRequest(msg)
	if err != nil {
		return "", "", err
	}
	files, err := req.RequestedFiles()
	if err != nil || files.Len() != 1 {
		return "", "", fmt.Errorf("expected one compiled file (%v)", err)
	}
	fileID := files.At(0).Id()
	list, err := req.Nodes()
	if err != nil {
		return "", "", err
	}
	for i := 0; i < list.Len(); i++ {
		n := list.At(i)
		if n.Id() != fileID {
			continue
		}
		anns, err := n.Annotations()
		if err != nil {
			return "", "", err
		}
		for j := 0; j < anns.Len(); j++ {
			a := anns.At(j)
			v, err := a.Value()
			if err != nil {
				return "", "", err
			}
			text, _ := v.Text()
			switch a.Id() {
			case gocapnp.Package:
				pkg = text
			case gocapnp.Import:
				imp = text
			}
		}
	}
	if pkg == "" || imp == "" {
		return "", "", errors.New(`the schema needs $Go.package and $Go.import annotations (using Go = import "/go.capnp"; $Go.package("mypb"); $Go.import("example.com/me/mygadget/mypb");)`)
	}
	return pkg, imp, nil
}

// checkGuestImports reports whether the guest package in dir imports the
// bindings, directly or not: a guest that does not cannot serve its
// session interface with this schema's code.
func checkGuestImports(ctx context.Context, dir, bindings string) error {
	deps, err := goCmd(ctx, dir, []string{"GOOS=wasip1", "GOARCH=wasm"}, "list", "-e", "-deps", "-f", "{{.ImportPath}}", ".")
	if err != nil {
		return err
	}
	for _, p := range strings.Fields(deps) {
		if p == bindings {
			return nil
		}
	}
	return fmt.Errorf("the guest in %s does not import %s, the Go bindings generated from its session schema: "+
		"it would serve code generated from another schema (was it copied from another blueprint? import %q)", dir, bindings, bindings)
}

// writeIfChanged replaces path with data unless it already holds exactly
// that, atomically, so a concurrent reader sees the old file or the new.
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".bindings-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
