package server_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/leakcheck"
	"github.com/gadgetd/gadgetd/schema"
)

// Guards (issue 6.4), end to end over the network: a client that gives up
// on Gadget.open or on a session call (it cancels, so go-capnp sends Finish
// and the server cancels the handler's context) costs the server nothing
// more. The calls, queued behind a slow one, never reach the guest (the
// wasmhost delivery.skip), and nothing they would have returned leaks
// (delivery.dropIfAbandoned). Before the fix 20 abandoned opens leaked 20
// capabilities.
func TestOpensAndCallsAClientGaveUpOnLeakNothing(t *testing.T) {
	const abandoned = 20
	h := start(t, t.TempDir())
	mallory := h.login(t, h.token("mallory"))
	if err := install(t, mallory, hostileBundle(t)); err != nil {
		t.Fatal(err)
	}
	hostile, _ := create(t, mallory, "hostile")
	s := openHostile(t, hostile)
	if got, err := command(testCtx(t), s, "ok"); err != nil || got != "ok" {
		t.Fatalf("ok = %q, %v", got, err)
	}

	// The gadget's worker is busy long enough for every abandoned call to
	// be queued and given up on behind this one.
	const hold = 5 * time.Second
	held := make(chan error, 1)
	go func() {
		_, err := command(testCtx(t), s, "sleep:5000")
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
	case err := <-held:
		t.Fatalf("the call that held the gadget ended (%v) before the others were given up; the machine is too slow for a %v hold", err, hold)
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
