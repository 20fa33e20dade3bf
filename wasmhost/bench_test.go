package wasmhost_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/latency"
	"github.com/gadgetd/gadgetd/internal/wasmbuild"
	"github.com/gadgetd/gadgetd/wasmhost"
	"github.com/gadgetd/gadgetd/wasmhost/internal/testguests/benchguest/benchpb"
)

const benchPkg = "github.com/gadgetd/gadgetd/wasmhost/internal/testguests/benchguest"

// benchRuntime returns a Runtime with the bench guest compiled.
func benchRuntime(b *testing.B, opts ...wasmhost.Option) (*wasmhost.Runtime, *wasmhost.Module) {
	b.Helper()
	ctx := context.Background()
	opts = append([]wasmhost.Option{wasmhost.WithCompilationCacheDir(sharedCacheDir(nil))}, opts...)
	rt, err := wasmhost.New(ctx, opts...)
	if err != nil {
		b.Fatal(err)
	}
	mod, err := rt.Compile(ctx, wasmbuild.ForTest(b, benchPkg))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { mod.Close(ctx); rt.Close(ctx) })
	return rt, mod
}

func openBench(b *testing.B, rt *wasmhost.Runtime, mod *wasmhost.Module) (*wasmhost.Gadget, benchpb.Bench) {
	h := newMemHost()
	g := rt.NewGadget(mod, h.client(), wasmhost.WithCallScope(h.begin))
	s := &sandbox{rt: rt, mod: mod, gadget: g, host: h}
	return g, benchpb.Bench(s.open(context.Background()))
}

func noop(b *testing.B, c benchpb.Bench) {
	f, release := c.Noop(context.Background(), nil)
	defer release()
	if _, err := f.Struct(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWarmCall: one call into a live gadget and back (DESIGN.md target:
// p50 <= 60 µs).
func BenchmarkWarmCall(b *testing.B) {
	rt, mod := benchRuntime(b)
	g, c := openBench(b, rt, mod)
	defer g.Close()
	defer c.Release()
	noop(b, c)
	var rec latency.Recorder
	b.ResetTimer()
	for range b.N {
		rec.Time(func() { noop(b, c) })
	}
	rec.Report(b)
}

// BenchmarkGuestToHostCall: one call from inside the guest to a host
// capability (Storage.get) and back, measured over batches of 100.
func BenchmarkGuestToHostCall(b *testing.B) {
	const batch = 100
	rt, mod := benchRuntime(b)
	g, c := openBench(b, rt, mod)
	defer g.Close()
	defer c.Release()
	ctx := context.Background()
	var rec latency.Recorder
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		f, release := c.HostCalls(ctx, func(p benchpb.Bench_hostCalls_Params) error { p.SetN(batch); return nil })
		if _, err := f.Struct(); err != nil {
			b.Fatal(err)
		}
		release()
		rec.Add(time.Since(start) / batch)
	}
	rec.Report(b)
}

// BenchmarkColdStart: a gadget's first call with its module already
// compiled: instantiate, run the guest's init, open a session, call it
// (DESIGN.md target: p50 <= 5 ms).
func BenchmarkColdStart(b *testing.B) {
	rt, mod := benchRuntime(b)
	var rec latency.Recorder
	b.ResetTimer()
	for range b.N {
		var g *wasmhost.Gadget
		rec.Time(func() {
			var c benchpb.Bench
			g, c = openBench(b, rt, mod)
			noop(b, c)
			c.Release()
		})
		b.StopTimer()
		g.Close()
		b.StartTimer()
	}
	rec.Report(b)
}

// BenchmarkTrapRecovery: from a call that crashes the instance to the next
// call answered by a fresh one (the session is reopened on it).
func BenchmarkTrapRecovery(b *testing.B) {
	rt, mod := benchRuntime(b)
	g, c := openBench(b, rt, mod)
	defer g.Close()
	defer c.Release()
	ctx := context.Background()
	var rec latency.Recorder
	b.ResetTimer()
	for range b.N {
		rec.Time(func() {
			f, release := c.Crash(ctx, nil)
			if _, err := f.Struct(); err == nil {
				b.Fatal("crash returned no error")
			}
			release()
			noop(b, c)
		})
	}
	rec.Report(b)
}

// BenchmarkIdleInstanceRSS: resident memory per idle live instance, over 200
// instances (DESIGN.md target: <= 4.5 MiB).
func BenchmarkIdleInstanceRSS(b *testing.B) {
	const n = 200
	rt, mod := benchRuntime(b)
	for range b.N {
		runtime.GC()
		before := rss(b)
		var gadgets []*wasmhost.Gadget
		for range n {
			g, c := openBench(b, rt, mod)
			noop(b, c)
			c.Release()
			gadgets = append(gadgets, g)
		}
		runtime.GC()
		after := rss(b)
		if live := rt.LiveInstances(); live != n {
			b.Fatalf("%d live instances, want %d", live, n)
		}
		b.ReportMetric(float64(after-before)/n/(1<<20), "MiB/instance")
		for _, g := range gadgets {
			g.Close()
		}
	}
}

// rss reads this process's resident set size in bytes.
func rss(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Skipf("no /proc/self/statm: %v", err)
	}
	fields := strings.Fields(string(data))
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}
