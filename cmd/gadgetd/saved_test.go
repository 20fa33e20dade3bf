package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/schema"
)

func TestCommandLineSavedTokensAreListedAndDropped(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	out, err := exec.Command(bin, "user", "add", "alice", "--data", data).Output()
	if err != nil {
		t.Fatalf("user add: %v", err)
	}
	token := strings.TrimSpace(string(out))
	addr, _, _, _ := startServe(t, bin, "--data", data)
	run := func(args ...string) (string, error) {
		t.Helper()
		return gadgetd(t, bin, addr, token, args...)
	}
	if out, err := run("blueprint", "install", blueprinttest.Example(t, "counter")); err != nil {
		t.Fatalf("blueprint install: %v %s", err, out)
	}
	id, err := run("new", "counter")
	if err != nil {
		t.Fatalf("new: %v %s", err, id)
	}
	id = strings.TrimSpace(id)

	// Programs save, through the client package.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := client.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ws, release := conn.Login(ctx, token)
	defer release()
	f, releaseOpen := ws.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(id) })
	defer releaseOpen()
	saved, err := client.Save(ctx, capnp.Client(f.Gadget()))
	if err != nil {
		t.Fatalf("save: %v", err)
	}

	ls, err := run("saved", "ls")
	line := lineOf(ls, id)
	if err != nil || !strings.Contains(line, "gadget") || !strings.Contains(line, "owner") || strings.Contains(ls, saved[4:]) {
		t.Fatalf("saved ls: %v\n%s", err, ls)
	}
	savedID := strings.Fields(line)[0]
	if out, err := run("saved", "drop", savedID); err != nil || out != "dropped saved token "+savedID+"\n" {
		t.Fatalf("saved drop: %v %q", err, out)
	}
	if ls, err := run("saved", "ls"); err != nil || strings.Contains(ls, id) {
		t.Fatalf("saved ls after the drop: %v\n%s", err, ls)
	}
	if out, err := run("saved", "drop", savedID); err == nil || !strings.Contains(out, "unknown saved token id") {
		t.Fatalf("dropping it again: %v %q", err, out)
	}
	restored, releaseRestore := conn.Restore(ctx, saved)
	defer releaseRestore()
	info, releaseInfo := schema.Gadget(restored).Info(ctx, nil)
	defer releaseInfo()
	if _, err := info.Struct(); err == nil || !strings.Contains(err.Error(), "invalid token") {
		t.Fatalf("restoring the dropped token: %v", err)
	}
}
