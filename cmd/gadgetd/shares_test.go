package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
)

// lineOf returns the line of out that contains s, or "".
func lineOf(out, s string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, s) {
			return line
		}
	}
	return ""
}

func TestCommandLineSharesListsAndRevokesWithTheCascade(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	tokens := map[string]string{}
	for _, name := range []string{"alice", "bob", "carol"} {
		out, err := exec.Command(bin, "user", "add", name, "--data", data).Output()
		if err != nil {
			t.Fatalf("user add %s: %v", name, err)
		}
		tokens[name] = strings.TrimSpace(string(out))
	}
	addr, _, _, _ := startServe(t, bin, "--data", data)
	run := func(user string, args ...string) (string, error) {
		t.Helper()
		return gadgetd(t, bin, addr, tokens[user], args...)
	}
	if out, err := run("alice", "blueprint", "install", blueprinttest.Example(t, "counter")); err != nil {
		t.Fatalf("blueprint install: %v %s", err, out)
	}
	id, err := run("alice", "new", "counter", "shared counter")
	if err != nil {
		t.Fatalf("new: %v %s", err, id)
	}
	id = strings.TrimSpace(id)

	if out, err := run("alice", "share", id, "bob", "--role", "editor"); err != nil || out != "shared "+id+" with bob as editor\n" {
		t.Fatalf("share with bob: %v %q", err, out)
	}
	ls, err := run("bob", "ls")
	if line := lineOf(ls, id); err != nil || !strings.Contains(line, "shared counter") || !strings.Contains(line, "editor") || !strings.Contains(line, "alice") {
		t.Fatalf("bob's ls: %v\n%s", err, ls)
	}
	if out, err := run("bob", "share", id, "carol", "--role", "owner"); err == nil || !strings.Contains(out, "the owner role is above the sharer's own editor role") {
		t.Fatalf("bob sharing above his role: %v %q", err, out)
	}
	if out, err := run("bob", "share", id, "carol"); err != nil || !strings.Contains(out, "as viewer") {
		t.Fatalf("bob sharing as viewer (the default): %v %q", err, out)
	}
	shares, err := run("alice", "shares", id)
	if err != nil || !strings.Contains(lineOf(shares, "bob "), "editor") || !strings.Contains(lineOf(shares, "carol"), "viewer  bob") {
		t.Fatalf("shares: %v\n%s", err, shares)
	}
	if out, err := run("carol", "shares", id); err == nil || !strings.Contains(out, "needs the editor or owner role") {
		t.Fatalf("a viewer listing shares: %v %q", err, out)
	}
	if out, err := run("carol", "share", id, "alice", "--role", "boss"); err == nil || !strings.Contains(out, "--role must be viewer, editor or owner") {
		t.Fatalf("an unknown role: %v %q", err, out)
	}

	if out, err := run("alice", "unshare", id, "bob"); err != nil || !strings.HasPrefix(out, "revoked 2 share(s)") {
		t.Fatalf("unshare bob: %v %q", err, out)
	}
	if ls, err := run("carol", "ls"); err != nil || strings.Contains(ls, id) {
		t.Fatalf("carol's ls after bob's share was revoked: %v\n%s", err, ls)
	}
	if out, err := run("carol", "shares", id); err == nil || !strings.Contains(out, "unknown gadget id") {
		t.Fatalf("carol naming the gadget after revocation: %v %q", err, out)
	}
}
