package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/internal/blueprint"
	"github.com/gadgetd/gadgetd/schema"
)

// clientTimeout bounds one client command; installing compiles wasm.
const clientTimeout = 2 * time.Minute

// clientFunc is what a client subcommand does once logged in.
type clientFunc func(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error

// clientCommand is the run function of a client command called name that
// takes no flags and minArgs to maxArgs arguments: it logs in and runs do.
func clientCommand(name string, minArgs, maxArgs int, do clientFunc) func(args []string, stdout, stderr io.Writer) error {
	return func(args []string, stdout, _ io.Writer) error {
		return withClientFlags(flag.NewFlagSet(name, flag.ContinueOnError), args, minArgs, maxArgs, stdout, do)
	}
}

// withClientFlags parses a client command's flags (fs) and arguments, logs
// in and runs do.
func withClientFlags(fs *flag.FlagSet, args []string, minArgs, maxArgs int, stdout io.Writer, do clientFunc) error {
	pos, err := parseFlags(fs, args, minArgs, maxArgs)
	if err != nil {
		return err
	}
	addr, token, opts, err := client.FromEnv()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	conn, err := client.Dial(ctx, addr, opts...)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Wait for the login: a bad token is reported as such before anything
	// else, and a connection may send large messages (a blueprint) only
	// once its login has succeeded.
	f, release := conn.Gateway().Login(ctx, func(p schema.Gateway_login_Params) error { return p.SetToken(token) })
	defer release()
	res, err := f.Struct()
	if err != nil {
		return err
	}
	return do(ctx, res.Workspace(), pos, stdout)
}

// lsPage is how many gadgets `ls` asks for at a time (the server holds a
// page to at most 1000).
const lsPage = 500

func listGadgets(ctx context.Context, ws schema.Workspace, _ []string, stdout io.Writer) error {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tBLUEPRINT\tROLE\tSHARED BY\tCREATED")
	after := ""
	for {
		next, err := printGadgetsPage(ctx, ws, after, tw)
		if err != nil {
			return err
		}
		if next == "" {
			return tw.Flush()
		}
		after = next
	}
}

// printGadgetsPage prints the page of the listing after cursor after and
// returns the next cursor. It releases the page, the Gadget capabilities
// with it: ls keeps only text, and what a client holds counts against its
// connection's bound.
func printGadgetsPage(ctx context.Context, ws schema.Workspace, after string, w io.Writer) (next string, err error) {
	f, release := ws.Gadgets(ctx, func(p schema.Workspace_gadgets_Params) error {
		p.SetLimit(lsPage)
		return p.SetAfter(after)
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return "", err
	}
	list, err := res.Gadgets()
	if err != nil {
		return "", err
	}
	for i := 0; i < list.Len(); i++ {
		g, err := list.At(i).Info()
		if err != nil {
			return "", err
		}
		id, _ := g.Id()
		name, _ := g.Name()
		bp, _ := g.Blueprint()
		version, _ := g.BlueprintVersion()
		by, _ := g.SharedBy()
		if by == "" {
			by = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s %s\t%s\t%s\t%s\n", id, name, bp, version, g.Role(), by, formatMillis(g.CreatedAt()))
	}
	return res.Next()
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

// removeGadget removes with the authority the gadget's owner holds: its
// Gadget capability (Workspace.open, pipelined: one round trip).
func removeGadget(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
	opened, releaseOpen := ws.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(args[0]) })
	defer releaseOpen()
	f, release := opened.Gadget().Remove(ctx, nil)
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
	fmt.Fprintln(tw, "NAME\tVERSION\tBUILTIN\tBINDINGS\tDESCRIPTION")
	for i := 0; i < list.Len(); i++ {
		b := list.At(i)
		name, _ := b.Name()
		version, _ := b.Version()
		desc, _ := b.Description()
		var bindings []string
		requests, _ := b.Bindings()
		for j := 0; j < requests.Len(); j++ {
			n, _ := requests.At(j).Name()
			k, _ := requests.At(j).Kind()
			bindings = append(bindings, n+" ("+k+")")
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\n", name, version, b.Builtin(), strings.Join(bindings, ", "), desc)
	}
	return tw.Flush()
}

func installBlueprint(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
	b, err := blueprint.Load(args[0])
	if err != nil {
		return err
	}
	bundle, err := b.Marshal()
	if err != nil {
		return err
	}
	info, release, err := client.UploadBlueprint(ctx, ws, bundle)
	if err != nil {
		return err
	}
	defer release()
	name, _ := info.Name()
	version, _ := info.Version()
	fmt.Fprintf(stdout, "installed %s %s\n", name, version)
	return nil
}

func listTokens(ctx context.Context, ws schema.Workspace, _ []string, stdout io.Writer) error {
	f, release := ws.Tokens(ctx, nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return err
	}
	list, err := res.Tokens()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  ID\tLABEL\tCREATED\tEXPIRES")
	for i := 0; i < list.Len(); i++ {
		t := list.At(i)
		id, _ := t.Id()
		label, _ := t.Label()
		mark := " "
		if t.Current() {
			mark = "*"
		}
		expires := "never"
		if t.ExpiresAt() != 0 {
			expires = formatMillis(t.ExpiresAt())
		}
		fmt.Fprintf(tw, "%s %s\t%s\t%s\t%s\n", mark, id, label, formatMillis(t.CreatedAt()), expires)
	}
	return tw.Flush()
}

// newToken is `gadgetd token new [LABEL] [--expires DURATION]`: it prints
// the new token alone on stdout, so scripts can capture it.
func newToken(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("token new", flag.ContinueOnError)
	expires := fs.Duration("expires", 0, "lifetime; 0 means never")
	return withClientFlags(fs, args, 0, 1, stdout, func(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
		if *expires < 0 || (*expires > 0 && *expires < time.Second) {
			return fmt.Errorf("%w: --expires must be at least 1s", errUsage)
		}
		f, release := ws.NewToken(ctx, func(p schema.Workspace_newToken_Params) error {
			p.SetValidForSeconds(uint64(expires.Round(time.Second) / time.Second))
			if len(args) == 1 {
				return p.SetLabel(args[0])
			}
			return nil
		})
		defer release()
		res, err := f.Struct()
		if err != nil {
			return err
		}
		token, err := res.Token()
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, token)
		return nil
	})
}

func revokeToken(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
	f, release := ws.RevokeToken(ctx, func(p schema.Workspace_revokeToken_Params) error { return p.SetId(args[0]) })
	defer release()
	_, err := f.Struct()
	return err
}

// formatMillis formats a schema time (Unix milliseconds) in local time.
func formatMillis(ms int64) string { return time.UnixMilli(ms).Local().Format(time.DateTime) }
