package guest

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/server"

	"github.com/gadgetd/gadgetd/guest/callsync"
	"github.com/gadgetd/gadgetd/internal/frame"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/schema/abi"
)

// The guest is single-threaded and the host calls into it only through its
// exports, so this state needs no locking: goroutines interleave only where
// they block, never while touching it.
var (
	// exports holds the objects the guest lent the host, by index. Index 0
	// is the main object. Indices are never reused.
	exports    = map[uint32]*export{}
	nextExport = uint32(1)

	// The host's limits are enforced host-side; these keep a confused
	// host from making the guest allocate without bound.
	limits = frame.Limits{MaxBytes: 64 << 20, MaxCapTable: 1 << 16}
)

// Serve registers the gadget's main object: the one the host calls to open
// sessions. Call it once, from an init function.
func Serve(main schema.Guest_Server) {
	if _, ok := exports[0]; ok {
		panic("guest: Serve called twice")
	}
	exports[0] = &export{client: capnp.Client(schema.Guest_ServerToClient(main))}
}

// Host returns the capability the host lends every gadget (storage,
// logging, gatekeepers). The caller may keep it for the life of the instance.
func Host() schema.Host {
	return schema.Host(capnp.NewClient(&importHook{index: 0}))
}

// storage caches the gadget's Storage for the instance's life.
var storage schema.Storage

// Storage returns the gadget's private storage (Host.storage), asking the
// host once per instance and keeping the capability: every later use saves a
// round trip across the sandbox boundary. The capability is borrowed; do not
// release it. If the host refuses, the returned capability fails every call
// with the host's error, and the next Storage call asks again.
func Storage(ctx context.Context) schema.Storage {
	if storage.IsValid() {
		return storage
	}
	res, release, err := Host().StorageSync(ctx, nil)
	defer release()
	if err != nil {
		return schema.Storage(capnp.ErrorClient(err))
	}
	storage = res.Storage().AddRef()
	return storage
}

// Gatekeeper returns the gatekeeper bound to the gadget under name
// (Host.gatekeeper): the gadget's only way out of its sandbox. Convert it
// to its kind's interface, as githubpb.GitHub(guest.Gatekeeper(ctx,
// "issues")). A name that is not bound fails with "no such binding". The
// caller releases it; once the binding is removed, every call on it fails.
func Gatekeeper(ctx context.Context, name string) (schema.Gatekeeper, error) {
	res, release, err := Host().GatekeeperSync(ctx, func(p schema.Host_gatekeeper_Params) error { return p.SetName(name) })
	defer release()
	if err != nil {
		return schema.Gatekeeper{}, err
	}
	return res.Gatekeeper().AddRef(), nil
}

// deliver runs one frame the host sent into the guest and returns the
// encoded answer (nil for frames that need none).
func deliver(b []byte) []byte {
	f, err := frame.Decode(b, limits)
	if err != nil {
		return exceptionFrame(err)
	}
	switch f.Which() {
	case abi.Frame_Which_call:
		return dispatch(f)
	case abi.Frame_Which_release:
		if i := f.Release(); i != 0 {
			if e, ok := exports[i]; ok {
				delete(exports, i)
				e.client.Release()
				// go-capnp runs a server's Shutdown on a goroutine of its
				// own, and goroutines run only while the guest is inside
				// an export: yield, so that it runs now (a watch's handle
				// unsubscribes), not at the next call, which may never come.
				runtime.Gosched()
			}
		}
		return nil
	default:
		return exceptionFrame(fmt.Errorf("guest: unexpected %v frame", f.Which()))
	}
}

// dispatch runs a call frame against one of the guest's exports.
func dispatch(f abi.Frame) []byte {
	defer f.Message().Release()
	call, err := f.Call()
	if err != nil {
		return exceptionFrame(err)
	}
	target, ok := exports[call.Target()]
	if !ok {
		return exceptionFrame(fmt.Errorf("unknown guest object index %d (never exported, or already released)", call.Target()))
	}
	p, err := call.Params()
	if err != nil {
		return exceptionFrame(err)
	}
	if err := frame.Resolve(p, limits, resolve); err != nil {
		return exceptionFrame(err)
	}
	content, err := frame.Content(p)
	if err != nil {
		return exceptionFrame(err)
	}
	// The method reads its params where they arrived and writes its results
	// straight into the answer frame: no copies, no extra messages, which
	// matter a great deal at Go-on-wasm speeds.
	r, err := newFrameReturner()
	if err != nil {
		return exceptionFrame(err)
	}
	defer r.out.Message().Release()
	m := capnp.Method{InterfaceID: call.InterfaceId(), MethodID: call.MethodId()}
	if err := target.call(context.Background(), m, content, r); err != nil {
		return exceptionFrame(err)
	}
	if err := describeCaps(r.ret); err != nil {
		return exceptionFrame(err)
	}
	return encode(r.out)
}

// export is one object the guest lent the host.
type export struct {
	client capnp.Client
	// methods is client's server method table, looked up at the first
	// call (looked); direct says there is one, so calls skip go-capnp's
	// queue (direct.go).
	methods        []server.Method
	looked, direct bool
}

// call runs the method m of the export with args, its results going to
// ret, and returns the method's error.
func (e *export) call(ctx context.Context, m capnp.Method, args capnp.Struct, ret *frameReturner) error {
	if !e.looked {
		e.methods, e.direct = serverMethods(e.client)
		e.looked = true
	}
	r := capnp.Recv{Method: m, Args: args, ReleaseArgs: func() {}, Returner: ret}
	if !e.direct {
		// go-capnp's queued path: the call runs on the server's
		// goroutine, which closes done when it returns.
		ret.done = make(chan struct{})
		e.client.RecvCall(ctx, r)
		<-ret.done
		return ret.err
	}
	sm := findMethod(e.methods, m)
	if sm == nil {
		return capnp.Unimplemented("unimplemented") // as server.Server answers
	}
	return sm.Impl(ctx, newCall(ctx, sm, r))
}

// frameReturner is the capnp.Returner of a call delivered into the guest: it
// allocates the results in the return frame itself.
type frameReturner struct {
	out  abi.Frame
	ret  abi.Payload
	err  error
	done chan struct{} // closed by Return on the queued path
}

func newFrameReturner() (*frameReturner, error) {
	out, err := frame.New()
	if err != nil {
		return nil, err
	}
	ret, err := out.NewReturn()
	if err != nil {
		return nil, err
	}
	return &frameReturner{out: out, ret: ret}, nil
}

func (r *frameReturner) AllocResults(sz capnp.ObjectSize) (capnp.Struct, error) {
	results, err := capnp.NewStruct(r.ret.Segment(), sz)
	if err != nil {
		return capnp.Struct{}, err
	}
	return results, r.ret.SetContent(results.ToPtr())
}

func (r *frameReturner) PrepareReturn(err error) { r.err = err }
func (r *frameReturner) Return() {
	if r.done != nil {
		close(r.done)
	}
}
func (r *frameReturner) ReleaseResults() {}

// resolve turns a descriptor from the host into a capability.
func resolve(ref frame.Ref) (capnp.Client, error) {
	switch ref.Kind {
	case frame.Guest:
		e, ok := exports[ref.Index]
		if !ok {
			return capnp.Client{}, fmt.Errorf("unknown guest object index %d", ref.Index)
		}
		return e.client.AddRef(), nil
	case frame.Host:
		return capnp.NewClient(&importHook{index: ref.Index}), nil
	default:
		return capnp.Client{}, errors.New("malformed capability descriptor")
	}
}

// describeCaps fills p's cap table from its message's capabilities. A
// payload with none keeps a null table, which reads as empty: most frames
// carry no capability, and building an empty list costs each of them.
func describeCaps(p abi.Payload) error {
	if p.Message().CapTable().Len() == 0 {
		return nil
	}
	return frame.Describe(p, describe)
}

// describe names a capability for the host: a host capability by its import
// index, anything else as a new export.
func describe(c capnp.Client) (frame.Ref, error) {
	snap := c.Snapshot()
	h, ok := snap.Brand().Value.(*importHook)
	snap.Release()
	if ok {
		return frame.Ref{Kind: frame.Host, Index: h.index}, nil
	}
	i := nextExport
	nextExport++
	exports[i] = &export{client: c.AddRef()}
	return frame.Ref{Kind: frame.Guest, Index: i}, nil
}

// importHook is the client side of a host capability the guest holds.
type importHook struct{ index uint32 }

var _ callsync.Hook = (*importHook)(nil)

func (h *importHook) Recv(ctx context.Context, r capnp.Recv) capnp.PipelineCaller {
	ans, release := h.Send(ctx, capnp.Send{
		Method:    r.Method,
		ArgsSize:  r.Args.Size(),
		PlaceArgs: func(args capnp.Struct) error { return args.CopyFrom(r.Args) },
	})
	defer release()
	r.ReleaseArgs()
	res, err := ans.Struct()
	if err == nil {
		var out capnp.Struct
		if out, err = r.Returner.AllocResults(res.Size()); err == nil {
			err = out.CopyFrom(res)
		}
	}
	r.Returner.PrepareReturn(err)
	r.Returner.Return()
	r.Returner.ReleaseResults()
	return nil
}

func (h *importHook) Brand() capnp.Brand { return capnp.Brand{Value: h} }

func (h *importHook) Shutdown() {
	if h.index != 0 {
		hostRelease(h.index)
	}
}

func (h *importHook) String() string { return fmt.Sprintf("host capability %d", h.index) }

func exceptionFrame(err error) []byte {
	f, ferr := frame.New()
	if ferr != nil {
		panic(ferr)
	}
	defer f.Message().Release()
	if ferr := frame.SetException(f, err); ferr != nil {
		panic(ferr)
	}
	return encode(f)
}

func encode(f abi.Frame) []byte {
	b, err := frame.Encode(f)
	if err != nil {
		panic(fmt.Sprintf("guest: encoding a frame: %v", err))
	}
	return b
}
