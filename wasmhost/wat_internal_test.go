package wasmhost

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// assembleWAT assembles WebAssembly text with wabt's wat2wasm (Debian
// package wabt; scripts/deps.sh installs it, and CI must have it: a missing
// tool fails the test rather than skipping it).
func assembleWAT(t testing.TB, src string) []byte {
	t.Helper()
	tool, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Fatalf("wat2wasm is not installed: install the Debian package wabt (scripts/deps.sh does) (%v)", err)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "m.wat"), filepath.Join(dir, "m.wasm")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(tool, in, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// watGuest is internal/testguests/watguest/guest.wat assembled: a whole
// guest written by hand, no Go runtime inside, so it compiles in a fraction
// of the time a Go guest takes (a second against minutes for the worker
// under -race on a busy machine).
func watGuest(t testing.TB) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("internal", "testguests", "watguest", "guest.wat"))
	if err != nil {
		t.Fatal(err)
	}
	return assembleWAT(t, string(src))
}
