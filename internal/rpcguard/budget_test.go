package rpcguard_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/exc"
	"capnproto.org/go/capnp/v3/rpc"

	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/plaincounter"
)

// serveUsers starts a guarded server for counter whose peers log in at once
// as the user their loopback address names: every connection from
// 127.0.0.2 is one user, every one from 127.0.0.3 another.
func serveUsers(t *testing.T, counter *plaincounter.Counter, lim rpcguard.Limits) (port string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bootstrap := capnp.Client(counter.Client())
	t.Cleanup(bootstrap.Release)
	srv := rpcguard.NewServer(func(p *rpcguard.Peer) capnp.Client {
		host, _, _ := net.SplitHostPort(p.RemoteAddr().String())
		p.Authenticated(host)
		return bootstrap.AddRef()
	}, 0, lim, nil)
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("closing server: %v", err)
		}
	})
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return port
}

// dialAs connects to the server on port from the loopback address user.
func dialAs(t *testing.T, user, port string) counterpb.Counter {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(user)}}
	nc, err := d.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		t.Fatal(err)
	}
	conn := rpc.NewConn(rpc.NewStreamTransport(nc), nil)
	counter := counterpb.Counter(conn.Bootstrap(context.Background()))
	t.Cleanup(func() {
		counter.Release()
		conn.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := capnp.Client(counter).Resolve(ctx); err != nil {
		t.Fatal(err)
	}
	return counter
}

// increment sends one increment carrying pad bytes of padding.
func increment(ctx context.Context, c counterpb.Counter, pad int) error {
	ans, release := capnp.Client(c).SendCall(ctx, capnp.Send{
		Method:   capnp.Method{InterfaceID: counterpb.Counter_TypeID, MethodID: 0},
		ArgsSize: capnp.ObjectSize{DataSize: 8, PointerCount: 1},
		PlaceArgs: func(s capnp.Struct) error {
			s.SetUint64(0, 1)
			if pad == 0 {
				return nil
			}
			d, err := capnp.NewData(s.Segment(), make([]byte, pad))
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

// burst sends calls increments of pad bytes on each connection at once and
// returns their results as they come.
func burst(ctx context.Context, conns []counterpb.Counter, calls, pad int) <-chan error {
	errs := make(chan error, len(conns)*calls)
	for _, c := range conns {
		for range calls {
			go func() { errs <- increment(ctx, c, pad) }()
		}
	}
	return errs
}

// awaitRefusals waits for want calls of errs to be refused as overloaded
// with a reason that contains naming.
func awaitRefusals(t *testing.T, errs <-chan error, want int, naming string) {
	t.Helper()
	for refused := 0; refused < want; refused++ {
		select {
		case err := <-errs:
			if exc.TypeOf(err) != exc.Overloaded || !strings.Contains(err.Error(), naming) {
				t.Fatalf("call %d past the budget returned %v, want an overloaded exception naming %q", refused+1, err, naming)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of %d calls past the budget were refused", refused, want)
		}
	}
}

// awaitSuccesses waits for n calls of errs to succeed.
func awaitSuccesses(t *testing.T, errs <-chan error, n int) {
	t.Helper()
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("a call within the budget failed: %v", err)
		}
	}
}

// One user's connections share one budget of calls in flight: three
// connections of 4 calls each, every connection within its own bound of 4,
// get 6 calls running between them and the other 6 refused as overloaded,
// naming the user. Another user is served meanwhile, and once the calls
// return the first user's connections work again. Without the shared
// budget all 12 calls would run (found F1: 20 connections, 4-9 GB).
func TestAUsersConnectionsShareOneInFlightBudget(t *testing.T) {
	const perConn, perUser, conns = 4, 6, 3
	gate := make(chan struct{})
	port := serveUsers(t, &plaincounter.Counter{Gate: gate}, rpcguard.Limits{MaxInFlight: perConn, MaxUserInFlight: perUser})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var alice []counterpb.Counter
	for range conns {
		alice = append(alice, dialAs(t, "127.0.0.2", port))
	}
	errs := burst(ctx, alice, perConn, 0)
	awaitRefusals(t, errs, conns*perConn-perUser, `user "127.0.0.2" overloaded`)

	bob := dialAs(t, "127.0.0.3", port)
	bobs := burst(ctx, []counterpb.Counter{bob}, perConn, 0)
	select {
	case err := <-bobs:
		t.Fatalf("another user's call came back before its calls were let go: %v", err)
	case <-time.After(200 * time.Millisecond): // all four running, none refused
	}
	close(gate)
	awaitSuccesses(t, errs, perUser)
	awaitSuccesses(t, bobs, perConn)
	for _, c := range alice { // the budget was given back
		if err := increment(ctx, c, 0); err != nil {
			t.Fatalf("after the burst: %v", err)
		}
	}
}

// All connections of all users share one budget of call bytes in flight:
// four users with 400 KiB of calls each, each user within its own bound,
// get at most 1 MiB of calls running between them (10 calls of a little
// over 100 KiB) and the rest refused as overloaded, naming the server. Once the calls return every user is served
// again.
func TestAllUsersShareTheServersInFlightBudget(t *testing.T) {
	const pad, perConn = 100 << 10, 4
	gate := make(chan struct{})
	port := serveUsers(t, &plaincounter.Counter{Gate: gate}, rpcguard.Limits{MaxServerInFlightBytes: 1 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var users []counterpb.Counter
	for _, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"} {
		users = append(users, dialAs(t, ip, port))
	}
	errs := burst(ctx, users, perConn, pad)
	const fit = (1 << 20) / pad
	awaitRefusals(t, errs, len(users)*perConn-fit, "server overloaded")
	close(gate)
	for range fit {
		if err := <-errs; err != nil && exc.TypeOf(err) != exc.Overloaded {
			t.Errorf("a call within the budget failed: %v", err)
		}
	}
	for _, c := range users {
		if err := increment(ctx, c, pad); err != nil {
			t.Fatalf("after the burst: %v", err)
		}
	}
}
