// Command excguest is a test gadget, written with the guest SDK, that proves
// Cap'n Proto exception types cross the sandbox boundary both ways.
//
// Its sessions speak schema.Storage as a command interface: get(key) runs the
// command named by key. TYPE is failed, overloaded, disconnected or
// unimplemented.
//
//	throw:TYPE   fails with exc.New(TYPE, …)
//	wrap:TYPE    fails with fmt.Errorf("…: %w", exc.New(TYPE, …))
//	host:TEXT    calls Host.log(TEXT) and answers with what the call's error
//	             looks like to guest code: "type=T disconnected=B: ERROR",
//	             or "ok" if it succeeded
//	relay:TEXT   calls Host.log(TEXT) and fails with its error as is
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/guest"
	"github.com/gadgetd/gadgetd/schema"
)

func init() { guest.Serve(app{}) }

func main() {}

type app struct{}

func (app) Open(ctx context.Context, call schema.Guest_open) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetSession(capnp.Client(schema.Storage_ServerToClient(session{})))
}

type session struct{}

func (session) Put(context.Context, schema.Storage_put) error       { return errNotHere }
func (session) Delete(context.Context, schema.Storage_delete) error { return errNotHere }
func (session) List(context.Context, schema.Storage_list) error     { return errNotHere }

var errNotHere = capnp.Unimplemented("excguest implements only get")

var types = map[string]exc.Type{
	"failed":        exc.Failed,
	"overloaded":    exc.Overloaded,
	"disconnected":  exc.Disconnected,
	"unimplemented": exc.Unimplemented,
}

func (session) Get(ctx context.Context, call schema.Storage_get) error {
	cmd, err := call.Args().Key()
	if err != nil {
		return err
	}
	name, arg, _ := strings.Cut(cmd, ":")
	var out string
	switch name {
	case "throw", "wrap":
		typ, ok := types[arg]
		if !ok {
			return fmt.Errorf("unknown type %q", arg)
		}
		err := exc.New(typ, "", "excguest throws "+arg)
		if name == "wrap" {
			return fmt.Errorf("excguest wraps: %w", err)
		}
		return err
	case "host", "relay":
		err := hostLog(ctx, arg)
		if name == "relay" {
			return err
		}
		out = "ok"
		if err != nil {
			out = fmt.Sprintf("type=%v disconnected=%v: %v", exc.TypeOf(err), capnp.IsDisconnected(err), err)
		}
	default:
		return errors.New("not a command")
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetValue([]byte(out))
}

func hostLog(ctx context.Context, text string) error {
	f, release := guest.Host().Log(ctx, func(p schema.Host_log_Params) error {
		return p.SetText(text)
	})
	defer release()
	_, err := f.Struct()
	return err
}
