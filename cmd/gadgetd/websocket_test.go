package main

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// dialWebsocket opens ws://httpAddr/ws from the loopback address from,
// with origin as its Origin header ("" for none), and returns the refusal's
// status if the upgrade fails.
func dialWebsocket(t *testing.T, from, httpAddr, origin string) (*websocket.Conn, int) {
	t.Helper()
	d := websocket.Dialer{NetDialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext}
	var header http.Header
	if origin != "" {
		header = http.Header{"Origin": {origin}}
	}
	ws, resp, err := d.Dial("ws://"+httpAddr+"/ws", header)
	if err != nil {
		if resp == nil {
			t.Fatalf("websocket to %s: %v", httpAddr, err)
		}
		return nil, resp.StatusCode
	}
	t.Cleanup(func() { ws.Close() })
	return ws, http.StatusSwitchingProtocols
}

// A websocket leaves the HTTP listener's bounds once upgraded: more of them
// than the HTTP listener holds from one address stay open, and that address
// still loads pages. (The Cap'n Proto server bounds them instead.) The
// origins --allow-origin names may open websockets; others may not.
func TestServeWebsocketsLeaveTheHTTPBoundsAndOnlyAllowedOriginsConnect(t *testing.T) {
	bin := buildBinary(t)
	_, httpAddr, _, _ := startServe(t, bin, "--data", t.TempDir(), "--allow-origin", "https://shell.example")

	for i := range httpMaxConnsPerHost + 4 {
		if _, status := dialWebsocket(t, "127.0.0.1", httpAddr, ""); status != http.StatusSwitchingProtocols {
			t.Fatalf("websocket %d from one address: %d", i+1, status)
		}
	}
	if status := getHealthz(t, "127.0.0.1", httpAddr); !strings.HasSuffix(status, "200 OK") {
		t.Fatalf("with %d websockets open from one address, /healthz from it answered %q", httpMaxConnsPerHost+4, status)
	}

	for origin, want := range map[string]int{
		"https://shell.example": http.StatusSwitchingProtocols,
		"https://evil.example":  http.StatusForbidden,
	} {
		if _, status := dialWebsocket(t, "127.0.0.2", httpAddr, origin); status != want {
			t.Errorf("a websocket from origin %s answered %d, want %d", origin, status, want)
		}
	}
}
