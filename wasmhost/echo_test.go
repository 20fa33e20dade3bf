package wasmhost_test

import (
	"context"
	"sync/atomic"
	"testing"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/wasmhost/internal/testguests/benchguest/benchpb"
)

// heardListener remembers the last value it was told.
type heardListener struct{ last atomic.Int64 }

func (l *heardListener) Changed(ctx context.Context, call counterpb.Listener_changed) error {
	l.last.Store(call.Args().Value())
	return nil
}

// A guest may hand back, in a call's results, a capability it was given in
// that call's params. The Go SDK releases the params (the guest tells the
// host it dropped that import) before the host reads the answer that names
// it; the capability must still arrive alive. Found by an outside tester:
// every such echo came back as "unknown host capability index N".
func TestACapabilityEchoedInTheSameCallArrivesAlive(t *testing.T) {
	ctx := context.Background()
	s := newSandbox(t, benchPkg)
	c := benchpb.Bench(s.open(ctx))
	defer c.Release()
	heard := &heardListener{}
	listener := counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, heard), heard, nil))
	defer listener.Release()
	for i := int64(1); i <= 3; i++ {
		f, release := c.Echo(ctx, func(p benchpb.Bench_echo_Params) error {
			return p.SetCap(capnp.Client(listener).AddRef())
		})
		res, err := f.Struct()
		if err != nil {
			release()
			t.Fatalf("echo %d: %v", i, err)
		}
		echoed := counterpb.Listener(res.Cap().AddRef())
		release()
		cf, releaseCall := echoed.Changed(ctx, func(p counterpb.Listener_changed_Params) error { p.SetValue(i); return nil })
		_, err = cf.Struct()
		releaseCall()
		echoed.Release()
		if err != nil {
			t.Fatalf("echo %d: calling the echoed capability: %v", i, err)
		}
		if got := heard.last.Load(); got != i {
			t.Fatalf("echo %d: the listener heard %d", i, got)
		}
	}
}
