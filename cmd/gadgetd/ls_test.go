package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/schema"
)

// ls pages through the workspace's listing: a user with more gadgets than
// one of its pages (500) sees every one, once.
func TestLsListsEveryGadgetPastOnePage(t *testing.T) {
	const gadgets = lsPage + 3
	bin := buildBinary(t)
	data := t.TempDir()
	out, err := exec.Command(bin, "user", "add", "alice", "--data", data).Output()
	if err != nil {
		t.Fatalf("user add: %v", err)
	}
	token := strings.TrimSpace(string(out))
	config := filepath.Join(t.TempDir(), "gadgetd.toml")
	if err := os.WriteFile(config, []byte("[users]\nmax_gadgets = 600\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, _, _, _ := startServe(t, bin, "--data", data, "--config", config)
	if out, err := gadgetd(t, bin, addr, token, "blueprint", "install", blueprinttest.Example(t, "counter")); err != nil {
		t.Fatalf("blueprint install: %v %s", err, out)
	}

	// Made over the API: a process per gadget would take minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := client.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ws, release := conn.Login(ctx, token)
	defer release()
	created := map[string]bool{}
	for range gadgets {
		f, release := ws.Create(ctx, func(p schema.Workspace_create_Params) error { return p.SetBlueprint("counter") })
		res, err := f.Struct()
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		info, _ := res.Info()
		id, _ := info.Id()
		created[id] = true
		release()
	}

	ls, err := gadgetd(t, bin, addr, token, "ls")
	if err != nil {
		t.Fatalf("ls: %v %s", err, ls)
	}
	lines := strings.Split(strings.TrimSuffix(ls, "\n"), "\n")
	if len(lines) != 1+gadgets || !strings.HasPrefix(lines[0], "ID ") {
		t.Fatalf("ls printed %d lines, want a header and %d gadgets:\n%s", len(lines), gadgets, ls)
	}
	for _, line := range lines[1:] {
		id, _, _ := strings.Cut(line, " ")
		if !created[id] {
			t.Fatalf("ls listed %q, not a gadget alice created or twice:\n%s", id, line)
		}
		delete(created, id)
	}
}
