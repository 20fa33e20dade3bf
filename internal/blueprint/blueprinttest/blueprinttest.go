package blueprinttest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/toolchain"
)

// RepoRoot is the root of the gadgetd source tree.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// buildTimeout bounds one build; a first wasm build of the Go runtime is slow
// on a cold cache.
const buildTimeout = 5 * time.Minute

type result struct {
	once sync.Once
	path string
	err  error
}

var (
	mu      sync.Mutex
	builds  = map[string]*result{}
	tmpOnce sync.Once
	tmpDir  string
	tmpErr  error
)

func workDir() (string, error) {
	tmpOnce.Do(func() { tmpDir, tmpErr = os.MkdirTemp("", "gadgetd-blueprinttest-") })
	return tmpDir, tmpErr
}

// RemoveAll deletes everything this package built.
func RemoveAll() {
	mu.Lock()
	defer mu.Unlock()
	if tmpDir != "" {
		os.RemoveAll(tmpDir)
	}
}

// once runs build for key at most once per process and caches the result.
func once(key string, build func(dir string) (string, error)) (string, error) {
	mu.Lock()
	r, ok := builds[key]
	if !ok {
		r = &result{}
		builds[key] = r
	}
	mu.Unlock()
	r.once.Do(func() {
		dir, err := workDir()
		if err != nil {
			r.err = err
			return
		}
		r.path, r.err = build(filepath.Join(dir, filepath.Base(key)+"-"+hashKey(key)))
	})
	return r.path, r.err
}

func hashKey(s string) string {
	var h uint32 = 2166136261
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	const digits = "0123456789abcdef"
	out := make([]byte, 8)
	for i := range out {
		out[i] = digits[h>>(28-4*i)&0xf]
	}
	return string(out)
}

// TestCounter is the kernel's test counter blueprint (a copy of the counter
// example with a schema of its own), relative to the repository root. Core
// tests use it rather than examples/counter, so the example can change
// without breaking them.
const TestCounter = "internal/testcounter"

// Built returns a built copy of the blueprint in dir (absolute, or relative
// to the repository root), ready for blueprint.Load.
func Built(t testing.TB, dir string) string {
	t.Helper()
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(RepoRoot(), dir)
	}
	out, err := once("blueprint:"+dir, func(out string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		return out, toolchain.BuildInto(ctx, dir, out)
	})
	if err != nil {
		t.Fatalf("building blueprint %s: %v", dir, err)
	}
	return out
}

// Bundle returns the loaded bundle of the blueprint in dir (absolute, or
// relative to the repository root).
func Bundle(t testing.TB, dir string) *blueprint.Bundle {
	t.Helper()
	b, err := blueprint.Load(Built(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Example returns a built copy of examples/<name>, ready for blueprint.Load.
func Example(t testing.TB, name string) string {
	t.Helper()
	return Built(t, filepath.Join("examples", name))
}

// ExampleBundle returns the loaded bundle of examples/<name>.
func ExampleBundle(t testing.TB, name string) *blueprint.Bundle {
	t.Helper()
	return Bundle(t, filepath.Join("examples", name))
}

// Wasm builds the Go guest package in dir (absolute, or relative to the
// repository root) and returns the module bytes.
func Wasm(t testing.TB, dir string) []byte {
	t.Helper()
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(RepoRoot(), dir)
	}
	path, err := once("wasm:"+dir, func(out string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		wasm := out + ".wasm"
		return wasm, toolchain.BuildWasm(ctx, dir, wasm)
	})
	if err != nil {
		t.Fatalf("building guest %s: %v", dir, err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Schema compiles the .capnp file (relative to dir, itself absolute or
// relative to the repository root) and returns the serialized
// CodeGeneratorRequest.
func Schema(t testing.TB, dir, file string) []byte {
	t.Helper()
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(RepoRoot(), dir)
	}
	path, err := once("schema:"+filepath.Join(dir, file), func(out string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		nodes, err := toolchain.CompileSchema(ctx, dir, file)
		if err != nil {
			return "", err
		}
		bin := out + ".bin"
		return bin, os.WriteFile(bin, nodes, 0o644)
	})
	if err != nil {
		t.Fatalf("compiling schema %s: %v", file, err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
