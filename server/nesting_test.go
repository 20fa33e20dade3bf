package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// A client's listener that increments the counter on every change it hears
// makes each notification call back into the gadget while the guest waits
// for the listener: calls nest in the guest, one level per change. The call
// that would nest past wasmhost.MaxNesting fails at once with an overloaded
// error naming the bound, the listener that got it is dropped, and every
// call below it completes. Before, that call waited in the gadget's queue
// for a guest that was waiting for it, until the client-call deadline (2 s)
// failed the chain with "did not answer". The deadlines here are far longer
// than the test's hang guard, so a chain that waited for one would not pass
// as one that hit the bound.
func TestListenerRecursionFailsAtTheNestingBound(t *testing.T) {
	h := start(t, t.TempDir(), server.WithWasmOptions(
		wasmhost.WithClientCallTimeout(time.Minute),
		wasmhost.WithCallTimeout(2*time.Minute),
	))
	g, _ := create(t, h.login(t, h.token("alice")), "counter")
	c := session(t, g)
	ctx := testCtx(t)

	var (
		mu      sync.Mutex
		refused []error // what the listener's calls back into the gadget failed with
	)
	l := &listener{onChanged: func(ctx context.Context, v int64) error {
		_, err := countertest.Increment(ctx, c)
		if err != nil {
			mu.Lock()
			refused = append(refused, err)
			mu.Unlock()
		}
		return err
	}}
	wf, release := c.Watch(ctx, func(p counterpb.Counter_watch_Params) error { return p.SetListener(l.client()) })
	defer release()
	if _, err := wf.Struct(); err != nil {
		t.Fatal(err)
	}

	if _, err := countertest.Increment(ctx, c); err != nil {
		t.Fatalf("the outermost increment failed: %v", err)
	}
	// The outermost increment notifies change 1; each of changes 1 to 16
	// re-enters the waiting guest one level deeper; the increment change
	// 17 makes is the one past the bound.
	const deepest = wasmhost.MaxNesting + 1
	if heard := l.heard(); !slices.Equal(heard, seq(1, deepest)) {
		t.Errorf("the listener heard %v, want changes 1 to %d", heard, deepest)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(refused) != 1 {
		t.Fatalf("%d calls back into the gadget failed (%v), want exactly the one past the bound", len(refused), refused)
	}
	err := refused[0]
	t.Logf("the call past the bound: %v", err)
	if want := fmt.Sprintf("calls into it are already nested %d deep (the bound)", wasmhost.MaxNesting); exc.TypeOf(err) != exc.Overloaded || !strings.Contains(err.Error(), want) {
		t.Errorf("the call past the bound failed with %v (type %v), want an overloaded error naming the nesting bound", err, exc.TypeOf(err))
	}
	// Every call below the bound was served: 17 increments are counted,
	// and the gadget serves on.
	if v, err := countertest.Get(ctx, c); err != nil || v != deepest {
		t.Errorf("after the chain the counter reads %d, %v; want %d", v, err, deepest)
	}
}
