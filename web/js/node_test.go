package js_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nodeTimeout bounds one node run: a hang guard, not a speed limit.
const nodeTimeout = 3 * time.Minute

// requireNode returns the path of node, once it and web/js/node_modules are
// there. Without them the test is skipped, except on CI (CI=true), where a
// missing node must not pass as a green run.
func requireNode(t *testing.T) string {
	t.Helper()
	missing := func(what string) {
		msg := what + " (scripts/deps.sh installs it; the JS client tests need it)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH")
	}
	if _, err := os.Stat("node_modules/.package-lock.json"); err != nil {
		missing("web/js/node_modules is missing: run npm ci in web/js")
	}
	return node
}

// runNode runs the node:test file script (relative to web/js) with env added
// to the environment, and fails t with its output if any test in it failed.
func runNode(t *testing.T, node, script string, env ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), nodeTimeout)
	defer cancel()
	// A test that hangs fails on its own, by name, well before nodeTimeout.
	cmd := exec.CommandContext(ctx, node, "--experimental-websocket", "--test", "--test-reporter=spec", "--test-timeout=120000", script)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test %s: %v\n%s", script, err, out)
	}
	t.Logf("node --test %s:\n%s", script, out)
}

// startNode starts node on script with args and returns it running; the
// test ends it.
func startNode(t *testing.T, node, script string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(node, append([]string{filepath.Clean(script)}, args...)...)
	var out strings.Builder
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("node %s %s:\n%s", script, strings.Join(args, " "), out.String())
		}
	})
	return cmd
}
