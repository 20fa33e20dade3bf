package connlimit_test

import (
	"crypto/tls"
	"net"
	"testing"

	"github.com/gadgetd/gadgetd/internal/connlimit"
)

// A released connection stays open but no longer counts, even wrapped in
// TLS, and closing it later gives back nothing more.
func TestAReleasedConnectionLeavesTheBoundsAndStaysOpen(t *testing.T) {
	addr, ln, accepted := serveLimited(t, connlimit.WithMax(1))
	dialFrom(t, "127.0.0.1", addr)
	nc := <-accepted
	if !connlimit.Release(tls.Server(nc, &tls.Config{})) {
		t.Fatal("Release did not find the Listener's connection inside a *tls.Conn")
	}
	if n := ln.Open(); n != 0 {
		t.Fatalf("after Release the listener counts %d connections, want 0", n)
	}
	dialFrom(t, "127.0.0.1", addr)
	next := <-accepted // within the bound of 1 again
	nc.Close()
	if n := ln.Open(); n != 1 {
		t.Fatalf("closing a released connection left %d counted, want 1 (the next one)", n)
	}
	next.Close()
	if connlimit.Release(&net.TCPConn{}) {
		t.Fatal("Release claimed a connection no Listener handed out")
	}
}
