package wasmhost_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/latency"
	"github.com/gadgetd/gadgetd/internal/memhost"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
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

func openBench(b *testing.B, rt *wasmhost.Runtime, mod *wasmhost.Module) (*wasmhost.Sandbox, benchpb.Bench) {
	h := memhost.New()
	g := rt.NewSandbox(mod, h.Client(), wasmhost.WithCallScope(h.Begin))
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

// BenchmarkWarmCall: one call into a live gadget and back (target:
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
// compiled and no instance pool: instantiate, run the guest's init, open a
// session, call it (target: p50 <= 5 ms). BenchmarkColdOpenFromPool is the
// same with WithInstancePool.
func BenchmarkColdStart(b *testing.B) {
	rt, mod := benchRuntime(b)
	var rec latency.Recorder
	b.ResetTimer()
	for range b.N {
		var g *wasmhost.Sandbox
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

// BenchmarkColdOpenFromPool: a gadget's first call, as BenchmarkColdStart,
// with the module's instance pool warm (WithInstancePool): take an
// initialized instance, open a session, call it (target: p50 <= 1 ms). The
// pool refills between iterations, outside the timer.
func BenchmarkColdOpenFromPool(b *testing.B) {
	rt, mod := benchRuntime(b, wasmhost.WithInstancePool(1))
	g, c := openBench(b, rt, mod) // the first start starts the pool
	c.Release()
	g.Close()
	var rec latency.Recorder
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for mod.PoolStats().Ready == 0 {
			time.Sleep(100 * time.Microsecond)
		}
		b.StartTimer()
		rec.Time(func() {
			g, c = openBench(b, rt, mod)
			noop(b, c)
			c.Release()
		})
		b.StopTimer()
		g.Close()
		b.StartTimer()
	}
	b.StopTimer()
	if s := mod.PoolStats(); s.HandedOut != uint64(b.N) {
		b.Fatalf("%d of %d opens took a pooled instance", s.HandedOut, b.N)
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

// BenchmarkIdleInstanceRSS: resident memory per idle live instance of the
// Go bench guest, over 200 instances (target: <= 4.5 MiB).
func BenchmarkIdleInstanceRSS(b *testing.B) { benchIdleRSS(b, "BenchmarkIdleInstanceRSS", goRSSGuest) }

// BenchmarkIdleInstanceRSSWAT: the same for the WAT guest
// (internal/testguests/watguest), no Go runtime inside: what a guest in a
// leaner language costs (target: <= 0.5 MiB).
func BenchmarkIdleInstanceRSSWAT(b *testing.B) {
	benchIdleRSS(b, "BenchmarkIdleInstanceRSSWAT", watRSSGuest)
}

// rssGuest is a guest to measure: its module, and a cheap call on a session.
type rssGuest struct {
	wasm func(b *testing.B) []byte
	call func(ctx context.Context, session capnp.Client) error
}

var (
	goRSSGuest = rssGuest{
		wasm: func(b *testing.B) []byte { return wasmbuild.ForTest(b, benchPkg) },
		call: func(ctx context.Context, session capnp.Client) error {
			f, release := benchpb.Bench(session).Noop(ctx, nil)
			defer release()
			_, err := f.Struct()
			return err
		},
	}
	watRSSGuest = rssGuest{
		wasm: func(b *testing.B) []byte {
			src, err := os.ReadFile(filepath.Join("internal", "testguests", "watguest", "guest.wat"))
			if err != nil {
				b.Fatal(err)
			}
			return wat(b, string(src))
		},
		call: func(ctx context.Context, session capnp.Client) error {
			_, err := countertest.Get(ctx, counterpb.Counter(session))
			return err
		},
	}
)

// benchIdleRSS measures each run in a fresh process, the benchmark named
// name run again with rssProbeEnv set: within one process, later runs would
// reuse the pages earlier ones freed and report almost nothing.
func benchIdleRSS(b *testing.B, name string, guest rssGuest) {
	if cacheDir := os.Getenv(rssProbeEnv); cacheDir != "" {
		// The fresh process: measure once and print the figure.
		fmt.Printf("rss-per-instance-bytes %d\n", idleInstanceRSS(b, cacheDir, guest))
		return
	}
	for range b.N {
		cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^"+name+"$", "-test.benchtime=1x")
		cmd.Env = append(os.Environ(), rssProbeEnv+"="+sharedCacheDir(b))
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("RSS probe: %v\n%s", err, out)
		}
		_, after, ok := strings.Cut(string(out), "rss-per-instance-bytes ")
		fields := strings.Fields(after)
		if !ok || len(fields) == 0 {
			b.Fatalf("RSS probe printed no figure:\n%s", out)
		}
		perInstance, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(perInstance/(1<<20), "MiB/instance")
	}
}

// rssProbeEnv, set to the compilation cache directory, makes benchIdleRSS
// measure in this process rather than start one.
const rssProbeEnv = "GADGETD_RSS_PROBE_CACHE"

// idleInstanceRSS opens 200 idle instances of guest and returns the
// resident memory each added, in bytes.
func idleInstanceRSS(b *testing.B, cacheDir string, guest rssGuest) int64 {
	const n = 200
	ctx := context.Background()
	rt, err := wasmhost.New(ctx, wasmhost.WithCompilationCacheDir(cacheDir))
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	mod, err := rt.Compile(ctx, guest.wasm(b))
	if err != nil {
		b.Fatal(err)
	}
	defer mod.Close(ctx)
	// One instance first, so the measurement is the marginal cost of an
	// instance, not the runtime's one-time setup.
	open := func() *wasmhost.Sandbox {
		h := memhost.New()
		g := rt.NewSandbox(mod, h.Client(), wasmhost.WithCallScope(h.Begin))
		s := &sandbox{rt: rt, mod: mod, gadget: g, host: h}
		c := s.open(ctx)
		if err := guest.call(ctx, c); err != nil {
			b.Fatal(err)
		}
		c.Release()
		return g
	}
	gadgets := []*wasmhost.Sandbox{open()}
	defer func() {
		for _, g := range gadgets {
			g.Close()
		}
	}()
	runtime.GC()
	before := rss(b)
	for range n {
		gadgets = append(gadgets, open())
	}
	runtime.GC()
	after := rss(b)
	if live := rt.LiveInstances(); live != n+1 {
		b.Fatalf("%d live instances, want %d", live, n+1)
	}
	return (after - before) / n
}

// rss reads this process's resident set size in bytes.
func rss(t testing.TB) int64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no /proc/self/statm: %v", err)
	}
	fields := strings.Fields(string(data))
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}
