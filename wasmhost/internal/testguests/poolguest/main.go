// Command poolguest is a test gadget for the instance pool: it keeps state
// in guest memory, which no gadget may ever see another gadget's.
//
// Its sessions speak schema.Storage as a command interface, as hostile's
// do: get(key) runs the command named by key and answers with its result
// as value.
//
//	count   adds one to a counter kept in a global, and answers its value
//	crash   panics, which kills the instance
//
// Its initialization calls nothing, so its instances can be pooled.
package main

import (
	"context"
	"strconv"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/guest"
	"github.com/gadgetd/gadgetd/schema"
)

func init() { guest.Serve(app{}) }

func main() {}

// count lives in the instance's linear memory: a fresh instance starts at 0.
var count int

type app struct{}

func (app) Open(ctx context.Context, call schema.Guest_open) error {
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetSession(capnp.Client(schema.Storage_ServerToClient(session{})))
}

type session struct{}

func (session) Get(ctx context.Context, call schema.Storage_get) error {
	cmd, err := call.Args().Key()
	if err != nil {
		return err
	}
	switch cmd {
	case "count":
		count++
	case "crash":
		panic("poolguest: crash requested")
	default:
		return capnp.Unimplemented("poolguest: unknown command " + strconv.Quote(cmd))
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetValue([]byte(strconv.Itoa(count)))
}

func (session) Put(context.Context, schema.Storage_put) error {
	return capnp.Unimplemented("poolguest: put")
}

func (session) Delete(context.Context, schema.Storage_delete) error {
	return capnp.Unimplemented("poolguest: delete")
}

func (session) List(context.Context, schema.Storage_list) error {
	return capnp.Unimplemented("poolguest: list")
}
