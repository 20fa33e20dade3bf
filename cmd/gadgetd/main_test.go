package main

import (
	"bufio"
	"bytes"
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

// runInProcess runs a command line the way main does and returns its exit
// status and output.
func runInProcess(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = runMain(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// wholeHelp is a line only the list of all commands prints.
const wholeHelp = "Client (talks to a running server):"

func TestEveryCommandAnswersHelpWithItsOwnUsage(t *testing.T) {
	for _, c := range commands {
		for _, help := range []string{"--help", "-h"} {
			args := append(strings.Fields(c.name), help)
			code, stdout, stderr := runInProcess(args...)
			if code != 0 || !strings.HasPrefix(stdout, "usage: gadgetd "+c.usageLine()+"\n") || strings.Contains(stdout, wholeHelp) || stderr != "" {
				t.Errorf("gadgetd %s: exit %d, stdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout, stderr)
			}
		}
	}
	code, stdout, _ := runInProcess("serve", "--help")
	for _, flag := range []string{"--config FILE", "--data DIR", "--capnp ADDR", "--http ADDR", "--tls-cert FILE", "--dev", "default 127.0.0.1:7071"} {
		if code != 0 || !strings.Contains(stdout, flag) {
			t.Errorf("serve --help does not show %q:\n%s", flag, stdout)
		}
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		if code, stdout, _ := runInProcess(args...); code != 0 || !strings.Contains(stdout, wholeHelp) {
			t.Errorf("gadgetd %v: exit %d\n%s", args, code, stdout)
		}
	}
	if code, stdout, _ := runInProcess("token", "--help"); code != 0 || !strings.Contains(stdout, "gadgetd token revoke ID") || strings.Contains(stdout, "gadgetd ls") {
		t.Errorf("token --help: exit %d\n%s", code, stdout)
	}
}

func TestAWrongCommandLinePrintsThatCommandsUsageLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"new"}, "gadgetd: new takes 1 to 2 arguments\nusage: gadgetd new BLUEPRINT [NAME]\n"},
		{[]string{"new", "a", "b", "c"}, "usage: gadgetd new BLUEPRINT [NAME]\n"},
		{[]string{"rm"}, "gadgetd: rm takes 1 argument\nusage: gadgetd rm ID\n"},
		{[]string{"user", "add"}, "usage: gadgetd user add NAME [--data DIR]\n"},
		{[]string{"blueprint", "install"}, "usage: gadgetd blueprint install DIR\n"},
		{[]string{"token", "revoke"}, "usage: gadgetd token revoke ID\n"},
		{[]string{"token", "new", "a", "b"}, "usage: gadgetd token new [LABEL] [--expires DURATION]\n"},
		{[]string{"serve", "--nope"}, "flag provided but not defined: -nope\nusage: gadgetd serve [flags]\n"},
		{[]string{"serve", "extra"}, "usage: gadgetd serve [flags]\n"},
	} {
		code, stdout, stderr := runInProcess(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, wholeHelp) || stdout != "" {
			t.Errorf("gadgetd %v: exit %d, stderr:\n%s", tc.args, code, stderr)
		}
	}
	// With no command, or one gadgetd does not have, the list of commands
	// (of the group, if it names one) is the help.
	for _, tc := range []struct {
		args       []string
		want, list string
	}{
		{nil, "no command given", wholeHelp},
		{[]string{"bogus"}, `unknown command "bogus"`, wholeHelp},
		{[]string{"blueprint"}, "blueprint needs a subcommand", "gadgetd blueprint install DIR"},
		{[]string{"token", "bogus"}, `unknown token subcommand "bogus"`, "gadgetd token revoke ID"},
	} {
		code, _, stderr := runInProcess(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, tc.list) {
			t.Errorf("gadgetd %v: exit %d, stderr:\n%s", tc.args, code, stderr)
		}
	}
}

func TestClientErrorsAreTheServersWordsWithoutRPCPrefixes(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	out, err := exec.Command(bin, "user", "add", "alice", "--data", data).Output()
	if err != nil {
		t.Fatalf("user add: %v", err)
	}
	token := strings.TrimSpace(string(out))
	addr, _, _, _ := startServe(t, bin, "--data", data)
	for _, tc := range []struct {
		token string
		args  []string
		want  string
	}{
		{"gdt_wrong", []string{"ls"}, "gadgetd: invalid token\n"},
		{token, []string{"rm", "nosuchid"}, "gadgetd: unknown gadget id \"nosuchid\"\n"},
		{token, []string{"token", "revoke", "nosuchid"}, "gadgetd: unknown token id \"nosuchid\"\n"},
	} {
		out, err := gadgetd(t, bin, addr, tc.token, tc.args...)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || out != tc.want {
			t.Errorf("gadgetd %v: %v, printed %q, want %q", tc.args, err, out, tc.want)
		}
	}
}
