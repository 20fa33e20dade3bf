//go:build linux

package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/compilebomb"
)

// workerArg, as the first argument of this test binary, makes it the compile
// worker, as `gadgetd internal-compile-worker` makes the real binary. It is
// checked in init, before the testing package parses any flag.
const workerArg = "wasmhost-test-compile-worker"

func init() {
	if len(os.Args) > 1 && os.Args[1] == workerArg {
		os.Exit(RunCompileWorker(os.Args[2:]))
	}
}

// testWorker configures this test binary as the compile worker.
func testWorker(t testing.TB) Option {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return WithCompileWorker(exe, workerArg)
}

func newWorkerRuntime(t testing.TB, opts ...Option) *Runtime {
	t.Helper()
	opts = append([]Option{WithCompilationCacheDir(t.TempDir()), testWorker(t)}, opts...)
	rt, err := New(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

// cacheEntries lists the files of a compilation cache with their inodes.
func cacheEntries(t *testing.T, dir string) map[string]uint64 {
	t.Helper()
	entries := map[string]uint64{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		entries[path] = info.Sys().(*syscall.Stat_t).Ino
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// The guest is the hand-written WAT one: wazero keys an entry by the
// module's bytes and the runtime's config, never by its size, and a Go guest
// took the worker (race-instrumented, at a lowered priority) minutes beside
// other tests.
func TestCompileWorkerFillsTheCacheTheRuntimeLoadsFrom(t *testing.T) {
	ctx := context.Background()
	wasm := watGuest(t)
	dir := t.TempDir()
	rt := newWorkerRuntime(t, WithCompilationCacheDir(dir))

	start := time.Now()
	if err := rt.compileInWorker(ctx, wasm); err != nil {
		t.Fatal(err)
	}
	t.Logf("the worker compiled the WAT guest (%d bytes) in %v", len(wasm), time.Since(start))
	filled := cacheEntries(t, dir)
	if len(filled) != 1 {
		t.Fatalf("the worker left %d files in the cache, want 1: %v", len(filled), filled)
	}

	// A miss would compile again and add an entry: a new file under another
	// key, or a new inode under the same one (wazero writes a temporary file
	// and renames it).
	start = time.Now()
	cm, err := rt.wz.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	cm.Close(ctx)
	t.Logf("the runtime then loaded it in %v", time.Since(start))
	if got := cacheEntries(t, dir); fmt.Sprint(got) != fmt.Sprint(filled) {
		t.Fatalf("the runtime's compile missed the worker's entry: cache %v, the worker left %v", got, filled)
	}

	// The key does not depend on the memory limit either: another
	// Runtime, with another limit, hits the same entry.
	other := newWorkerRuntime(t, WithCompilationCacheDir(dir), WithMemoryLimit(16<<20))
	cm, err = other.wz.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	cm.Close(ctx)
	if got := cacheEntries(t, dir); fmt.Sprint(got) != fmt.Sprint(filled) {
		t.Fatalf("a Runtime with another memory limit missed the entry: cache %v, the worker left %v", got, filled)
	}

	// And Compile, the whole path, gives a working module.
	mod, err := rt.Compile(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	mod.Close(ctx)
}

// A worker whose cache entries the Runtime would not find (another wazero
// version: the binary was replaced under a running server) fails the
// compile rather than leave it to the Runtime, unbounded.
func TestCompileWorkerOfAnotherWazeroVersionIsRefused(t *testing.T) {
	// A stand-in that reads the module and reports another version.
	rt := newWorkerRuntime(t, WithCompileWorker("/bin/sh", "-c", "cat >/dev/null; echo v0.0.0-other", "sh"))
	_, err := rt.Compile(context.Background(), compilebomb.NestedBlocks(1, 10))
	if err == nil || !strings.Contains(err.Error(), `runs wazero "v0.0.0-other", this process "`) {
		t.Fatalf("Compile with a worker of another wazero version: %v", err)
	}
}

func TestCompileBombIsKilledAtItsCPUBudget(t *testing.T) {
	ctx := context.Background()
	rt := newWorkerRuntime(t, WithCompileLimits(time.Second, 0))
	bomb := compilebomb.NestedBlocks(2000, 1000)

	start := time.Now()
	_, err := rt.Compile(ctx, bomb)
	if err == nil || err.Error() != "compiling the module exceeded its budget of 1s of CPU time" {
		t.Fatalf("compiling a %d-byte bomb with a budget of 1 s of CPU: %v", len(bomb), err)
	}
	t.Logf("refused after %v: %v", time.Since(start), err)

	// The Runtime goes on compiling: a small module of the same shape.
	mod, err := rt.Compile(ctx, compilebomb.NestedBlocks(1, 10))
	if err == nil || !strings.Contains(err.Error(), `guest does not export its memory as "memory"`) {
		t.Fatalf("a small module after the bomb: %v, want it compiled and then refused for its exports", err)
	}
	_ = mod
}

// withoutLocalsLimit lets the locals bomb past the static check, which
// refuses it, to the worker, which is what bounds the bombs a static check
// cannot foresee.
var withoutLocalsLimit = WithModuleLimits(ModuleLimits{Locals: 1 << 30})

func TestMemoryBombCompileIsRefusedAtItsMemoryBudget(t *testing.T) {
	ctx := context.Background()
	rt := newWorkerRuntime(t, WithCompileLimits(time.Minute, 512<<20), withoutLocalsLimit)
	_, err := rt.Compile(ctx, compilebomb.Locals(100_000_000))
	if err == nil || err.Error() != "compiling the module exceeded its budget of 512 MiB of memory" {
		t.Fatalf("compiling a locals bomb with a budget of 512 MiB: %v", err)
	}
	_, err = rt.Compile(ctx, compilebomb.NestedBlocks(1, 10))
	if err == nil || !strings.Contains(err.Error(), `guest does not export its memory as "memory"`) {
		t.Fatalf("a small module after the bomb: %v, want it compiled and then refused for its exports", err)
	}
}

// serverUnderLimitEnv makes this test binary, started by
// TestServerUnderAnAddressSpaceLimitSurvivesAMemoryBomb, play the server.
const serverUnderLimitEnv = "GADGETD_TEST_SERVER_UNDER_ADDRESS_SPACE_LIMIT"

// The server process itself runs under an address-space limit that the bomb
// would blow in-process: it survives because the bomb is compiled elsewhere.
func TestServerUnderAnAddressSpaceLimitSurvivesAMemoryBomb(t *testing.T) {
	if os.Getenv(serverUnderLimitEnv) != "" {
		playServerUnderAddressSpaceLimit(t)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestServerUnderAnAddressSpaceLimitSurvivesAMemoryBomb$", "-test.v")
	cmd.Env = append(os.Environ(), serverUnderLimitEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "server survived") {
		t.Fatalf("the server under an address-space limit: %v\n%s", err, out)
	}
}

// playServerUnderAddressSpaceLimit limits this process to 1 GiB of address
// space on top of what it has mapped, then has its Runtime compile a bomb
// whose decoder alone wants 800 MB.
func playServerUnderAddressSpaceLimit(t *testing.T) {
	mapped, err := mappedBytes()
	if err != nil {
		t.Fatal(err)
	}
	// Soft only: the worker, started from here, sets its own within it.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = mapped + 1<<30
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt := newWorkerRuntime(t, WithCompileLimits(time.Minute, 512<<20), withoutLocalsLimit)
	for i := range 3 {
		_, err := rt.Compile(ctx, compilebomb.Locals(100_000_000))
		if err == nil || !strings.Contains(err.Error(), "exceeded its budget of 512 MiB of memory") {
			t.Fatalf("bomb %d: %v", i, err)
		}
	}
	_, err = rt.Compile(ctx, compilebomb.NestedBlocks(1, 10))
	if err == nil || !strings.Contains(err.Error(), `guest does not export its memory as "memory"`) {
		t.Fatalf("a small module after the bombs: %v, want it compiled and then refused for its exports", err)
	}
	fmt.Println("server survived")
}

func TestCancellingACompileKillsItsWorker(t *testing.T) {
	rt := newWorkerRuntime(t, WithCompileLimits(10*time.Minute, 0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := rt.Compile(ctx, compilebomb.NestedBlocks(1000, 4000))
		errc <- err
	}()
	pid := waitForWorker(t)
	cancel()
	err := receive(t, errc)
	if err == nil || err.Error() != "compiling the module was cancelled: context canceled" {
		t.Fatalf("Compile after its context was cancelled: %v", err)
	}
	if workerAlive(pid) {
		t.Fatalf("the worker (pid %d) is still running after its compile was cancelled", pid)
	}
}

func TestCloseDuringACompileKillsTheWorkerAndDoesNotPanic(t *testing.T) {
	rt, err := New(context.Background(), WithCompilationCacheDir(t.TempDir()), testWorker(t), WithCompileLimits(10*time.Minute, 0))
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := rt.Compile(context.Background(), compilebomb.NestedBlocks(1000, 4000))
		errc <- err
	}()
	pid := waitForWorker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rt.Close(ctx); err != nil {
		t.Fatalf("Close during a compile: %v", err)
	}
	if err := receive(t, errc); err == nil || err.Error() != "compiling the module was cancelled: the sandbox runtime is shutting down" {
		t.Fatalf("the compile Close interrupted: %v", err)
	}
	if workerAlive(pid) {
		t.Fatalf("the worker (pid %d) is still running after Close", pid)
	}
	if _, err := rt.Compile(context.Background(), compilebomb.NestedBlocks(1, 10)); !errors.Is(err, errRuntimeClosing) {
		t.Fatalf("Compile after Close: %v", err)
	}
}

// Without a worker a compile cannot be interrupted: Close waits for it,
// where it used to close wazero's runtime under it, which panicked.
func TestCloseDuringAnInProcessCompileWaitsForIt(t *testing.T) {
	rt, err := New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bomb := compilebomb.NestedBlocks(300, 1000) // about a second, 10 under -race
	errc := make(chan error, 1)
	go func() {
		_, err := rt.Compile(context.Background(), bomb)
		errc <- err
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		rt.compiles.mu.Lock()
		n := rt.compiles.inFlight
		rt.compiles.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Compile did not start within 30 s")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := rt.Close(ctx); err != nil {
		t.Fatalf("Close during an in-process compile: %v", err)
	}
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "guest does not export its memory") {
		t.Fatalf("the compile that Close waited for: %v, want it compiled and refused for its exports", err)
	}
}

// receive is the error on errc, which must come well before the minutes
// the bombs here take to compile.
func receive(t *testing.T, errc <-chan error) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Compile did not return within 30 s")
		return nil
	}
}

// waitForWorker returns the pid of this process's compile worker once it
// runs.
func waitForWorker(t *testing.T) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if pids := workerPIDs(); len(pids) > 0 {
			return pids[0]
		}
	}
	t.Fatal("no compile worker started within 30 s")
	return 0
}

// workerPIDs lists the compile workers this process started that are
// running.
func workerPIDs() []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		pid, _ := strconv.Atoi(filepath.Base(p))
		if workerAlive(pid) && parentPID(pid) == os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// workerAlive reports whether pid is a compile worker of this test binary
// that has not exited (a zombie has exited).
func workerAlive(pid int) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(string(cmdline), workerArg) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

func parentPID(pid int) int {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}
