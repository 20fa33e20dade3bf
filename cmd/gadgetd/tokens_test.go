package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// stopServe interrupts a server started by startServe and waits for it to
// exit, so that another may open its data directory.
func stopServe(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve did not exit cleanly on SIGINT: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("serve did not exit within a minute of SIGINT")
	}
}

// serveDev starts `serve --dev` on data and returns the token it printed.
func serveDev(t *testing.T, bin, data string) (token, addr string, cmd *exec.Cmd) {
	t.Helper()
	addr, _, lines, cmd := startServe(t, bin, "--data", data, "--dev", "--examples", t.TempDir())
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "GADGETD_TOKEN="); ok {
			return v, addr, cmd
		}
	}
	t.Fatal("serve --dev printed no GADGETD_TOKEN line")
	return "", "", nil
}

// tokenID returns the id on the first line of `gadgetd token ls` output that
// match accepts.
func tokenID(t *testing.T, ls string, match func(line string) bool) string {
	t.Helper()
	for _, line := range strings.Split(ls, "\n")[1:] {
		if f := strings.Fields(strings.TrimPrefix(line, "*")); len(f) > 0 && match(line) {
			return f[0]
		}
	}
	t.Fatalf("no matching line in token ls output:\n%s", ls)
	return ""
}

// current matches the token ls line of the token in use.
func current(line string) bool { return strings.HasPrefix(line, "*") }

func TestServeDevReusesItsTokenUntilItIsRevoked(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	first, _, cmd := serveDev(t, bin, data)
	stopServe(t, cmd)
	second, addr, cmd := serveDev(t, bin, data)
	if second != first {
		t.Fatalf("the second start printed another token: %q, then %q", first, second)
	}
	fi, err := os.Stat(filepath.Join(data, "dev-token"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("dev-token has mode %v, want 0600", fi.Mode().Perm())
	}
	ls, err := gadgetd(t, bin, addr, second, "token", "ls")
	if err != nil {
		t.Fatalf("token ls: %v %s", err, ls)
	}
	if n := strings.Count(ls, "serve --dev"); n != 1 {
		t.Fatalf("the demo user holds %d dev tokens after two starts, want 1:\n%s", n, ls)
	}
	id := tokenID(t, ls, current)
	if out, err := gadgetd(t, bin, addr, second, "token", "revoke", id); err != nil {
		t.Fatalf("token revoke: %v %s", err, out)
	}
	stopServe(t, cmd)

	third, addr, _ := serveDev(t, bin, data)
	if third == first {
		t.Fatal("serve --dev printed the token that was revoked")
	}
	if out, err := gadgetd(t, bin, addr, third, "ls"); err != nil {
		t.Fatalf("the new dev token does not log in: %v %s", err, out)
	}
}

func TestCommandLineListsIssuesAndRevokesTokens(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	out, err := exec.Command(bin, "user", "add", "alice", "--data", data).Output()
	if err != nil {
		t.Fatalf("user add: %v", err)
	}
	token := strings.TrimSpace(string(out))
	addr, _, _, _ := startServe(t, bin, "--data", data)

	laptop, err := gadgetd(t, bin, addr, token, "token", "new", "laptop", "--expires", "720h")
	if err != nil {
		t.Fatalf("token new: %v %s", err, laptop)
	}
	laptop = strings.TrimSpace(laptop)
	if !regexp.MustCompile(`^gdt_[A-Za-z0-9_-]{43}$`).MatchString(laptop) {
		t.Fatalf("token new printed %q", laptop)
	}
	ls, err := gadgetd(t, bin, addr, laptop, "token", "ls")
	if err != nil {
		t.Fatalf("token ls: %v %s", err, ls)
	}
	lines := strings.Split(strings.TrimSpace(ls), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "user add") || !strings.Contains(lines[1], "never") ||
		!strings.HasPrefix(lines[2], "*") || !strings.Contains(lines[2], "laptop") || strings.Contains(lines[2], "never") {
		t.Fatalf("token ls as the laptop token:\n%s", ls)
	}
	id := tokenID(t, ls, func(line string) bool { return strings.Contains(line, "laptop") })
	if out, err := gadgetd(t, bin, addr, token, "token", "revoke", id); err != nil {
		t.Fatalf("token revoke: %v %s", err, out)
	}
	if out, err := gadgetd(t, bin, addr, laptop, "ls"); err == nil || !strings.Contains(out, "invalid token") {
		t.Fatalf("ls with the revoked token: %v %q", err, out)
	}
	if out, err := gadgetd(t, bin, addr, token, "token", "revoke", id); err == nil || !strings.Contains(out, "unknown token id") {
		t.Fatalf("revoking it again: %v %q", err, out)
	}
	if out, err := gadgetd(t, bin, addr, token, "token", "new", "--expires", "-1h"); err == nil || !strings.Contains(out, "--expires") {
		t.Fatalf("a negative --expires: %v %q", err, out)
	}
}
