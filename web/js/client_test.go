package js_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/leakcheck"
	"github.com/gadgetd/gadgetd/server"
	"github.com/gadgetd/gadgetd/wasmhost"
	"github.com/gadgetd/gadgetd/web"
)

func TestMain(m *testing.M) {
	leakcheck.Install()
	code := m.Run()
	blueprinttest.RemoveAll()
	os.Exit(leakcheck.Verify(code))
}

// maxExports is the bound the test server puts on the capabilities one
// connection may hold. The release tests open more gadgets than this on one
// connection, so they pass only if the client releases what it drops.
const maxExports = 40

// startServer starts a real gadgetd server on a bbolt data directory in a
// temporary directory, with the kernel's test counter installed as the
// builtin blueprint "counter", serving Cap'n Proto over websocket on
// loopback (package web's /ws and /ws/frame, as gadgetd serve does). It
// returns the base URL (ws://127.0.0.1:PORT) and a login token for user
// "js".
func startServer(t *testing.T) (wsBase, token string) {
	t.Helper()
	ctx := context.Background()
	srv, err := server.Open(ctx, t.TempDir(),
		server.WithWasmOptions(wasmhost.WithCompilationCacheDir(t.TempDir())),
		server.WithMaxExports(maxExports),
		server.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("closing server: %v", err)
		}
	})
	if _, err := srv.InstallBuiltin(ctx, blueprinttest.Bundle(t, blueprinttest.TestCounter)); err != nil {
		t.Fatal(err)
	}
	h := httptest.NewServer(web.Handler(web.WithCapnp(srv)))
	t.Cleanup(h.Close)
	token, err = srv.IssueToken(ctx, "js")
	if err != nil {
		t.Fatal(err)
	}
	return "ws" + strings.TrimPrefix(h.URL, "http"), token
}

// TestJSClientAgainstGadgetd runs test/client.test.mjs over /ws: the JS
// client logs in, creates and opens a counter, pipelines, passes a listener
// the wasm guest calls, releases capabilities, and shows each capnp-es fix
// that a gadgetd server can provoke both needed (the bug, on capnp-es's own
// Conn) and working (on GadgetConn). Then test/frame.test.mjs: the gadget
// iframe's runtime over a MessagePort relayed to /ws/frame.
func TestJSClientAgainstGadgetd(t *testing.T) {
	node := requireNode(t)
	wsBase, token := startServer(t)
	env := []string{
		"GADGETD_WS_URL=" + wsBase + "/ws",
		"GADGETD_TOKEN=" + token,
		"GADGETD_MAX_EXPORTS=" + strconv.Itoa(maxExports),
	}
	runNode(t, node, "test/client.test.mjs", env...)
	runNode(t, node, "test/frame.test.mjs", env...)
}

// TestJSTransports runs test/transport.test.mjs: the transports alone, no
// server.
func TestJSTransports(t *testing.T) {
	node := requireNode(t)
	runNode(t, node, "test/transport.test.mjs")
}

// TestTheShellsLinkHelpers runs test/shell.test.mjs: what the shell's
// share dialog and redeem box make of share links (web/shell/links.js, a
// module with no DOM and no connection), no server.
func TestTheShellsLinkHelpers(t *testing.T) {
	node := requireNode(t)
	runNode(t, node, "test/shell.test.mjs")
}
