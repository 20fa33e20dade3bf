package rpcguard_test

import (
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/rpcguard"
)

// TestOneUserCannotFillTheReceiveBudget: a user's stalled, unfinished
// messages on many connections take at most MaxUserReceiving of the
// server's MaxReceiving; the user's next message past that share is refused
// on its own connection, with an error naming the per-user limit, while
// another user's connections, old and new, are served. (An outside tester
// filled the 256 MiB server budget to its last bytes with one user's 33
// connections, and then every other peer's next message was refused.)
func TestOneUserCannotFillTheReceiveBudget(t *testing.T) {
	const share = 2 << 20
	srv, port := startLogins(t, rpcguard.Limits{MaxMessageSize: 1 << 20, MaxReceiving: 2 * share, MaxUserReceiving: share}, nil)
	alice, _ := connectAs(t, "127.0.0.3", port)
	if err := callErr(alice); err != nil {
		t.Fatalf("alice, before the attack: %v", err)
	}

	// Each of mallory's connections sends a whole MiB message but its last
	// word: four of them would fill the server's budget to its last 32
	// bytes, as the tester's 33 did at the default sizes.
	const body = 1<<20 - 8
	stall := func() *rawPeer {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
		nc, err := d.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		msg := make([]byte, 8+body-8)
		binary.LittleEndian.PutUint32(msg[4:], body/8)
		nc.Write(msg) // fails once the server has refused it
		return &rawPeer{t: t, conn: nc, enc: capnp.NewEncoder(nc), dec: capnp.NewDecoder(nc)}
	}
	for i := range int64(share / (1 << 20)) {
		stall()
		waitReceiving(t, srv, (i+1)*body)
	}
	for range 2 {
		reason := stall().abortReason(10 * time.Second)
		if !strings.Contains(reason, `user "127.0.0.2" already has 2 MiB of unfinished messages arriving on its connections, the per-user limit`) {
			t.Fatalf("mallory's message past her share: abort reason %q, want one naming the per-user limit", reason)
		}
	}
	if got := srv.Receiving(); got != share-16 {
		t.Fatalf("the server is receiving %d bytes; mallory's stalled messages are %d", got, share-16)
	}

	if err := callErr(alice); err != nil {
		t.Fatalf("alice's connection, while mallory holds her share: %v", err)
	}
	fresh, _ := connectAs(t, "127.0.0.3", port)
	if err := callErr(fresh); err != nil {
		t.Fatalf("alice's new connection, while mallory holds her share: %v", err)
	}
}

// waitReceiving waits until srv's connections are receiving want bytes.
func waitReceiving(t *testing.T, srv *rpcguard.Server, want int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for got := srv.Receiving(); got != want; got = srv.Receiving() {
		if time.Now().After(deadline) {
			t.Fatalf("the server is receiving %d bytes of unfinished messages, want %d", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
