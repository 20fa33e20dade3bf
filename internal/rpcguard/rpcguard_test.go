package rpcguard_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/exc"
	"capnproto.org/go/capnp/v3/rpc"
	rpccp "capnproto.org/go/capnp/v3/std/capnp/rpc"

	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/internal/testcounter/plaincounter"
	"github.com/gadgetd/gadgetd/schema"
)

// serve starts a guarded server for counter on a loopback port. A counter
// needs no login: every peer gets the full Limits at once.
func serve(t *testing.T, counter *plaincounter.Counter, maxConns int, lim rpcguard.Limits) (addr string, srv *rpcguard.Server) {
	t.Helper()
	return serveCounter(t, counter, maxConns, lim, true)
}

// serveStrangers is serve for peers that never authenticate: they stay
// within Limits.Unauthenticated.
func serveStrangers(t *testing.T, counter *plaincounter.Counter, lim rpcguard.Limits) (addr string) {
	t.Helper()
	addr, _ = serveCounter(t, counter, 0, lim, false)
	return addr
}

func serveCounter(t *testing.T, counter *plaincounter.Counter, maxConns int, lim rpcguard.Limits, authenticate bool) (addr string, srv *rpcguard.Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bootstrap := capnp.Client(counter.Client())
	t.Cleanup(bootstrap.Release)
	srv = rpcguard.NewServer(func(p *rpcguard.Peer) capnp.Client {
		if authenticate {
			p.Authenticated(p.RemoteAddr().String()) // each connection its own user
		}
		return bootstrap.AddRef()
	}, maxConns, lim, nil)
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("closing server: %v", err)
		}
	})
	return ln.Addr().String(), srv
}

// dialCounter connects an ordinary go-capnp client.
func dialCounter(t *testing.T, addr string) counterpb.Counter {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	conn := rpc.NewConn(rpc.NewStreamTransport(nc), nil)
	counter := counterpb.Counter(conn.Bootstrap(context.Background()))
	t.Cleanup(func() {
		counter.Release()
		conn.Close()
	})
	return counter
}

// requireServesOthers proves the server still answers a fresh, well-behaved
// client.
func requireServesOthers(t *testing.T, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f, release := dialCounter(t, addr).Get(ctx, nil)
	defer release()
	if _, err := f.Struct(); err != nil {
		t.Fatalf("a well-behaved client was not served: %v", err)
	}
}

// rawPeer speaks the RPC protocol by hand, so tests can send what no honest
// client would.
type rawPeer struct {
	t    *testing.T
	conn net.Conn
	enc  *capnp.Encoder
	dec  *capnp.Decoder
}

func dialRaw(t *testing.T, addr string) *rawPeer {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawPeer{t: t, conn: nc, enc: capnp.NewEncoder(nc), dec: capnp.NewDecoder(nc)}
}

func (p *rawPeer) send(build func(rpccp.Message) error) {
	p.t.Helper()
	msg, seg, err := capnp.NewMessage(capnp.MultiSegment(nil))
	if err != nil {
		p.t.Fatal(err)
	}
	m, err := rpccp.NewRootMessage(seg)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := build(m); err != nil {
		p.t.Fatal(err)
	}
	if err := p.enc.Encode(msg); err != nil {
		p.t.Fatal(err)
	}
}

func (p *rawPeer) bootstrap(qid uint32) {
	p.send(func(m rpccp.Message) error {
		b, err := m.NewBootstrap()
		b.SetQuestionId(qid)
		return err
	})
}

// Counter's method ids, for calls built by hand.
const (
	methodIncrement uint16 = 0
	methodGet       uint16 = 1
)

// call sends Counter's method on the answer to question target with the
// given pipeline path length and a capability table of capTable zero-sized
// entries: a few bytes on the wire however many entries it claims.
func (p *rawPeer) call(qid, target uint32, method uint16, pathLen int, capTable int32) {
	p.send(func(m rpccp.Message) error {
		call, err := m.NewCall()
		if err != nil {
			return err
		}
		call.SetQuestionId(qid)
		call.SetInterfaceId(counterpb.Counter_TypeID)
		call.SetMethodId(method)
		tgt, err := call.NewTarget()
		if err != nil {
			return err
		}
		pa, err := tgt.NewPromisedAnswer()
		if err != nil {
			return err
		}
		pa.SetQuestionId(target)
		if pathLen > 0 {
			ops, err := pa.NewTransform(int32(pathLen))
			if err != nil {
				return err
			}
			for i := 0; i < pathLen; i++ {
				ops.At(i).SetNoop()
			}
		}
		params, err := call.NewParams()
		if err != nil {
			return err
		}
		content, err := capnp.NewStruct(params.Segment(), capnp.ObjectSize{})
		if err != nil {
			return err
		}
		if err := params.SetContent(content.ToPtr()); err != nil {
			return err
		}
		if capTable > 0 {
			l, err := capnp.NewCompositeList(params.Segment(), capnp.ObjectSize{}, capTable)
			if err != nil {
				return err
			}
			return capnp.Struct(params).SetPtr(1, l.ToPtr())
		}
		return nil
	})
}

// abortReason reads until the server closes the connection and returns the
// reason of its Abort message ("" if it closed without one). It fails the
// test if the server keeps the connection open for more than wait.
func (p *rawPeer) abortReason(wait time.Duration) string {
	p.t.Helper()
	p.conn.SetReadDeadline(time.Now().Add(wait))
	for {
		msg, err := p.dec.Decode()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				p.t.Fatalf("server kept the connection open for %v", wait)
			}
			return ""
		}
		m, err := rpccp.ReadRootMessage(msg)
		if err != nil {
			p.t.Fatal(err)
		}
		if m.Which() == rpccp.Message_Which_abort {
			ex, _ := m.Abort()
			reason, _ := ex.Reason()
			return reason
		}
	}
}

func TestCapTableAmplificationClosesOnlyThatConnection(t *testing.T) {
	addr, _ := serve(t, &plaincounter.Counter{}, 0, rpcguard.Limits{MaxCapTable: 100})
	attacker := dialRaw(t, addr)
	attacker.bootstrap(0)
	attacker.call(1, 0, methodGet, 0, 1<<22) // 4 million entries in about 100 bytes
	// The reason names the bound, which is checked before anything walks
	// the table.
	reason := attacker.abortReason(5 * time.Second)
	if !strings.Contains(reason, "capability table of 4194304 entries") {
		t.Fatalf("abort reason = %q, want it to name the capability table bound", reason)
	}
	requireServesOthers(t, addr)
}

func TestLongPipelinePathClosesOnlyThatConnection(t *testing.T) {
	addr, _ := serve(t, &plaincounter.Counter{}, 0, rpcguard.Limits{MaxPipelineOps: 8})
	attacker := dialRaw(t, addr)
	attacker.bootstrap(0)
	attacker.call(1, 0, methodGet, 9, 0)
	if reason := attacker.abortReason(5 * time.Second); !strings.Contains(reason, "pipeline path of 9 steps") {
		t.Fatalf("abort reason = %q, want it to name the pipeline path bound", reason)
	}
	requireServesOthers(t, addr)
}

func TestOversizedMessageClosesOnlyThatConnection(t *testing.T) {
	addr, _ := serve(t, &plaincounter.Counter{}, 0, rpcguard.Limits{MaxMessageSize: 1 << 20})
	attacker := dialRaw(t, addr)
	// A frame header announcing one 2 MiB segment; the body never comes.
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[4:], (2<<20)/8)
	if _, err := attacker.conn.Write(hdr[:]); err != nil {
		t.Fatal(err)
	}
	attacker.abortReason(5 * time.Second) // the server must hang up at once
	requireServesOthers(t, addr)
}

func TestInFlightLimitAnswersOverloadedAndRecovers(t *testing.T) {
	const limit = 4
	gate := make(chan struct{})
	addr, _ := serve(t, &plaincounter.Counter{Gate: gate}, 0, rpcguard.Limits{MaxInFlight: limit})
	testInFlightLimit(t, addr, gate, limit)
}

// A peer that has not authenticated gets a far smaller in-flight budget.
func TestAStrangerGetsOnlyItsSmallInFlightBudget(t *testing.T) {
	const limit = 3
	gate := make(chan struct{})
	addr := serveStrangers(t, &plaincounter.Counter{Gate: gate}, rpcguard.Limits{
		MaxInFlight:     512,
		Unauthenticated: rpcguard.Budget{MaxInFlight: limit},
	})
	testInFlightLimit(t, addr, gate, limit)
}

// A peer that has not authenticated may send only small messages: the
// default authenticated limit is 9 MiB, a stranger's 64 KiB.
func TestAStrangerMaySendOnlySmallMessages(t *testing.T) {
	addr := serveStrangers(t, &plaincounter.Counter{}, rpcguard.Limits{})
	attacker := dialRaw(t, addr)
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[4:], (1<<20)/8) // one 1 MiB segment
	if _, err := attacker.conn.Write(hdr[:]); err != nil {
		t.Fatal(err)
	}
	if reason := attacker.abortReason(5 * time.Second); !strings.Contains(reason, "the limit is 65536") {
		t.Errorf("abort reason %q does not name the stranger's limit", reason)
	}
	requireServesOthers(t, addr)
}

func testInFlightLimit(t *testing.T, addr string, gate chan struct{}, limit int) {
	t.Helper()
	counter := dialCounter(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := capnp.Client(counter).Resolve(ctx); err != nil {
		t.Fatal(err)
	}

	calls := 3 * limit
	errs := make(chan error, calls)
	var wg sync.WaitGroup
	for range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := countertest.Increment(ctx, counter)
			errs <- err
		}()
	}
	// The calls past the limit come back at once while the others are held.
	overloaded := 0
	for overloaded < calls-limit {
		select {
		case err := <-errs:
			if err == nil || exc.TypeOf(err) != exc.Overloaded {
				t.Fatalf("a call past the limit returned %v, want an overloaded exception", err)
			}
			overloaded++
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of %d calls past the limit were refused", overloaded, calls-limit)
		}
	}
	requireServesOthers(t, addr) // another connection is not affected
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a call within the limit failed: %v", err)
		}
	}
	// Finished answers free their slots: the connection works again.
	for range 2 * limit {
		if _, err := countertest.Increment(ctx, counter); err != nil {
			t.Fatalf("after the burst, a call failed: %v", err)
		}
	}
}

func TestIdleConnectionIsClosed(t *testing.T) {
	addr, _ := serve(t, &plaincounter.Counter{}, 0, rpcguard.Limits{IdleTimeout: 200 * time.Millisecond})
	idle := dialRaw(t, addr)
	start := time.Now()
	idle.abortReason(5 * time.Second)
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("closed after %v, before the idle timeout", d)
	}
	requireServesOthers(t, addr)
}

func TestSlowMessageIsClosedEvenWhileBytesTrickleIn(t *testing.T) {
	addr, _ := serve(t, &plaincounter.Counter{}, 0, rpcguard.Limits{
		IdleTimeout:    time.Minute,
		MessageTimeout: 300 * time.Millisecond,
	})
	slow := dialRaw(t, addr)
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[4:], 64) // a 512-byte segment
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		slow.abortReason(5 * time.Second)
	}()
	// One byte every 50 ms: never idle, never finished. Without the
	// message timeout the connection would stay open until abortReason
	// gives up after 5 s and fails the test.
	for i := 0; ; i++ {
		select {
		case <-closed:
			requireServesOthers(t, addr)
			return
		case <-time.After(50 * time.Millisecond):
		}
		b := []byte{0}
		if i < len(hdr) {
			b[0] = hdr[i]
		}
		slow.conn.Write(b)
	}
}

// The reader reads the socket through a buffer, so the first bytes of a
// message can arrive, and be read, with the message before it. That message
// has started: the rest of it must arrive within the message timeout, not
// within the idle timeout of a connection waiting for its next message.
func TestAMessageThatStartedInTheSameReadAsTheOneBeforeHasItsMessageTimeout(t *testing.T) {
	addr, _ := serve(t, &plaincounter.Counter{}, 0, rpcguard.Limits{
		IdleTimeout:    time.Minute,
		MessageTimeout: 300 * time.Millisecond,
	})
	slow := dialRaw(t, addr)
	msg, seg, err := capnp.NewMessage(capnp.SingleSegment(nil))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := rpccp.NewRootMessage(seg)
	b, _ := m.NewBootstrap()
	b.SetQuestionId(0)
	whole, err := msg.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// A whole bootstrap and the first bytes of the next message, in one
	// write, and then nothing. Were the next message's timeout started by
	// the first read from the socket after those bytes, the connection
	// would stay open for the idle minute, and abortReason would fail.
	if _, err := slow.conn.Write(append(whole, 0, 0)); err != nil {
		t.Fatal(err)
	}
	slow.abortReason(5 * time.Second)
	requireServesOthers(t, addr)
}

func TestConnectionLimitRefusesExtraConnectionsAndRecovers(t *testing.T) {
	addr, srv := serve(t, &plaincounter.Counter{}, 2, rpcguard.Limits{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	first := dialCounter(t, addr)
	if _, err := countertest.Increment(ctx, first); err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	second := rpc.NewConn(rpc.NewStreamTransport(nc), nil)
	secondCounter := counterpb.Counter(second.Bootstrap(ctx))
	if _, err := countertest.Increment(ctx, secondCounter); err != nil {
		t.Fatal(err)
	}

	// A connection past the limit is told why, and closed.
	if reason := dialRaw(t, addr).abortReason(5 * time.Second); !strings.Contains(reason, "server busy") {
		t.Fatalf("a connection past the limit got abort reason %q, want one saying the server is busy", reason)
	}
	if _, err := countertest.Increment(ctx, first); err != nil {
		t.Fatalf("an admitted client stopped being served: %v", err)
	}

	secondCounter.Release()
	second.Close()
	deadline := time.Now().Add(5 * time.Second)
	for srv.ConnCount() > 1 {
		if time.Now().After(deadline) {
			t.Fatal("the closed connection never gave its slot back")
		}
		time.Sleep(10 * time.Millisecond)
	}
	requireServesOthers(t, addr)
}

// A call pipelined onto an answer that is still running reaches rpc.Conn
// only once that answer's Return is sent, so go-capnp never queues it (and
// never dies in AnswerQueue.Fulfill when the answer turns out to hold no
// capability there). Here the running answer is a gated increment, whose
// results have no pointer field at all.
func TestCallPipelinedOntoARunningAnswerWaitsForItsReturn(t *testing.T) {
	gate := make(chan struct{})
	addr, _ := serve(t, &plaincounter.Counter{Gate: gate}, 0, rpcguard.Limits{})
	counter := dialCounter(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	inc, release := counter.Increment(ctx, nil)
	defer release()
	pipelined := make(chan error, 1)
	go func() {
		ans, release := inc.Field(0, nil).Client().SendCall(ctx, capnp.Send{
			Method: capnp.Method{InterfaceID: counterpb.Counter_TypeID, MethodID: 1},
		})
		defer release()
		_, err := ans.Struct()
		pipelined <- err
	}()
	select {
	case err := <-pipelined:
		t.Fatalf("the pipelined call was answered (%v) before the answer it names returned", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(gate)
	if _, err := inc.Struct(); err != nil {
		t.Fatalf("increment: %v", err)
	}
	if err := <-pipelined; err == nil {
		t.Errorf("a call pipelined onto a number succeeded")
	}
	requireServesOthers(t, addr)
}

// rpc.Conn embargoes calls on a peer's promise that resolves to one of the
// server's own capabilities in an AnswerQueue, which has the same crash as a
// pipelined call when that capability cannot take them; the transport closes
// a connection that tries.
func TestResolvingAPromiseToAServerCapabilityClosesOnlyThatConnection(t *testing.T) {
	addr, _ := serve(t, &plaincounter.Counter{}, 0, rpcguard.Limits{})
	for _, which := range []string{"receiverHosted", "receiverAnswer"} {
		t.Run(which, func(t *testing.T) {
			attacker := dialRaw(t, addr)
			attacker.bootstrap(0)
			attacker.send(func(m rpccp.Message) error {
				res, err := m.NewResolve()
				if err != nil {
					return err
				}
				res.SetPromiseId(0)
				desc, err := res.NewCap()
				if err != nil {
					return err
				}
				if which == "receiverHosted" {
					desc.SetReceiverHosted(0)
					return nil
				}
				pa, err := desc.NewReceiverAnswer()
				pa.SetQuestionId(0)
				return err
			})
			if reason := attacker.abortReason(5 * time.Second); !strings.Contains(reason, "capability the server hosts") {
				t.Errorf("abort reason %q does not say why", reason)
			}
			requireServesOthers(t, addr)
		})
	}
}

// minter is a Gateway whose login hands out a new capability every time.
type minter struct{}

func (minter) Login(ctx context.Context, call schema.Gateway_login) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetWorkspace(schema.Workspace(capnp.ErrorClient(errors.New("a fresh capability"))))
}

func (minter) Restore(context.Context, schema.Gateway_restore) error {
	return capnp.Unimplemented("restore: not part of this test")
}

func serveMinter(t *testing.T, lim rpcguard.Limits) schema.Gateway {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := rpcguard.NewServer(func(p *rpcguard.Peer) capnp.Client {
		p.Authenticated(p.RemoteAddr().String()) // each connection its own user
		return capnp.Client(schema.Gateway_ServerToClient(minter{}))
	}, 0, lim, nil)
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn := rpc.NewConn(rpc.NewStreamTransport(nc), nil)
	gw := schema.Gateway(conn.Bootstrap(context.Background()))
	t.Cleanup(func() {
		gw.Release()
		conn.Close()
	})
	return gw
}

// A peer that keeps every capability the server hands it is disconnected
// once it holds MaxExports of them; one that releases what it is done with
// is never counted past what it holds.
func TestAPeerHoardingCapabilitiesIsDisconnectedAtMaxExports(t *testing.T) {
	const limit = 10
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard: under -race on a busy machine 10 s was too little
	defer cancel()
	mint := func(gw schema.Gateway) (schema.Workspace, error) {
		f, release := gw.Login(ctx, nil)
		defer release()
		res, err := f.Struct()
		if err != nil {
			return schema.Workspace{}, err
		}
		return res.Workspace().AddRef(), nil
	}

	tidy := serveMinter(t, rpcguard.Limits{MaxExports: limit})
	for i := range 5 * limit {
		ws, err := mint(tidy)
		if err != nil {
			t.Fatalf("login %d of a peer that releases what it gets: %v", i, err)
		}
		ws.Release()
	}

	hoarder := serveMinter(t, rpcguard.Limits{MaxExports: limit})
	var kept []schema.Workspace
	defer func() {
		for _, ws := range kept {
			ws.Release()
		}
	}()
	for i := 0; ; i++ {
		ws, err := mint(hoarder)
		if err != nil {
			if i < limit-1 {
				t.Fatalf("login %d failed under the limit of %d: %v", i, limit, err)
			}
			t.Logf("login %d: %v", i, err)
			return
		}
		kept = append(kept, ws)
		if i > 2*limit {
			t.Fatalf("the peer holds %d capabilities; the limit is %d", len(kept), limit)
		}
	}
}

// The bytes of calls in flight are bounded as well as their number: with
// a 1 MiB budget, 100 KiB calls held behind a gate are refused as
// overloaded from about the tenth on, and the connection recovers.
func TestInFlightBytesAreBoundedAndTheConnectionRecovers(t *testing.T) {
	gate := make(chan struct{})
	addr, _ := serve(t, &plaincounter.Counter{Gate: gate}, 0, rpcguard.Limits{MaxInFlightBytes: 1 << 20})
	counter := dialCounter(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bigIncrement := func() error {
		ans, release := capnp.Client(counter).SendCall(ctx, capnp.Send{
			Method:   capnp.Method{InterfaceID: counterpb.Counter_TypeID, MethodID: 0},
			ArgsSize: capnp.ObjectSize{DataSize: 8, PointerCount: 1},
			PlaceArgs: func(s capnp.Struct) error {
				s.SetUint64(0, 1)
				d, err := capnp.NewData(s.Segment(), make([]byte, 100<<10))
				if err != nil {
					return err
				}
				return s.SetPtr(0, d.ToPtr())
			},
		})
		defer release()
		_, err := ans.Struct()
		return err
	}
	const calls = 20
	errs := make(chan error, calls)
	for range calls {
		go func() { errs <- bigIncrement() }()
	}
	overloaded := 0
	for overloaded < calls-10 {
		select {
		case err := <-errs:
			if exc.TypeOf(err) != exc.Overloaded || !strings.Contains(err.Error(), "bytes of calls in flight") {
				t.Fatalf("a call past the byte budget returned %v, want an overloaded exception naming it", err)
			}
			overloaded++
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d calls were refused while %d bytes were held", overloaded, calls*100<<10)
		}
	}
	close(gate)
	for range calls - overloaded {
		if err := <-errs; err != nil && exc.TypeOf(err) != exc.Overloaded {
			t.Errorf("a call within the budget failed: %v", err)
		}
	}
	if err := bigIncrement(); err != nil {
		t.Fatalf("after the burst: %v", err)
	}
}

// A peer that keeps talking but never authenticates loses its connection at
// the login deadline: idle timeouts alone let 1024 such peers, each sending
// a message every few seconds, lock every user out.
func TestAStrangerThatNeverLogsInIsDisconnectedAtItsLoginDeadline(t *testing.T) {
	addr := serveStrangers(t, &plaincounter.Counter{}, rpcguard.Limits{
		Unauthenticated: rpcguard.Budget{LoginTimeout: 500 * time.Millisecond},
	})
	chatty := dialRaw(t, addr)
	done := make(chan string, 1)
	go func() { done <- chatty.abortReason(10 * time.Second) }()
	for i := uint32(0); ; i++ {
		select {
		case reason := <-done:
			if !strings.Contains(reason, "did not log in within") {
				t.Fatalf("abort reason %q does not name the login deadline", reason)
			}
			requireServesOthers(t, addr)
			return
		case <-time.After(100 * time.Millisecond):
			chatty.bootstrap(i) // never idle
		}
	}
}

// One address may hold only so many connections that have not logged in:
// past it a new one is refused with a reason, while connections that did
// authenticate do not count.
func TestStrangersFromOneAddressAreBounded(t *testing.T) {
	const limit = 3
	lim := rpcguard.Limits{Unauthenticated: rpcguard.Budget{MaxPerAddress: limit}}
	strangers := serveStrangers(t, &plaincounter.Counter{}, lim)
	var held []*rawPeer
	for range limit {
		p := dialRaw(t, strangers)
		p.bootstrap(0)
		held = append(held, p)
	}
	// The server counts a connection when it accepts it; one more is refused.
	deadline := time.Now().Add(5 * time.Second)
	for {
		reason := dialRaw(t, strangers).abortReason(5 * time.Second)
		if strings.Contains(reason, "have not logged in yet (the limit is 3)") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a connection past the limit got abort reason %q", reason)
		}
	}
	// A stranger that leaves makes room, once the server has seen it go.
	// Each try waits for the server's verdict, however slow (a try given up
	// on while the server accepts it would hold the slot it tests for).
	held[0].conn.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		p := dialRaw(t, strangers)
		p.bootstrap(0)
		p.conn.SetReadDeadline(deadline)
		msg, err := p.dec.Decode()
		if err == nil {
			if m, _ := rpccp.ReadRootMessage(msg); m.Which() == rpccp.Message_Which_return {
				break
			}
		}
		p.conn.Close()
		if time.Now().After(deadline) {
			t.Fatalf("no room for a new stranger after one left: %v", err)
		}
	}

	// Peers that authenticate at once never count.
	members, _ := serve(t, &plaincounter.Counter{}, 0, lim)
	for range 2 * limit {
		dialCounter(t, members)
	}
	requireServesOthers(t, members)
}

// Many peers, each part-way through a message within its own limit, add
// up: the bytes still arriving on all connections are bounded together.
// (An outside tester grew a server by 5.3 GB with 300 logged-in
// connections, each holding 8.8 MiB of a 8.9 MiB message.)
func TestMessagesStillArrivingAreBoundedAcrossConnections(t *testing.T) {
	addr, _ := serve(t, &plaincounter.Counter{}, 0, rpcguard.Limits{
		MaxMessageSize: 1 << 20,
		MaxReceiving:   3 << 20,
	})
	// Each peer announces a 900 KiB message and sends 800 KiB of it.
	startMessage := func() *rawPeer {
		p := dialRaw(t, addr)
		var hdr [8]byte
		binary.LittleEndian.PutUint32(hdr[4:], (900<<10)/8)
		if _, err := p.conn.Write(hdr[:]); err != nil {
			t.Fatal(err)
		}
		if _, err := p.conn.Write(make([]byte, 800<<10)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var refused *rawPeer
	for i := 0; i < 8 && refused == nil; i++ {
		p := startMessage()
		p.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		if msg, err := p.dec.Decode(); err == nil {
			if m, _ := rpccp.ReadRootMessage(msg); m.Which() == rpccp.Message_Which_abort {
				ex, _ := m.Abort()
				reason, _ := ex.Reason()
				if !strings.Contains(reason, "unfinished messages") {
					t.Fatalf("peer %d aborted with %q", i, reason)
				}
				refused = p
			}
		}
	}
	if refused == nil {
		t.Fatalf("8 peers holding 800 KiB each passed a 3 MiB bound")
	}
	requireServesOthers(t, addr)
}
