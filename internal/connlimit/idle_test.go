package connlimit_test

import (
	"net"
	"testing"

	"github.com/gadgetd/gadgetd/internal/connlimit"
)

// An outside tester held every slot of the HTTP listener with connections
// that had sent one request and then sat idle (kept alive for 2 minutes),
// and no one else could load a page. Now a full Listener closes the
// connection that has been idle longest to make room for a newcomer, while
// a connection serving a request is never closed for one, and when every
// connection is busy a newcomer is refused as before.
func TestAFullListenerClosesTheLongestIdleConnectionForANewcomer(t *testing.T) {
	addr, ln, accepted := serveLimited(t, connlimit.WithMax(3))
	var client, server [3]net.Conn
	for i := range 3 {
		client[i] = dialFrom(t, "127.0.0.1", addr)
		server[i] = awaitAccepted(t, accepted)
	}
	// 0 and 2 wait for a request, 2 first; 1 is serving one.
	connlimit.SetIdle(server[2], true)
	connlimit.SetIdle(server[0], true)

	newcomer := dialFrom(t, "127.0.0.2", addr)
	awaitAccepted(t, accepted)
	if closedByServer(t, newcomer) {
		t.Fatal("a newcomer to a full listener with idle connections was refused")
	}
	if !closedByServer(t, client[2]) {
		t.Fatal("the longest idle connection was not closed to make room")
	}
	if closedByServer(t, client[0]) || closedByServer(t, client[1]) {
		t.Fatal("a connection other than the longest idle one was closed")
	}

	// A connection that is active again is not idle any more.
	connlimit.SetIdle(server[0], false)
	if !closedByServer(t, dialFrom(t, "127.0.0.3", addr)) {
		t.Fatal("a newcomer was kept though every connection is busy")
	}
	if n := ln.Open(); n != 3 {
		t.Fatalf("%d connections open, want 3", n)
	}
}
