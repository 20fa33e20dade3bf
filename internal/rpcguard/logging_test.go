package rpcguard_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/rpc"

	"github.com/gadgetd/gadgetd/internal/rpcguard"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/testcounter/plaincounter"
)

// logRecord is one line of the server's JSON log.
type logRecord struct {
	Level  string `json:"level"`
	Msg    string `json:"msg"`
	Remote string `json:"remote"`
}

// logBuffer collects a slog JSON handler's output; safe to read while
// connections log.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// records returns what was logged about peer.
func (l *logBuffer) records(t *testing.T, peer string) []logRecord {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []logRecord
	sc := bufio.NewScanner(bytes.NewReader(l.b.Bytes()))
	for sc.Scan() {
		var r logRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if r.Remote == peer {
			out = append(out, r)
		}
	}
	return out
}

// serveLogged starts a guarded server that logs every level, as JSON, to
// the returned buffer.
func serveLogged(t *testing.T) (addr string, srv *rpcguard.Server, logs *logBuffer) {
	t.Helper()
	return serveLoggedCounter(t, &plaincounter.Counter{})
}

// serveLoggedCounter is serveLogged with counter as every peer's bootstrap.
func serveLoggedCounter(t *testing.T, counter *plaincounter.Counter) (addr string, srv *rpcguard.Server, logs *logBuffer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs = &logBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	bootstrap := capnp.Client(counter.Client())
	t.Cleanup(bootstrap.Release)
	srv = rpcguard.NewServer(func(*rpcguard.Peer) capnp.Client { return bootstrap.AddRef() }, 0, rpcguard.Limits{}, logger)
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	return ln.Addr().String(), srv, logs
}

// waitConns waits until the server holds n connections.
func waitConns(t *testing.T, srv *rpcguard.Server, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for srv.ConnCount() != n {
		if time.Now().After(deadline) {
			t.Fatalf("the server holds %d connections, want %d", srv.ConnCount(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// dialTCP connects to addr and waits until the server has the connection.
func dialTCP(t *testing.T, addr string, srv *rpcguard.Server) *net.TCPConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	waitConns(t, srv, 1)
	return nc.(*net.TCPConn)
}

// A peer going away is routine: at Info and above it would drown the errors
// that matter (issue 6, item 9). It is still there at debug, naming the peer.
func TestOrdinaryDisconnectsLogOnlyADebugLineNamingThePeer(t *testing.T) {
	addr, srv, logs := serveLogged(t)
	for name, disconnect := range map[string]func(t *testing.T) (peer string){
		"a go-capnp client closes its connection": func(t *testing.T) string {
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			conn := rpc.NewConn(rpc.NewStreamTransport(nc), nil)
			counter := counterpb.Counter(conn.Bootstrap(context.Background()))
			f, release := counter.Get(context.Background(), nil)
			if _, err := f.Struct(); err != nil {
				t.Fatal(err)
			}
			release()
			counter.Release()
			conn.Close()
			return nc.LocalAddr().String()
		},
		"a peer hangs up": func(t *testing.T) string {
			nc := dialTCP(t, addr, srv)
			nc.Close()
			return nc.LocalAddr().String()
		},
		"a peer resets the connection": func(t *testing.T) string {
			nc := dialTCP(t, addr, srv)
			nc.SetLinger(0) // close sends RST
			nc.Close()
			return nc.LocalAddr().String()
		},
	} {
		t.Run(name, func(t *testing.T) {
			peer := disconnect(t)
			waitConns(t, srv, 0)
			var debug int
			for _, r := range logs.records(t, peer) {
				if r.Level != slog.LevelDebug.String() {
					t.Errorf("logged at %s: %q", r.Level, r.Msg)
				} else {
					debug++
				}
			}
			if debug == 0 {
				t.Errorf("no debug line names the peer %s", peer)
			}
		})
	}
}

// A peer that hangs up while its calls run leaves the server answers it
// cannot send; that is routine too.
func TestAPeerLeavingWithCallsInFlightLogsOnlyDebugLines(t *testing.T) {
	gate := make(chan struct{})
	addr, srv, logs := serveLoggedCounter(t, &plaincounter.Counter{Gate: gate})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	peer := nc.LocalAddr().String()
	conn := rpc.NewConn(rpc.NewStreamTransport(nc), nil)
	counter := counterpb.Counter(conn.Bootstrap(context.Background()))
	ctx := context.Background()
	first, release := counter.Increment(ctx, nil)
	defer release()
	for range 4 {
		_, release := counter.Increment(ctx, nil)
		defer release()
	}
	// Let the first call through and wait for its answer: the four sent
	// after it have reached the server too, and wait at the gate.
	gate <- struct{}{}
	if _, err := first.Struct(); err != nil {
		t.Fatal(err)
	}
	// The peer goes, then their answers are ready to be sent.
	nc.Close()
	close(gate)
	waitConns(t, srv, 0)
	counter.Release()
	conn.Close()
	var debug int
	for _, r := range logs.records(t, peer) {
		if r.Level != slog.LevelDebug.String() {
			t.Errorf("logged at %s: %q", r.Level, r.Msg)
		} else {
			debug++
		}
	}
	if debug == 0 {
		t.Errorf("no debug line names the peer %s", peer)
	}
}

// A peer that breaks a limit is not routine: it stays a warning or an error,
// naming the peer.
func TestConnectionErrorsStayErrorsAndNameThePeer(t *testing.T) {
	addr, srv, logs := serveLogged(t)
	nc := dialTCP(t, addr, srv)
	defer nc.Close()
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[4:], (64<<20)/8) // 64 MiB, over the default limit
	nc.Write(hdr[:])
	waitConns(t, srv, 0)
	peer := nc.LocalAddr().String()
	for _, r := range logs.records(t, peer) {
		if r.Level == slog.LevelError.String() || r.Level == slog.LevelWarn.String() {
			return
		}
	}
	t.Fatalf("no warning or error names the peer %s; logged about it: %+v", peer, logs.records(t, peer))
}
