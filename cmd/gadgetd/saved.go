package main

// The saved commands: list the tokens you saved (Persistent.save, which
// programs call through the client package) and drop one.

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gadgetd/gadgetd/schema"
)

// savedCommands are added to commands (main.go).
var savedCommands = []*command{
	{name: "saved ls", about: "list the capabilities you saved (their tokens are never shown again)", client: true,
		run: clientCommand("saved ls", 0, 0, listSaved)},
	{name: "saved drop", args: "ID", about: "drop a saved token: it restores nothing, and what it restored fails", client: true,
		run: clientCommand("saved drop", 1, 1, dropSaved)},
}

func listSaved(ctx context.Context, ws schema.Workspace, _ []string, stdout io.Writer) error {
	f, release := ws.Saved(ctx, nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return err
	}
	list, err := res.Saved()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tGADGET\tKIND\tROLE\tSAVED")
	for i := 0; i < list.Len(); i++ {
		sv := list.At(i)
		id, _ := sv.Id()
		gadget, _ := sv.Gadget()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", id, gadget, sv.Kind(), sv.Role(), formatMillis(sv.CreatedAt()))
	}
	return tw.Flush()
}

func dropSaved(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
	f, release := ws.DropSaved(ctx, func(p schema.Workspace_dropSaved_Params) error { return p.SetId(args[0]) })
	defer release()
	if _, err := f.Struct(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "dropped saved token %s\n", args[0])
	return nil
}
