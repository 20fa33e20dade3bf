package interop

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const (
	buildTimeout   = 5 * time.Minute  // go build of gadgetd, g++ of the client
	startTimeout   = 4 * time.Minute  // serve --dev until it prints its address and token (race-built: ~40 s alone)
	clientTimeout  = 60 * time.Second // one run of the C++ client
	stopTimeout    = 15 * time.Second // SIGTERM to exit, before SIGKILL
	counterSchema  = "examples/counter/counterpb/counter.capnp"
	goCapnpModule  = "capnproto.org/go/capnp/v3"
	clientSource   = "interop/cxx/client.c++"
	serverLogLines = 200 // lines of server output shown when the test fails
)

// TestCXXClient drives a real gadgetd over TCP from the C++ client: a new
// counter gadget, created and incremented in one pipelined chain, reads 1; the
// same gadget opened by id from a second connection reads 2. Both runs also
// check that a wrong token fails with "invalid token".
func TestCXXClient(t *testing.T) {
	requireCXXTools(t)
	root := repoRoot(t)
	tmp := t.TempDir()

	bin := gadgetdBinary(t, root, tmp)
	client := buildCXXClient(t, root, tmp)
	srv := startGadgetd(t, bin, root, tmp)

	out := srv.runClient(t, client)
	if got := field(t, out, "value"); got != "1" {
		t.Fatalf("first increment of a new counter gadget printed value=%s, want 1\nclient output:\n%s", got, out)
	}
	id := field(t, out, "gadget")
	if id == "" {
		t.Fatalf("client printed an empty gadget id\nclient output:\n%s", out)
	}
	if !strings.Contains(out, "wrong token: ") {
		t.Fatalf("client did not report the wrong-token check\nclient output:\n%s", out)
	}

	out = srv.runClient(t, client, id)
	if got := field(t, out, "value"); got != "2" {
		t.Fatalf("second increment of gadget %s (opened by id on a new connection) printed value=%s, want 2\nclient output:\n%s", id, got, out)
	}
	if got := field(t, out, "gadget"); got != id {
		t.Fatalf("second run opened gadget %s, want %s", got, id)
	}
	if got := field(t, out, "removed"); got != id {
		t.Fatalf("second run removed gadget %q, want %s (Gadget.remove, then info() fails)\nclient output:\n%s", got, id, out)
	}

	srv.stop(t)
}

// requireCXXTools skips the test when the C++ toolchain or libcapnp is
// missing, unless CI=true, where a missing tool is a failure.
func requireCXXTools(t *testing.T) {
	t.Helper()
	var missing []string
	for _, tool := range []string{"g++", "capnp", "pkg-config"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if _, err := exec.LookPath("pkg-config"); err == nil {
		if err := exec.Command("pkg-config", "--exists", "capnp-rpc").Run(); err != nil {
			missing = append(missing, "libcapnp-dev (pkg-config capnp-rpc)")
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("C++ interop test needs %s; run scripts/deps.sh (as root it installs them: apt-get install capnproto libcapnp-dev g++ pkg-config)", strings.Join(missing, ", "))
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root %s has no go.mod: %v", root, err)
	}
	return root
}

// run runs a command with a timeout and returns its combined output, failing
// the test with that output if it does not succeed.
func run(t *testing.T, timeout time.Duration, dir, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: timed out after %v\n%s", name, strings.Join(args, " "), timeout, out)
	}
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// gadgetdBinary builds ./cmd/gadgetd (with -race when this test runs under
// the race detector), or returns $GADGETD_BIN when set.
func gadgetdBinary(t *testing.T, root, tmp string) string {
	t.Helper()
	if bin := os.Getenv("GADGETD_BIN"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("using GADGETD_BIN=%s", abs)
		return abs
	}
	bin := filepath.Join(tmp, "gadgetd")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	run(t, buildTimeout, root, "go", append(args, "./cmd/gadgetd")...)
	return bin
}

// buildCXXClient generates C++ code for the schema with `capnp compile
// -oc++` and builds interop/cxx/client.c++ against libcapnp-rpc.
func buildCXXClient(t *testing.T, root, tmp string) string {
	t.Helper()
	gen := filepath.Join(tmp, "cxxgen")
	if err := os.MkdirAll(gen, 0o755); err != nil {
		t.Fatal(err)
	}

	// The schema files import "/go.capnp" for their Go annotations, which
	// lives in go-capnp's std directory. go list honours go.mod's replace.
	dir := strings.TrimSpace(run(t, buildTimeout, root, "go", "list", "-m", "-f", "{{.Dir}}", goCapnpModule))
	if dir == "" {
		t.Fatalf("go list -m %s: the module has no directory; run go mod download", goCapnpModule)
	}
	std := filepath.Join(dir, "std")

	schemas, err := filepath.Glob(filepath.Join(root, "schema", "*.capnp"))
	if err != nil || len(schemas) == 0 {
		t.Fatalf("no schema/*.capnp under %s (%v)", root, err)
	}
	compile := func(srcPrefix string, files ...string) {
		args := append([]string{"compile", "-I" + std, "-oc++:" + gen, "--src-prefix=" + srcPrefix}, files...)
		run(t, buildTimeout, root, "capnp", args...)
	}
	compile(std, filepath.Join(std, "go.capnp"))
	compile(filepath.Join(root, "schema"), schemas...)
	compile(filepath.Join(root, filepath.Dir(counterSchema)), filepath.Join(root, counterSchema))

	generated, err := filepath.Glob(filepath.Join(gen, "*.capnp.c++"))
	if err != nil || len(generated) == 0 {
		t.Fatalf("capnp compile -oc++ produced no .capnp.c++ files in %s (%v)", gen, err)
	}

	flags := strings.Fields(run(t, time.Minute, root, "pkg-config", "--cflags", "--libs", "capnp-rpc"))
	client := filepath.Join(tmp, "cxx-client")
	args := []string{"-std=c++17", "-O1", "-Wall", "-I" + gen, "-o", client, filepath.Join(root, clientSource)}
	args = append(args, generated...)
	args = append(args, flags...)
	run(t, buildTimeout, root, "g++", args...)
	return client
}

// server is a running `gadgetd serve --dev`.
type server struct {
	cmd    *exec.Cmd
	addr   string // Cap'n Proto TCP address
	token  string // the dev user's token
	log    *lineLog
	exited chan struct{} // closed when the process has exited
	err    error         // Wait's result, valid once exited is closed
}

var (
	listenRE = regexp.MustCompile(`capnp listening on (\S+)`)
	tokenRE  = regexp.MustCompile(`^GADGETD_TOKEN=(\S+)\s*$`)
)

func startGadgetd(t *testing.T, bin, root, tmp string) *server {
	t.Helper()
	// serve --dev installs the built examples; it does not build them.
	run(t, buildTimeout, root, bin, "blueprint", "build", "examples/counter")
	args := []string{
		"serve", "--dev",
		"--data", filepath.Join(tmp, "data"),
		"--capnp", "127.0.0.1:0",
		"--http", "127.0.0.1:0",
		"--examples", filepath.Join(root, "examples"),
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = tmp
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = pw
	cmd.WaitDelay = stopTimeout // in case a child process keeps the output pipe open
	srv := &server{cmd: cmd, log: &lineLog{}, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() {
		srv.err = cmd.Wait()
		pw.CloseWithError(io.EOF)
		close(srv.exited)
	}()
	t.Cleanup(func() {
		srv.kill()
		if t.Failed() {
			t.Logf("gadgetd %s\n--- gadgetd output (last %d lines) ---\n%s--- end of gadgetd output ---",
				strings.Join(args, " "), serverLogLines, srv.log.tail(serverLogLines))
		}
	})

	addrc := make(chan string, 1)
	tokenc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			srv.log.add(line)
			if m := listenRE.FindStringSubmatch(line); m != nil {
				select {
				case addrc <- m[1]:
				default:
				}
			}
			if m := tokenRE.FindStringSubmatch(line); m != nil {
				select {
				case tokenc <- m[1]:
				default:
				}
			}
		}
		// Keep draining if the scanner gave up on an over-long line.
		_, _ = io.Copy(io.Discard, pr)
	}()

	deadline := time.After(startTimeout)
	for srv.addr == "" || srv.token == "" {
		select {
		case a := <-addrc:
			srv.addr = a
		case tok := <-tokenc:
			srv.token = tok
		case <-srv.exited:
			t.Fatalf("gadgetd serve --dev exited before printing both %q and %q: %v", "capnp listening on HOST:PORT", "GADGETD_TOKEN=...", srv.err)
		case <-deadline:
			t.Fatalf("gadgetd serve --dev did not print both %q (got %q) and %q (got %t) within %v",
				"capnp listening on HOST:PORT", srv.addr, "GADGETD_TOKEN=...", srv.token != "", startTimeout)
		}
	}
	t.Logf("gadgetd pid %d: capnp on %s", cmd.Process.Pid, srv.addr)
	return srv
}

// runClient runs the C++ client once and returns its output. A non-zero exit,
// or the server dying meanwhile, fails the test.
func (s *server) runClient(t *testing.T, client string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	args := append([]string{s.addr, s.token}, extra...)
	cmd := exec.CommandContext(ctx, client, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	select {
	case <-s.exited:
		t.Fatalf("gadgetd exited while the C++ client ran (%v)\nclient output:\n%s", s.err, out.String())
	default:
	}
	if ctx.Err() != nil {
		t.Fatalf("C++ client (%s) timed out after %v\nclient output:\n%s", strings.Join(extra, " "), clientTimeout, out.String())
	}
	if err != nil {
		t.Fatalf("C++ client failed: %v\nclient output:\n%s", err, out.String())
	}
	t.Logf("C++ client output:\n%s", out.String())
	return out.String()
}

// stop asks gadgetd to shut down with SIGTERM and fails the test if it had
// already died, does not exit cleanly and in time, or reported a data race.
func (s *server) stop(t *testing.T) {
	t.Helper()
	select {
	case <-s.exited:
		t.Fatalf("gadgetd had exited before the end of the test: %v", s.err)
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		if s.err != nil {
			t.Errorf("gadgetd did not exit cleanly after SIGTERM: %v", s.err)
		}
	case <-time.After(stopTimeout):
		t.Errorf("gadgetd did not exit within %v of SIGTERM", stopTimeout)
	}
	if s.log.contains("WARNING: DATA RACE") {
		t.Errorf("gadgetd reported a data race (see its output below)")
	}
}

func (s *server) kill() {
	select {
	case <-s.exited:
	default:
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// field returns the value of the first "name=value" line in out, failing the
// test if there is none.
func field(t *testing.T, out, name string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+"="); ok {
			return v
		}
	}
	t.Fatalf("client output has no %s= line:\n%s", name, out)
	return ""
}

// lineLog keeps the server's output for the failure report.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
}

func (l *lineLog) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			return true
		}
	}
	return false
}

func (l *lineLog) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := max(0, len(l.lines)-n)
	var b strings.Builder
	for _, line := range l.lines[start:] {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
