package server_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/leakcheck"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// Guards (issue 6.4), end to end over the network: a client that gives up
// on Gadget.open or on a session call (it cancels, so go-capnp sends Finish
// and the server cancels the handler's context) costs the server nothing
// more. The calls, queued behind a slow one, never reach the guest (the
// wasmhost delivery.skip), and nothing they would have returned leaks
// (delivery.dropIfAbandoned). Before the fix 20 abandoned opens leaked 20
// capabilities.
func TestOpensAndCallsAClientGaveUpOnLeakNothing(t *testing.T) {
	// A call may run long enough for the longest hold below.
	h := start(t, t.TempDir(), server.WithWasmOptions(wasmhost.WithCallTimeout(2*time.Minute)))
	mallory := h.login(t, h.token("mallory"))
	if err := install(t, mallory, hostileBundle(t)); err != nil {
		t.Fatal(err)
	}
	// The gadget's worker is held by a slow call long enough for every
	// abandoned call to be queued and given up on behind it. On a machine
	// too busy for that the hold ends first, proving nothing, and the test
	// tries again with a longer one.
	for _, hold := range []time.Duration{5 * time.Second, 20 * time.Second, time.Minute} {
		if abandonBehindAHold(t, mallory, hold) {
			return
		}
		t.Logf("the %v hold ended before the calls were given up; trying a longer one", hold)
	}
	t.Fatal("even a one-minute hold ended before the calls were given up")
}

// abandonBehindAHold runs the test on a fresh gadget with the given hold,
// and reports false if the hold ended too soon to prove anything.
func abandonBehindAHold(t *testing.T, ws schema.Workspace, hold time.Duration) bool {
	const abandoned = 20
	hostile, _ := create(t, ws, "hostile")
	s := openHostile(t, hostile)
	if got, err := command(testCtx(t), s, "ok"); err != nil || got != "ok" {
		t.Fatalf("ok = %q, %v", got, err)
	}
	held := make(chan error, 1)
	go func() {
		_, err := command(context.Background(), s, fmt.Sprintf("sleep:%d", hold.Milliseconds()))
		held <- err
	}()
	waitGuestLog(t, hostile, "sleep: started", 1)
	mark := leakcheck.Now()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make([]error, 2*abandoned)
	for i := range abandoned {
		wg.Go(func() {
			f, release := hostile.Open(ctx, nil)
			defer release()
			_, errs[2*i] = f.Struct()
		})
		wg.Go(func() { _, errs[2*i+1] = command(ctx, s, "sleep:0") })
	}
	// Give the calls time to reach the server's queue: what is proved is
	// that queued calls are dropped, not that unsent ones are.
	time.Sleep(300 * time.Millisecond)
	cancel()
	wg.Wait()
	select {
	case <-held:
		return false
	default:
	}
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
			t.Fatalf("abandoned call %d: err = %v, want the client's context.Canceled", i, err)
		}
	}
	if err := <-held; err != nil {
		t.Fatalf("the call that held the gadget: %v", err)
	}
	// Queued behind every abandoned call: once it answers, the gadget has
	// dealt with all of them.
	if got, err := command(testCtx(t), s, "ok"); err != nil || got != "ok" {
		t.Fatalf("after the abandoned calls, ok = %q, %v", got, err)
	}
	if n := guestLogCount(t, hostile, "sleep: started"); n != 1 {
		t.Errorf("the guest ran sleep %d times; want once: %d abandoned calls reached it", n, n-1)
	}
	if leaks := leakcheck.Since(mark, ""); len(leaks) > 0 {
		t.Errorf("%d abandoned opens and %d abandoned calls leaked %d capabilities; the first was created at:\n%s", abandoned, abandoned, len(leaks), leaks[0])
	}
	return true
}

// guestLogCount counts the lines of g's log that are exactly line.
func guestLogCount(t *testing.T, g schema.Gadget, line string) int {
	t.Helper()
	f, release := g.Logs(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatal(err)
	}
	lines, err := res.Lines()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := 0; i < lines.Len(); i++ {
		if text, _ := lines.At(i).Text(); text == line {
			n++
		}
	}
	return n
}

// waitGuestLog waits until g's log has n lines that are exactly line.
func waitGuestLog(t *testing.T, g schema.Gadget, line string, n int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); guestLogCount(t, g, line) < n; {
		if time.Now().After(deadline) {
			t.Fatalf("the gadget never logged %q", line)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
