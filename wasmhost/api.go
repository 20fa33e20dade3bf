package wasmhost

import (
	"context"
	"time"

	"github.com/gadgetd/gadgetd/wasmhost/internal/wasmcheck"
)

// Defaults for the limits every gadget runs under; docs/SECURITY.md names
// the test behind each.
const (
	DefaultMemoryLimit = 64 << 20         // bytes of linear memory per instance
	DefaultCallTimeout = 10 * time.Second // per call delivered into a guest
	DefaultQueueLimit  = 64               // calls waiting for one instance
	DefaultIdleTimeout = 5 * time.Minute  // an unused instance is evicted after this
	DefaultMaxLive     = 1000             // live instances per Runtime

	DefaultCloseTimeout      = 5 * time.Second // Sandbox.Close waits this long for a call to stop
	DefaultClientCallTimeout = 2 * time.Second // per call a guest makes to a client's capability
	DefaultMemoryBudget      = 2 << 30         // bytes of host memory for all live instances

	DefaultMaxFrameSize = 8 << 20 // bytes in one frame crossing the boundary
	DefaultMaxCapTable  = 1024    // capabilities in one frame
	DefaultMaxImports   = 16384   // host capabilities one instance may hold
)

// Defaults for compiling in a worker process (WithCompileWorker). The real
// examples, 4 MB Go guests, need about 1 s of CPU and 100 MiB to compile.
const (
	DefaultCompileCPUTime = 30 * time.Second // CPU time for one compile
	DefaultCompileMemory  = 2 << 30          // bytes of address space for one compile
)

// Option configures a Runtime. Options are applied in order by New; a Runtime's
// configuration never changes afterwards.
type Option func(*config)

type config struct {
	cacheDir    string
	memoryLimit uint64
	callTimeout time.Duration
	queueLimit  int
	idleTimeout time.Duration
	maxLive     int
	maxFrame    int
	maxCapTable int
	maxImports  int

	moduleLimits ModuleLimits

	closeTimeout      time.Duration
	clientCallTimeout time.Duration
	memoryBudget      uint64
	memoryShare       uint64 // 0 until New sets the default

	compileWorker  []string // argv; nil compiles in-process
	compileCPUTime time.Duration
	compileMemory  uint64

	instancePool int // ready instances per module; 0: no pool
}

// WithCompilationCacheDir keeps compiled machine code in dir, so a restarted
// server does not recompile blueprints. Empty (the default) keeps it in memory.
func WithCompilationCacheDir(dir string) Option { return func(c *config) { c.cacheDir = dir } }

// WithMemoryLimit caps each instance's linear memory, rounded down to whole
// 64 KiB wasm pages. Default DefaultMemoryLimit.
func WithMemoryLimit(bytes uint64) Option { return func(c *config) { c.memoryLimit = bytes } }

// WithCallTimeout bounds every call delivered into a guest, including the
// nested calls it makes. A guest past its deadline is killed; the next call
// gets a fresh instance. Default DefaultCallTimeout.
func WithCallTimeout(d time.Duration) Option { return func(c *config) { c.callTimeout = d } }

// WithQueueLimit bounds how many calls may wait for one busy instance; past it
// calls fail at once with an "overloaded" error. Default DefaultQueueLimit.
func WithQueueLimit(n int) Option { return func(c *config) { c.queueLimit = n } }

// WithIdleTimeout evicts an instance that has had no call for d. Its gadget
// keeps working: the next call starts a fresh instance, and sessions are
// reopened on it. Default DefaultIdleTimeout.
func WithIdleTimeout(d time.Duration) Option { return func(c *config) { c.idleTimeout = d } }

// WithMaxLiveInstances caps the live instances of a Runtime. Starting one
// past the cap evicts the least recently used idle instance. Default
// DefaultMaxLive.
func WithMaxLiveInstances(n int) Option { return func(c *config) { c.maxLive = n } }

// WithMaxFrameSize bounds one message crossing the boundary in either
// direction (params or results). A guest result past it fails that call with
// an error naming the limit. Default DefaultMaxFrameSize.
func WithMaxFrameSize(bytes int) Option { return func(c *config) { c.maxFrame = bytes } }

// WithMaxImports bounds how many host capabilities one instance may hold at
// once; past it, calls that would hand the guest another one fail. Default
// DefaultMaxImports.
func WithMaxImports(n int) Option { return func(c *config) { c.maxImports = n } }

// ModuleLimits bounds what a guest module may declare. Compile checks a
// module against them before wazero decodes it, and refuses one past any of
// them with an error that names the limit and where it was exceeded. A zero
// field keeps its default (DefaultModuleLimits), chosen to leave the real Go
// guests at least four times what they need (docs/ABI.md §2.6).
type ModuleLimits struct {
	ModuleSize int // bytes
	// Entries of these sections; Functions counts the functions a module
	// defines, not those it imports.
	Types, Imports, Functions, Globals, Exports, ElementSegments, DataSegments int
	// Tables bounds the tables a module defines.
	Tables int
	// TableEntries bounds the entries one table may ever hold: its declared
	// maximum, or the size of a table that declares none, which may then
	// never be grown.
	TableEntries     int
	Locals           int // in one function, its parameters included
	FunctionBodySize int // bytes of one function's body
	NestingDepth     int // of blocks, loops and ifs in one function
	BrTableTargets   int // of all br_tables in one function together
}

// DefaultModuleLimits returns the limits a zero field of ModuleLimits means.
func DefaultModuleLimits() ModuleLimits { return ModuleLimits(wasmcheck.DefaultLimits()) }

// WithModuleLimits sets the limits Compile checks every module against
// before compiling it. Default DefaultModuleLimits.
func WithModuleLimits(l ModuleLimits) Option { return func(c *config) { c.moduleLimits = l } }

// WithCloseTimeout bounds how long Sandbox.Close (and so Runtime.Close) waits
// for the call running in a gadget to stop once Close has canceled it. Past
// it the gadget's worker is abandoned and its instance closed, which frees
// its memory. Default DefaultCloseTimeout.
func WithCloseTimeout(d time.Duration) Option { return func(c *config) { c.closeTimeout = d } }

// WithClientCallTimeout bounds each call a guest makes to a capability that
// came from a client (a listener, say). Past it only that call fails, with
// an exception the guest sees; the guest and its instance go on, so one slow
// client cannot hold a shared gadget for everyone until the call deadline.
// Calls to the host's own services are bounded by the call deadline only.
// Default DefaultClientCallTimeout.
func WithClientCallTimeout(d time.Duration) Option {
	return func(c *config) { c.clientCallTimeout = d }
}

// WithMemoryBudget bounds the host memory of all live instances of a Runtime
// together: their linear memory, tables and retained native stacks. Starting
// or growing an instance past it first evicts least recently used idle
// instances; if that is not enough, the start fails, or the guest's
// memory.grow fails (a Go guest then stops, out of memory). Default
// DefaultMemoryBudget.
func WithMemoryBudget(bytes uint64) Option { return func(c *config) { c.memoryBudget = bytes } }

// WithMemoryShare bounds the host memory that the live instances of one
// owner's gadgets (WithOwner) may hold together, within the memory budget,
// so that no one user's gadgets, busy or idle, can take the budget from
// everyone else. An instance that needs more than its owner's share has
// left first evicts that owner's least recently used idle instances; if
// only busy ones hold the share, its start or its memory.grow fails with an
// error naming the share. While the share is at most half the budget, an
// owner within its share always finds room however much another owner
// runs, as long as no third party holds more than the rest (see
// docs/SECURITY.md). Gadgets without an owner are bounded by the budget
// alone. It must be at least the memory limit and at most the budget.
// Default half the budget, or the memory limit if that is more.
func WithMemoryShare(bytes uint64) Option { return func(c *config) { c.memoryShare = bytes } }

// WithInstancePool keeps up to n instances of each compiled module started
// and initialized ahead of need, so that a gadget's first call (or its first
// after its instance stopped) takes one instead of starting one: a cold
// start then costs about what a warm call does. A pool fills once the
// module's first instance has started, one instance at a time in the
// background, and refills after each hand-off; it is emptied, and not
// refilled until the next start, when it has handed out nothing for the
// idle timeout (WithIdleTimeout).
//
// A pooled instance belongs to no gadget until one takes it: its
// initialization runs under the limits of any (call deadline, memory
// limit), sees no Host, storage or owner, and is given the gadget's when
// handed out. A module whose initialization calls the host is therefore
// never pooled; one whose initialization fails repeatedly stops being
// pooled (Module.PoolStats says why). An instance is handed to one gadget
// only and never comes back: it dies as any other. Pooled instances are
// charged to the memory budget (WithMemoryBudget) but to no owner's share
// (WithMemoryShare) until handed out; they only take free budget, and are
// the first to be closed when an instance needs room. Module.Close and
// Runtime.Close close them. Default 0: no pool.
func WithInstancePool(n int) Option { return func(c *config) { c.instancePool = n } }

// WithCompileWorker compiles every module in a child process started as
// path with args, under the budgets of WithCompileLimits, instead of in the
// caller's process. It is the hard bound on what compiling costs: wazero's
// compiler cannot be interrupted, and crafted modules that a validator cannot
// foresee need minutes of CPU or gigabytes of memory to compile. Past its
// budget the worker dies and Compile fails with an error that names the
// budget; when Compile's context ends, the worker is killed and Compile fails
// at once.
//
// The program at path must call RunCompileWorker with the arguments after
// args (gadgetd: `gadgetd internal-compile-worker`, which `gadgetd serve`
// always configures). The worker fills the compilation cache, which
// WithCompilationCacheDir must therefore set, and the Runtime loads the code
// from there. Without this option (plain library use, most tests) modules
// are compiled in-process with no bound but WithCompilationCacheDir's reuse.
func WithCompileWorker(path string, args ...string) Option {
	return func(c *config) { c.compileWorker = append([]string{path}, args...) }
}

// WithCompileLimits sets the budgets of a compile in the worker
// (WithCompileWorker): cpu of CPU time (RLIMIT_CPU, rounded up to whole
// seconds) and memory bytes of address space (RLIMIT_AS, Linux only) on top
// of what the worker's own runtime has mapped when it starts. Zero keeps a
// default: DefaultCompileCPUTime, DefaultCompileMemory.
func WithCompileLimits(cpu time.Duration, memory uint64) Option {
	return func(c *config) {
		if cpu > 0 {
			c.compileCPUTime = cpu
		}
		if memory > 0 {
			c.compileMemory = memory
		}
	}
}

// CompileOption configures one Compile.
type CompileOption func(*compileConfig)

type compileConfig struct{ trusted bool }

// Trusted marks a module as the operator's own, such as a builtin
// blueprint shipped with the server: it is still checked against the module
// limits, but compiled in this process rather than in the compile worker,
// whose CPU and memory limits are for modules users upload. A server that
// compiles its builtins at start then does not wait on worker processes
// (slow when the machine is busy: the worker runs at a lower priority).
func Trusted() CompileOption { return func(c *compileConfig) { c.trusted = true } }

// SandboxOption configures one Sandbox.
type SandboxOption func(*gadgetConfig)

type gadgetConfig struct {
	name      string
	owner     string
	callScope func() func(error) error
	values    context.Context // nil: none
}

// WithName labels the gadget in errors and logs (usually its id).
func WithName(name string) SandboxOption { return func(c *gadgetConfig) { c.name = name } }

// WithOwner names the user whose gadget this is: its instances count
// against that owner's share of the memory budget (WithMemoryShare). The
// empty owner, the default, is the operator: bounded by the budget alone.
func WithOwner(owner string) SandboxOption { return func(c *gadgetConfig) { c.owner = owner } }

// WithCallScope brackets every top-level call delivered into the guest: begin
// runs before the guest sees the call and the function it returns runs after
// the guest is done with it, with the call's error (nil on success). The
// server uses this to make each call's storage writes one transaction. If end
// returns an error for a call that had succeeded (its commit failed), the
// call fails with that error instead: a caller is never told "done" about
// writes that were lost.
//
// One exception keeps scopes from nesting: while the guest waits on a call
// to a capability that did not come from the host's own services (a client's
// listener, say), other calls may be delivered into it (see doc.go). Before
// such a wait the current scope ends with nil, committing what was written so
// far; each call delivered during the wait gets a scope of its own; and a new
// scope begins when the wait is over.
func WithCallScope(begin func() (end func(error) error)) SandboxOption {
	return func(c *gadgetConfig) { c.callScope = begin }
}

// WithContextValues gives every call delivered into the guest ctx's values,
// and so every call the guest makes on a host capability: the context a host
// service's Send or Recv sees carries them. A service handed to others too
// tells its own guest's calls by them: the server's Storage lets only its
// gadget's guest join the call scope. Only the values are used; ctx's
// deadline and cancellation are not the sandbox's (Close ends it).
//
// Below these, a call the guest makes also carries the values of the
// context of the top-level call it is serving, so a host service can tell
// on whose behalf it is called. A call delivered while the guest waits on a
// client's capability (doc.go) runs inside the waiting call: the calls it
// makes carry the waiting call's values.
func WithContextValues(ctx context.Context) SandboxOption {
	return func(c *gadgetConfig) { c.values = context.WithoutCancel(ctx) }
}

type admissionKey struct{}

// WithAdmission returns ctx carrying admit, which the gadget's worker calls
// when it takes a call made with that context off its queue, just before
// delivering it: an error fails the call with that error instead, and the
// guest never sees it. A caller whose right to call may end while the call
// waits (a share revoked) checks it again there. admit runs on the worker,
// so it must be quick and must not call the gadget.
func WithAdmission(ctx context.Context, admit func(context.Context) error) context.Context {
	return context.WithValue(ctx, admissionKey{}, admit)
}

// FromGuest reports whether ctx is that of a call a guest made: every call
// a guest makes, on a host service or on a capability a client handed it,
// carries its instance's context. A capability that answers clients but
// must never answer a gadget (Persistent.save) tells them apart by it.
func FromGuest(ctx context.Context) bool {
	_, ok := ctx.Value(instanceKey{}).(*instance)
	return ok
}
