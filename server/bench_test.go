package server_test

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3/rpc"

	"github.com/gadgetd/gadgetd/examples/counter/counterpb"
	"github.com/gadgetd/gadgetd/server/internal/plaincounter"
)

// benchCalls runs call b.N times and reports the median latency as p50-µs.
func benchCalls(b *testing.B, call func(context.Context) error) {
	ctx := context.Background()
	for range 100 { // warm up: instance, connection, allocator
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
	}
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		begin := time.Now()
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
		durations = append(durations, time.Since(begin))
	}
	b.StopTimer()
	slices.Sort(durations)
	b.ReportMetric(float64(durations[len(durations)/2].Nanoseconds())/1e3, "p50-µs")
}

// BenchmarkFullStackCounterCall: Go client -> loopback TCP -> server ->
// wasm counter guest (storage read and write, one transaction) -> back.
func BenchmarkFullStackCounterCall(b *testing.B) {
	h := start(b, b.TempDir())
	g, _ := create(b, h.login(b, h.token("bench")), "counter")
	counter := session(b, g)
	benchCalls(b, func(ctx context.Context) error {
		_, err := increment(ctx, counter)
		return err
	})
}

// BenchmarkBareEchoTCP is the baseline: the same Counter interface served by
// plain Go over plain go-capnp on loopback TCP, no sandbox, no storage.
func BenchmarkBareEchoTCP(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
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
	defer conn.Close()
	counter := counterpb.Counter(conn.Bootstrap(context.Background()))
	defer counter.Release()
	benchCalls(b, func(ctx context.Context) error {
		_, err := increment(ctx, counter)
		return err
	})
}

// BenchmarkFullStackCounterGet is the full stack without a durable write:
// the difference to BenchmarkFullStackCounterCall is the commit (an fsync).
func BenchmarkFullStackCounterGet(b *testing.B) {
	h := start(b, b.TempDir())
	g, _ := create(b, h.login(b, h.token("bench")), "counter")
	counter := session(b, g)
	benchCalls(b, func(ctx context.Context) error {
		_, err := get(ctx, counter)
		return err
	})
}
