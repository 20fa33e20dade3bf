package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/gadgetd/gadgetd/internal/blueprint"
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
