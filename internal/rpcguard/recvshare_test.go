package rpcguard_test

import (
	"context"
	"encoding/binary"
	"net"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/internal/testcounter/plaincounter"
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

// TestStrangersCannotFillTheReceiveBudget: connections that never log in,
// each stalled part-way through a message of their largest size, hold at
// most Unauthenticated.MaxConns of those messages (by default a user's share
// of MaxReceiving), however many arrive: past it each newcomer takes the
// oldest one's place. A logged-in user's large message still arrives. (An
// outside tester opened 4,095 strangers from 64 addresses, each with 9
// bytes of a 64 KiB message, and held the whole 256 MiB budget without an
// account: a logged-in user's next 100 KB call closed its connection.)
func TestStrangersCannotFillTheReceiveBudget(t *testing.T) {
	const (
		share    = 1 << 20
		msgSize  = 64 << 10
		maxConns = share / msgSize
	)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bootstrap := capnp.Client((&plaincounter.Counter{}).Client())
	t.Cleanup(bootstrap.Release)
	srv := rpcguard.NewServer(func(p *rpcguard.Peer) capnp.Client {
		// Only alice's address logs in; everyone else stays a stranger.
		if host, _, _ := net.SplitHostPort(p.RemoteAddr().String()); host == "127.0.0.3" {
			p.Authenticated("alice")
		}
		return bootstrap.AddRef()
	}, 0, rpcguard.Limits{
		MaxMessageSize:   share,
		MaxReceiving:     2 * share,
		MaxUserReceiving: share,
		Unauthenticated:  rpcguard.Budget{MaxMessageSize: msgSize},
	}, nil)
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	_, port, _ := net.SplitHostPort(ln.Addr().String())

	// stall sends from host the header of a message of size bytes and its
	// first body word, and no more: the server reserves the message's read
	// chunk, size-8 bytes, until it arrives or the connection ends.
	stall := func(host string, size int) *rawPeer {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(host)}}
		nc, err := d.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		var msg [16]byte
		binary.LittleEndian.PutUint32(msg[4:], uint32(size-8)/8)
		nc.Write(msg[:])
		return &rawPeer{t: t, conn: nc, enc: capnp.NewEncoder(nc), dec: capnp.NewDecoder(nc)}
	}
	held := int64(msgSize - 8)
	first := stall("127.0.0.2", msgSize)
	waitReceiving(t, srv, held)
	// Twice as many strangers as fit in the server's whole budget.
	for range 2 * 2 * maxConns {
		stall("127.0.0.2", msgSize)
	}
	waitReceiving(t, srv, maxConns*held)
	if reason := first.abortReason(10 * time.Second); !strings.Contains(reason, "the server has its maximum of 16 connections that have not logged in and this connection had not logged in; a newer one took its place") {
		t.Fatalf("the oldest stranger: abort reason %q, want one naming the strangers' limit", reason)
	}

	// Alice's connection, a stranger until it logs in, takes the oldest
	// one's place too; then the first chunk of her largest message is
	// received (the server reserves a message's body 64 KiB at a time, as
	// it arrives).
	stall("127.0.0.3", share)
	waitReceiving(t, srv, (maxConns-1)*held+64<<10)
}
