package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/leakcheck"
)

func TestMain(m *testing.M) {
	leakcheck.Install()
	code := m.Run()
	blueprinttest.RemoveAll()
	if gadgetd.dir != "" {
		os.RemoveAll(gadgetd.dir)
	}
	os.Exit(leakcheck.Verify(code))
}

var gadgetd struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// gadgetdBinary builds cmd/gadgetd once per test binary, without -race:
// the server is what is measured, this package what is tested. TestMain
// removes it.
func gadgetdBinary(t *testing.T) string {
	t.Helper()
	gadgetd.once.Do(func() {
		if gadgetd.dir, gadgetd.err = os.MkdirTemp("", "wsload-test-"); gadgetd.err != nil {
			return
		}
		gadgetd.path = filepath.Join(gadgetd.dir, "gadgetd")
		out, err := exec.Command("go", "build", "-o", gadgetd.path, "github.com/gadgetd/gadgetd/cmd/gadgetd").CombinedOutput()
		if err != nil {
			gadgetd.err = &buildError{err, out}
		}
	})
	if gadgetd.err != nil {
		t.Fatalf("building gadgetd: %v", gadgetd.err)
	}
	return gadgetd.path
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + string(e.out) }

// testConfig is a short measurement: the counter example built for this
// test, a server of its own, and no waiting for memory afterwards.
func testConfig(t *testing.T, sessions int) config {
	t.Helper()
	return config{
		gadgetd: gadgetdBinary(t),
		// The directory blueprinttest builds into holds the one blueprint
		// this test binary builds: serve --dev installs it.
		examples:       filepath.Dir(blueprinttest.Example(t, "counter")),
		sessions:       sessions,
		users:          3,
		gadgetsPerUser: 4,
		hold:           5 * time.Second,
		interval:       500 * time.Millisecond,
		incrementEvery: 4,
		watchEvery:     3,
		localAddrs:     10,
		settingUp:      32,
		after:          []time.Duration{0},
		serverLog:      testOutput(t),
	}
}

// A hundred shell sessions, each a /ws and a /ws/frame websocket to a real
// gadgetd, hold for five seconds of steady calls without an error: every
// session set up and still connected at the end, every call answered,
// every change heard by every watcher, nothing logged at WARN or above.
// It asserts no timing.
func TestAHundredShellSessionsHoldWithoutAnError(t *testing.T) {
	r, err := run(context.Background(), testConfig(t, 100), testOutput(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.failure(); err != nil {
		t.Fatal(err)
	}
	if r.held != 100 || r.calls == 0 || r.watchers == 0 || r.expected == 0 {
		t.Fatalf("held %d sessions, made %d calls, %d watchers heard %d changes: the load did not run as configured", r.held, r.calls, r.watchers, r.expected)
	}
}

// The measurement fails when the server cannot hold the sessions: with a
// connection limit that leaves room for fewer sessions (two websockets
// each) than it opens, it reports the ones the server refused, with the
// reason the server gave.
func TestSessionsTheServerRefusesFailTheMeasurement(t *testing.T) {
	cfg := testConfig(t, 40)
	cfg.maxConns = 50 // 25 sessions
	cfg.hold = time.Second
	r, err := run(context.Background(), cfg, testOutput(t))
	if err != nil {
		t.Fatal(err)
	}
	err = r.failure()
	t.Logf("failure: %v", err)
	if err == nil || r.held >= 40 || !strings.Contains(err.Error(), "sessions failed or were lost") {
		t.Fatalf("40 sessions against a server holding 50 connections: held %d, failure %v; want some refused and the measurement failed", r.held, err)
	}
	if !strings.Contains(err.Error(), "(the server: ") {
		t.Fatalf("the failure does not give the reason the server refused the sessions with:\n%v", err)
	}
}

// testOutput logs the report.
func testOutput(t *testing.T) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		t.Log(strings.TrimRight(string(p), "\n"))
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
