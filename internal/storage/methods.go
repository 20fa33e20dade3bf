package storage

import (
	"context"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/server"

	"github.com/gadgetd/gadgetd/internal/capserver"
	"github.com/gadgetd/gadgetd/schema"
)

// Methods returns the schema.Storage methods that serve d, for
// capserver.New. Each call runs in the call scope that is open, unless its
// context is from OwnTransaction: deciding which callers get one is the
// caller's part (the server's peerStorage gives it to all but the guest).
func (d *Data) Methods() []server.Method { return schema.Storage_Methods(nil, storageServer{d}) }

// Serve runs the schema.Storage method m with args on the caller's
// goroutine, as the method Methods returns would, and returns its results,
// allocated in seg (a zero Struct for a method without results). It is
// capserver.SendDirect's serve: an in-process caller's calls are answered
// without go-capnp's call queue and the goroutine switches to its server
// and back.
func (d *Data) Serve(ctx context.Context, m capnp.Method, args capnp.Struct, seg *capnp.Segment) (capnp.Struct, error) {
	s := storageServer{d}
	var res capnp.Struct
	var err error
	switch {
	case m.InterfaceID != schema.Storage_TypeID:
		err = capserver.NotImplemented(m)
	case m.MethodID == methodGet:
		err = s.get(ctx, schema.Storage_get_Params(args), resultsIn(seg, schema.NewStorage_get_Results, &res))
	case m.MethodID == methodPut:
		err = s.put(ctx, schema.Storage_put_Params(args))
	case m.MethodID == methodDelete:
		err = s.delete(ctx, schema.Storage_delete_Params(args))
	case m.MethodID == methodList:
		err = s.list(ctx, schema.Storage_list_Params(args), resultsIn(seg, schema.NewStorage_list_Results, &res))
	default:
		err = capserver.NotImplemented(m)
	}
	if err != nil {
		return capnp.Struct{}, err
	}
	return res, nil
}

// The ordinals of Storage's methods (schema/gadget.capnp).
const (
	methodGet uint16 = iota
	methodPut
	methodDelete
	methodList
)

// resultsIn returns an allocator of results in seg that records what it
// allocated in res.
func resultsIn[T ~capnp.StructKind](seg *capnp.Segment, alloc func(*capnp.Segment) (T, error), res *capnp.Struct) func() (T, error) {
	return func() (T, error) {
		r, err := alloc(seg)
		*res = capnp.Struct(r)
		return r, err
	}
}

// storageServer translates schema.Storage calls to d's methods, for both
// ways a call arrives: through go-capnp's server (Methods) and directly
// (Serve).
type storageServer struct{ d *Data }

func (s storageServer) Get(ctx context.Context, call schema.Storage_get) error {
	return s.get(ctx, call.Args(), call.AllocResults)
}

func (s storageServer) get(ctx context.Context, args schema.Storage_get_Params, alloc func() (schema.Storage_get_Results, error)) error {
	key, err := args.Key()
	if err != nil {
		return err
	}
	value, found, err := s.d.Get(ctx, key)
	if err != nil {
		return err
	}
	res, err := alloc()
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
	return s.put(ctx, call.Args())
}

func (s storageServer) put(ctx context.Context, args schema.Storage_put_Params) error {
	key, err := args.Key()
	if err != nil {
		return err
	}
	value, err := args.Value()
	if err != nil {
		return err
	}
	return s.d.Put(ctx, key, value)
}

func (s storageServer) Delete(ctx context.Context, call schema.Storage_delete) error {
	return s.delete(ctx, call.Args())
}

func (s storageServer) delete(ctx context.Context, args schema.Storage_delete_Params) error {
	key, err := args.Key()
	if err != nil {
		return err
	}
	return s.d.Delete(ctx, key)
}

func (s storageServer) List(ctx context.Context, call schema.Storage_list) error {
	return s.list(ctx, call.Args(), call.AllocResults)
}

func (s storageServer) list(ctx context.Context, args schema.Storage_list_Params, alloc func() (schema.Storage_list_Results, error)) error {
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
	res, err := alloc()
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
