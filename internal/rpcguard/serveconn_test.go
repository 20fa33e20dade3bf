package rpcguard_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/internal/testcounter/countertest"
	"github.com/gadgetd/gadgetd/internal/testcounter/plaincounter"
)

// A connection handed to ServeConn counts against the same connection
// limit as those Serve accepts: past it, ServeConn closes it with a reason,
// says why, and never calls its bootstrap (whatever the caller prepared for
// it is still the caller's to release). Below the limit it is served.
func TestServeConnSharesTheConnectionLimitAndRefusesWithoutBootstrapping(t *testing.T) {
	addr, srv := serve(t, &plaincounter.Counter{}, 1, rpcguard.Limits{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	first := dialCounter(t, addr)
	if _, err := countertest.Increment(ctx, first); err != nil {
		t.Fatal(err)
	}

	ours, theirs := loopbackPair(t)
	bootstrapped := false
	err := srv.ServeConn(ours, func(*rpcguard.Peer) capnp.Client {
		bootstrapped = true
		return capnp.Client{}
	})
	if !errors.Is(err, rpcguard.ErrLimit) || bootstrapped {
		t.Fatalf("ServeConn past the connection limit: %v, bootstrap called: %v; want ErrLimit and no bootstrap", err, bootstrapped)
	}
	peer := &rawPeer{t: t, conn: theirs, enc: capnp.NewEncoder(theirs), dec: capnp.NewDecoder(theirs)}
	if reason := peer.abortReason(5 * time.Second); !strings.Contains(reason, "server busy") {
		t.Fatalf("a connection ServeConn refused got abort reason %q, want one saying the server is busy", reason)
	}
	if _, err := countertest.Increment(ctx, first); err != nil {
		t.Fatalf("an admitted client stopped being served: %v", err)
	}
}

// loopbackPair returns both ends of a new loopback TCP connection, accepted
// apart from any Server.
func loopbackPair(t *testing.T) (accepted, dialed net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dialed, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dialed.Close() })
	if accepted, err = ln.Accept(); err != nil {
		t.Fatal(err)
	}
	return accepted, dialed
}
