package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
)

func TestCommandLineLinksAreCreatedRedeemedListedAndRevoked(t *testing.T) {
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
	id, err := run("alice", "new", "counter", "linked counter")
	if err != nil {
		t.Fatalf("new: %v %s", err, id)
	}
	id = strings.TrimSpace(id)

	secret, err := run("alice", "link", "create", id, "--role", "editor", "--expires", "24h", "--single-use", "--label", "for bob")
	secret = strings.TrimSpace(secret)
	if err != nil || !strings.HasPrefix(secret, "gdl_") {
		t.Fatalf("link create: %v %q", err, secret)
	}
	if out, err := run("bob", "redeem", secret); err != nil || out != id+" (linked counter) is in your workspace as editor\n" {
		t.Fatalf("bob redeeming: %v %q", err, out)
	}
	if ls, err := run("bob", "ls"); err != nil || !strings.Contains(lineOf(ls, id), "editor") {
		t.Fatalf("bob's ls: %v\n%s", err, ls)
	}
	if out, err := run("carol", "redeem", secret); err == nil || !strings.Contains(out, "invalid or expired link") {
		t.Fatalf("carol replaying the single-use link: %v %q", err, out)
	}
	links, err := run("alice", "link", "ls", id)
	line := lineOf(links, "for bob")
	if err != nil || !strings.Contains(line, "editor") || !strings.Contains(line, "used") || strings.Contains(links, secret[4:]) {
		t.Fatalf("link ls: %v\n%s", err, links)
	}
	linkID := strings.Fields(line)[0]
	if out, err := run("alice", "link", "revoke", id, linkID); err != nil || out != "revoked link "+linkID+" and 1 share(s) through it\n" {
		t.Fatalf("link revoke: %v %q", err, out)
	}
	if ls, err := run("bob", "ls"); err != nil || strings.Contains(ls, id) {
		t.Fatalf("bob's ls after the link was revoked: %v\n%s", err, ls)
	}
	if out, err := run("alice", "link", "create", id, "--expires", "1.5s"); err == nil || !strings.Contains(out, "--expires must be") {
		t.Fatalf("a fractional expiry: %v %q", err, out)
	}
}
