package blueprint

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gadgetd/gadgetd/internal/wasmbuild"
)

// Build compiles the blueprint in dir in place: the guest to dir/gadget.wasm
// and the schema to dir/schema.bin. It needs the go toolchain and capnp on
// PATH.
func Build(ctx context.Context, dir string) error {
	return BuildInto(ctx, dir, dir)
}

// BuildInto compiles the blueprint in dir and writes a loadable copy to out:
// gadget.wasm, schema.bin, the manifest, the UI and the schema source (at the
// same relative paths). out may equal dir.
func BuildInto(ctx context.Context, dir, out string) error {
	m, err := ReadManifest(dir)
	if err != nil {
		return err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(absOut, 0o755); err != nil {
		return err
	}
	if err := BuildWasm(ctx, dir, filepath.Join(absOut, WasmFile)); err != nil {
		return err
	}
	nodes, err := CompileSchema(ctx, dir, m.Schema)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(absOut, SchemaFile), nodes, 0o644); err != nil {
		return err
	}
	if _, err := ResolveInterface(nodes, m.Session); err != nil {
		return fmt.Errorf("blueprint %s: %w", dir, err)
	}
	if same, _ := sameDir(dir, absOut); same {
		return nil
	}
	for _, rel := range []string{ManifestFile, m.UI, m.Schema} {
		if err := copyFile(filepath.Join(dir, rel), filepath.Join(absOut, rel)); err != nil {
			return err
		}
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
	cmd := exec.CommandContext(ctx, "capnp", "compile", "-I"+std, "-o-", file)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if _, lookErr := exec.LookPath("capnp"); lookErr != nil {
			return nil, fmt.Errorf("compiling %s: the capnp compiler is not installed (Debian: apt-get install capnproto)", file)
		}
		return nil, fmt.Errorf("compiling %s in %s: %v\n%s", file, dir, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return stdout.Bytes(), nil
}

// goCapnpStd finds the directory holding go.capnp.
func goCapnpStd(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "capnproto.org/go/capnp/v3")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("finding go.capnp (go list -m capnproto.org/go/capnp/v3 in %s): %v\n%s", dir, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return filepath.Join(strings.TrimSpace(string(out)), "std"), nil
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
