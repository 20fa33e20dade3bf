package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/internal/blueprint/scaffold"
	"github.com/gadgetd/gadgetd/internal/blueprint/toolchain"
)

// buildBlueprint is `gadgetd blueprint build DIR`.
func buildBlueprint(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("blueprint build", flag.ContinueOnError)
	pos, err := parseFlags(fs, args, 1, 1)
	if err != nil {
		return err
	}
	if err := toolchain.Build(context.Background(), pos[0]); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "built %s and %s in %s\n", blueprint.WasmFile, blueprint.SchemaFile, pos[0])
	return nil
}

const (
	sdkModule   = "github.com/gadgetd/gadgetd"
	capnpModule = "capnproto.org/go/capnp/v3"
	// develVersion is what go.mod requires of a gadgetd that a replace
	// directive supplies, as `go mod edit -replace` would write it.
	develVersion = "v0.0.0-00010101000000-000000000000"
	// prepareTimeout bounds go mod tidy and the first generation of the
	// bindings, which may download modules.
	prepareTimeout = 5 * time.Minute
)

// newBlueprintHelp is what `gadgetd blueprint new --help` adds to the usage.
const newBlueprintHelp = `It writes a blueprint that builds, installs and passes its own test as it
is: a Go module (go.mod requires github.com/gadgetd/gadgetd and go-capnp),
a session schema (.capnp) with a fresh id, main.go serving it with the guest
SDK, main_test.go, ui.html and blueprint.json. Then it runs go mod tidy and
generates the schema's Go bindings, so it needs go, capnp and capnpc-go, as
gadgetd blueprint build does.

A development build of gadgetd has no version a module proxy serves: give
--sdk the gadgetd checkout it was built from, and go.mod replaces gadgetd
with that directory.
`

// newBlueprint is `gadgetd blueprint new NAME [DIR] [--module PATH] [--sdk DIR]`.
func newBlueprint(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("blueprint new", flag.ContinueOnError)
	module := fs.String("module", "", "the blueprint's Go module `path` (default example.com/NAME)")
	sdk := fs.String("sdk", "", "the gadgetd checkout (`dir`) to build against, for a development build of gadgetd")
	pos, err := parseFlags(fs, args, 1, 2)
	if err != nil {
		return err
	}
	name, dir := pos[0], pos[0]
	if len(pos) == 2 {
		dir = pos[1]
	}
	if *module == "" {
		*module = "example.com/" + name
	}
	opts, err := sdkOptions(*sdk)
	if err != nil {
		return err
	}
	opts.Name, opts.Module = name, *module
	if _, err := scaffold.Write(dir, opts); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), prepareTimeout)
	defer cancel()
	if err := toolchain.Prepare(ctx, dir); err != nil {
		return fmt.Errorf("the blueprint is written in %s, but getting it ready failed (fix this, then run go mod tidy and gadgetd blueprint build %s): %w", dir, dir, err)
	}
	fmt.Fprintf(stdout, "created blueprint %s in %s\n\n", name, dir)
	fmt.Fprintf(stdout, "  cd %s\n  go test ./...                 # runs the gadget in the sandbox\n  gadgetd blueprint build .     # gadget.wasm and schema.bin\n  gadgetd blueprint install .   # into the server at $GADGETD_ADDR\n  gadgetd new %s\n", dir, name)
	return nil
}

// sdkOptions returns the versions the new blueprint's go.mod requires: this
// binary's own gadgetd and go-capnp. A development build has no version a
// module proxy serves, so it needs sdkDir, the checkout it was built from,
// which go.mod then replaces gadgetd with.
func sdkOptions(sdkDir string) (scaffold.Options, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return scaffold.Options{}, errors.New("this gadgetd has no build information to take the SDK's version from")
	}
	o := scaffold.Options{GoVersion: strings.TrimPrefix(strings.Fields(info.GoVersion)[0], "go")}
	for _, dep := range info.Deps {
		if dep.Path == capnpModule {
			o.CapnpVersion = dep.Version
		}
	}
	if o.CapnpVersion == "" {
		return o, fmt.Errorf("this gadgetd's build information does not name its %s version", capnpModule)
	}
	v := info.Main.Version
	released := strings.HasPrefix(v, "v") && !strings.Contains(v, "+")
	if sdkDir == "" {
		if !released {
			return o, fmt.Errorf("this gadgetd is a development build (version %q), which no module proxy serves: "+
				"pass --sdk DIR, the gadgetd checkout it was built from, and the blueprint's go.mod will use that checkout", v)
		}
		o.GadgetdVersion = v
		return o, nil
	}
	abs, err := filepath.Abs(sdkDir)
	if err != nil {
		return o, err
	}
	mod, err := os.ReadFile(filepath.Join(abs, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module "+sdkModule+"\n") {
		return o, fmt.Errorf("--sdk %s is not a gadgetd checkout: it has no go.mod for module %s", sdkDir, sdkModule)
	}
	o.SDKDir, o.GadgetdVersion = abs, develVersion
	if released {
		o.GadgetdVersion = v
	}
	return o, nil
}
