package wasmhost

// Design: compiling a module is the one thing a blueprint author controls
// that the sandbox's limits cannot bound: wazero's compiler runs in the
// caller's goroutine, ignores its context and can need minutes of CPU and
// gigabytes of memory for a few megabytes of crafted wasm. So a Runtime
// configured WithCompileWorker compiles in a child process under hard
// rlimits, and loads the result from the compilation cache both share.
//
//   - The child (RunCompileWorker) sets its own RLIMIT_CPU and RLIMIT_AS as
//     the first thing it does, before it reads a byte of the module from
//     stdin, so there is no window in which untrusted input runs unbounded.
//     It builds its wazero runtime with the same wazeroConfig as New, so its
//     cache entry has the key the parent looks up: wazero keys an entry by
//     sha256(module bytes, function listeners, WithCloseOnContextDone), its
//     own version (the cache subdirectory) and the CPU's features, and both
//     processes run the same binary on the same CPU without listeners.
//     Memory limit pages only bound what the decoder accepts; no compiled
//     code depends on them (wazero v1.12, internal/engine/wazevo).
//   - The parent then calls wazero's CompileModule, which finds the entry
//     and only loads it. If the child's entry were missing, the parent would
//     compile unbounded; compileworker_test.go proves the hit, and the child
//     reports its wazero version, which the parent checks against its own
//     (a binary replaced under a running server would otherwise miss).
//   - exec.CommandContext kills the child when the compile's context ends:
//     the install was cancelled, or Close (compileSet) cancelled it.
//
// compileSet is guarded by its mu; each Compile registers in it, and Close
// cancels and waits for them before closing the wazero runtime, which panics
// if closed under a compile.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tetratelabs/wazero"
)

// Exit codes of the compile worker. Go's runtime exits with 2 on a fatal
// error, "out of memory" among them.
const (
	workerExitInvalid     = 1 // the module is invalid; stderr says why
	workerExitGoFatal     = 2
	workerExitOutOfMemory = 3 // an allocation failed under RLIMIT_AS
	workerExitSetup       = 4 // bad arguments, or the limits could not be set
	workerExitCPU         = 5 // SIGXCPU: the CPU budget is spent
)

// workerStderrLimit bounds what the parent keeps of the child's stderr: a
// Go runtime that died of a memory bomb prints a traceback per goroutine.
const workerStderrLimit = 4 << 10

// errRuntimeClosing is the cause of compiles that Close cancelled.
var errRuntimeClosing = errors.New("the sandbox runtime is shutting down")

// compileInWorker compiles wasm in a child process into the compilation
// cache, under the configured CPU and memory budgets. nil means the cache
// now holds the module's code.
func (r *Runtime) compileInWorker(ctx context.Context, wasm []byte) error {
	argv := r.cfg.compileWorker
	args := append(argv[1:len(argv):len(argv)],
		"-cache-dir", r.cfg.cacheDir,
		"-memory-limit", strconv.FormatUint(r.cfg.memoryLimit, 10),
		"-cpu-time", r.cfg.compileCPUTime.String(),
		"-memory-budget", strconv.FormatUint(r.cfg.compileMemory, 10),
	)
	cmd := exec.CommandContext(ctx, argv[0], args...)
	cmd.SysProcAttr = workerProcAttr()
	cmd.Stdin = bytes.NewReader(wasm)
	stdout, stderr := &headBuffer{max: workerStderrLimit}, &headBuffer{max: workerStderrLimit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Nothing but the child holds its pipes, so they close when it dies;
	// this only bounds Wait if that ever stops being true.
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	if err == nil {
		// A worker of another wazero version (the binary was replaced
		// since the server started, say) files its code where this one
		// never looks, and the compile that follows would run here,
		// unbounded.
		if got := strings.TrimSpace(stdout.String()); got != wazeroVersion() {
			return fmt.Errorf("the compile worker %s runs wazero %q, this process %q: restart the server", argv[0], got, wazeroVersion())
		}
		return nil
	}
	if ctx.Err() != nil {
		// Killed for the cancel, or never started because of it.
		return fmt.Errorf("compiling the module was cancelled: %w", context.Cause(ctx))
	}
	if cmd.ProcessState == nil { // it never started
		return fmt.Errorf("starting the compile worker %s: %w", argv[0], err)
	}
	return r.workerFailure(cmd.ProcessState, stderr.String())
}

// workerFailure says why a compile worker that was not cancelled failed, as
// precisely as its exit shows: the CPU budget, the memory budget, an invalid
// module.
func (r *Runtime) workerFailure(ps *os.ProcessState, stderr string) error {
	cpuBudget := fmt.Errorf("compiling the module exceeded its budget of %v of CPU time", r.cfg.compileCPUTime)
	memoryBudget := fmt.Errorf("compiling the module exceeded its budget of %s of memory", formatBytes(r.cfg.compileMemory))
	var cpu time.Duration
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	msg := strings.TrimSpace(stderr)
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		switch sig := ws.Signal(); {
		// A worker that did not exit at SIGXCPU gets SIGKILL a second
		// later. (The CPU time wait4 reports can fall short of what the
		// kernel's limit counted: 29.0 s for a limit of 30 s, measured.)
		case (sig == syscall.SIGKILL || sig == syscall.SIGXCPU) && cpu >= cpuSeconds(r.cfg.compileCPUTime)*9/10:
			return cpuBudget
		case sig == syscall.SIGKILL:
			// Not our kill (ctx is live) and not the CPU limit: the kernel's
			// out-of-memory killer is what is left.
			return fmt.Errorf("compiling the module was killed (%v after %v of CPU), most likely by the system running out of memory", sig, cpu.Round(time.Millisecond))
		default:
			return fmt.Errorf("the compile worker died of %v after %v of CPU: %s", sig, cpu.Round(time.Millisecond), msg)
		}
	}
	switch code := ps.ExitCode(); {
	case code == workerExitCPU:
		return cpuBudget
	case code == workerExitInvalid:
		return fmt.Errorf("invalid WebAssembly module: %s", msg)
	case code == workerExitOutOfMemory, code == workerExitGoFatal && outOfAddressSpace(msg):
		return memoryBudget
	default:
		return fmt.Errorf("the compile worker failed (exit status %d): %s", code, msg)
	}
}

// outOfAddressSpace reports whether a Go runtime's fatal error says that it
// could not map memory: a failed mmap under RLIMIT_AS is "out of memory",
// or, under the race detector, "too many address space collisions".
func outOfAddressSpace(stderr string) bool {
	_, fatal, _ := strings.Cut(stderr, "fatal error: ")
	fatal, _, _ = strings.Cut(fatal, "\n")
	for _, s := range []string{"out of memory", "cannot allocate memory", "address space"} {
		if strings.Contains(fatal, s) {
			return true
		}
	}
	return false
}

// RunCompileWorker is the compile worker's main function: the process a
// Runtime configured WithCompileWorker starts for each module it compiles.
// Call it as os.Exit(wasmhost.RunCompileWorker(args)) from a binary that
// can be started as the worker (gadgetd does so for its hidden subcommand
// internal-compile-worker). args are the flags the Runtime appends to the
// worker's command line; the module comes on stdin. It returns the exit code
// the Runtime expects.
func RunCompileWorker(args []string) int {
	fs := flag.NewFlagSet("compile worker", flag.ContinueOnError)
	cacheDir := fs.String("cache-dir", "", "compilation cache directory (the Runtime's WithCompilationCacheDir)")
	memoryLimit := fs.Uint64("memory-limit", DefaultMemoryLimit, "the Runtime's WithMemoryLimit")
	cpuTime := fs.Duration("cpu-time", DefaultCompileCPUTime, "RLIMIT_CPU, rounded up to whole seconds")
	memoryBudget := fs.Uint64("memory-budget", DefaultCompileMemory, "address space the compile may add to the worker's own")
	if err := fs.Parse(args); err != nil {
		return workerExitSetup
	}
	if *cacheDir == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "compile worker: needs -cache-dir and no arguments")
		return workerExitSetup
	}
	// At the CPU budget the kernel sends SIGXCPU, which Go ignores unless
	// asked; exiting on it says why the worker stopped.
	xcpu := make(chan os.Signal, 1)
	signal.Notify(xcpu, syscall.SIGXCPU)
	go func() {
		<-xcpu
		os.Exit(workerExitCPU)
	}()
	if err := limitCompileWorker(cpuSeconds(*cpuTime), *memoryBudget); err != nil {
		fmt.Fprintf(os.Stderr, "compile worker: setting its limits: %v\n", err)
		return workerExitSetup
	}
	// Collect garbage hard before the address space runs out, so that only
	// what the compile really holds counts against its budget.
	debug.SetMemoryLimit(int64(*memoryBudget / 2))

	wasm, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "compile worker: reading the module: %v\n", err)
		return workerExitSetup
	}
	ctx := context.Background()
	rc, cache, err := wazeroConfig(config{cacheDir: *cacheDir, memoryLimit: *memoryLimit})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return workerExitSetup
	}
	defer cache.Close(ctx)
	wz := wazero.NewRuntimeWithConfig(ctx, rc)
	defer wz.Close(ctx)
	if _, err := wz.CompileModule(ctx, wasm); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if errors.Is(err, syscall.ENOMEM) || strings.Contains(err.Error(), "cannot allocate memory") {
			return workerExitOutOfMemory
		}
		return workerExitInvalid
	}
	fmt.Println(wazeroVersion()) // for the Runtime to check it will find the code
	return 0
}

// wazeroVersion is the version of wazero linked into this binary, which
// names the directory of the compilation cache wazero uses.
var wazeroVersion = sync.OnceValue(func() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/tetratelabs/wazero" {
				if dep.Replace != nil {
					return dep.Replace.Path + "@" + dep.Replace.Version
				}
				return dep.Version
			}
		}
	}
	return "unknown"
})

// limitCompileWorker bounds the calling process to cpu of CPU time and to
// memory bytes of address space on top of what it has mapped now
// (limitAddressSpace), and lowers the priority of the calling thread, which
// goes on to compile, so serving gadgets wins the CPU over compiling.
func limitCompileWorker(cpu time.Duration, memory uint64) error {
	secs := uint64(cpu / time.Second)
	// The kernel sends SIGXCPU at the soft limit and SIGKILL at the hard
	// one, for a worker that did not exit at SIGXCPU.
	if err := syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: secs, Max: secs + 1}); err != nil {
		return fmt.Errorf("RLIMIT_CPU: %w", err)
	}
	if err := limitAddressSpace(memory); err != nil {
		return err
	}
	// A memory bomb must not leave a core file the size of its budget.
	if err := syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{}); err != nil {
		return fmt.Errorf("RLIMIT_CORE: %w", err)
	}
	// On Linux a priority is per thread: lock the compiling goroutine to
	// this one and lower it (best effort: a compile is bounded without it).
	runtime.LockOSThread()
	syscall.Setpriority(syscall.PRIO_PROCESS, 0, 10)
	return nil
}

// cpuSeconds is d rounded up to the whole seconds RLIMIT_CPU counts in, and
// at least one.
func cpuSeconds(d time.Duration) time.Duration {
	return max(time.Second, (d+time.Second-1)/time.Second*time.Second)
}

// formatBytes writes n in the largest binary unit that divides it.
func formatBytes(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// headBuffer keeps the first max bytes written to it and drops the rest.
type headBuffer struct {
	max int
	buf bytes.Buffer
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := h.max - h.buf.Len(); room > 0 {
		h.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (h *headBuffer) String() string { return h.buf.String() }

// compileSet tracks the compiles in flight, so that Close can cancel them
// (killing their workers) and wait for them before it closes the wazero
// runtime. The zero value is ready to use.
type compileSet struct {
	mu       sync.Mutex
	closed   bool
	stop     context.Context // cancelled by close; created on first use
	cancel   context.CancelCauseFunc
	inFlight int
	running  sync.WaitGroup // one per compile in flight, for close to wait on
}

// begin registers a compile. It returns the context the compile must run
// under (ctx, also cancelled by close) and the function that ends it.
func (s *compileSet) begin(ctx context.Context) (context.Context, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, errRuntimeClosing
	}
	if s.stop == nil {
		s.stop, s.cancel = context.WithCancelCause(context.Background())
	}
	// Added under mu with closed false: close cannot be waiting yet.
	s.running.Add(1)
	s.inFlight++
	ctx, cancel := context.WithCancelCause(ctx)
	stop := s.stop
	unhook := context.AfterFunc(stop, func() { cancel(context.Cause(stop)) })
	return ctx, func() {
		unhook()
		cancel(nil)
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
		s.running.Done()
	}, nil
}

// close refuses new compiles, cancels those in flight and waits for them
// until ctx ends. A compile in a worker ends as soon as its worker is
// killed; one in-process cannot be interrupted, and close then gives up
// with an error.
func (s *compileSet) close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	if s.cancel != nil {
		s.cancel(errRuntimeClosing)
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.running.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wasmhost: a module was still compiling when Close gave up waiting (%w); the runtime was left open", ctx.Err())
	}
}
