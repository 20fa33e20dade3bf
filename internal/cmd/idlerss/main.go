// Command idlerss measures how much memory gadgetd gives back once its
// clients have left: it starts `gadgetd serve --dev` on a fresh data
// directory and free loopback ports, drives many concurrent clients against
// the counter blueprint (each opens a gadget and a session, increments and
// reads it, some watch it), lets them all disconnect, and prints the
// server's resident set size (VmRSS, Linux only) before, at the peak, and at
// fixed times after the last client left.
//
//	go build -o bin/gadgetd ./cmd/gadgetd
//	go run ./internal/cmd/idlerss [-gadgetd bin/gadgetd] [-clients 200] [-gadgets 64]
//
// It is a measurement, not a test: RSS depends on the machine, the Go
// version and the kernel, so it asserts nothing (docs/BENCHMARKS.md records
// the figures). make idle-rss runs it.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/examples/counter/counterpb"
	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/schema"
)

func main() {
	gadgetd := flag.String("gadgetd", "bin/gadgetd", "the gadgetd binary to measure")
	examples := flag.String("examples", "./examples", "examples directory for serve --dev")
	clients := flag.Int("clients", 200, "concurrent clients")
	gadgets := flag.Int("gadgets", 64, "counter gadgets the clients share (a user may have 100)")
	calls := flag.Int("calls", 10, "increments per client")
	watchEvery := flag.Int("watch-every", 4, "every Nth client also watches its counter")
	hold := flag.Duration("hold", 3*time.Second, "how long every client stays connected after its calls")
	after := flag.String("after", "0s,5s,30s,60s,2m", "when to sample RSS after the last client left")
	flag.Parse()
	if err := run(*gadgetd, *examples, *clients, *gadgets, *calls, *watchEvery, *hold, *after); err != nil {
		fmt.Fprintln(os.Stderr, "idlerss:", err)
		os.Exit(1)
	}
}

func run(gadgetd, examples string, clients, gadgets, calls, watchEvery int, hold time.Duration, after string) error {
	var samples []time.Duration
	for _, s := range strings.Split(after, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("-after: %w", err)
		}
		samples = append(samples, d)
	}
	ctx := context.Background()
	srv, err := startServer(gadgetd, examples)
	if err != nil {
		return err
	}
	defer srv.stop()

	time.Sleep(2 * time.Second) // let start-up garbage settle
	baseline, err := srv.rss()
	if err != nil {
		return err
	}
	fmt.Printf("%-28s %8.1f MiB\n", "baseline (after start)", mib(baseline))

	ids, err := createCounters(ctx, srv.addr, srv.token, gadgets)
	if err != nil {
		return err
	}

	var peak atomic.Int64
	stopPeak := make(chan struct{})
	peakDone := make(chan struct{})
	go func() { // sample while the clients run
		defer close(peakDone)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			if n, err := srv.rss(); err == nil && n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-stopPeak:
				return
			case <-t.C:
			}
		}
	}()

	start := time.Now()
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr error
	var errOnce sync.Once
	// Every client is connected before the first leaves: the peak is
	// `clients` connections and sessions at once.
	var connected sync.WaitGroup
	connected.Add(clients)
	// The server admits at most 64 connections per address that have not
	// logged in yet; like a real client fleet, the clients log in a few at
	// a time rather than all in the same instant.
	loggingIn := make(chan struct{}, 32)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := runClient(ctx, srv.addr, srv.token, ids[i%len(ids)], calls, watchEvery > 0 && i%watchEvery == 0, loggingIn, &connected, hold)
			if err != nil {
				failed.Add(1)
				errOnce.Do(func() { firstErr = err })
			}
		}()
	}
	wg.Wait()
	close(stopPeak)
	<-peakDone
	left := time.Now()
	fmt.Printf("%-28s %8.1f MiB   (%d clients on %d gadgets, %d failed, %s)\n", "peak (clients connected)",
		mib(peak.Load()), clients, len(ids), failed.Load(), left.Sub(start).Round(time.Millisecond))
	if firstErr != nil {
		fmt.Printf("  first client error: %v\n", firstErr)
	}

	for _, d := range samples {
		time.Sleep(time.Until(left.Add(d)))
		n, err := srv.rss()
		if err != nil {
			return err
		}
		fmt.Printf("%-28s %8.1f MiB   (%+.1f MiB against the baseline)\n", fmt.Sprintf("%s after the clients left", d), mib(n), mib(n-baseline))
	}
	return nil
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// createCounters creates n counter gadgets over one connection and returns
// their ids.
func createCounters(ctx context.Context, addr, token string, n int) ([]string, error) {
	conn, err := client.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ws, release := conn.Login(ctx, token)
	defer release()
	ids := make([]string, 0, n)
	for i := range n {
		f, release := ws.Create(ctx, func(p schema.Workspace_create_Params) error {
			if err := p.SetBlueprint("counter"); err != nil {
				return err
			}
			return p.SetName(fmt.Sprintf("idlerss-%d", i))
		})
		res, err := f.Struct()
		if err != nil {
			release()
			return nil, fmt.Errorf("creating counter %d: %w", i, err)
		}
		info, err := res.Info()
		var id string
		if err == nil {
			id, err = info.Id()
		}
		release()
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// runClient is one client: its own connection, login, gadget and session,
// calls increments and a get, optionally watches, waits until every client
// is connected, stays for hold, and disconnects.
func runClient(ctx context.Context, addr, token, id string, calls int, watch bool, loggingIn chan struct{}, connected *sync.WaitGroup, hold time.Duration) (err error) {
	done := sync.OnceFunc(connected.Done)
	defer done() // a client that failed early must not hold the others
	loggingIn <- struct{}{}
	conn, err := client.Dial(ctx, addr)
	if err != nil {
		<-loggingIn
		return err
	}
	defer conn.Close()
	ws, release := conn.Login(ctx, token)
	defer release()
	gf, releaseGadgets := ws.Gadgets(ctx, nil)
	_, err = gf.Struct() // the login has been answered
	releaseGadgets()
	<-loggingIn
	if err != nil {
		return fmt.Errorf("login: %w", err)
	}
	opened, release := ws.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(id) })
	defer release()
	session, release := opened.Gadget().Open(ctx, nil)
	defer release()
	counter := counterpb.Counter(session.Session())

	if watch {
		l := counterpb.Listener(capserver.New(counterpb.Listener_Methods(nil, ignore{}), nil, nil))
		f, release := counter.Watch(ctx, func(p counterpb.Counter_watch_Params) error { return p.SetListener(l) })
		// The answer holds the subscription's handle: keep it while connected.
		defer release()
		if _, err := f.Struct(); err != nil {
			return fmt.Errorf("watch: %w", err)
		}
	}
	for range calls {
		f, release := counter.Increment(ctx, nil)
		_, err := f.Struct()
		release()
		if err != nil {
			return fmt.Errorf("increment: %w", err)
		}
	}
	f, release := counter.Get(ctx, nil)
	_, err = f.Struct()
	release()
	if err != nil {
		return fmt.Errorf("get: %w", err)
	}
	done()
	connected.Wait()
	time.Sleep(hold)
	return nil
}

// ignore is a counter listener that does nothing with what it hears.
type ignore struct{}

func (ignore) Changed(context.Context, counterpb.Listener_changed) error { return nil }

// server is a running `gadgetd serve --dev`.
type server struct {
	cmd     *exec.Cmd
	dataDir string
	addr    string
	token   string
}

// startServer starts gadgetd on a temporary data directory and free loopback
// ports and waits for it to print its token.
func startServer(gadgetd, examples string) (*server, error) {
	dataDir, err := os.MkdirTemp("", "idlerss-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(gadgetd, "serve", "--dev", "--data", filepath.Join(dataDir, "data"),
		"--capnp", freeAddr(), "--http", freeAddr(), "--examples", examples)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dataDir)
		return nil, err
	}
	s := &server{cmd: cmd, dataDir: dataDir}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if addr, ok := strings.CutPrefix(line, "capnp listening on "); ok {
			s.addr = addr
		}
		if token, ok := strings.CutPrefix(line, "GADGETD_TOKEN="); ok {
			s.token = token
			break
		}
	}
	if s.token == "" || s.addr == "" {
		s.stop()
		return nil, errors.New("gadgetd exited before printing its address and token")
	}
	go func() { // keep reading, so the server never blocks on a full pipe
		for sc.Scan() {
		}
	}()
	return s, nil
}

// freeAddr is a loopback address with a port nothing listens on right now.
func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:0"
	}
	defer ln.Close()
	return ln.Addr().String()
}

// rss reads the server's VmRSS from /proc.
func (s *server) rss() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("reading the server's RSS (Linux only): %w", err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmRSS in /proc/PID/status")
}

// stop shuts the server down (SIGTERM, then SIGKILL after 15 s) and removes
// its data directory.
func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan struct{})
	go func() { s.cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-exited
	}
	os.RemoveAll(s.dataDir)
}
