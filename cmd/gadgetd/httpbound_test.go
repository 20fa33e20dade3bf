package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// getHealthz sends a whole GET /healthz on a new connection from the
// loopback address from and returns the status line, or "" if the server
// closed the connection without answering.
func getHealthz(t *testing.T, from, httpAddr string) string {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	nc, err := d.Dial("tcp", httpAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(nc, "GET /healthz HTTP/1.1\r\nHost: gadgetd\r\nConnection: close\r\n\r\n"); err != nil {
		return "" // refused before the request was written
	}
	status, err := bufio.NewReader(nc).ReadString('\n')
	if err != nil {
		return ""
	}
	return strings.TrimSpace(status)
}

// An outside tester opened 2 × 10,500 HTTP connections that never finished
// a request header; the server ran out of file descriptors, and then the
// Cap'n Proto listener could not accept and an install could not open a
// pipe. Now the HTTP listener holds at most httpMaxConnsPerHost connections
// from one address (httpMaxConns in all, see internal/connlimit) and closes
// the next one unanswered, while other addresses and Cap'n Proto logins are
// served.
func TestHTTPConnectionsFromOneAddressAreBoundedAndLoginsGoOn(t *testing.T) {
	bin := buildBinary(t)
	capnpAddr, httpAddr, lines, _ := startServe(t, bin, "--data", t.TempDir(), "--dev", "--examples", t.TempDir())
	var token string
	for token == "" && lines.Scan() {
		if v, found := strings.CutPrefix(lines.Text(), "GADGETD_TOKEN="); found {
			token = v
		}
	}
	if token == "" {
		t.Fatal("serve --dev printed no GADGETD_TOKEN line")
	}
	const ok = "HTTP/1.1 200 OK"
	if status := getHealthz(t, "127.0.0.1", httpAddr); !strings.HasSuffix(status, ok) {
		t.Fatalf("healthz answered %q before any load", status)
	}

	// Connections that send half a header and wait.
	held := make([]net.Conn, httpMaxConnsPerHost)
	for i := range held {
		nc, err := net.Dial("tcp", httpAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		io.WriteString(nc, "GET / HTTP/1.1\r\n")
		held[i] = nc
	}
	// The server counts a connection when it accepts it: once all are
	// counted, a whole request from the same address goes unanswered.
	deadline := time.Now().Add(10 * time.Second)
	for getHealthz(t, "127.0.0.1", httpAddr) != "" {
		if time.Now().After(deadline) {
			t.Fatalf("%d half-open connections from one address, and one more is still served", httpMaxConnsPerHost)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if status := getHealthz(t, "127.0.0.2", httpAddr); !strings.HasSuffix(status, ok) {
		t.Fatalf("another address got %q while one was at its bound", status)
	}
	if out, err := gadgetd(t, bin, capnpAddr, token, "ls"); err != nil {
		t.Fatalf("a Cap'n Proto login failed while HTTP was at its bound: %v\n%s", err, out)
	}
	// A connection that leaves makes room.
	held[0].Close()
	for deadline := time.Now().Add(10 * time.Second); !strings.HasSuffix(getHealthz(t, "127.0.0.1", httpAddr), ok); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no room for a request after a held connection closed")
		}
	}
}

// An outside tester filled all httpMaxConns slots from 18 addresses with
// connections that each sent one request and then sat idle, kept alive for
// the server's 2-minute idle timeout, and for as long as they held them no
// one could load the shell or open a gadget's frame. Now a full listener
// closes the connection idle longest to make room, and a newcomer is
// served.
func TestIdleConnectionsHoldingEveryHTTPSlotDoNotKeepANewVisitorOut(t *testing.T) {
	bin := buildBinary(t)
	_, httpAddr, _, _ := startServe(t, bin, "--data", t.TempDir())
	const perAddress = httpMaxConnsPerHost
	for i := range httpMaxConns {
		from := fmt.Sprintf("127.0.3.%d", 1+i/perAddress)
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		nc, err := d.Dial("tcp", httpAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(30 * time.Second))
		// One whole request, answered, and the connection kept alive.
		if _, err := io.WriteString(nc, "GET /healthz HTTP/1.1\r\nHost: gadgetd\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil {
			t.Fatalf("idle connection %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if status := getHealthz(t, "127.0.0.1", httpAddr); strings.HasSuffix(status, "200 OK") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d idle connections hold every HTTP slot, and a new visitor is not served", httpMaxConns)
		}
	}
}
