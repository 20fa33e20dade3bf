package rpcguard_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/rpc"

	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/plaincounter"
)

// serveLogins starts a guarded server whose peers log in at once as the
// user their loopback address names, and get the counter if the login
// succeeds, or the login's error as their bootstrap capability.
func serveLogins(t *testing.T, lim rpcguard.Limits, logger *slog.Logger) (port string) {
	t.Helper()
	_, port = startLogins(t, lim, logger)
	return port
}

// startLogins is serveLogins, and also returns the server.
func startLogins(t *testing.T, lim rpcguard.Limits, logger *slog.Logger) (srv *rpcguard.Server, port string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bootstrap := capnp.Client((&plaincounter.Counter{}).Client())
	t.Cleanup(bootstrap.Release)
	srv = rpcguard.NewServer(func(p *rpcguard.Peer) capnp.Client {
		host, _, _ := net.SplitHostPort(p.RemoteAddr().String())
		if err := p.Authenticated(host); err != nil {
			return capnp.ErrorClient(err)
		}
		return bootstrap.AddRef()
	}, 0, lim, logger)
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return srv, port
}

// connectAs dials port from the loopback address user and returns the
// connection's bootstrap capability and a func that closes it.
func connectAs(t *testing.T, user, port string) (counterpb.Counter, func()) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(user)}}
	nc, err := d.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		t.Fatal(err)
	}
	conn := rpc.NewConn(rpc.NewStreamTransport(nc), nil)
	counter := counterpb.Counter(conn.Bootstrap(context.Background()))
	var once sync.Once
	closeIt := func() {
		once.Do(func() {
			counter.Release()
			conn.Close()
		})
	}
	t.Cleanup(closeIt)
	return counter, closeIt
}

func callErr(c counterpb.Counter) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return increment(ctx, c, 0)
}

// TestAUserHoldsABoundedNumberOfConnections: past MaxUserConns a user's
// next login fails with an error that says why, while another user still
// logs in, and once one of the user's connections has gone the user can
// log in again. Without the bound one user could take every connection
// the server has room for.
func TestAUserHoldsABoundedNumberOfConnections(t *testing.T) {
	port := serveLogins(t, rpcguard.Limits{MaxUserConns: 2}, nil)
	first, closeFirst := connectAs(t, "127.0.0.2", port)
	second, _ := connectAs(t, "127.0.0.2", port)
	for _, c := range []counterpb.Counter{first, second} {
		if err := callErr(c); err != nil {
			t.Fatalf("a connection within the bound: %v", err)
		}
	}
	third, _ := connectAs(t, "127.0.0.2", port)
	if err := callErr(third); err == nil || !strings.Contains(err.Error(), "has 2 connections logged in, the most one user may have") {
		t.Fatalf("the third connection of one user: %v", err)
	}
	other, _ := connectAs(t, "127.0.0.3", port)
	if err := callErr(other); err != nil {
		t.Fatalf("another user, while the first is at its bound: %v", err)
	}

	closeFirst()
	// The server learns of the close a moment later.
	deadline := time.Now().Add(10 * time.Second)
	for {
		again, closeAgain := connectAs(t, "127.0.0.2", port)
		err := callErr(again)
		closeAgain()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the user could not log in again after closing a connection: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLinesAboutOneUsersConnectionsAreRateLimited: a logged-in user who
// opens connection after connection, each causing one error, gets only a
// burst of lines into the log (then one summary), not one line each. The
// per-connection error budget alone did not stop that.
func TestLinesAboutOneUsersConnectionsAreRateLimited(t *testing.T) {
	var out safeBuffer
	logger := slog.New(slog.NewTextHandler(&out, nil))
	port := serveLogins(t, rpcguard.Limits{}, logger)
	const conns = 120 // well above userLogBurst (50)
	start := time.Now()
	for range conns {
		p := dialRaw(t, net.JoinHostPort("127.0.0.1", port)) // user "127.0.0.1"
		p.bootstrap(0)
		p.conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := p.dec.Decode(); err != nil {
			t.Fatalf("waiting for the bootstrap: %v", err)
		}
		// One Disembargo it had no business sending: one error line.
		p.conn.Write(encodeAll(t, disembargoToBootstrap(0)))
		p.conn.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(out.String(), "level=ERROR") < 50 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // the lines of the last connections are still coming
	}
	time.Sleep(100 * time.Millisecond)
	lines := strings.Count(out.String(), "level=ERROR")
	// The bucket refills at userLogRate (1) a second while the test runs,
	// longer on a busy machine: that much more is allowed, and no more.
	refilled := int(time.Since(start).Seconds()) + 1
	if lines < 50 || lines > 50+refilled {
		t.Fatalf("%d ERROR lines about one user's %d misbehaving connections in %v, want the burst (50) and at most the %d a second refilled", lines, conns, time.Since(start).Round(time.Millisecond), refilled)
	}
}

type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
