package loadtest

// Design: Start owns the child process until Stop. One goroutine reads the
// child's stdout to the end (so it never blocks on a full pipe) and one its
// stderr, copying it to the configured writer and counting its warnings;
// Stop waits for both after the process exits.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
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
)

// An Option configures Start.
type Option func(*config)

type config struct {
	examples string
	users    []string
	toml     string
	stderr   io.Writer
}

// WithExamples is the directory of built examples serve --dev installs
// (default ./examples).
func WithExamples(dir string) Option { return func(c *config) { c.examples = dir } }

// WithUsers creates these users with `gadgetd user add` before the server
// starts; Server.Tokens holds their tokens.
func WithUsers(names ...string) Option {
	return func(c *config) { c.users = append(c.users[:len(c.users):len(c.users)], names...) }
}

// WithConfig starts the server with --config, a file holding toml.
func WithConfig(toml string) Option { return func(c *config) { c.toml = toml } }

// WithStderr copies the server's log to w (default os.Stderr).
func WithStderr(w io.Writer) Option { return func(c *config) { c.stderr = w } }

// Server is a running `gadgetd serve --dev`.
type Server struct {
	CapnpAddr string            // host:port of its Cap'n Proto listener
	HTTPAddr  string            // host:port of its HTTP listener (/ws, /ws/frame)
	Token     string            // the token of the dev user, "demo"
	Tokens    map[string]string // user name to token, of WithUsers

	cmd      *exec.Cmd
	dir      string
	warnings atomic.Int64
	readers  sync.WaitGroup
}

// Start starts gadgetd (a binary) on a fresh temporary data directory and
// free loopback ports, and returns once it has printed its addresses and
// token. Stop it with Stop.
func Start(gadgetd string, opts ...Option) (_ *Server, err error) {
	cfg := config{examples: "./examples", stderr: os.Stderr}
	for _, o := range opts {
		o(&cfg)
	}
	dir, err := os.MkdirTemp("", "gadgetd-load-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, Tokens: make(map[string]string)}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		return nil, err
	}
	for _, name := range cfg.users {
		out, err := exec.Command(gadgetd, "user", "add", "--data", data, name).Output()
		if err != nil {
			return nil, fmt.Errorf("gadgetd user add %s: %w", name, exitDetail(err))
		}
		s.Tokens[name] = strings.TrimSpace(string(out))
	}
	args := []string{"serve", "--dev", "--data", data, "--capnp", freeAddr(), "--http", freeAddr(), "--examples", cfg.examples}
	if cfg.toml != "" {
		file := filepath.Join(dir, "gadgetd.toml")
		if err := os.WriteFile(file, []byte(cfg.toml), 0o600); err != nil {
			return nil, err
		}
		args = append(args, "--config", file)
	}
	cmd := exec.Command(gadgetd, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s.cmd = cmd
	s.readers.Add(1)
	go func() {
		defer s.readers.Done()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if line := sc.Bytes(); bytes.Contains(line, []byte("level=WARN")) || bytes.Contains(line, []byte("level=ERROR")) {
				s.warnings.Add(1)
			}
			fmt.Fprintf(cfg.stderr, "%s\n", sc.Bytes())
		}
	}()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "capnp listening on "); ok {
			s.CapnpAddr = v
		}
		if v, ok := strings.CutPrefix(line, "http listening on "); ok {
			s.HTTPAddr = v
		}
		if v, ok := strings.CutPrefix(line, "GADGETD_TOKEN="); ok {
			s.Token = v
			break
		}
	}
	if s.Token == "" || s.CapnpAddr == "" || s.HTTPAddr == "" {
		return nil, errors.New("gadgetd exited before printing its addresses and token")
	}
	s.readers.Add(1)
	go func() {
		defer s.readers.Done()
		io.Copy(io.Discard, stdout)
	}()
	return s, nil
}

// exitDetail adds what a failed command wrote to stderr to its error.
func exitDetail(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, bytes.TrimSpace(ee.Stderr))
	}
	return err
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

// Warnings is how many lines at WARN or ERROR the server has logged.
func (s *Server) Warnings() int64 { return s.warnings.Load() }

// RSS is the server's resident set size (VmRSS, Linux only), in bytes.
func (s *Server) RSS() (int64, error) {
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

// Stop shuts the server down (SIGTERM, then SIGKILL after 15 s) and removes
// its data directory.
func (s *Server) Stop() {
	if s.cmd != nil {
		s.cmd.Process.Signal(syscall.SIGTERM)
		exited := make(chan struct{})
		go func() {
			s.readers.Wait() // Wait closes the pipes: read them to the end first
			s.cmd.Wait()
			close(exited)
		}()
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			s.cmd.Process.Kill()
			<-exited
		}
	}
	os.RemoveAll(s.dir)
}
