package server_test

import (
	"context"
	"net"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3/rpc"

	"github.com/gadgetd/gadgetd/internal/latency"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/internal/testcounter/plaincounter"
	"github.com/gadgetd/gadgetd/schema"
)

// benchCalls runs call b.N times after a warm-up and reports p50 and p99.
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
}

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
		_, err := countertest.Increment(ctx, counter)
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
