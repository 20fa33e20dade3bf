package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/internal/leakcheck"
	"github.com/gadgetd/gadgetd/internal/testcounter/counterpb"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
)

func TestMain(m *testing.M) {
	leakcheck.Install()
	dir, err := os.MkdirTemp("", "gadgetd-server-test-cache-")
	if err != nil {
		panic(err)
	}
	server.TestCompileCache = dir
	code := m.Run()
	blueprinttest.RemoveAll()
	os.RemoveAll(dir)
	os.Exit(leakcheck.Verify(code))
}

// harness is a real server on a real data directory, serving loopback TCP.
type harness struct {
	t    testing.TB
	dir  string
	srv  *server.Server
	addr string
	once sync.Once
}

// start opens a server on dir with the test counter (internal/testcounter)
// installed as a builtin.
func start(t testing.TB, dir string, opts ...server.Option) *harness {
	t.Helper()
	ctx := context.Background()
	opts = append([]server.Option{
		server.WithWasmOptions(wasmhost.WithCompilationCacheDir(server.TestCompileCache)),
		// Warnings (a connection the server aborted, and why) go to the
		// test binary's stderr, so a failure on CI can be diagnosed.
		server.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
	}, opts...)
	srv, err := server.Open(ctx, dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, dir: dir, srv: srv}
	t.Cleanup(h.stop)
	if _, err := srv.InstallBuiltin(ctx, blueprinttest.Bundle(t, blueprinttest.TestCounter)); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.addr = ln.Addr().String()
	go srv.ServeCapnp(ln)
	return h
}

func (h *harness) stop() {
	h.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.srv.Close(ctx); err != nil {
			h.t.Errorf("closing server: %v", err)
		}
	})
}

func (h *harness) token(name string) string {
	h.t.Helper()
	tok, err := h.srv.IssueToken(context.Background(), name)
	if err != nil {
		h.t.Fatal(err)
	}
	return tok
}

// dial connects a client to addr and closes it when the test ends.
func dial(t testing.TB, addr string) *client.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// login returns the workspace of token over a fresh connection, once the
// login has succeeded: until then a connection may send only small messages
// (tests of pipelining through login use the Gateway directly).
func (h *harness) login(t testing.TB, token string) schema.Workspace {
	t.Helper()
	ws, err := tryLogin(t, h, token)
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	return ws
}

// tryLogin is login on a connection of its own, returning login's error.
func tryLogin(t testing.TB, h *harness, token string) (schema.Workspace, error) {
	f, release := dial(t, h.addr).Gateway().Login(testCtx(t), func(p schema.Gateway_login_Params) error { return p.SetToken(token) })
	t.Cleanup(release)
	res, err := f.Struct()
	return res.Workspace(), err
}

// loginPipelined returns the workspace of token without waiting for the
// login, as a client that pipelines calls onto it sees it: a bad token shows
// up as the error of the first call.
func (h *harness) loginPipelined(t testing.TB, token string) schema.Workspace {
	t.Helper()
	ws, release := dial(t, h.addr).Login(context.Background(), token)
	t.Cleanup(release)
	return ws
}

// testCtx bounds a test's calls. It is a hang guard, not a speed limit:
// under -race beside another CPU-heavy process, 30 s was too little for
// tests that make a few hundred calls or compile guests.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// create makes a gadget of blueprint and returns it with its id.
func create(t testing.TB, ws schema.Workspace, blueprint string) (schema.Gadget, string) {
	t.Helper()
	f, release := ws.Create(testCtx(t), func(p schema.Workspace_create_Params) error {
		return p.SetBlueprint(blueprint)
	})
	t.Cleanup(release)
	res, err := f.Struct()
	if err != nil {
		t.Fatalf("create %s: %v", blueprint, err)
	}
	info, _ := res.Info()
	id, _ := info.Id()
	return res.Gadget(), id
}

// removeByID removes gadget id through ws the one way there is, Gadget.remove
// on the gadget's capability, pipelined onto Workspace.open(id): one round
// trip. release releases both answers.
func removeByID(ctx context.Context, ws schema.Workspace, id string) (f schema.Gadget_remove_Results_Future, release func()) {
	of, releaseOpen := ws.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(id) })
	f, releaseRemove := of.Gadget().Remove(ctx, nil)
	return f, func() { releaseRemove(); releaseOpen() }
}

// session opens a session of gadget as a Counter.
func session(t testing.TB, g schema.Gadget) counterpb.Counter {
	t.Helper()
	f, release := g.Open(testCtx(t), nil)
	t.Cleanup(release)
	return counterpb.Counter(f.Session())
}

func requireErrorContains(t testing.TB, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error = %v, want one containing %q", err, want)
	}
}

// reason strips go-capnp's method prefix from an error, leaving what the
// server said.
func reason(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

// latencyProxy forwards TCP to upstream, delivering every chunk delay after
// it was read, in each direction: a link with a round trip of 2*delay and
// plenty of bandwidth.
type latencyProxy struct {
	ln    net.Listener
	delay time.Duration
}

func newLatencyProxy(t testing.TB, upstream string, delay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &latencyProxy{ln: ln, delay: delay}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			down, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", upstream)
			if err != nil {
				down.Close()
				continue
			}
			go p.pipe(down, up)
			go p.pipe(up, down)
		}
	}()
	return ln.Addr().String()
}

type chunk struct {
	at   time.Time
	data []byte
}

func (p *latencyProxy) pipe(from, to net.Conn) {
	line := make(chan chunk, 1024)
	go func() {
		defer close(line)
		for {
			buf := make([]byte, 64<<10)
			n, err := from.Read(buf)
			if n > 0 {
				line <- chunk{time.Now().Add(p.delay), buf[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range line {
		time.Sleep(time.Until(c.at))
		if _, err := to.Write(c.data); err != nil {
			break
		}
	}
	to.Close()
	from.Close()
	io.Copy(io.Discard, from)
}

// listener is a client-side counterpb.Listener that records what it hears.
type listener struct {
	mu     sync.Mutex
	values []int64
	// onChanged, if set, runs inside changed, before it returns.
	onChanged func(ctx context.Context, v int64) error
}

func (l *listener) Changed(ctx context.Context, call counterpb.Listener_changed) error {
	v := call.Args().Value()
	l.mu.Lock()
	l.values = append(l.values, v)
	l.mu.Unlock()
	if l.onChanged != nil {
		// onChanged may call back into the gadget, which may notify this
		// listener again before it returns: let that call run meanwhile.
		call.Go()
		return l.onChanged(ctx, v)
	}
	return nil
}

func (l *listener) heard() []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int64(nil), l.values...)
}

func (l *listener) client() counterpb.Listener {
	return counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, l), l, nil))
}

func capnpClient(c counterpb.Counter) capnp.Client { return capnp.Client(c) }
