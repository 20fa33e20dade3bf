package wasmhost_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gadgetd/gadgetd/wasmhost"
)

// A Trusted module (a builtin the operator ships) is compiled in process;
// every other module goes through the compile worker. Here the worker is a
// program that does not exist, so only the trusted compile can succeed.
func TestOnlyTrustedModulesSkipTheCompileWorker(t *testing.T) {
	ctx := context.Background()
	rt, err := wasmhost.New(ctx,
		wasmhost.WithCompilationCacheDir(t.TempDir()),
		wasmhost.WithCompileWorker(filepath.Join(t.TempDir(), "no-such-worker")))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	wasm := buildWATGuest(t)
	if m, err := rt.Compile(ctx, wasm); err == nil {
		m.Close(ctx)
		t.Fatal("an untrusted module compiled without its worker")
	}
	m, err := rt.Compile(ctx, wasm, wasmhost.Trusted())
	if err != nil {
		t.Fatalf("a trusted module: %v", err)
	}
	m.Close(ctx)
}
