// Command gadgetd is the gadgetd server and its command-line client.
//
//	gadgetd serve [--data DIR] [--http ADDR] [--capnp ADDR] [--config FILE] [--dev [--examples DIR]]
//	gadgetd user add NAME [--data DIR]
//	gadgetd ls | new BLUEPRINT [NAME] | rm ID
//	gadgetd blueprint ls | install DIR | build DIR | new NAME [DIR]
//	gadgetd token ls | new [LABEL] [--expires DURATION] | revoke ID
//
// Client subcommands reach the server at $GADGETD_ADDR (default
// 127.0.0.1:7071; tls://HOST:PORT for TLS, trusting $GADGETD_TLS_CA if set)
// with the token in $GADGETD_TOKEN.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gadgetd/gadgetd/wasmhost"
)

const usage = `gadgetd runs small personal apps ("gadgets") in WebAssembly sandboxes and
serves them over Cap'n Proto.

Server:
  gadgetd serve [flags]         run the server
      --data DIR                data directory (default ./gadgetd-data)
      --http ADDR               HTTP address (default 127.0.0.1:7070)
      --capnp ADDR              Cap'n Proto TCP address (default 127.0.0.1:7071)
      --config FILE             configuration file (optional)
      --tls-cert FILE           serve both listeners over TLS with this PEM
      --tls-key FILE            certificate chain and key
      --dev                     create user "demo", print its token (the same
                                one every start, kept in DIR/dev-token), install
                                the examples as builtin blueprints
      --examples DIR            where --dev finds examples (default ./examples)
  gadgetd user add NAME         create a user and print its token (--data DIR;
                                the server must not be running)

Client (server at $GADGETD_ADDR, default 127.0.0.1:7071, tls://HOST:PORT for
TLS, trusting the PEM certificates in $GADGETD_TLS_CA if set; token in
$GADGETD_TOKEN):
  gadgetd ls                    list your gadgets
  gadgetd new BLUEPRINT [NAME]  create a gadget
  gadgetd rm ID                 remove a gadget and its data
  gadgetd blueprint ls          list the blueprints you can use
  gadgetd blueprint install DIR install a built blueprint directory
  gadgetd blueprint build DIR   build gadget.wasm and schema.bin in DIR
  gadgetd blueprint new NAME [DIR] [--module PATH] [--sdk DIR]
                                write a new blueprint, a Go module of its own
  gadgetd token ls              list your tokens (* marks the one in use)
  gadgetd token new [LABEL]     issue and print another token for you
      --expires DURATION        it stops working after DURATION (e.g. 720h)
  gadgetd token revoke ID       revoke a token (yours only; it may be the one
                                in use, which ends your access)
`

// errUsage means the command line was wrong; main prints the usage.
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
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(os.Stdout, usage)
	case errors.Is(err, errUsage):
		fmt.Fprintf(os.Stderr, "gadgetd: %v\n\n%s", err, usage)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "gadgetd: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: no command given", errUsage)
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "-h", "--help", "help":
		return flag.ErrHelp
	case "serve":
		return serve(rest, stdout, stderr)
	case "user":
		if len(rest) == 0 || rest[0] != "add" {
			return fmt.Errorf("%w: user needs the subcommand add", errUsage)
		}
		return userAdd(rest[1:], stdout)
	case "ls":
		return withClient(rest, 0, 0, stdout, listGadgets)
	case "new":
		return withClient(rest, 1, 2, stdout, newGadget)
	case "rm":
		return withClient(rest, 1, 1, stdout, removeGadget)
	case "blueprint":
		if len(rest) == 0 {
			return fmt.Errorf("%w: blueprint needs a subcommand: ls, install or build", errUsage)
		}
		switch rest[0] {
		case "ls":
			return withClient(rest[1:], 0, 0, stdout, listBlueprints)
		case "install":
			return withClient(rest[1:], 1, 1, stdout, installBlueprint)
		case "build":
			return buildBlueprint(rest[1:], stdout)
		case "new":
			return newBlueprint(rest[1:], stdout)
		}
		return fmt.Errorf("%w: unknown blueprint subcommand %q", errUsage, rest[0])
	case "token":
		if len(rest) == 0 {
			return fmt.Errorf("%w: token needs a subcommand: ls, new or revoke", errUsage)
		}
		switch rest[0] {
		case "ls":
			return withClient(rest[1:], 0, 0, stdout, listTokens)
		case "new":
			return newToken(rest[1:], stdout)
		case "revoke":
			return withClient(rest[1:], 1, 1, stdout, revokeToken)
		}
		return fmt.Errorf("%w: unknown token subcommand %q", errUsage, rest[0])
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, cmd)
}

// parseFlags parses a subcommand's flags, allowing them before and after
// positional arguments, and checks the positional count.
func parseFlags(fs *flag.FlagSet, args []string, minArgs, maxArgs int) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
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
	case lo == hi:
		return fmt.Sprintf("%d argument(s)", lo)
	}
	return fmt.Sprintf("%d to %d arguments", lo, hi)
}
