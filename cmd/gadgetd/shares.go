package main

// The sharing commands: share a gadget with another user, revoke it, and
// list who holds what.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gadgetd/gadgetd/schema"
)

// shareCommands are added to commands (main.go).
var shareCommands = []*command{
	{name: "share", args: "GADGET USER [--role viewer|editor|owner]", about: "share a gadget with another user, at most at your own role", client: true, run: shareGadget},
	{name: "unshare", args: "GADGET USER", about: "revoke your shares to a user (an owner's: all of theirs), and every share made from them", client: true,
		run: clientCommand("unshare", 2, 2, unshareGadget)},
	{name: "shares", args: "GADGET", about: "list who holds a share of a gadget, and from whom", client: true, run: clientCommand("shares", 1, 1, listShares)},
}

// roles maps the names the commands take to roles.
var roles = map[string]schema.Role{"viewer": schema.Role_viewer, "editor": schema.Role_editor, "owner": schema.Role_owner}

func shareGadget(args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("share", flag.ContinueOnError)
	roleName := fs.String("role", "viewer", "the role to share: viewer, editor or owner")
	return withClientFlags(fs, args, 2, 2, stdout, func(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
		role, ok := roles[*roleName]
		if !ok {
			return fmt.Errorf("%w: --role must be viewer, editor or owner", errUsage)
		}
		g, releaseOpen := openGadget(ctx, ws, args[0])
		defer releaseOpen()
		f, release := g.Share(ctx, func(p schema.Gadget_share_Params) error {
			p.SetRole(role)
			return p.SetUser(args[1])
		})
		defer release()
		if _, err := f.Struct(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "shared %s with %s as %s\n", args[0], args[1], role)
		return nil
	})
}

func unshareGadget(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
	g, releaseOpen := openGadget(ctx, ws, args[0])
	defer releaseOpen()
	f, release := g.Unshare(ctx, func(p schema.Gadget_unshare_Params) error { return p.SetUser(args[1]) })
	defer release()
	res, err := f.Struct()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revoked %d share(s): %s's and those made from them\n", res.Revoked(), args[1])
	return nil
}

func listShares(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
	g, releaseOpen := openGadget(ctx, ws, args[0])
	defer releaseOpen()
	f, release := g.Shares(ctx, nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return err
	}
	list, err := res.Shares()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "USER\tROLE\tSHARED BY\tSINCE")
	for i := 0; i < list.Len(); i++ {
		s := list.At(i)
		user, _ := s.User()
		by, _ := s.SharedBy()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", user, s.Role(), by, formatMillis(s.CreatedAt()))
	}
	return tw.Flush()
}
