// Package wasmhost runs gadgets: the server halves of gadgetd apps, compiled
// to WebAssembly and run under wazero with no network, no files, no
// environment and a bounded memory, deadline and queue.
//
// # The boundary
//
// The host is the only Cap'n Proto RPC endpoint. A guest does not speak the
// RPC protocol; it exchanges capnp messages (abi.Frame) with the host through
// two exports and three imports, and names capabilities by small integers in
// per-instance tables: guest exports (index 0 is the Guest main object) and
// host imports (index 0 is the Host). docs/ABI.md specifies it; the guest
// side for Go is package guest. Why: a full RPC connection inside the guest
// measured 10 to 30 times slower per call (docs/BENCHMARKS.md).
//
// # Goroutines
//
// Each Sandbox has one worker goroutine that owns its instance; every call
// into the guest is a delivery on the gadget's bounded inbox, run by the
// worker one at a time (one actor per gadget). Host functions run on the
// worker too, inside the export call it made. Capabilities for guest objects
// only enqueue, on the caller's goroutine, and the worker answers each call
// through the caller's Returner, so no lock is ever held across guest code
// and no goroutine waits in between. A call whose caller gave up while it
// was queued is never delivered, and an answer nobody waits for any more is
// released, capabilities and all.
//
// Every wait on the worker ends with the call's context: the guest's own
// code (wazero's WithCloseOnContextDone), its calls out (wait), and its
// sleep (WASI poll_oneoff, which wasi.go replaces: wazero's sleeps through
// any deadline). Each call's context derives from the gadget's, which
// Sandbox.Close cancels; Close waits for the worker no longer than
// WithCloseTimeout, and then abandons it, closing its instance from outside
// (wazero allows that), which releases its memory. Runtime.Close closes all
// its gadgets at once, so shutdown has the same bound. A module's instance
// pool (WithInstancePool) has one goroutine of its own, which alone starts
// the pool's instances; Module.Close and Runtime.Close end it the same way,
// through its context.
//
// # Re-entrancy
//
// While a guest waits on a call to a capability that came from a client
// (say, a listener a UI handed it), the listener may call back into the same
// gadget. The worker then delivers that call into the waiting guest, as the
// answer to its pending exchange, and resumes the wait when the guest has
// answered it. Calls to the host's own services (Host, Storage) cannot
// re-enter, so no delivery happens during them. Nested delivery is bounded
// by MaxNesting: a call that arrives while the guest waits that deep fails
// at once as overloaded, since it may be the awaited client calling back.
// A call to a client's capability is also bounded in time, by
// WithClientCallTimeout, shorter than the call deadline: past it only that
// call fails, as an exception the guest sees, so a client that never
// answers cannot hold a shared gadget, or kill its instance, for everyone.
//
// # Lifecycle
//
// Instances are created on first use and die on a trap, an exit, a deadline,
// an ABI violation, idle eviction, or LRU eviction past a cap or the memory
// budget. Only that instance dies; the next call gets a fresh one. A session
// (the capability Guest.open returned) survives: the host reopens it on the
// new instance with the same Caller. Other guest objects fail with
// ErrRestarted: their state lived in the dead instance's memory. A gadget's
// durable state is its storage, whose writes are scoped per call
// (WithCallScope).
//
// Most of a start is the guest's initialization (a Go guest's runtime and
// init functions: milliseconds), so a Runtime configured WithInstancePool
// keeps a few instances of each module started and initialized ahead of
// need, and a gadget that starts, or restarts, takes one (pool.go). A pooled
// instance runs its initialization under the same deadline and memory limit
// as any, but belongs to no gadget: it sees a Host that fails every call (a
// module whose initialization calls the host is never pooled), and is given
// its gadget's Host and owner when handed out. It is handed out once and
// never returns, so no gadget sees memory another gadget's calls touched.
// A pool refills in the background, one instance at a time across all of
// the Runtime's pools; an initialization that keeps failing stops it.
//
// # Memory
//
// One budget (WithMemoryBudget) covers all live instances of a Runtime:
// their linear memory, which memory.go maps outside the Go heap and charges
// as it grows, and the tables and native stacks they keep, measured after
// each call. An instance that would exceed the budget first evicts least
// recently used idle ones; when only busy instances hold the memory, its
// start or its memory.grow fails. The instances of one owner's gadgets
// (WithOwner) hold at most that owner's share of the budget
// (WithMemoryShare), so one user's gadgets, however many and however busy,
// cannot take the memory another user's need; an owner at its share makes
// room by evicting its own idle instances only. Each instance's linear
// memory and tables together stay within WithMemoryLimit. Pooled instances
// are charged to the budget but to no owner's share until handed out (then
// to their gadget's owner, as if it had started them). They only take free
// budget, and an instance that needs room first closes the pools' ready
// instances, then ends their initializations in progress (whose memory is
// released as the guest stops), and only then evicts idle live instances:
// filling a pool never makes a live instance's start or memory.grow fail.
// One pooled initialization runs at a time across the Runtime, so a user's
// many modules hold at most one initialization's memory between them. A
// native stack grown deep during a call is dropped after it, not kept for
// the instance's life.
//
// # Compiling
//
// Compile checks a module against static limits (WithModuleLimits), then
// compiles it. wazero's compiler cannot be interrupted, and modules within
// any static limit can still take minutes and gigabytes to compile, so a
// Runtime configured WithCompileWorker compiles in a child process that
// limits its own CPU time and address space (WithCompileLimits) and leaves
// the code in the compilation cache, from which the Runtime loads it. The
// child is killed when Compile's context ends, and Close cancels compiles in
// flight. Without a worker, modules are compiled in the caller's process,
// with no bound but the static limits (see compileworker.go).
package wasmhost
