package server_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/latency"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
)

// BenchmarkCallsWhileTenCompileBombsInstall: ten users each install a
// compile bomb at once (each compile may spend 10 s of CPU in its worker,
// two compile at a time); meanwhile another user calls a gadget, and its
// latency is what is reported. The target is a p99 under 100 ms. (A figure
// for make bench, not a test: it depends on the machine.)
func BenchmarkCallsWhileTenCompileBombsInstall(b *testing.B) {
	const bombs = 10
	h := startWithCompileWorker(b, 10*time.Second)
	bob := loginResolved(b, h, "bob")
	g, _ := create(b, bob, "counter")
	counter := session(b, g)
	ctx := context.Background()
	for range 100 { // warm up: instance, connection, allocator
		if _, err := countertest.Increment(ctx, counter); err != nil {
			b.Fatal(err)
		}
	}

	var wg sync.WaitGroup
	installCtx, cancelInstalls := context.WithCancel(ctx)
	for i := range bombs {
		ws := loginResolved(b, h, fmt.Sprintf("bomber-%d", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			installWithContext(installCtx, b, ws, bombBundle(b, fmt.Sprintf("bomb-%d", i)))
		}()
	}
	// Measure once both compile slots are busy.
	for running, _ := h.srv.InstallsQueued(); running < 2; running, _ = h.srv.InstallsQueued() {
		time.Sleep(10 * time.Millisecond)
	}

	var rec latency.Recorder
	b.ResetTimer()
	for range b.N {
		var err error
		rec.Time(func() { _, err = countertest.Increment(ctx, counter) })
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if running, _ := h.srv.InstallsQueued(); running == 0 {
		b.Logf("the bombs were done before the calls were: the figure understates the load")
	}
	rec.Report(b)
	cancelInstalls() // kills the workers still compiling
	wg.Wait()
}
