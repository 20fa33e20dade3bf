package wasmhost_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/internal/wasmbuild"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// markKey is the key of the value a test gives a sandbox's calls.
type markKey struct{}

// markRecordingHost is a Host whose log records the mark each call's
// context carries. It lends a memhost Storage, and no gatekeeper.
type markRecordingHost struct {
	storage schema.Storage

	mu        sync.Mutex
	marks     []any
	fromGuest []bool // wasmhost.FromGuest of each log call's context
}

func (h *markRecordingHost) Log(ctx context.Context, call schema.Host_log) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.marks = append(h.marks, ctx.Value(markKey{}))
	h.fromGuest = append(h.fromGuest, wasmhost.FromGuest(ctx))
	return nil
}

func (h *markRecordingHost) Storage(ctx context.Context, call schema.Host_storage) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetStorage(h.storage.AddRef())
}

func (h *markRecordingHost) Gatekeeper(context.Context, schema.Host_gatekeeper) error {
	return errors.New("no gatekeepers here")
}

// A host service tells its own guest's calls from everyone else's by the
// values WithContextValues gives them (the server's Storage lets only its
// gadget's guest join the running call), and any guest's calls from a
// client's by FromGuest. Only the values are used: a canceled context does
// not cancel the sandbox's calls.
func TestTheGuestsCallsToTheHostCarryTheSandboxsContextValues(t *testing.T) {
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, wasmhost.WithCompilationCacheDir(sharedCacheDir(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	mod, err := rt.Compile(ctx, wasmbuild.ForTest(t, hostilePkg))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	mem := memhost.New().Client()
	defer mem.Release()
	sf, release := mem.Storage(ctx, nil)
	defer release()
	host := &markRecordingHost{storage: sf.Storage()}
	values, cancel := context.WithCancel(context.WithValue(ctx, markKey{}, "gadget one"))
	cancel()
	g := rt.NewSandbox(mod, schema.Host(capserver.New(schema.Host_Methods(nil, host), host, nil)), wasmhost.WithContextValues(values))
	defer g.Close()
	b := &hostileBox{gadget: g}
	s := b.open(t, "alice")
	defer s.Release()

	if out, err := guestCommand(ctx, s, "sleep:0"); err != nil || out != "slept" {
		t.Fatalf("sleep:0 = %q, %v; want slept (the guest logs first)", out, err)
	}
	host.mu.Lock()
	defer host.mu.Unlock()
	if len(host.marks) != 1 || host.marks[0] != "gadget one" {
		t.Fatalf("the host's log saw marks %v, want the sandbox's [gadget one]", host.marks)
	}
	if !host.fromGuest[0] {
		t.Fatal("FromGuest is false for the guest's call")
	}
	if wasmhost.FromGuest(values) {
		t.Fatal("FromGuest is true for a context no guest made")
	}
}
