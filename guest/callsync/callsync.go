// Package callsync makes Cap'n Proto calls synchronously. It is the runtime
// of the FooSync client stubs that gadgetd generates beside capnpc-go's
// bindings (internal/syncgen): storage.GetSync(ctx, params) returns the
// results themselves, not a future.
//
// In a gadget, a capability the host lent the guest answers the call
// directly (its hook implements Hook): the guest builds the call frame,
// crosses the sandbox boundary and reads the answer, without go-capnp's
// client machinery (SendCall's bookkeeping, an Answer, a Future), which at
// Go-on-wasm speeds costs more than building the frame. Any other client
// (in the host, or a guest's own object) is called through SendCall and
// waited for, so the stubs mean the same everywhere.
//
// The package is tiny and imports nothing of gadgetd: generated bindings
// are linked into the host as well as into gadgets.
package callsync

import (
	"context"

	"capnproto.org/go/capnp/v3"
)

// Hook is implemented by client hooks that can answer a call synchronously
// (the brand value of the guest SDK's host capabilities).
type Hook interface {
	// CallSync makes the call s and returns its results, which stay
	// valid until release is called.
	CallSync(ctx context.Context, s capnp.Send) (results capnp.Struct, release capnp.ReleaseFunc, err error)
}

// Call makes the call s on c and waits for its results, which stay valid
// until release is called. release is never nil.
func Call(ctx context.Context, c capnp.Client, s capnp.Send) (results capnp.Struct, release capnp.ReleaseFunc, err error) {
	snap := c.Snapshot()
	h, ok := snap.Brand().Value.(Hook)
	snap.Release()
	if ok {
		results, release, err = h.CallSync(ctx, s)
	} else {
		ans, rel := c.SendCall(ctx, s)
		results, err = ans.Struct()
		release = rel
	}
	if err != nil {
		if release != nil {
			release()
		}
		return capnp.Struct{}, func() {}, err
	}
	return results, release, nil
}
