package server_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3/rpc"

	"github.com/gadgetd/gadgetd/internal/latency"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/internal/testcounter/plaincounter"
	"github.com/gadgetd/gadgetd/schema"
)

// benchCalls runs call b.N times after a warm-up and reports p50 and p99,
// and the calls a second one caller makes.
func benchCalls(b *testing.B, call func(context.Context) error) {
	ctx := context.Background()
	for range 100 { // warm up: instance, connection, allocator
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
	}
	var rec latency.Recorder
	b.ResetTimer()
	for range b.N {
		var err error
		rec.Time(func() { err = call(ctx) })
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	rec.Report(b)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// benchConcurrentCalls runs b.N calls in all, as many at once as there are
// callers (each caller makes one call at a time), after a warm-up of each,
// and reports the calls a second all of them together make.
func benchConcurrentCalls(b *testing.B, callers []func(context.Context) error) {
	ctx := context.Background()
	for _, call := range callers {
		for range 10 {
			if err := call(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	var (
		started  atomic.Int64
		wg       sync.WaitGroup
		firstErr atomic.Pointer[error]
	)
	b.ResetTimer()
	for _, call := range callers {
		wg.Go(func() {
			for started.Add(1) <= int64(b.N) {
				if err := call(ctx); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if err := firstErr.Load(); err != nil {
		b.Fatal(*err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// inFlight is how many calls the concurrent benchmarks keep in flight.
const inFlight = 64

// BenchmarkFullStackCounterCall: Go client -> loopback TCP -> server ->
// wasm counter guest (storage read and write, one transaction) -> back.
func BenchmarkFullStackCounterCall(b *testing.B) {
	h := start(b, b.TempDir())
	g, _ := create(b, h.login(b, h.token("bench")), "counter")
	counter := session(b, g)
	benchCalls(b, func(ctx context.Context) error {
		_, err := countertest.Increment(ctx, counter)
		return err
	})
}

// BenchmarkBareEchoTCP is the baseline: the same Counter interface served by
// plain Go over plain go-capnp on loopback TCP, no sandbox, no storage.
func BenchmarkBareEchoTCP(b *testing.B) {
	counter := bareEcho(b)
	benchCalls(b, func(ctx context.Context) error {
		_, err := countertest.Increment(ctx, counter)
		return err
	})
}

// BenchmarkBareEcho64InFlight is the baseline of
// BenchmarkFullStackGets64InFlight: the bare echo with 64 calls in flight on
// one connection to one object.
func BenchmarkBareEcho64InFlight(b *testing.B) {
	counter := bareEcho(b)
	call := func(ctx context.Context) error {
		_, err := countertest.Increment(ctx, counter)
		return err
	}
	benchConcurrentCalls(b, repeat(call, inFlight))
}

// bareEcho serves a plain Go Counter over plain go-capnp on loopback TCP
// and returns a client of it, closed when b ends.
func bareEcho(b *testing.B) counterpb.Counter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			counter := (&plaincounter.Counter{}).Client()
			rpc.NewConn(rpc.NewStreamTransport(nc), &rpc.Options{BootstrapClient: capnpClient(counter)})
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	conn := rpc.NewConn(rpc.NewStreamTransport(nc), nil)
	counter := counterpb.Counter(conn.Bootstrap(context.Background()))
	b.Cleanup(func() { counter.Release(); conn.Close() })
	return counter
}

func repeat[T any](v T, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// BenchmarkFullStackWrites64Gadgets: 64 users, each on a connection of its
// own, each incrementing a counter gadget of its own, one call at a time:
// the writes a second the server acknowledges as durable, against
// BenchmarkFullStackCounterCall's one client.
func BenchmarkFullStackWrites64Gadgets(b *testing.B) {
	h := start(b, b.TempDir())
	callers := make([]func(context.Context) error, inFlight)
	for i := range callers {
		g, _ := create(b, h.login(b, h.token(fmt.Sprintf("bench%d", i))), "counter")
		counter := session(b, g)
		callers[i] = func(ctx context.Context) error {
			_, err := countertest.Increment(ctx, counter)
			return err
		}
	}
	benchConcurrentCalls(b, callers)
}

// BenchmarkFullStackGets64InFlight: 64 read calls in flight on one
// connection to one gadget, as BenchmarkBareEcho64InFlight does to a plain
// object.
func BenchmarkFullStackGets64InFlight(b *testing.B) {
	h := start(b, b.TempDir())
	g, _ := create(b, h.login(b, h.token("bench")), "counter")
	counter := session(b, g)
	call := func(ctx context.Context) error {
		_, err := countertest.Get(ctx, counter)
		return err
	}
	benchConcurrentCalls(b, repeat(call, inFlight))
}

// BenchmarkFullStackCounterGet is the full stack without a durable write:
// the difference to BenchmarkFullStackCounterCall is the commit (an fsync).
func BenchmarkFullStackCounterGet(b *testing.B) {
	h := start(b, b.TempDir())
	g, _ := create(b, h.login(b, h.token("bench")), "counter")
	counter := session(b, g)
	benchCalls(b, func(ctx context.Context) error {
		_, err := countertest.Get(ctx, counter)
		return err
	})
}

// BenchmarkPipelinedChain: login, open a gadget, open its session and call
// it, sent as one pipelined chain through a link that adds 20 ms each way,
// reported in round trips of that link (target: about one).
func BenchmarkPipelinedChain(b *testing.B) {
	const oneWay = 20 * time.Millisecond
	h := start(b, b.TempDir())
	token := h.token("bench")
	_, id := create(b, h.login(b, token), "counter")
	proxy := newLatencyProxy(b, h.addr, oneWay)
	var rec latency.Recorder
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		conn := dial(b, proxy) // connecting is not part of the chain
		ctx := context.Background()
		b.StartTimer()
		rec.Time(func() {
			ws, r1 := conn.Login(ctx, token)
			defer r1()
			gf, r2 := ws.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(id) })
			defer r2()
			sf, r3 := gf.Gadget().Open(ctx, nil)
			defer r3()
			if _, err := countertest.Get(ctx, counterpb.Counter(sf.Session())); err != nil {
				b.Fatal(err)
			}
		})
		b.StopTimer()
		conn.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(rec.Percentile(50))/float64(2*oneWay), "round-trips")
}
