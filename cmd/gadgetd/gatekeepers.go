package main

// The gatekeeper commands: services, bindings, actions and the audit log.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gadgetd/gadgetd/schema"
)

// gatekeeperCommands are added to commands (main.go).
var gatekeeperCommands = []*command{
	{name: "services", about: "list the services a gadget can be bound to", client: true, run: clientCommand("services", 0, 0, listServices)},
	{name: "bind", args: "GADGET NAME SERVICE RESOURCE", about: "let a gadget reach one resource of a service (a repository, a URL prefix) as NAME", client: true,
		run: clientCommand("bind", 4, 4, bind)},
	{name: "unbind", args: "GADGET NAME", about: "remove a binding; the gadget loses it at once", client: true, run: clientCommand("unbind", 2, 2, unbind)},
	{name: "bindings", args: "GADGET", about: "list a gadget's bindings", client: true, run: clientCommand("bindings", 1, 1, listBindings)},
	{name: "auto-approve", args: "GADGET NAME METHOD [--off]", about: "approve a binding's actions of one method as they are queued", client: true,
		run: autoApprove},
	{name: "actions", args: "[--all] [GADGET]", about: "list the actions waiting for your decision (--all: every action)", client: true, run: listActions},
	{name: "approve", args: "ID... | --all", about: "approve actions; each is applied in its binding's order", client: true, run: decideCommand("approve", true)},
	{name: "reject", args: "ID... | --all", about: "reject actions; their simulated changes disappear", client: true, run: decideCommand("reject", false)},
	{name: "audit", args: "[GADGET] [-n N]", about: "show the audit log, newest first: every gatekeeper call and decision", client: true, run: showAudit},
}

// openGadget pipelines Workspace.open(id).
func openGadget(ctx context.Context, ws schema.Workspace, id string) (schema.Gadget, func()) {
	f, release := ws.Open(ctx, func(p schema.Workspace_open_Params) error { return p.SetId(id) })
	return f.Gadget(), release
}

func listServices(ctx context.Context, ws schema.Workspace, _ []string, stdout io.Writer) error {
	f, release := ws.Services(ctx, nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return err
	}
	list, err := res.Services()
	if err != nil {
		return err
	}
	if list.Len() == 0 {
		fmt.Fprintln(stdout, "no services are configured ([services] in the server's --config file)")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tKIND\tACTIONS\tDESCRIPTION")
	for i := 0; i < list.Len(); i++ {
		s := list.At(i)
		name, _ := s.Name()
		kind, _ := s.Kind()
		desc, _ := s.Description()
		actions, _ := s.Actions()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, kind, joinTexts(actions), desc)
	}
	return tw.Flush()
}

func joinTexts(l interface {
	Len() int
	At(int) (string, error)
}) string {
	var out []string
	for i := 0; i < l.Len(); i++ {
		s, _ := l.At(i)
		out = append(out, s)
	}
	return strings.Join(out, ",")
}

func bind(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
	g, releaseGadget := openGadget(ctx, ws, args[0])
	defer releaseGadget()
	f, release := g.Bind(ctx, func(p schema.Gadget_bind_Params) error {
		if err := p.SetName(args[1]); err != nil {
			return err
		}
		if err := p.SetService(args[2]); err != nil {
			return err
		}
		return p.SetResource(args[3])
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return err
	}
	b, err := res.Binding()
	if err != nil {
		return err
	}
	name, _ := b.Name()
	resource, _ := b.Resource()
	fmt.Fprintf(stdout, "bound %s to %s of %s\n", name, resource, args[2])
	return nil
}

func unbind(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
	g, releaseGadget := openGadget(ctx, ws, args[0])
	defer releaseGadget()
	f, release := g.Unbind(ctx, func(p schema.Gadget_unbind_Params) error { return p.SetName(args[1]) })
	defer release()
	_, err := f.Struct()
	return err
}

func listBindings(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
	g, releaseGadget := openGadget(ctx, ws, args[0])
	defer releaseGadget()
	f, release := g.Bindings(ctx, nil)
	defer release()
	res, err := f.Struct()
	if err != nil {
		return err
	}
	list, err := res.Bindings()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSERVICE\tKIND\tRESOURCE\tAUTO-APPROVED\tCREATED")
	for i := 0; i < list.Len(); i++ {
		b := list.At(i)
		name, _ := b.Name()
		service, _ := b.Service()
		kind, _ := b.Kind()
		resource, _ := b.Resource()
		auto, _ := b.AutoApprove()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, service, kind, resource, joinTexts(auto), formatMillis(b.CreatedAt()))
	}
	return tw.Flush()
}

func autoApprove(args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("auto-approve", flag.ContinueOnError)
	off := fs.Bool("off", false, "stop approving them as they are queued")
	return withClientFlags(fs, args, 3, 3, stdout, func(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
		g, releaseGadget := openGadget(ctx, ws, args[0])
		defer releaseGadget()
		f, release := g.SetAutoApprove(ctx, func(p schema.Gadget_setAutoApprove_Params) error {
			p.SetOn(!*off)
			if err := p.SetBinding(args[1]); err != nil {
				return err
			}
			return p.SetMethod(args[2])
		})
		defer release()
		_, err := f.Struct()
		return err
	})
}

// openStates are the states of actions that wait for a human.
var openStates = []schema.ActionState{schema.ActionState_pending, schema.ActionState_inDoubt}

// actions lists the workspace's actions in states (all if empty) of
// gadget (all if ""), every page of them.
func actions(ctx context.Context, ws schema.Workspace, gadget string, states []schema.ActionState, each func(schema.ActionInfo)) error {
	var after uint64
	for {
		f, release := ws.Actions(ctx, func(p schema.Workspace_actions_Params) error {
			filter, err := p.NewFilter()
			if err != nil {
				return err
			}
			filter.SetAfterSeq(after)
			if err := filter.SetGadget(gadget); err != nil {
				return err
			}
			list, err := filter.NewStates(int32(len(states)))
			if err != nil {
				return err
			}
			for i, s := range states {
				list.Set(i, s)
			}
			return nil
		})
		res, err := f.Struct()
		if err != nil {
			release()
			return err
		}
		list, err := res.Actions()
		if err != nil {
			release()
			return err
		}
		for i := 0; i < list.Len(); i++ {
			each(list.At(i))
			after = list.At(i).Seq()
		}
		n := list.Len()
		release()
		if n == 0 {
			return nil
		}
	}
}

func listActions(args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("actions", flag.ContinueOnError)
	all := fs.Bool("all", false, "every action, also those decided and applied")
	return withClientFlags(fs, args, 0, 1, stdout, func(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
		states := openStates
		if *all {
			states = nil
		}
		gadget := ""
		if len(args) == 1 {
			gadget = args[0]
		}
		// One block per action: its line, then, indented, everything it
		// will do, which the one-line description does not say.
		n := 0
		err := actions(ctx, ws, gadget, states, func(a schema.ActionInfo) {
			id, _ := a.Id()
			g, _ := a.Gadget()
			b, _ := a.Binding()
			desc, _ := a.Description()
			fmt.Fprintf(stdout, "%s  %s  gadget %s, binding %s, by %s, %s\n  %s\n", id, a.State(), g, b, whose(a), formatMillis(a.CreatedAt()), desc)
			if outcome, _ := a.Outcome(); outcome != "" {
				fmt.Fprintf(stdout, "  outcome: %s\n", outcome)
			}
			if details, _ := a.Details(); details != "" {
				for _, line := range strings.Split(details, "\n") {
					fmt.Fprintf(stdout, "  | %s\n", line)
				}
			}
			fmt.Fprintln(stdout)
			n++
		})
		if err == nil && n == 0 {
			fmt.Fprintln(stdout, "no actions")
		}
		return err
	})
}

// maxDecideArgs is the most ids one approve or reject takes, as
// Workspace.decide does.
const maxDecideArgs = 1000

func decideCommand(name string, approve bool) func(args []string, stdout, stderr io.Writer) error {
	return func(args []string, stdout, _ io.Writer) error {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		all := fs.Bool("all", false, "every action waiting for a decision")
		return withClientFlags(fs, args, 0, maxDecideArgs, stdout, func(ctx context.Context, ws schema.Workspace, ids []string, stdout io.Writer) error {
			if *all == (len(ids) > 0) {
				return fmt.Errorf("%w: %s takes action ids or --all", errUsage, name)
			}
			if *all {
				err := actions(ctx, ws, "", openStates, func(a schema.ActionInfo) {
					id, _ := a.Id()
					ids = append(ids, id)
				})
				if err != nil {
					return err
				}
			}
			return decide(ctx, ws, ids, approve, stdout)
		})
	}
}

// decide decides ids and prints each outcome; it fails if any could not
// be decided.
func decide(ctx context.Context, ws schema.Workspace, ids []string, approve bool, stdout io.Writer) error {
	f, release := ws.Decide(ctx, func(p schema.Workspace_decide_Params) error {
		p.SetApprove(approve)
		list, err := p.NewIds(int32(len(ids)))
		if err != nil {
			return err
		}
		for i, id := range ids {
			if err := list.Set(i, id); err != nil {
				return err
			}
		}
		return nil
	})
	defer release()
	res, err := f.Struct()
	if err != nil {
		return err
	}
	list, err := res.Decisions()
	if err != nil {
		return err
	}
	failed := 0
	for i := 0; i < list.Len(); i++ {
		d := list.At(i)
		id, _ := d.Id()
		if !d.Ok() {
			reason, _ := d.Reason()
			fmt.Fprintf(stdout, "%s: not decided: %s\n", id, reason)
			failed++
			continue
		}
		a, _ := d.Action()
		desc, _ := a.Description()
		fmt.Fprintf(stdout, "%s: %s: %s\n", id, a.State(), desc)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d actions were not decided", failed, list.Len())
	}
	return nil
}

func showAudit(args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	n := fs.Uint("n", 50, "show the newest `N` entries")
	return withClientFlags(fs, args, 0, 1, stdout, func(ctx context.Context, ws schema.Workspace, args []string, stdout io.Writer) error {
		f, release := ws.Audit(ctx, func(p schema.Workspace_audit_Params) error {
			filter, err := p.NewFilter()
			if err != nil {
				return err
			}
			filter.SetLimit(uint32(*n))
			if len(args) == 1 {
				return filter.SetGadget(args[0])
			}
			return nil
		})
		defer release()
		res, err := f.Struct()
		if err != nil {
			return err
		}
		list, err := res.Entries()
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TIME\tGADGET\tUSER\tBINDING\tKIND\tCALL\tOUTCOME")
		for i := 0; i < list.Len(); i++ {
			e := list.At(i)
			g, _ := e.Gadget()
			b, _ := e.Binding()
			desc, _ := e.Description()
			outcome, _ := e.Outcome()
			kind := "read"
			if e.Action() {
				kind = "action"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", formatMillis(e.Time()), g, whose(e), b, kind, desc, outcome)
		}
		return tw.Flush()
	})
}

// whose says whose session made an audited call or queued an action: the
// user's login name, or the recorded id where it names no user (an
// outcome's approver "auto").
func whose(e interface {
	User() (string, error)
	UserName() (string, error)
}) string {
	if name, _ := e.UserName(); name != "" {
		return name
	}
	id, _ := e.User()
	return id
}
