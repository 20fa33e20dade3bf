package main

// The link commands: create a share link to a gadget, list and revoke its
// links, and redeem one.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/gadgetd/gadgetd/schema"
)

// linkCommands are added to commands (main.go).
var linkCommands = []*command{
	{name: "link create", args: "GADGET [--role viewer|editor|owner] [--expires DURATION] [--single-use] [--label LABEL]",
		about: "create a share link to a gadget and print its secret (shown once)", client: true, run: createLink},
	{name: "link ls", args: "GADGET", about: "list a gadget's links (an owner's: all; an editor's: their own)", client: true,
		run: clientCommand("link ls", 1, 1, listLinks)},
	{name: "link revoke", args: "GADGET LINKID", about: "revoke a link, ending every redemption of it", client: true,
		run: clientCommand("link revoke", 2, 2, revokeLink)},
	{name: "redeem", args: "SECRET", about: "redeem a share link: its gadget joins your workspace", client: true,
		run: clientCommand("redeem", 1, 1, redeemLink)},
}

func createLink(args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("link create", flag.ContinueOnError)
	roleName := fs.String("role", "viewer", "the role the link gives: viewer, editor or owner")
	expires := fs.Duration("expires", 0, "how long the link can be redeemed, e.g. 24h (0: until revoked)")
	singleUse := fs.Bool("single-use", false, "the first redemption consumes the link")
	label := fs.String("label", "", "what the link is for, for humans")
	return withClientFlags(fs, args, 1, 1, stdout, func(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
		role, ok := roles[*roleName]
		if !ok {
			return fmt.Errorf("%w: --role must be viewer, editor or owner", errUsage)
		}
		if *expires < 0 || *expires%time.Second != 0 {
			return fmt.Errorf("%w: --expires must be a positive whole number of seconds, e.g. 90m or 24h", errUsage)
		}
		g, releaseOpen := openGadget(ctx, ws, args[0])
		defer releaseOpen()
		f, release := g.CreateLink(ctx, func(p schema.Gadget_createLink_Params) error {
			p.SetRole(role)
			p.SetExpiresInSeconds(uint64(*expires / time.Second))
			p.SetSingleUse(*singleUse)
			return p.SetLabel(*label)
		})
		defer release()
		res, err := f.Struct()
		if err != nil {
			return err
		}
		secret, err := res.Secret()
		if err != nil {
			return err
		}
		// The secret alone on stdout, for scripts; it cannot be shown again.
		fmt.Fprintln(stdout, secret)
		return nil
	})
}

func listLinks(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
	g, releaseOpen := openGadget(ctx, ws, args[0])
	defer releaseOpen()
	f, release := g.Links(ctx, nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return err
	}
	list, err := res.Links()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tROLE\tBY\tCREATED\tEXPIRES\tUSE\tREDEEMED\tLABEL")
	for i := 0; i < list.Len(); i++ {
		l := list.At(i)
		id, _ := l.Id()
		by, _ := l.CreatedBy()
		label, _ := l.Label()
		expires := "never"
		if l.ExpiresAt() != 0 {
			expires = formatMillis(l.ExpiresAt())
		}
		use := "many"
		switch {
		case l.Consumed():
			use = "used"
		case l.SingleUse():
			use = "once"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", id, l.Role(), by, formatMillis(l.CreatedAt()), expires, use, l.Redemptions(), label)
	}
	return tw.Flush()
}

func revokeLink(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
	g, releaseOpen := openGadget(ctx, ws, args[0])
	defer releaseOpen()
	f, release := g.RevokeLink(ctx, func(p schema.Gadget_revokeLink_Params) error { return p.SetId(args[1]) })
	defer release()
	res, err := f.Struct()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revoked link %s and %d share(s) through it\n", args[1], res.Revoked())
	return nil
}

func redeemLink(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
	f, release := ws.Redeem(ctx, func(p schema.Workspace_redeem_Params) error { return p.SetSecret(args[0]) })
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
	name, _ := info.Name()
	if !res.Redeemed() {
		fmt.Fprintf(stdout, "you already hold %s (%s) as %s; nothing changed\n", id, name, info.Role())
		return nil
	}
	fmt.Fprintf(stdout, "%s (%s) is in your workspace as %s\n", id, name, info.Role())
	return nil
}
