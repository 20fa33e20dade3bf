package storage

import (
	"context"

	"capnproto.org/go/capnp/v3/server"

	"github.com/gadgetd/gadgetd/schema"
)

// Methods returns the schema.Storage methods that serve d, for
// capserver.New. Each call runs in the call scope that is open, unless its
// context is from OwnTransaction.
func (d *Data) Methods() []server.Method { return schema.Storage_Methods(nil, storageServer{d}) }

// storageServer translates schema.Storage calls to d's methods.
type storageServer struct{ d *Data }

func (s storageServer) Get(ctx context.Context, call schema.Storage_get) error {
	key, err := call.Args().Key()
	if err != nil {
		return err
	}
	value, found, err := s.d.Get(ctx, key)
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	res.SetFound(found)
	if found {
		return res.SetValue(value)
	}
	return nil
}

func (s storageServer) Put(ctx context.Context, call schema.Storage_put) error {
	key, err := call.Args().Key()
	if err != nil {
		return err
	}
	value, err := call.Args().Value()
	if err != nil {
		return err
	}
	return s.d.Put(ctx, key, value)
}

func (s storageServer) Delete(ctx context.Context, call schema.Storage_delete) error {
	key, err := call.Args().Key()
	if err != nil {
		return err
	}
	return s.d.Delete(ctx, key)
}

func (s storageServer) List(ctx context.Context, call schema.Storage_list) error {
	args := call.Args()
	prefix, err := args.Prefix()
	if err != nil {
		return err
	}
	after, err := args.After()
	if err != nil {
		return err
	}
	entries, err := s.d.List(ctx, prefix, after, int(args.Limit()))
	if err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	list, err := res.NewEntries(int32(len(entries)))
	if err != nil {
		return err
	}
	for i, e := range entries {
		if err := list.At(i).SetKey(e.Key); err != nil {
			return err
		}
		if err := list.At(i).SetValue(e.Value); err != nil {
			return err
		}
	}
	return nil
}
