package browsertest

// Loopback listeners that count what reaches them, the witnesses of the
// isolation tests. Each probe names its channel in the path it asks for
// (/p/CHANNEL), so a count is per channel; connections are counted too, so
// that a connection that sends nothing (a preconnect) is seen as well.
// Counters are read and written under one mutex; each listener's goroutines
// end when the test ends.

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// witness counts the probes that reached its listeners.
type witness struct {
	mu       sync.Mutex
	requests map[string]int // by channel
	conns    int            // TCP connections accepted

	httpAddr string // host:port of the HTTP listener
	udpAddrs map[string]string
}

// newWitness starts an HTTP listener and one UDP listener per name in
// udpChannels (a STUN packet counts for that channel), all on 127.0.0.1.
func newWitness(t *testing.T, udpChannels ...string) *witness {
	t.Helper()
	w := newCounter()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w.httpAddr = ln.Addr().String()
	srv := &http.Server{
		Handler: http.HandlerFunc(w.serveHTTP),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				w.mu.Lock()
				w.conns++
				w.mu.Unlock()
			}
		},
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	for _, ch := range udpChannels {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		w.udpAddrs[ch] = pc.LocalAddr().String()
		go w.countPackets(pc, ch)
		t.Cleanup(func() { pc.Close() })
	}
	return w
}

// newCounter returns a witness with no listener of its own, whose serveHTTP
// a test mounts on another server's /p/ paths.
func newCounter() *witness {
	return &witness{requests: map[string]int{}, udpAddrs: map[string]string{}}
}

func (w *witness) serveHTTP(rw http.ResponseWriter, r *http.Request) {
	ch, ok := strings.CutPrefix(r.URL.Path, "/p/")
	if !ok {
		ch = "other:" + r.URL.Path
	}
	w.mu.Lock()
	w.requests[ch]++
	w.mu.Unlock()
	// Content each kind of probe could use, were it let through.
	switch ch {
	case "script", "import":
		rw.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(rw, "export {};")
	case "style":
		rw.Header().Set("Content-Type", "text/css")
	default:
		rw.Header().Set("Content-Type", "text/html")
		fmt.Fprint(rw, "<!doctype html><title>probe</title>")
	}
}

func (w *witness) countPackets(pc net.PacketConn, ch string) {
	buf := make([]byte, 2048)
	for {
		if _, _, err := pc.ReadFrom(buf); err != nil {
			return
		}
		w.mu.Lock()
		w.requests[ch]++
		w.mu.Unlock()
	}
}

// counts returns a copy of the counts by channel, and the connections.
func (w *witness) counts() (map[string]int, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := make(map[string]int, len(w.requests))
	for k, v := range w.requests {
		m[k] = v
	}
	return m, w.conns
}
