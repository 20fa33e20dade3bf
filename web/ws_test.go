package web_test

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/rpc"
	rpccp "capnproto.org/go/capnp/v3/std/capnp/rpc"
	"github.com/gorilla/websocket"

	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/leakcheck"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/internal/wsclient"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
	"github.com/gadgetd/gadgetd/web"
)

// compileCache is shared by every server a test starts, so the test
// counter compiles once.
var compileCache string

func TestMain(m *testing.M) {
	leakcheck.Install()
	dir, err := os.MkdirTemp("", "gadgetd-web-test-cache-")
	if err != nil {
		panic(err)
	}
	compileCache = dir
	code := m.Run()
	blueprinttest.RemoveAll()
	os.RemoveAll(dir)
	os.Exit(leakcheck.Verify(code))
}

// wsHarness is a real server on a real data directory, its Handler on a
// loopback HTTP listener.
type wsHarness struct {
	srv  *server.Server
	http *httptest.Server
	url  string // ws://127.0.0.1:port
}

// startWS opens a server with the test counter installed and serves
// web.Handler for it on loopback.
func startWS(t testing.TB, serverOpts []server.Option, webOpts ...web.Option) *wsHarness {
	t.Helper()
	ctx := context.Background()
	serverOpts = append([]server.Option{
		server.WithWasmOptions(wasmhost.WithCompilationCacheDir(compileCache)),
		server.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
	}, serverOpts...)
	srv, err := server.Open(ctx, t.TempDir(), serverOpts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.InstallBuiltin(ctx, blueprinttest.Bundle(t, blueprinttest.TestCounter)); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(web.Handler(append([]web.Option{web.WithCapnp(srv)}, webOpts...)...))
	t.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("closing server: %v", err)
		}
	})
	return &wsHarness{srv: srv, http: hs, url: "ws" + strings.TrimPrefix(hs.URL, "http")}
}

func (h *wsHarness) token(t testing.TB, name string) string {
	t.Helper()
	tok, err := h.srv.IssueToken(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// dialWS opens a websocket to path with the given request header (nil:
// none, as a non-browser client sends no Origin). On a refused handshake
// it returns the HTTP response.
func dialWS(t testing.TB, url string, header http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ws, resp, err := websocket.DefaultDialer.Dial(url, header)
	if err == nil {
		t.Cleanup(func() { ws.Close() })
	}
	return ws, resp, err
}

// rpcOver runs a go-capnp client over ws and returns its bootstrap
// capability; both are released when the test ends.
func rpcOver(t testing.TB, ws *websocket.Conn) capnp.Client {
	t.Helper()
	return rpcOverWith(t, ws, nil)
}

// rpcOverWith is rpcOver with the connection's options.
func rpcOverWith(t testing.TB, ws *websocket.Conn, opts *rpc.Options) capnp.Client {
	t.Helper()
	conn := rpc.NewConn(wsclient.NewTransport(ws), opts)
	boot := conn.Bootstrap(context.Background())
	t.Cleanup(func() {
		boot.Release()
		conn.Close()
	})
	return boot
}

// gatewayOverWS dials /ws and returns the Gateway it bootstraps.
func (h *wsHarness) gatewayOverWS(t testing.TB) schema.Gateway {
	t.Helper()
	ws, _, err := dialWS(t, h.url+"/ws", nil)
	if err != nil {
		t.Fatalf("dialing /ws: %v", err)
	}
	return schema.Gateway(rpcOver(t, ws))
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// loginOverWS logs token in over a new /ws connection and returns its
// workspace once the login has succeeded.
func (h *wsHarness) loginOverWS(t testing.TB, token string) schema.Workspace {
	t.Helper()
	f, release := h.gatewayOverWS(t).Login(testCtx(t), func(p schema.Gateway_login_Params) error { return p.SetToken(token) })
	t.Cleanup(release)
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("login over /ws: %v", err)
	}
	return res.Workspace()
}

// createCounter makes a test counter gadget in ws.
func createCounter(t testing.TB, ws schema.Workspace) (schema.Gadget, string) {
	t.Helper()
	f, release := ws.Create(testCtx(t), func(p schema.Workspace_create_Params) error { return p.SetBlueprint("counter") })
	t.Cleanup(release)
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	info, _ := res.Info()
	id, _ := info.Id()
	return res.Gadget(), id
}

func increment(t testing.TB, c counterpb.Counter) int64 {
	t.Helper()
	f, release := c.Increment(testCtx(t), nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("increment: %v", err)
	}
	return res.Value()
}

// A browser's websocket reaches the same Gateway as a TCP client: it logs
// in, creates a gadget, opens its session and calls it.
func TestAWebsocketClientLogsInAndCallsAGadget(t *testing.T) {
	h := startWS(t, nil)
	ws := h.loginOverWS(t, h.token(t, "alice"))
	gadget, _ := createCounter(t, ws)
	f, release := gadget.Open(testCtx(t), nil)
	defer release()
	counter := counterpb.Counter(f.Session())
	for want := int64(1); want <= 3; want++ {
		if got := increment(t, counter); got != want {
			t.Fatalf("increment over /ws = %d, want %d", got, want)
		}
	}
}

// login → create → open → increment, each pipelined onto the one before,
// is answered over a websocket as over TCP.
func TestPipelinedCallsWorkOverAWebsocket(t *testing.T) {
	h := startWS(t, nil)
	token := h.token(t, "alice")
	ctx := testCtx(t)
	login, r1 := h.gatewayOverWS(t).Login(ctx, func(p schema.Gateway_login_Params) error { return p.SetToken(token) })
	defer r1()
	created, r2 := login.Workspace().Create(ctx, func(p schema.Workspace_create_Params) error { return p.SetBlueprint("counter") })
	defer r2()
	opened, r3 := created.Gadget().Open(ctx, nil)
	defer r3()
	inc, r4 := counterpb.Counter(opened.Session()).Increment(ctx, func(p counterpb.Counter_increment_Params) error { p.SetBy(5); return nil })
	defer r4()
	res, err := inc.Struct()
	if err != nil {
		t.Fatalf("pipelined login → create → open → increment over /ws: %v", err)
	}
	if res.Value() != 5 {
		t.Fatalf("pipelined increment = %d, want 5", res.Value())
	}
}

// abortReason reads what the server sends on ws until it closes, and
// returns the reason of the Abort it sent before closing, or of the
// websocket close frame if that came first ("" if neither).
func abortReason(t testing.TB, ws *websocket.Conn) string {
	t.Helper()
	ws.SetReadDeadline(time.Now().Add(time.Minute))
	for {
		kind, buf, err := ws.ReadMessage()
		if closed := (*websocket.CloseError)(nil); errors.As(err, &closed) && closed.Code != websocket.CloseNormalClosure {
			return closed.Error()
		}
		if err != nil {
			return ""
		}
		if kind != websocket.BinaryMessage {
			t.Fatalf("the server sent a websocket message of kind %d", kind)
		}
		m, err := capnp.Unmarshal(buf)
		if err != nil {
			t.Fatalf("the server sent a websocket message that is not one Cap'n Proto message: %v", err)
		}
		msg, err := rpccp.ReadRootMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Which() == rpccp.Message_Which_abort {
			ex, _ := msg.Abort()
			reason, _ := ex.Reason()
			return reason
		}
	}
}

// requireServesOthers proves the server still serves a new client, over
// /ws, from start to gadget call.
func (h *wsHarness) requireServesOthers(t testing.TB) {
	t.Helper()
	ws := h.loginOverWS(t, h.token(t, "bystander"))
	gadget, _ := createCounter(t, ws)
	f, release := gadget.Open(testCtx(t), nil)
	defer release()
	if got := increment(t, counterpb.Counter(f.Session())); got != 1 {
		t.Fatalf("a bystander's increment = %d, want 1", got)
	}
}

// frameHeader is the stream framing of a one-segment message of n bytes.
func frameHeader(n int) []byte {
	var b [8]byte
	binary.LittleEndian.PutUint32(b[4:], uint32(n/8))
	return b[:]
}

// Over a websocket, a peer that has not logged in may send only messages
// within the small stranger budget, as over TCP: both a Cap'n Proto header
// that claims more and a websocket message longer than that end the
// connection, and the server serves others meanwhile.
func TestAnOversizedMessageOverAWebsocketClosesOnlyThatConnection(t *testing.T) {
	h := startWS(t, nil)
	limit := 64 << 10 // rpcguard's default for a peer that has not logged in
	for name, c := range map[string]struct {
		message []byte
		want    string
	}{
		"a header claiming more than the limit": {frameHeader(1 << 20), "the limit is 65536"},
		"a websocket message over the limit":    {append(frameHeader(2*limit), make([]byte, 2*limit)...), "close 1009 (message too big)"},
	} {
		t.Run(name, func(t *testing.T) {
			// In one frame, so that its header alone says it is too long.
			dialer := websocket.Dialer{WriteBufferSize: 4 * limit}
			ws, _, err := dialer.Dial(h.url+"/ws", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			if err := ws.WriteMessage(websocket.BinaryMessage, c.message); err != nil {
				t.Fatal(err)
			}
			if reason := abortReason(t, ws); !strings.Contains(reason, c.want) {
				t.Fatalf("the server ended the connection with %q, want a reason containing %q", reason, c.want)
			}
		})
	}
	h.requireServesOthers(t)
}

// Cap'n Proto travels in binary websocket messages only: a text message
// ends the connection with a protocol error that says so.
func TestATextMessageOverAWebsocketIsAProtocolError(t *testing.T) {
	h := startWS(t, nil)
	ws, _, err := dialWS(t, h.url+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteMessage(websocket.TextMessage, []byte(`{"login":"me"}`)); err != nil {
		t.Fatal(err)
	}
	if reason := abortReason(t, ws); !strings.Contains(reason, "text websocket message") {
		t.Fatalf("the server ended the connection with %q, want a reason about the text message", reason)
	}
	h.requireServesOthers(t)
}

// Each websocket message carries exactly one Cap'n Proto message: one
// split across two websocket messages, or two in one, ends the connection.
func TestAWebsocketMessageMustHoldExactlyOneCapnpMessage(t *testing.T) {
	h := startWS(t, nil)
	whole := append(frameHeader(8), make([]byte, 8)...)
	for name, c := range map[string]struct {
		messages [][]byte
		want     string
	}{
		"split":      {[][]byte{whole[:10], whole[10:]}, "ended inside the Cap'n Proto message"},
		"two in one": {[][]byte{append(append([]byte(nil), whole...), whole...)}, "holds more than the one Cap'n Proto message"},
	} {
		t.Run(name, func(t *testing.T) {
			ws, _, err := dialWS(t, h.url+"/ws", nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range c.messages {
				if err := ws.WriteMessage(websocket.BinaryMessage, m); err != nil {
					t.Fatal(err)
				}
			}
			if reason := abortReason(t, ws); !strings.Contains(reason, c.want) {
				t.Fatalf("the server ended the connection with %q, want a reason containing %q", reason, c.want)
			}
		})
	}
}

// A page from another origin may not open a websocket (403, before any
// Cap'n Proto), unless the operator allowed that origin; the server's own
// pages, and clients that send no Origin (not browsers), may.
func TestACrossOriginWebsocketIsRefused(t *testing.T) {
	const allowed = "https://shell.example:8443"
	h := startWS(t, nil, web.WithAllowedOrigins(allowed, "https://other.example:443"))
	own := "http://" + strings.TrimPrefix(h.http.URL, "http://")
	for _, c := range []struct {
		origin string
		want   int
	}{
		{"https://evil.example", http.StatusForbidden},
		{"null", http.StatusForbidden}, // a sandboxed frame
		{own, http.StatusSwitchingProtocols},
		{strings.ToUpper(allowed), http.StatusSwitchingProtocols},
		{"https://other.example", http.StatusSwitchingProtocols}, // as a browser sends it
		{"http://other.example", http.StatusForbidden},
		{"", http.StatusSwitchingProtocols},
	} {
		var header http.Header
		if c.origin != "" {
			header = http.Header{"Origin": {c.origin}}
		}
		_, resp, err := dialWS(t, h.url+"/ws", header)
		status := http.StatusSwitchingProtocols
		if err != nil {
			if resp == nil {
				t.Fatal(err)
			}
			status = resp.StatusCode
		}
		if status != c.want {
			t.Errorf("a websocket to /ws from origin %q answered %d, want %d", c.origin, status, c.want)
		}
	}
}

// dialFrom opens a websocket to url from the loopback address from.
func dialFrom(t testing.TB, from, url string) (*websocket.Conn, error) {
	t.Helper()
	d := websocket.Dialer{NetDialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}).DialContext}
	ws, _, err := d.Dial(url, nil)
	if err == nil {
		t.Cleanup(func() { ws.Close() })
	}
	return ws, err
}

// Websockets that have not logged in count against the same bound per
// address as TCP connections: one more is refused with a reason, while
// another address is served.
func TestWebsocketsThatHaveNotLoggedInAreBoundedPerAddress(t *testing.T) {
	const bound = 4
	h := startWS(t, []server.Option{server.WithLoginLimits(server.LoginLimits{MaxPerAddress: bound})})
	for i := range bound {
		ws, err := dialFrom(t, "127.0.0.1", h.url+"/ws")
		if err != nil {
			t.Fatalf("websocket %d of %d: %v", i+1, bound, err)
		}
		rpcOver(t, ws) // bootstraps, and stays a stranger
	}
	extra, err := dialFrom(t, "127.0.0.1", h.url+"/ws")
	if err != nil {
		t.Fatal(err)
	}
	if reason := abortReason(t, extra); !strings.Contains(reason, "too many connections from 127.0.0.1 have not logged in") {
		t.Fatalf("websocket %d from one address ended with %q, want a refusal naming the bound", bound+1, reason)
	}
	other, err := dialFrom(t, "127.0.0.2", h.url+"/ws")
	if err != nil {
		t.Fatal(err)
	}
	f, release := schema.Gateway(rpcOver(t, other)).Login(testCtx(t), func(p schema.Gateway_login_Params) error { return p.SetToken(h.token(t, "bob")) })
	defer release()
	if _, err := f.Struct(); err != nil {
		t.Fatalf("a login from another address while one is at its bound: %v", err)
	}
}

// bootstrapMessage is a Bootstrap message asking question qid.
func bootstrapMessage(t testing.TB, qid uint32) []byte {
	t.Helper()
	msg, seg, _ := capnp.NewMessage(capnp.SingleSegment(nil))
	m, _ := rpccp.NewRootMessage(seg)
	b, err := m.NewBootstrap()
	if err != nil {
		t.Fatal(err)
	}
	b.SetQuestionId(qid)
	buf, err := msg.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return buf
}

// A websocket that never logs in is closed at the login deadline, however
// busy it keeps itself, as a TCP connection is; the server serves others
// meanwhile.
func TestAWebsocketThatNeverLogsInIsClosedAtTheLoginDeadline(t *testing.T) {
	h := startWS(t, []server.Option{server.WithLoginLimits(server.LoginLimits{LoginTimeout: 2 * time.Second})})
	chatty, _, err := dialWS(t, h.url+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { done <- abortReason(t, chatty) }()
	for qid := uint32(0); ; qid++ {
		select {
		case reason := <-done:
			if !strings.Contains(reason, "did not log in within") {
				t.Fatalf("a websocket that never logged in ended with %q, want the login deadline", reason)
			}
			h.requireServesOthers(t)
			return
		case <-time.After(100 * time.Millisecond):
			chatty.WriteMessage(websocket.BinaryMessage, bootstrapMessage(t, qid)) // never idle
		}
	}
}
