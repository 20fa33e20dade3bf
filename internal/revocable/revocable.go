// Package revocable wraps a capability so that its grantor can cut it off:
// after Revoke, every reference anyone holds to the wrapper, including ones
// lent into a gadget's sandbox, fails with ErrRevoked at once, and the
// wrapped capability is released.
//
// It is the mechanism meant for what gadgetd grants and later takes back
// (bindings that are unbound, shares that are revoked; the gatekeeper and
// sharing work). Today the test host (internal/memhost) uses it, to prove
// that a revoked host capability fails inside a guest; the gatekeepers'
// desk, to cut off a binding's capabilities when it is unbound. What
// crosses a user's session is cut off by the session's membrane
// (internal/membrane) instead, and the server's storage of a removed
// gadget by its own closed flag.
package revocable

import (
	"context"
	"fmt"
	"sync"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/exc"
	"capnproto.org/go/capnp/v3/server"

	"github.com/gadgetd/gadgetd/internal/capserver"
)

// ErrRevoked is the error calls on a revoked capability fail with. Its
// Cap'n Proto exception type is disconnected: the capability is gone for
// good, and a holder that still needs one must get a new one.
var ErrRevoked error = exc.New(exc.Disconnected, "", "capability revoked")

// Revoker cuts off one wrapped capability. Revoke is idempotent and safe for
// concurrent use.
type Revoker struct {
	opts Options

	mu     sync.Mutex
	target capnp.Client // zero once revoked
	reason error
}

// Options are what a wrapper may do besides forwarding.
type Options struct {
	// Around, if set, runs every call: it calls forward at most once to
	// make the call on the target with the context it passes (which may
	// carry values for the target's methods), and may look at m, and at
	// forward's error, before and after. What it returns is the call's
	// outcome.
	Around func(ctx context.Context, m capnp.Method, forward func(context.Context) error) error
	// OnShutdown, if set, runs once the last reference to the wrapper is
	// gone.
	OnShutdown func()
}

// New wraps target, taking ownership of the reference. The returned client
// forwards every call to target until Revoke.
func New(target capnp.Client) (capnp.Client, *Revoker) {
	return NewWith(target, Options{})
}

// NewWith is New with opts.
func NewWith(target capnp.Client, opts Options) (capnp.Client, *Revoker) {
	r := &Revoker{opts: opts, target: target}
	srv := capserver.NewServer(nil, r, r)
	srv.HandleUnknownMethod = func(m capnp.Method) *server.Method {
		return &server.Method{Method: m, Impl: func(ctx context.Context, call *server.Call) error {
			if r.opts.Around == nil {
				return r.forward(ctx, m, call)
			}
			return r.opts.Around(ctx, m, func(ctx context.Context) error { return r.forward(ctx, m, call) })
		}}
	}
	return capnp.NewClient(srv), r
}

// Revoke cuts the capability off; reason (nil for ErrRevoked alone) is
// wrapped into the error callers see.
func (r *Revoker) Revoke(reason error) {
	r.mu.Lock()
	t := r.target
	r.target = capnp.Client{}
	if r.reason == nil {
		r.reason = ErrRevoked
		if reason != nil {
			// Typed at the top: go-capnp reads the type off the error
			// itself, not its chain.
			r.reason = &exc.Exception{Type: exc.Disconnected, Cause: fmt.Errorf("%w: %w", ErrRevoked, reason)}
		}
	}
	r.mu.Unlock()
	t.Release()
}

// Shutdown releases the target when the last reference to the wrapper goes.
func (r *Revoker) Shutdown() {
	r.mu.Lock()
	t := r.target
	r.target = capnp.Client{}
	r.mu.Unlock()
	t.Release()
	if r.opts.OnShutdown != nil {
		r.opts.OnShutdown()
	}
}

func (r *Revoker) forward(ctx context.Context, m capnp.Method, call *server.Call) error {
	r.mu.Lock()
	target, reason := r.target.AddRef(), r.reason
	r.mu.Unlock()
	if reason != nil {
		return reason
	}
	defer target.Release()
	call.Go()
	args := call.Args()
	ans, release := target.SendCall(ctx, capnp.Send{
		Method:    m,
		ArgsSize:  args.Size(),
		PlaceArgs: func(p capnp.Struct) error { return p.CopyFrom(args) },
	})
	defer release()
	res, err := ans.Struct()
	if err != nil {
		return err
	}
	// A revocation while the call was in flight wins: its results may carry
	// capabilities the caller must no longer get.
	r.mu.Lock()
	reason = r.reason
	r.mu.Unlock()
	if reason != nil {
		return reason
	}
	out, err := call.AllocResults(res.Size())
	if err != nil {
		return err
	}
	return out.CopyFrom(res)
}
