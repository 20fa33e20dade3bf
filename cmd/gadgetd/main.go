package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gadgetd/gadgetd/client"
	"github.com/gadgetd/gadgetd/wasmhost"
)

// A command is one gadgetd subcommand. Its run function parses its own
// arguments with parseFlags, so that --help and a wrong command line are
// answered with this command's usage.
type command struct {
	name   string // the words that select it: "token new"
	args   string // what follows the name in its usage line
	about  string // one line for gadgetd --help
	more   string // optional: what its own --help adds
	client bool   // it talks to the server at $GADGETD_ADDR
	run    func(args []string, stdout, stderr io.Writer) error
}

// commands lists every subcommand in the order gadgetd --help shows them.
var commands = append([]*command{
	{name: "serve", args: "[flags]", about: "run the server", more: serveHelp, run: serve},
	{name: "user add", args: "NAME [--data DIR]", about: "create a user and print its token (the server must not be running)",
		run: func(args []string, stdout, _ io.Writer) error { return userAdd(args, stdout) }},
	{name: "ls", about: "list your gadgets and those shared with you", client: true, run: clientCommand("ls", 0, 0, listGadgets)},
	{name: "new", args: "BLUEPRINT [NAME]", about: "create a gadget and print its id", client: true, run: clientCommand("new", 1, 2, newGadget)},
	{name: "rm", args: "ID", about: "remove a gadget and its data", client: true, run: clientCommand("rm", 1, 1, removeGadget)},
	{name: "blueprint ls", about: "list the blueprints you can use", client: true, run: clientCommand("blueprint ls", 0, 0, listBlueprints)},
	{name: "blueprint install", args: "DIR", about: "install a built blueprint directory", client: true,
		run: clientCommand("blueprint install", 1, 1, installBlueprint)},
	{name: "blueprint build", args: "DIR", about: "build gadget.wasm and schema.bin in DIR (needs go and capnp)",
		run: func(args []string, stdout, _ io.Writer) error { return buildBlueprint(args, stdout) }},
	{name: "blueprint new", args: "NAME [DIR] [--module PATH] [--sdk DIR]", about: "write a new blueprint, a Go module of its own, in DIR (default ./NAME)",
		more: newBlueprintHelp, run: func(args []string, stdout, _ io.Writer) error { return newBlueprint(args, stdout) }},
	{name: "token ls", about: "list your tokens (* marks the one in use)", client: true, run: clientCommand("token ls", 0, 0, listTokens)},
	{name: "token new", args: "[LABEL] [--expires DURATION]", about: "issue and print another token for you", client: true,
		run: func(args []string, stdout, _ io.Writer) error { return newToken(args, stdout) }},
	{name: "token revoke", args: "ID", about: "revoke a token (yours only; revoking the one in use ends your access)", client: true,
		run: clientCommand("token revoke", 1, 1, revokeToken)},
}, slices.Concat(shareCommands, linkCommands, savedCommands, gatekeeperCommands)...)

const overview = `gadgetd runs small personal apps ("gadgets") in WebAssembly sandboxes and
serves them over Cap'n Proto.
`

const clientEnv = `Client commands reach the server at $GADGETD_ADDR (default 127.0.0.1:7071;
tls://HOST:PORT for TLS, trusting the PEM certificates in $GADGETD_TLS_CA if
set) and log in with the token in $GADGETD_TOKEN.
`

// errUsage means the command line was wrong: main prints the command's
// usage line (or, for an unknown command, the list of commands).
var errUsage = errors.New("usage")

// compileWorkerCommand is the hidden subcommand that makes gadgetd the
// sandbox's compile worker: `gadgetd serve` compiles every blueprint in a
// child process started this way, under CPU and memory limits
// (wasmhost.WithCompileWorker).
const compileWorkerCommand = "internal-compile-worker"

func main() {
	if len(os.Args) > 1 && os.Args[1] == compileWorkerCommand {
		os.Exit(wasmhost.RunCompileWorker(os.Args[2:]))
	}
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

// runMain runs the command line args and returns the exit status: 0, 1 for
// a command that failed, 2 for a wrong command line. It is the one place
// that prints errors.
func runMain(args []string, stdout, stderr io.Writer) int {
	cmd, rest, group := lookup(args)
	if cmd == nil {
		switch {
		case len(args) > 0 && isHelp(args[len(args)-1]):
			printCommands(stdout, group)
			return 0
		case len(args) == 0:
			fmt.Fprint(stderr, "gadgetd: no command given\n\n")
		case group != "":
			if len(args) == 1 {
				fmt.Fprintf(stderr, "gadgetd: %s needs a subcommand\n\n", group)
			} else {
				fmt.Fprintf(stderr, "gadgetd: unknown %s subcommand %q\n\n", group, args[1])
			}
		default:
			fmt.Fprintf(stderr, "gadgetd: unknown command %q\n\n", args[0])
		}
		printCommands(stderr, group)
		return 2
	}
	stdout, stderr = terminalSafe(stdout), terminalSafe(stderr)
	err := cmd.run(rest, stdout, stderr)
	var help *helpRequest
	switch {
	case err == nil:
		return 0
	case errors.As(err, &help):
		printHelp(stdout, cmd, help.flags)
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "gadgetd: %s\nusage: gadgetd %s\n(gadgetd %s --help for more)\n",
			strings.TrimPrefix(err.Error(), errUsage.Error()+": "), cmd.usageLine(), cmd.name)
		return 2
	}
	fmt.Fprintf(stderr, "gadgetd: %s\n", client.Message(err))
	return 1
}

// lookup finds the command args select and the arguments that follow it.
// When none matches, group is the command group args start with ("token"),
// if any, or "" for the whole list.
func lookup(args []string) (cmd *command, rest []string, group string) {
	for _, c := range commands {
		words := strings.Fields(c.name)
		if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == c.name {
			return c, args[len(words):], ""
		}
		if len(words) > 1 && len(args) > 0 && args[0] == words[0] {
			group = words[0]
		}
	}
	return nil, nil, group
}

func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

func (c *command) usageLine() string {
	if c.args == "" {
		return c.name
	}
	return c.name + " " + c.args
}

// printCommands prints the usage lines of the commands in group, or of all
// of them, the local ones first.
func printCommands(w io.Writer, group string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if group == "" {
		fmt.Fprint(tw, overview, "\nOn this machine:\n")
	}
	for _, client := range []bool{false, true} {
		if group == "" && client {
			fmt.Fprint(tw, "\nClient (talks to a running server):\n")
		}
		for _, c := range commands {
			if c.client == client && (group == "" || strings.HasPrefix(c.name, group+" ")) {
				fmt.Fprintf(tw, "  gadgetd %s\t%s\n", c.usageLine(), c.about)
			}
		}
	}
	tw.Flush()
	if group == "" {
		fmt.Fprint(w, "\n", clientEnv)
	}
	fmt.Fprint(w, "\n`gadgetd COMMAND --help` prints a command's usage and flags.\n")
}

// printHelp prints a command's own help: its usage line, what it does, and
// its flags.
func printHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: gadgetd %s\n\n%s.\n", c.usageLine(), strings.ToUpper(c.about[:1])+c.about[1:])
	if c.more != "" {
		fmt.Fprint(w, "\n", c.more)
	}
	if c.client {
		fmt.Fprint(w, "\n", clientEnv)
	}
	var flags strings.Builder
	tw := tabwriter.NewWriter(&flags, 0, 4, 2, ' ', 0)
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		if arg != "" {
			arg = " " + strings.ToUpper(arg)
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0s" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(tw, "  --%s%s\t%s\n", f.Name, arg, usage)
	})
	tw.Flush()
	if flags.Len() > 0 {
		fmt.Fprint(w, "\nFlags:\n", flags.String())
	}
}

// helpRequest is what parseFlags returns for -h or --help: runMain prints
// the command's help, with the flags of fs.
type helpRequest struct{ flags *flag.FlagSet }

func (*helpRequest) Error() string { return flag.ErrHelp.Error() }
func (*helpRequest) Unwrap() error { return flag.ErrHelp }

// parseFlags parses a subcommand's flags, allowing them before and after
// positional arguments, and checks the positional count.
func parseFlags(fs *flag.FlagSet, args []string, minArgs, maxArgs int) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &helpRequest{fs}
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
	if len(positional) < minArgs || len(positional) > maxArgs {
		return nil, fmt.Errorf("%w: %s takes %s", errUsage, fs.Name(), argCount(minArgs, maxArgs))
	}
	return positional, nil
}

func argCount(lo, hi int) string {
	switch {
	case hi == 0:
		return "no arguments"
	case lo == hi && lo == 1:
		return "1 argument"
	case lo == hi:
		return fmt.Sprintf("%d arguments", lo)
	}
	return fmt.Sprintf("%d to %d arguments", lo, hi)
}
