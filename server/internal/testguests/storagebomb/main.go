// Command storagebomb is a test gadget that tries to make the host hold
// memory through its storage, on request.
//
// Its sessions speak schema.Storage as a command interface: get(key) runs
// the command named by key and answers with what happened as value.
//
//	deletes:N       deletes N keys that do not exist, in one call
//	fill:N:BYTES    puts N keys of BYTES bytes each, in one call
//	list            lists everything in one Storage.list call and answers
//	                "N entries, B bytes"
package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"capnproto.org/go/capnp/v3"

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

func (session) Get(ctx context.Context, call schema.Storage_get) error {
	cmd, err := call.Args().Key()
	if err != nil {
		return err
	}
	out, err := run(ctx, guest.Storage(ctx), strings.Split(cmd, ":"))
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetFound(true)
	return res.SetValue([]byte(out))
}

func run(ctx context.Context, st schema.Storage, cmd []string) (string, error) {
	switch {
	case cmd[0] == "deletes" && len(cmd) == 2:
		n, err := strconv.Atoi(cmd[1])
		if err != nil {
			return "", err
		}
		for i := range n {
			f, release := st.Delete(ctx, func(p schema.Storage_delete_Params) error {
				return p.SetKey(fmt.Sprintf("absent-%d", i))
			})
			_, err := f.Struct()
			release()
			if err != nil {
				return "", fmt.Errorf("delete %d: %w", i, err)
			}
		}
		return fmt.Sprintf("deleted %d", n), nil
	case cmd[0] == "fill" && len(cmd) == 3:
		n, err := strconv.Atoi(cmd[1])
		if err != nil {
			return "", err
		}
		size, err := strconv.Atoi(cmd[2])
		if err != nil {
			return "", err
		}
		value := make([]byte, size)
		for i := range n {
			f, release := st.Put(ctx, func(p schema.Storage_put_Params) error {
				if err := p.SetKey(fmt.Sprintf("fill-%04d", i)); err != nil {
					return err
				}
				return p.SetValue(value)
			})
			_, err := f.Struct()
			release()
			if err != nil {
				return "", fmt.Errorf("put %d: %w", i, err)
			}
		}
		return fmt.Sprintf("filled %d", n), nil
	case cmd[0] == "list" && len(cmd) == 1:
		f, release := st.List(ctx, nil)
		defer release()
		res, err := f.Struct()
		if err != nil {
			return "", err
		}
		entries, err := res.Entries()
		if err != nil {
			return "", err
		}
		bytes := 0
		for i := 0; i < entries.Len(); i++ {
			k, _ := entries.At(i).Key()
			v, _ := entries.At(i).Value()
			bytes += len(k) + len(v)
		}
		return fmt.Sprintf("%d entries, %d bytes", entries.Len(), bytes), nil
	}
	return "", fmt.Errorf("unknown command %q", strings.Join(cmd, ":"))
}

func (session) Put(context.Context, schema.Storage_put) error       { return nil }
func (session) Delete(context.Context, schema.Storage_delete) error { return nil }
func (session) List(context.Context, schema.Storage_list) error     { return nil }
