package rpcguard_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/rpc"
	rpccp "capnproto.org/go/capnp/v3/std/capnp/rpc"

	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/schema"
)

// gate is a Gateway whose every login succeeds: it authenticates the
// connection it is called on.
type gate struct{ peer *rpcguard.Peer }

func (g gate) Login(ctx context.Context, call schema.Gateway_login) error {
	g.peer.Authenticated("tester")
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetWorkspace(schema.Workspace(capnp.ErrorClient(errors.New("a workspace"))))
}

func (gate) Restore(context.Context, schema.Gateway_restore) error {
	return capnp.Unimplemented("restore: not part of this test")
}

// serveGate serves a gate per connection, with at most maxConns of them.
func serveGate(t *testing.T, maxConns int, lim rpcguard.Limits) (addr string, srv *rpcguard.Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv = rpcguard.NewServer(func(p *rpcguard.Peer) capnp.Client {
		return capnp.Client(schema.Gateway_ServerToClient(gate{peer: p}))
	}, maxConns, lim, nil)
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	return ln.Addr().String(), srv
}

// dialFrom connects to addr from the loopback address from (127.0.0.N).
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// bootstrappedStranger connects from from, bootstraps and waits for the
// answer, so that the server surely holds the connection, and never logs in.
func bootstrappedStranger(t *testing.T, from, addr string) *rawPeer {
	t.Helper()
	nc := dialFrom(t, from, addr)
	p := &rawPeer{t: t, conn: nc, enc: capnp.NewEncoder(nc), dec: capnp.NewDecoder(nc)}
	p.bootstrap(0)
	p.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	msg, err := p.dec.Decode()
	if err != nil {
		t.Fatalf("a stranger from %s was not served: %v", from, err)
	}
	if m, _ := rpccp.ReadRootMessage(msg); m.Which() != rpccp.Message_Which_return {
		t.Fatalf("a stranger from %s got a %v, not its bootstrap's Return", from, m.Which())
	}
	return p
}

// login connects a go-capnp client and logs it in.
func login(ctx context.Context, t *testing.T, addr string) error {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	conn := rpc.NewConn(rpc.NewStreamTransport(nc), nil)
	gw := schema.Gateway(conn.Bootstrap(ctx))
	t.Cleanup(func() {
		gw.Release()
		conn.Close()
	})
	f, release := gw.Login(ctx, nil)
	defer release()
	_, err = f.Struct()
	return err
}

// An outside tester held all 1024 connection slots for the login deadline
// with connections that never logged in, 60 from each of 18 loopback
// addresses (under the 64 per address), and every login in that minute
// failed. Now a full server makes room by evicting the oldest connection
// that has not logged in, which is told why; connections that have logged
// in are never evicted, and once every slot is theirs a newcomer is refused
// as before.
func TestAFullServerEvictsTheOldestConnectionThatHasNotLoggedIn(t *testing.T) {
	const (
		slots   = 12
		perHost = 4 // strangers from each of 3 addresses, under their limit of 5
	)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	addr, srv := serveGate(t, slots, rpcguard.Limits{Unauthenticated: rpcguard.Budget{MaxPerAddress: perHost + 1}})
	var strangers []*rawPeer
	for _, from := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		for range perHost {
			strangers = append(strangers, bootstrappedStranger(t, from, addr))
		}
	}
	waitConns(t, srv, slots)
	if err := srv.HasRoomFor("tester"); err != nil {
		t.Fatalf("HasRoomFor with strangers to evict: %v", err)
	}

	if err := login(ctx, t, addr); err != nil {
		t.Fatalf("a login while strangers hold every slot failed: %v", err)
	}
	if reason := strangers[0].abortReason(10 * time.Second); !strings.Contains(reason, "had not logged in") {
		t.Fatalf("the oldest stranger was closed with reason %q, want one saying it had not logged in", reason)
	}

	// Every other slot goes to a login, one stranger at a time.
	for i := 1; i < slots; i++ {
		if err := login(ctx, t, addr); err != nil {
			t.Fatalf("login %d of %d failed: %v", i+1, slots, err)
		}
	}
	for _, p := range strangers {
		p.abortReason(10 * time.Second) // each one was evicted
	}
	// Every slot is logged in: the next one is refused, not a member evicted.
	if err := srv.HasRoomFor("tester"); !errors.Is(err, rpcguard.ErrLimit) || !strings.Contains(err.Error(), "server busy") {
		t.Fatalf("HasRoomFor on a full server of logins: %v, want server busy", err)
	}
	if reason := dialRaw(t, addr).abortReason(10 * time.Second); !strings.Contains(reason, "server busy") {
		t.Fatalf("a connection past a full server of logins got abort reason %q, want it to say the server is busy", reason)
	}
	waitConns(t, srv, slots)
}
