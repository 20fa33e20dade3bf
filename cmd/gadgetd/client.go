package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/schema"
)

// clientTimeout bounds one client command; installing compiles wasm.
const clientTimeout = 2 * time.Minute

// withClient parses a client subcommand, logs in and runs do.
func withClient(args []string, minArgs, maxArgs int, stdout io.Writer,
	do func(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error) error {
	fs := flag.NewFlagSet("gadgetd", flag.ContinueOnError)
	pos, err := parseFlags(fs, args, minArgs, maxArgs)
	if err != nil {
		return err
	}
	addr, token, err := client.FromEnv()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	conn, err := client.Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	ws, release := conn.Login(ctx, token)
	defer release()
	return do(ctx, ws, pos, stdout)
}

func listGadgets(ctx context.Context, ws schema.Workspace, _ []string, stdout io.Writer) error {
	f, release := ws.Gadgets(ctx, nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return err
	}
	list, err := res.Gadgets()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tBLUEPRINT\tCREATED")
	for i := 0; i < list.Len(); i++ {
		g := list.At(i)
		id, _ := g.Id()
		name, _ := g.Name()
		bp, _ := g.Blueprint()
		version, _ := g.BlueprintVersion()
		created := time.UnixMilli(g.CreatedAt()).Local().Format(time.DateTime)
		fmt.Fprintf(tw, "%s\t%s\t%s %s\t%s\n", id, name, bp, version, created)
	}
	return tw.Flush()
}

func newGadget(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
	f, release := ws.Create(ctx, func(p schema.Workspace_create_Params) error {
		if len(args) == 2 {
			if err := p.SetName(args[1]); err != nil {
				return err
			}
		}
		return p.SetBlueprint(args[0])
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return err
	}
	info, err := res.Info()
	if err != nil {
		return err
	}
	id, _ := info.Id()
	fmt.Fprintln(stdout, id)
	return nil
}

func removeGadget(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
	f, release := ws.Remove(ctx, func(p schema.Workspace_remove_Params) error { return p.SetId(args[0]) })
	defer release()
	_, err := f.Struct()
	return err
}

func listBlueprints(ctx context.Context, ws schema.Workspace, _ []string, stdout io.Writer) error {
	f, release := ws.Blueprints(ctx, nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return err
	}
	list, err := res.Blueprints()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tBUILTIN\tDESCRIPTION")
	for i := 0; i < list.Len(); i++ {
		b := list.At(i)
		name, _ := b.Name()
		version, _ := b.Version()
		desc, _ := b.Description()
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\n", name, version, b.Builtin(), desc)
	}
	return tw.Flush()
}

func installBlueprint(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
	b, err := blueprint.Load(args[0])
	if err != nil {
		return err
	}
	f, release := ws.InstallBlueprint(ctx, func(p schema.Workspace_installBlueprint_Params) error {
		bundle, err := p.NewBundle()
		if err != nil {
			return err
		}
		return b.Fill(bundle)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return err
	}
	info, _ := res.Info()
	name, _ := info.Name()
	version, _ := info.Version()
	fmt.Fprintf(stdout, "installed %s %s\n", name, version)
	return nil
}
