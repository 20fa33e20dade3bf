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

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/wasmbuild"
)

// Build compiles the blueprint in dir in place: it regenerates the Go
// bindings of its schema and, with node, its JavaScript bindings (beside
// the schema, for blueprint.Load to inline in the UI: jsbindings.go), then
// writes dir/gadget.wasm and dir/schema.bin.
func Build(ctx context.Context, dir string) error {
	return BuildInto(ctx, dir, dir)
}

// BuildInto is Build writing a loadable copy of the blueprint to out:
// gadget.wasm, schema.bin, the manifest, the UI and the schema source (at
// the same relative paths). out may equal dir. The regenerated bindings are
// written in dir, next to the schema they come from, and only when they
// change, so concurrent builds of one directory do not disturb each other.
func BuildInto(ctx context.Context, dir, out string) error {
	m, err := blueprint.ReadManifest(dir)
	if err != nil {
		return err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	nodes, err := CompileSchema(ctx, dir, m.Schema)
	if err != nil {
		return err
	}
	if _, err := blueprint.ResolveInterface(nodes, m.Session); err != nil {
		return fmt.Errorf("blueprint %s: %w", dir, err)
	}
	bindings, err := GenerateBindings(ctx, dir, m.Schema, nodes)
	if err != nil {
		return err
	}
	if err := checkGuestImports(ctx, dir, bindings); err != nil {
		return err
	}
	if err := buildJSBindings(ctx, dir, m, nodes); err != nil {
		return err
	}
	if err := os.MkdirAll(absOut, 0o755); err != nil {
		return err
	}
	if err := BuildWasm(ctx, dir, filepath.Join(absOut, blueprint.WasmFile)); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(absOut, blueprint.SchemaFile), nodes, 0o644); err != nil {
		return err
	}
	if same, _ := sameDir(dir, absOut); same {
		return nil
	}
	for _, rel := range []string{blueprint.ManifestFile, m.UI, m.Schema} {
		if err := copyFile(filepath.Join(dir, rel), filepath.Join(absOut, rel)); err != nil {
			return err
		}
	}
	// The UI's JS bindings, which Load inlines, when there are any: a UI
	// that asks for missing ones fails at Load with the reason.
	js := blueprint.BindingsFile(m.Schema)
	if err := copyFile(filepath.Join(dir, js), filepath.Join(absOut, js)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// BuildWasm builds the Go package in dir as a wasip1 reactor module at out.
func BuildWasm(ctx context.Context, dir, out string) error {
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	return wasmbuild.Build(ctx, dir, ".", absOut)
}

// CompileSchema runs `capnp compile -o-` on file (relative to dir) and
// returns the serialized CodeGeneratorRequest. go.capnp resolves from the
// go-capnp module the blueprint's own module uses.
func CompileSchema(ctx context.Context, dir, file string) ([]byte, error) {
	std, err := goCapnpStd(ctx, dir)
	if err != nil {
		return nil, err
	}
	var stdout bytes.Buffer
	if err := runCapnp(ctx, dir, &stdout, "compile", "-I"+std, "-o-", file); err != nil {
		return nil, fmt.Errorf("compiling %s: %w", filepath.Join(dir, file), err)
	}
	return stdout.Bytes(), nil
}

// runCapnp runs the capnp compiler in dir, explaining a missing compiler or
// plugin rather than reporting a bare exit status.
func runCapnp(ctx context.Context, dir string, stdout *bytes.Buffer, args ...string) error {
	if _, err := exec.LookPath("capnp"); err != nil {
		return errors.New("the capnp compiler is not installed (Debian: apt-get install capnproto; or run scripts/deps.sh in a gadgetd checkout)")
	}
	cmd := exec.CommandContext(ctx, "capnp", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v\n%s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// goCapnpStd finds the directory holding go.capnp.
func goCapnpStd(ctx context.Context, dir string) (string, error) {
	out, err := goCmd(ctx, dir, nil, "list", "-m", "-f", "{{.Dir}}", "capnproto.org/go/capnp/v3")
	if err != nil {
		return "", fmt.Errorf("finding go.capnp (the blueprint's module must require capnproto.org/go/capnp/v3): %w", err)
	}
	return filepath.Join(strings.TrimSpace(out), "std"), nil
}

// goCmd runs the go command in dir and returns its standard output.
func goCmd(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return stdout.String(), nil
}

func sameDir(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}

func copyFile(from, to string) error {
	raw, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, raw, 0o644)
}

// Prepare readies a new blueprint (package scaffold's) for the Go tools:
// `go mod tidy`, then the bindings generated from its schema, so that go
// test, go vet and an editor work on it before its first build.
func Prepare(ctx context.Context, dir string) error {
	m, err := blueprint.ReadManifest(dir)
	if err != nil {
		return err
	}
	if _, err := goCmd(ctx, dir, nil, "mod", "tidy"); err != nil {
		return err
	}
	nodes, err := CompileSchema(ctx, dir, m.Schema)
	if err != nil {
		return err
	}
	_, err = GenerateBindings(ctx, dir, m.Schema, nodes)
	return err
}
