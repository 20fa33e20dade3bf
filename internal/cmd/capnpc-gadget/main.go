// Command capnpc-gadget is a plugin of the capnp compiler that writes the
// synchronous client stubs of internal/syncgen (NAME.capnp.sync.go) beside
// capnpc-go's bindings:
//
//	capnp compile -ogo:DIR -o/path/to/capnpc-gadget:DIR --src-prefix=DIR DIR/NAME.capnp
//
// make schema (scripts/schema.sh) runs it; `gadgetd blueprint build` does
// the same without it, by calling syncgen directly.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gadgetd/gadgetd/internal/syncgen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "capnpc-gadget:", err)
		os.Exit(1)
	}
}

// run reads the CodeGeneratorRequest from stdin and writes the files into
// the current directory, which the capnp compiler sets to the output
// directory.
func run() error {
	req, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	files, err := syncgen.Generate(req)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.Name), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(f.Name, f.Code, 0o644); err != nil {
			return err
		}
	}
	return nil
}
