package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	blueprinttest.RemoveAll()
	os.Exit(code)
}

// buildBinary compiles gadgetd once for the test.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gadgetd")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// gadgetd runs a client subcommand against addr with token.
func gadgetd(t *testing.T, bin, addr, token string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GADGETD_ADDR="+addr, "GADGETD_TOKEN="+token)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

// startServe runs `gadgetd serve` and returns the addresses it printed and
// the rest of its standard output.
func startServe(t *testing.T, bin string, args ...string) (capnpAddr, httpAddr string, lines *bufio.Scanner, cmd *exec.Cmd) {
	t.Helper()
	cmd = exec.Command(bin, append([]string{"serve", "--capnp", "127.0.0.1:0", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A server that hangs must fail the test, not hang it: killing it ends
	// every read of its output.
	watchdog := time.AfterFunc(3*time.Minute, func() { cmd.Process.Kill() })
	t.Cleanup(func() {
		watchdog.Stop()
		cmd.Process.Signal(os.Interrupt)
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-exited
			t.Errorf("serve did not exit within a minute of SIGINT")
		}
	})
	lines = bufio.NewScanner(stdout)
	for _, want := range []struct {
		prefix string
		addr   *string
	}{{"capnp listening on ", &capnpAddr}, {"http listening on ", &httpAddr}} {
		if !lines.Scan() {
			t.Fatalf("serve exited before printing %q", want.prefix)
		}
		line := lines.Text()
		if !strings.HasPrefix(line, want.prefix) {
			t.Fatalf("serve printed %q, want a line starting %q", line, want.prefix)
		}
		*want.addr = strings.TrimPrefix(line, want.prefix)
	}
	return capnpAddr, httpAddr, lines, cmd
}

func TestCommandLineManagesUsersBlueprintsAndGadgets(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	out, err := exec.Command(bin, "user", "add", "alice", "--data", data).Output()
	if err != nil {
		t.Fatalf("user add: %v", err)
	}
	token := strings.TrimSpace(string(out))
	if !strings.HasPrefix(token, "gdt_") {
		t.Fatalf("user add printed %q", out)
	}

	addr, httpAddr, _, cmd := startServe(t, bin, "--data", data)

	resp, err := http.Get("http://" + httpAddr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.TrimSpace(string(body)) != "ok" {
		t.Fatalf("/healthz = %q", body)
	}

	if out, err := gadgetd(t, bin, addr, "wrong", "ls"); err == nil || !strings.Contains(out, "invalid token") {
		t.Fatalf("ls with a wrong token: %v %q", err, out)
	}
	dir := blueprinttest.Example(t, "counter")
	// This server has no builtins, so alice may install "counter" herself.
	if out, err := gadgetd(t, bin, addr, token, "blueprint", "install", dir); err != nil || out != "installed counter 1.0.0\n" {
		t.Fatalf("blueprint install: %v %q", err, out)
	}
	if out, err := gadgetd(t, bin, addr, token, "blueprint", "install", dir); err == nil || !strings.Contains(out, "already installed") {
		t.Fatalf("installing the same version again: %v %q", err, out)
	}
	out2, err := gadgetd(t, bin, addr, token, "blueprint", "ls")
	if err != nil || !strings.Contains(out2, "counter") || !strings.Contains(out2, "1.0.0") {
		t.Fatalf("blueprint ls: %v\n%s", err, out2)
	}
	id, err := gadgetd(t, bin, addr, token, "new", "counter", "my counter")
	if err != nil {
		t.Fatalf("new: %v %s", err, id)
	}
	id = strings.TrimSpace(id)
	ls, err := gadgetd(t, bin, addr, token, "ls")
	if err != nil || !strings.Contains(ls, id) || !strings.Contains(ls, "my counter") {
		t.Fatalf("ls: %v\n%s", err, ls)
	}
	if out, err := gadgetd(t, bin, addr, token, "rm", id); err != nil {
		t.Fatalf("rm: %v %s", err, out)
	}
	if out, err := gadgetd(t, bin, addr, token, "rm", id); err == nil || !strings.Contains(out, "unknown gadget id") {
		t.Fatalf("second rm: %v %q", err, out)
	}

	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve did not exit cleanly on SIGINT: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit on SIGINT")
	}
}

func TestServeDevPrintsALoginURLAndToken(t *testing.T) {
	bin := buildBinary(t)
	_, httpAddr, lines, _ := startServe(t, bin, "--data", t.TempDir(), "--dev", "--examples", t.TempDir())
	var url, token string
	for token == "" && lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "login: "); ok {
			url = v
		}
		if v, ok := strings.CutPrefix(lines.Text(), "GADGETD_TOKEN="); ok {
			token = v
		}
	}
	if !regexp.MustCompile(`^gdt_[A-Za-z0-9_-]{43}$`).MatchString(token) {
		t.Fatalf("token line %q", token)
	}
	if url != "http://"+httpAddr+"/#token="+token {
		t.Fatalf("login line %q", url)
	}
}

func TestBadCommandLinesFailWithUsage(t *testing.T) {
	bin := buildBinary(t)
	for _, args := range [][]string{{}, {"bogus"}, {"rm"}, {"new", "a", "b", "c"}, {"serve", "--nope"}, {"blueprint"}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "Client (server at") {
			t.Errorf("gadgetd %v: %v\n%s", args, err, out)
		}
	}
	out, err := exec.Command(bin, "serve", "--config", "/nonexistent/gadgetd.conf", "--data", t.TempDir()).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "reading --config") {
		t.Errorf("unreadable --config: %v %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bin, "--help").Output(); err != nil || !strings.Contains(string(out), "gadgetd serve") {
		t.Errorf("--help: %v %s", err, out)
	}
}
