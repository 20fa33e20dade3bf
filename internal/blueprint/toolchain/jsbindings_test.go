package toolchain_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/blueprinttest"
	"github.com/gadgetd/gadgetd/internal/blueprint/toolchain"
)

// requireJSToolchain skips the test without node or web/js's npm packages,
// except on CI, where they must be there.
func requireJSToolchain(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(blueprinttest.RepoRoot(), "web", "js", "node_modules", ".package-lock.json"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node or web/js/node_modules is missing (scripts/deps.sh): %v", err)
		}
		t.Skipf("node or web/js/node_modules is missing (scripts/deps.sh): %v", err)
	}
	return node
}

// TestJSBindingsGiveTheUITypedSessionStubs: the build writes the schema's
// JS bindings next to it (blueprint.Load inlines them in the UI); loaded
// after the frame runtime (web/static/frame.js, the bundle the shell puts
// in every frame), they give gadgetd.session a typed Counter stub that
// calls a Counter served over a MessagePort.
func TestJSBindingsGiveTheUITypedSessionStubs(t *testing.T) {
	node := requireJSToolchain(t)
	// The kernel's test counter's schema, so the Counter web/js's tests
	// serve has the interface id the bindings call.
	testSchema, err := os.ReadFile(filepath.Join(blueprinttest.RepoRoot(), blueprinttest.TestCounter, "counterpb", "counter.capnp"))
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := copyCounter(t, func(name, body, pkg string) string {
		if name == "counterpb/counter.capnp" {
			return strings.Replace(string(testSchema), "github.com/gadgetd/gadgetd/internal/testcounter/counterpb", pkg+"/counterpb", 1)
		}
		return body
	})
	ctx := buildCtx(t)
	nodes, err := toolchain.CompileSchema(ctx, dir, "counterpb/counter.capnp")
	if err != nil {
		t.Fatal(err)
	}
	bindings, err := toolchain.GenerateJSBindings(ctx, dir, "counterpb/counter.capnp", nodes)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "counterpb", "counter.capnp.js"); bindings != want {
		t.Fatalf("bindings at %s, want %s", bindings, want)
	}
	// The frame runtime and the bindings run as a frame would run them; a Counter in JS (web/js's own connection and test bindings)
	// answers on the other end of the port.
	webJS := filepath.Join(blueprinttest.RepoRoot(), "web", "js")
	script := `
import vm from "node:vm";
import fs from "node:fs";
import { GadgetConn } from "` + filepath.ToSlash(filepath.Join(webJS, "src", "conn.js")) + `";
import { messagePortTransport } from "` + filepath.ToSlash(filepath.Join(webJS, "src", "transport.js")) + `";
import { Counter as Served } from "` + filepath.ToSlash(filepath.Join(webJS, "test", "counter.mjs")) + `";
vm.runInThisContext(fs.readFileSync(process.argv[1], "utf8"));
vm.runInThisContext(fs.readFileSync(process.argv[2], "utf8"));
const { Counter } = gadgetd.schemas["counter.capnp"];
const { port1, port2 } = new MessageChannel();
const server = new GadgetConn(messagePortTransport(port2));
let value = 40n;
server.initMain(Served, { async increment(p, r) { value += p.by; r.value = value; } });
const transport = gadgetd.attachPort(port1);
const counter = await gadgetd.session(Counter);
const res = await counter.increment((p) => { p.by = 2n; }).promise();
console.log("value", String(res.value), Counter.Client.methods.map((m) => m.methodName).join(","));
transport.close();
port2.close();
`
	cmd := exec.CommandContext(ctx, node, "--input-type=module", "-e", script,
		filepath.Join(blueprinttest.RepoRoot(), "web", "static", "frame.js"), bindings)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "value 42 increment,get,watch,present,keep,kept"; got != want {
		t.Fatalf("node printed %q, want %q", got, want)
	}
}

// TestJSBindingsWithoutNodeAreExplained: without node the bindings are not
// generated, with an error that says so (a build prints it and goes on).
func TestJSBindingsWithoutNodeAreExplained(t *testing.T) {
	dir, _ := copyCounter(t, fixGoImport)
	ctx := buildCtx(t)
	nodes, err := toolchain.CompileSchema(ctx, dir, "counterpb/counter.capnp")
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(goBin), "node")); err == nil {
		t.Skip("node is installed beside go, so it cannot be hidden")
	}
	t.Setenv("PATH", filepath.Dir(goBin))
	_, err = toolchain.GenerateJSBindings(ctx, dir, "counterpb/counter.capnp", nodes)
	if !errors.Is(err, toolchain.ErrNoJSToolchain) || !strings.Contains(err.Error(), "node is not installed") {
		t.Fatalf("error = %v, want ErrNoJSToolchain saying node is not installed", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "counterpb", "counter.capnp.js")); !os.IsNotExist(err) {
		t.Fatalf("bindings were written without node (%v)", err)
	}
}

// TestTheExamplesCommittedJSBindingsAreCurrent: each blueprint in the
// repository commits its schema's JS bindings (running gadgetd needs no
// node), so they must be what its schema generates today.
func TestTheExamplesCommittedJSBindingsAreCurrent(t *testing.T) {
	requireJSToolchain(t)
	ctx := buildCtx(t)
	examples, err := filepath.Glob(filepath.Join(blueprinttest.RepoRoot(), "examples", "*", blueprint.ManifestFile))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	dirs := []string{blueprinttest.TestCounter}
	for _, m := range examples {
		rel, _ := filepath.Rel(blueprinttest.RepoRoot(), filepath.Dir(m))
		dirs = append(dirs, rel)
	}
	for _, name := range dirs {
		src := filepath.Join(blueprinttest.RepoRoot(), name)
		m, err := blueprint.ReadManifest(src)
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join(src, blueprint.BindingsFile(m.Schema)))
		if err != nil {
			t.Fatalf("%s: %v (run gadgetd blueprint build %s and commit the result)", name, err, name)
		}
		nodes, err := toolchain.CompileSchema(ctx, src, m.Schema)
		if err != nil {
			t.Fatal(err)
		}
		generated, err := toolchain.JSBindings(ctx, src, m.Schema, nodes)
		if err != nil {
			t.Fatal(err)
		}
		if string(generated) != string(committed) {
			t.Errorf("%s/%s is stale: run gadgetd blueprint build %s and commit it", name, blueprint.BindingsFile(m.Schema), name)
		}
	}
}
