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
// side for Go is package guest. DESIGN.md records why: a full RPC connection
// inside the guest measured 10 to 30 times slower per call.
//
// # Goroutines
//
// Each Gadget has one worker goroutine that owns its instance; every call
// into the guest is a delivery on the gadget's bounded inbox, run by the
// worker one at a time (one actor per gadget). Host functions run on the
// worker too, inside the export call it made. Capabilities for guest objects
// only enqueue and wait, so no lock is ever held across guest code.
//
// # Re-entrancy
//
// While a guest waits on a call to a capability that came from a client
// (say, a listener a UI handed it), the listener may call back into the same
// gadget. The worker then delivers that call into the waiting guest, as the
// answer to its pending exchange, and resumes the wait when the guest has
// answered it. Calls to the host's own services (Host, Storage) cannot
// re-enter, so no delivery happens during them. Nested delivery is bounded.
//
// # Lifecycle
//
// Instances are created on first use and die on a trap, an exit, a deadline,
// an ABI violation, idle eviction or LRU eviction past a cap. Only that
// instance dies; the next call gets a fresh one. A session (the capability
// Guest.open returned) survives: the host reopens it on the new instance with
// the same Caller. Other guest objects fail with ErrRestarted: their state
// lived in the dead instance's memory. A gadget's durable state is its
// storage, whose writes are scoped per call (WithCallScope).
package wasmhost
