package toolchain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gadgetd/gadgetd/internal/blueprint"
)

// gadgetdModule is the module whose web/js generates the bindings.
const gadgetdModule = "github.com/gadgetd/gadgetd"

// ErrNoJSToolchain is wrapped by GenerateJSBindings's error when what it
// needs is not there: node, or a gadgetd checkout whose web/js has its npm
// packages. A build goes on without the JS bindings then.
var ErrNoJSToolchain = errors.New("no JavaScript toolchain")

// GenerateJSBindings writes the JavaScript bindings of the schema file
// (relative to dir) next to it, as blueprint.BindingsFile names it, and
// returns that path. nodes is the file compiled by CompileSchema.
func GenerateJSBindings(ctx context.Context, dir, file string, nodes []byte) (string, error) {
	code, err := JSBindings(ctx, dir, file, nodes)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, blueprint.BindingsFile(file))
	return path, writeIfChanged(path, code)
}

// JSBindings returns the JavaScript bindings of the schema file (relative
// to dir), compiled by CompileSchema into nodes. The bindings are a classic
// script for the gadget's frame: after gadgetd's frame runtime, it
// registers the file's types as gadgetd.schemas["NAME.capnp"], so the UI
// can write `gadgetd.session(gadgetd.schemas["counter.capnp"].Counter)` and
// get a typed stub of its session.
//
// It runs node on web/js/build.mjs (capnp-es's compiler, with gadgetd's
// fixes to its output) of the gadgetd module the blueprint builds against,
// which must be a checkout whose npm packages are installed
// (scripts/deps.sh). Without node or those, it fails with an error that
// wraps ErrNoJSToolchain and says what is missing.
func JSBindings(ctx context.Context, dir, file string, nodes []byte) ([]byte, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("%w: node is not installed (Node.js 20 or newer)", ErrNoJSToolchain)
	}
	out, err := goCmd(ctx, dir, nil, "list", "-m", "-f", "{{.Dir}}", gadgetdModule)
	if err != nil {
		return nil, fmt.Errorf("%w: finding the gadgetd module: %v", ErrNoJSToolchain, err)
	}
	webJS := filepath.Join(strings.TrimSpace(out), "web", "js")
	if _, err := os.Stat(filepath.Join(webJS, "node_modules", ".package-lock.json")); err != nil {
		return nil, fmt.Errorf("%w: %s has no npm packages (run scripts/deps.sh in that gadgetd checkout)", ErrNoJSToolchain, webJS)
	}
	tmp, err := os.CreateTemp("", "gadgetd-bindings-*.js")
	if err != nil {
		return nil, err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.CommandContext(ctx, node, filepath.Join(webJS, "build.mjs"), "blueprint", tmp.Name(), filepath.Base(file))
	cmd.Stdin = bytes.NewReader(nodes)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("generating the JavaScript bindings of %s: %v\n%s", filepath.Join(dir, file), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return os.ReadFile(tmp.Name())
}

// buildJSBindings generates the schema's JS bindings beside it, where
// blueprint.Load inlines them into the UI. Without a JS toolchain it says
// so on stderr and the build goes on: the guest does not need them, and a
// UI that asks for bindings that were never generated fails at Load with
// the reason.
func buildJSBindings(ctx context.Context, dir string, m blueprint.Manifest, nodes []byte) error {
	_, err := GenerateJSBindings(ctx, dir, m.Schema, nodes)
	if errors.Is(err, ErrNoJSToolchain) {
		fmt.Fprintf(os.Stderr, "gadgetd: the UI gets no JavaScript bindings of %s: %v\n", m.Schema, err)
		return nil
	}
	return err
}
