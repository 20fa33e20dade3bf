package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/schema"
)

// toolEnv is the environment for the go and capnp tools: capnp finds the
// capnpc-go plugin on PATH, in $(go env GOPATH)/bin as the Makefile
// installs it.
func toolEnv(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	gobin, gopath, _ := strings.Cut(strings.TrimRight(string(out), "\n"), "\n")
	if gobin == "" {
		gobin = filepath.Join(gopath, "bin")
	}
	return append(os.Environ(), "PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// run runs a command in dir with env and fails the test, with its output,
// if it fails.
func run(t *testing.T, env []string, dir, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestNewBlueprintBuildsInstallsAndRunsOutsideTheRepository is the path of
// a gadget author who is not working in this repository: `blueprint new`
// in a directory of their own, its own test, `blueprint build`, `blueprint
// install` into a running server, and a call to the gadget.
func TestNewBlueprintBuildsInstallsAndRunsOutsideTheRepository(t *testing.T) {
	bin := buildBinary(t)
	env := toolEnv(t)
	work := t.TempDir() // outside the gadgetd module
	dir := filepath.Join(work, "hello")
	run(t, env, work, bin, "blueprint", "new", "hello-e2e", dir, "--sdk", blueprinttest.RepoRoot(), "--module", "example.com/me/hello")

	// The scaffold's own test runs the gadget in the sandbox.
	if out := run(t, env, dir, "go", "test", "-count=1", "./..."); !strings.Contains(out, "ok  \texample.com/me/hello\t") {
		t.Fatalf("the new blueprint's test did not run:\n%s", out)
	}
	run(t, env, work, bin, "blueprint", "build", dir)
	built, err := blueprint.Load(dir)
	if err != nil {
		t.Fatal(err)
	}

	data := t.TempDir()
	out, err := exec.Command(bin, "user", "add", "ann", "--data", data).Output()
	if err != nil {
		t.Fatalf("user add: %v", err)
	}
	token := strings.TrimSpace(string(out))
	addr, _, _, _ := startServe(t, bin, "--data", data)
	if out, err := gadgetd(t, bin, addr, token, "blueprint", "install", dir); err != nil || out != "installed hello-e2e 0.1.0\n" {
		t.Fatalf("blueprint install: %v %q", err, out)
	}
	id, err := gadgetd(t, bin, addr, token, "new", "hello-e2e")
	if err != nil {
		t.Fatalf("new: %v %s", err, id)
	}

	// Call it as a client without its generated code would: by the
	// interface id the server reports.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := client.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ws, release := conn.Login(ctx, token)
	defer release()
	opened, release := ws.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(strings.TrimSpace(id)) })
	defer release()
	g := opened.Gadget()
	info, release := g.Info(ctx, nil)
	defer release()
	infoRes, err := info.Struct()
	if err != nil {
		t.Fatal(err)
	}
	gi, _ := infoRes.Info()
	if gi.SessionInterface() != built.SessionInterface {
		t.Fatalf("the gadget's session interface is %#x, want the new blueprint's %#x", gi.SessionInterface(), built.SessionInterface)
	}
	session, release := g.Open(ctx, nil)
	defer release()
	for want := uint64(1); want <= 2; want++ {
		greeting, visits := visit(ctx, t, session.Session(), built.SessionInterface)
		if visits != want || greeting != fmt.Sprintf("Hello, ann! This is visit %d.", want) {
			t.Fatalf("visit %d = %q, %d", want, greeting, visits)
		}
	}
	logs, release := g.Logs(ctx, func(p schema.Gadget_logs_Params) error { p.SetLimit(10); return nil })
	defer release()
	logsRes, err := logs.Struct()
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := logsRes.Lines()
	var texts []string
	for i := 0; i < lines.Len(); i++ {
		text, _ := lines.At(i).Text()
		texts = append(texts, text)
	}
	if !slices.Contains(texts, "ann visited (2)") {
		t.Errorf("the gadget's log is %q, want its line about ann's second visit", texts)
	}
}

// visit calls visit @0 () -> (greeting :Text, visits :UInt64) on a session
// of the new blueprint's interface.
func visit(ctx context.Context, t *testing.T, session capnp.Client, iface uint64) (string, uint64) {
	t.Helper()
	ans, release := session.SendCall(ctx, capnp.Send{Method: capnp.Method{InterfaceID: iface, MethodID: 0}})
	defer release()
	res, err := ans.Struct()
	if err != nil {
		t.Fatalf("visit: %v", err)
	}
	p, err := res.Ptr(0)
	if err != nil {
		t.Fatal(err)
	}
	return p.Text(), res.Uint64(0)
}

// TestNewBlueprintFromADevelopmentBuildNeedsTheSDKCheckout: a development
// build has no gadgetd version a module proxy serves, so without --sdk it
// says what to do and writes nothing.
func TestNewBlueprintFromADevelopmentBuildNeedsTheSDKCheckout(t *testing.T) {
	bin := buildBinary(t)
	dir := filepath.Join(t.TempDir(), "hello")
	out, err := exec.Command(bin, "blueprint", "new", "hello", dir).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "development build") || !strings.Contains(string(out), "--sdk DIR") {
		t.Fatalf("blueprint new without --sdk: %v\n%s", err, out)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("the refused blueprint new created its directory")
	}
	out, err = exec.Command(bin, "blueprint", "new", "hello", dir, "--sdk", t.TempDir()).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "is not a gadgetd checkout") {
		t.Fatalf("blueprint new --sdk with a directory that is not gadgetd: %v\n%s", err, out)
	}
}
