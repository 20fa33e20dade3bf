// Package wasmbuild compiles Go gadget guests to WebAssembly. It is the one
// place that knows the build command, shared by `gadgetd blueprint build` and
// by tests that need a real guest module.
package wasmbuild

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Build compiles the Go package in dir (a directory or an import path
// resolvable from dir's module) into a wasip1 reactor at out.
func Build(ctx context.Context, dir, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-buildmode=c-shared", "-trimpath", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the guest %s in %s: %v\n%s", pkg, dir, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// TB is the part of testing.TB that ForTest uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

var cache struct {
	sync.Mutex
	dir  string
	wasm map[string][]byte
}

// ForTest builds the package with the given import path once per test
// binary and returns the module bytes.
func ForTest(t TB, pkg string) []byte {
	t.Helper()
	cache.Lock()
	defer cache.Unlock()
	if b, ok := cache.wasm[pkg]; ok {
		return b
	}
	if cache.dir == "" {
		dir, err := os.MkdirTemp("", "gadgetd-wasm-")
		if err != nil {
			t.Fatalf("wasmbuild: %v", err)
		}
		cache.dir = dir
		cache.wasm = map[string][]byte{}
	}
	out := filepath.Join(cache.dir, strings.ReplaceAll(pkg, "/", "_")+".wasm")
	if err := Build(context.Background(), ".", pkg, out); err != nil {
		t.Fatalf("wasmbuild: %v", err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("wasmbuild: %v", err)
	}
	cache.wasm[pkg] = b
	return b
}

// RemoveAll deletes what ForTest built. Call it from TestMain after m.Run.
func RemoveAll() {
	cache.Lock()
	defer cache.Unlock()
	if cache.dir != "" {
		os.RemoveAll(cache.dir)
		cache.dir, cache.wasm = "", nil
	}
}
