package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/compilebomb"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// workerArg, as the first argument of this test binary, makes it the compile
// worker, as `gadgetd internal-compile-worker` makes the real binary. It is
// checked in init, before the testing package parses any flag.
const workerArg = "server-test-compile-worker"

func init() {
	if len(os.Args) > 1 && os.Args[1] == workerArg {
		os.Exit(wasmhost.RunCompileWorker(os.Args[2:]))
	}
}

// startWithCompileWorker starts a server that compiles in this test binary
// started as the worker, with a CPU budget of cpu. The counter example it
// installs is compiled first in-process, into the shared cache, so the
// worker only loads it, however small cpu is.
func startWithCompileWorker(t testing.TB, cpu time.Duration, opts ...server.Option) *harness {
	start(t, t.TempDir()).stop()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts = append(opts, server.WithWasmOptions(wasmhost.WithCompileWorker(exe, workerArg), wasmhost.WithCompileLimits(cpu, 0)))
	return start(t, t.TempDir(), opts...)
}

// loginResolved logs in and waits for the login to complete: until it has,
// the transport refuses messages as large as a blueprint.
func loginResolved(t testing.TB, h *harness, user string) schema.Workspace {
	t.Helper()
	ws := h.login(t, h.token(user))
	if err := capnp.Client(ws).Resolve(testCtx(t)); err != nil {
		t.Fatalf("login of %s: %v", user, err)
	}
	return ws
}

// bombBundle is the counter bundle with a compile bomb for its wasm.
func bombBundle(t testing.TB, name string) blueprint.Bundle {
	b := *blueprinttest.Bundle(t, blueprinttest.TestCounter)
	b.Name = name
	b.Wasm = compilebomb.NestedBlocks(2000, 1000)
	return b
}

// workers counts the compile workers of this process that are running.
func workers() int {
	n := 0
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cmdline, err := os.ReadFile(p + "/cmdline")
		if err != nil || !strings.Contains(string(cmdline), workerArg) {
			continue
		}
		stat, err := os.ReadFile(p + "/stat")
		if err != nil {
			continue
		}
		// Fields after "(comm)": state, ppid.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(os.Getpid()) {
			n++
		}
	}
	return n
}

// sampleWorkers records the most compile workers running at once until the
// returned function is called, which returns it.
func sampleWorkers() (stop func() int) {
	var peak atomic.Int64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			if n := int64(workers()); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() int {
		close(done)
		<-stopped
		return int(peak.Load())
	}
}

func TestCompileBombInstallsQueueBehindTheirUsersShareWhileOthersAreServed(t *testing.T) {
	const bombs = 10
	// An upload stays open until its install is done, and a user may have
	// two open by default: let all ten in, to see them queue.
	// Ten compiles one after another can take minutes on a busy machine:
	// this test is about turns, not about the install timeout.
	h := startWithCompileWorker(t, time.Second, server.WithUploadLimits(bombs+1, 0), server.WithInstallTimeout(time.Hour))
	alice := loginResolved(t, h, "alice")
	bob := loginResolved(t, h, "bob")
	peak := sampleWorkers()

	// Alice sends ten bombs at once.
	var pending atomic.Int64
	pending.Store(bombs)
	errs := make(chan error, bombs)
	for i := range bombs {
		go func() {
			err := install(t, alice, bombBundle(t, fmt.Sprintf("bomb-%d", i)))
			pending.Add(-1)
			errs <- err
		}()
	}

	// Once all ten have arrived, one compiles (alice's share) and nine wait,
	// though the server has a second slot.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		running, waiting := h.srv.InstallsQueued()
		if running+waiting+bombs-int(pending.Load()) == bombs {
			if running != 1 {
				t.Fatalf("%d of alice's installs compile at once, want 1 (her share)", running)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice's installs did not all arrive within 30 s: %d compile, %d wait, %d done", running, waiting, bombs-pending.Load())
		}
	}

	// Bob installs and uses a real blueprint meanwhile, in the second slot.
	good := *blueprinttest.Bundle(t, blueprinttest.TestCounter)
	good.Name = "bobs-counter"
	if err := install(t, bob, good); err != nil {
		t.Fatalf("bob's install while alice's bombs compile: %v", err)
	}
	if n := pending.Load(); n == 0 {
		t.Fatalf("bob's install waited for all %d of alice's bombs", bombs)
	} else {
		t.Logf("bob's install was done with %d of alice's bombs still pending", n)
	}
	g, _ := create(t, bob, "bobs-counter")
	f, release := session(t, g).Increment(testCtx(t), nil)
	defer release()
	if res, err := f.Struct(); err != nil || res.Value() != 1 {
		t.Fatalf("bob's gadget while alice's bombs compile: %v", err)
	}

	for range bombs {
		err := <-errs
		requireErrorContains(t, err, "compiling the module exceeded its budget of 1s of CPU time")
	}
	// Alice's share is one compile, bob's install the one other.
	if n := peak(); n > 2 {
		t.Fatalf("%d compile workers ran at once, want at most 2 (one of alice's, one of bob's)", n)
	}
}

// Queued bombs used to wait their turn without bound: ten bombs of 30 s of
// CPU each, compiling one at a time, refused the last minutes later. The
// install timeout covers the wait and the compile, so each bomb ends within
// it, with an error that says which bound it met.
func TestEveryQueuedCompileBombEndsWithAClearRefusalWithinTheInstallTimeout(t *testing.T) {
	const bombs = 10
	const timeout = 3 * time.Second
	// Alice compiles one at a time, and each bomb costs at least its 1 s of
	// CPU: ten cannot all compile within 3 s, so the timeout must end some.
	h := startWithCompileWorker(t, time.Second, server.WithUploadLimits(bombs+1, 0), server.WithInstallTimeout(timeout))
	alice := loginResolved(t, h, "alice")

	errs := make(chan error, bombs)
	for i := range bombs {
		go func() { errs <- install(t, alice, bombBundle(t, fmt.Sprintf("bomb-%d", i))) }()
	}
	var atBudget, waitedOut, cancelledMidCompile int
	for range bombs {
		switch err := <-errs; {
		case err == nil:
			t.Fatal("a compile bomb was installed")
		case strings.Contains(err.Error(), "compiling the module exceeded its budget of 1s of CPU time"):
			atBudget++
		case strings.Contains(err.Error(), "no turn to compile within the install timeout of 3s"):
			if exc.TypeOf(err) != exc.Overloaded {
				t.Errorf("an install that found no turn: a %v exception, want overloaded", exc.TypeOf(err))
			}
			waitedOut++
		case strings.Contains(err.Error(), "compiling the module was cancelled: the install did not finish within its timeout of 3s"):
			cancelledMidCompile++
		default:
			t.Errorf("a compile bomb ended with %v, want a refusal naming its CPU budget or the install timeout", err)
		}
	}
	t.Logf("%d bombs refused at their CPU budget, %d found no turn within the timeout, %d were cancelled mid-compile", atBudget, waitedOut, cancelledMidCompile)
	if waitedOut+cancelledMidCompile == 0 {
		t.Fatalf("all %d bombs compiled to their CPU budget one after another: the install timeout ended none", bombs)
	}
	if n := workers(); n != 0 {
		t.Fatalf("%d compile workers still run after every install ended", n)
	}
	if running, waiting := h.srv.InstallsQueued(); running+waiting != 0 {
		t.Fatalf("after every install ended, %d compile and %d wait", running, waiting)
	}
}

// Closing the server while an install compiles used to close wazero's
// runtime under the compile, which panicked. Now the compile is cancelled,
// its worker killed, and Close returns.
func TestServerCloseDuringAnInstallCancelsTheCompile(t *testing.T) {
	h := startWithCompileWorker(t, 10*time.Minute)
	alice := loginResolved(t, h, "alice")
	errc := make(chan error, 1)
	go func() {
		b := bombBundle(t, "bomb")
		b.Wasm = compilebomb.NestedBlocks(1000, 4000)
		errc <- install(t, alice, b)
	}()
	for deadline := time.Now().Add(30 * time.Second); workers() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no compile worker started within 30 s")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.srv.Close(ctx); err != nil {
		t.Fatalf("Close during an install: %v", err)
	}
	if err := <-errc; err == nil {
		t.Fatal("the install that Close interrupted succeeded")
	}
	if n := workers(); n != 0 {
		t.Fatalf("%d compile workers still run after Close", n)
	}
}

// Without a compile worker a compile cannot be interrupted: Close waits for
// it, where it used to close wazero's runtime under it, which panicked.
// (Installs over RPC end before Close gets to the runtime: closing the
// connections waits for their calls. InstallBuiltin does not.)
func TestServerCloseDuringAnInProcessInstallDoesNotPanic(t *testing.T) {
	h := start(t, t.TempDir())
	errc := make(chan error, 1)
	go func() {
		b := bombBundle(t, "bomb")
		// About a second to compile, 10 under -race: Close comes within
		// milliseconds of the compile's start.
		b.Wasm = compilebomb.NestedBlocks(300, 1000)
		_, err := h.srv.InstallBuiltin(context.Background(), &b)
		errc <- err
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if running, _ := h.srv.InstallsQueued(); running == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the install did not start compiling within 30 s")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := h.srv.Close(ctx); err != nil {
		t.Fatalf("Close during an in-process compile: %v", err)
	}
	if err := <-errc; err == nil {
		t.Fatal("the install that Close interrupted succeeded")
	}
}

// A client that gives up on its install (here, by hanging up) ends the
// compile: the worker is killed, not left to spend its budget.
func TestAbandonedInstallKillsItsCompileWorker(t *testing.T) {
	h := startWithCompileWorker(t, 10*time.Minute)
	conn := dial(t, h.addr)
	alice, release := conn.Login(context.Background(), h.token("alice"))
	defer release()
	if err := capnp.Client(alice).Resolve(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b := bombBundle(t, "bomb")
		b.Wasm = compilebomb.NestedBlocks(1000, 4000)
		install(t, alice, b)
	}()
	for deadline := time.Now().Add(30 * time.Second); workers() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no compile worker started within 30 s")
		}
	}
	conn.Close()
	wg.Wait()
	for deadline := time.Now().Add(30 * time.Second); workers() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the compile worker still runs 30 s after its client hung up")
		}
	}
}
