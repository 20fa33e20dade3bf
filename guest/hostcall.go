package guest

// A call on a host capability, from params to results: the code every
// FooSync stub of a gadget runs, kept lean because at Go-on-wasm speeds the
// guest's share of such a call was most of it.
//
// Buffers, and why reusing them is safe. The guest is single-threaded, and
// the host copies a frame the guest sends before exchange returns
// (docs/ABI.md §6.1), so one call-frame buffer serves every call, nested
// ones included: a nested call builds its frame only after the outer one
// has been sent. The params are built in one reused go-capnp message, which
// a call holds only while it builds its frame (if PlaceArgs itself calls
// the host, the inner call gets a message of its own). An answer's bytes are
// its results, which the caller may hold for as long as it likes, several
// at once: each answer has a buffer of its own, from a free list, that goes
// back on the list only when its release func runs. A release func runs at
// most once in effect: a stale one (called again after its buffer was
// reused) does nothing.

import (
	"context"
	"fmt"
	"reflect"
	"unsafe"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/frame"
	"github.com/gadgetd/gadgetd/schema/abi"
)

var (
	// callBuf holds the last call frame sent.
	callBuf []byte

	// params is the message a call's params are built in, paramsSeg its
	// one segment (nil until the first call); paramsBusy says a call is
	// building its params in it.
	params     capnp.Message
	paramsSeg  *capnp.Segment
	paramsBusy bool

	// freeAnswers holds answers whose results were released.
	freeAnswers []*answer
)

// Bounds on what the free list keeps: enough for the results a gadget holds
// at once in practice, without pinning a large answer's memory for the
// instance's life.
const (
	maxFreeAnswers = 8
	maxKeptBuf     = 64 << 10
)

// paramsReadLimit is the traversal limit of params, go-capnp's default for
// a new message.
const paramsReadLimit = 64 << 20

// call makes the call s on the host capability and returns its results,
// which live until release is called.
func (h *importHook) call(s capnp.Send) (_ capnp.Struct, release capnp.ReleaseFunc, _ error) {
	b, err := h.callFrame(s)
	if err != nil {
		return capnp.Struct{}, nil, err
	}
	for {
		a := exchangeAnswer(b)
		if frame.ReturnContent(a.buf, limits) {
			content, err := a.content()
			if err != nil {
				a.free()
				return capnp.Struct{}, nil, err
			}
			return content, a.releaser(), nil
		}
		// Any other frame: decoded in full.
		f, err := frame.Decode(a.buf, limits)
		if err != nil {
			a.free()
			return capnp.Struct{}, nil, err
		}
		a.msg = f.Message()
		switch f.Which() {
		case abi.Frame_Which_call:
			// A nested call (docs/ABI.md §8.3): run it, and send its
			// answer instead of the call, which the host has.
			b = dispatch(f)
			a.free()
			continue
		case abi.Frame_Which_return:
			p, err := f.Return()
			if err == nil {
				err = frame.Resolve(p, limits, resolve)
			}
			var content capnp.Struct
			if err == nil {
				content, err = frame.Content(p)
			}
			if err != nil {
				a.free()
				return capnp.Struct{}, nil, err
			}
			return content, a.releaser(), nil
		case abi.Frame_Which_exception:
			// Typed, so exc.TypeOf and capnp.IsDisconnected work on it.
			err = frame.Exception(f)
		default:
			err = fmt.Errorf("guest: unexpected %v frame from host", f.Which())
		}
		a.free()
		return capnp.Struct{}, nil, err
	}
}

// callFrame encodes the call s on h into callBuf.
func (h *importHook) callFrame(s capnp.Send) ([]byte, error) {
	msg, seg, err := paramsMessage()
	if err != nil {
		return nil, err
	}
	defer doneParams(msg) // and with it the capabilities PlaceArgs added
	args, err := capnp.NewStruct(seg, s.ArgsSize)
	if err != nil {
		return nil, err
	}
	// The args struct is the message's first object, right after the root
	// pointer, so the segment from word 1 on is the struct and all it
	// points to, as frame.AppendCall wants.
	if size := 8 + int((s.ArgsSize.DataSize+7)&^7) + 8*int(s.ArgsSize.PointerCount); len(seg.Data()) != size {
		return nil, fmt.Errorf("guest: params of %v took %d bytes, want %d", s.ArgsSize, len(seg.Data()), size)
	}
	if s.PlaceArgs != nil {
		if err := s.PlaceArgs(args); err != nil {
			return nil, err
		}
	}
	var caps []frame.Ref
	if ct := msg.CapTable(); ct.Len() > 0 {
		caps = make([]frame.Ref, ct.Len())
		for i := range caps {
			if c := ct.At(i); c.IsValid() {
				if caps[i], err = describe(c); err != nil {
					return nil, err
				}
			}
		}
	}
	if cap(callBuf) > maxKeptBuf {
		callBuf = nil // the last call's frame was large: let it go
	}
	callBuf = frame.AppendCall(callBuf[:0], h.index, s.Method, seg.Data()[8:], s.ArgsSize, caps)
	return callBuf, nil
}

// paramsMessage returns an empty message to build a call's params in, and
// its segment, which holds nothing yet. doneParams gives it back.
func paramsMessage() (*capnp.Message, *capnp.Segment, error) {
	if paramsBusy || segDataOffset < 0 {
		// PlaceArgs is calling the host (or go-capnp's layout is not the
		// one doneParams needs): a message of its own.
		return capnp.NewMessage(capnp.SingleSegment(nil))
	}
	if paramsSeg == nil {
		seg, err := params.Reset(capnp.SingleSegment(nil))
		if err != nil {
			return nil, nil, err
		}
		paramsSeg = seg
	}
	paramsBusy = true
	return &params, paramsSeg, nil
}

// doneParams releases msg's capabilities and its memory or, for params,
// empties it in place for the next call. params keeps its arena (a
// growable go-capnp one) across calls: it is never released, which would
// hand the arena back to go-capnp's pool, and its segment is zeroed and
// truncated instead. That saves go-capnp's arena and buffer pools, whose
// sync.Pool calls were the larger part of the guest's own cost of a call.
func doneParams(msg *capnp.Message) {
	if msg != &params {
		msg.Release()
		return
	}
	paramsBusy = false
	params.CapTable().Reset()
	params.ResetReadLimit(paramsReadLimit) // what PlaceArgs read, if anything
	if cap(paramsSeg.Data()) > maxKeptBuf {
		// Let go of it: params that large are rare.
		params.Release()
		paramsSeg = nil
		return
	}
	data := (*[]byte)(unsafe.Add(unsafe.Pointer(paramsSeg), segDataOffset))
	clear(*data)
	*data = (*data)[:0]
}

// segDataOffset is the offset of capnp.Segment's data field (the bytes
// Segment.Data returns), or -1 if it has no such field, in which case
// every call builds its params in a message of its own.
var segDataOffset = func() int {
	f, ok := reflect.TypeFor[capnp.Segment]().FieldByName("data")
	if !ok || f.Type != reflect.TypeFor[[]byte]() {
		return -1
	}
	return int(f.Offset)
}()

// answer is one frame the host sent in answer to a call, and the message
// its results are read through.
type answer struct {
	buf []byte
	// own is the message of a frame read by frame.ReturnContent, over
	// ro; msg is the message in use (own, or frame.Decode's).
	own capnp.Message
	ro  *capnp.ReadOnlySingleSegment
	msg *capnp.Message
	// gen counts the times the answer was freed, so that a stale release
	// func can tell.
	gen uint64
}

// exchangeAnswer sends the frame b and returns the host's next frame, in an
// answer of its own.
func exchangeAnswer(b []byte) *answer {
	n := int(hostExchange(b))
	var a *answer
	if k := len(freeAnswers); k > 0 {
		a, freeAnswers = freeAnswers[k-1], freeAnswers[:k-1]
	} else {
		a = &answer{ro: capnp.NewReadOnlySingleSegment(nil)}
	}
	if cap(a.buf) < n {
		a.buf = make([]byte, n)
	}
	a.buf = a.buf[:n]
	hostTake(a.buf)
	return a
}

// content returns the results of a frame that frame.ReturnContent accepted,
// read from the frame's own bytes through a's own message. That message
// keeps its arena, ro, for a's life: between answers ro only lets go of
// the bytes (free), which saves resetting the message each time.
func (a *answer) content() (capnp.Struct, error) {
	if a.own.Arena == nil {
		if _, err := a.own.Reset(a.ro); err != nil {
			return capnp.Struct{}, err
		}
	}
	a.ro.ReplaceData(a.buf[8:])
	a.msg = &a.own
	a.own.ResetReadLimit(frame.ReadLimit(len(a.buf)))
	root, err := a.own.Root()
	if err != nil {
		return capnp.Struct{}, fmt.Errorf("malformed frame: %w", err)
	}
	return root.Struct(), nil
}

// releaser returns the release func of a's results.
func (a *answer) releaser() capnp.ReleaseFunc {
	gen := a.gen
	return func() {
		if a.gen == gen {
			a.free()
		}
	}
}

// free releases a's message and puts a on the free list.
func (a *answer) free() {
	a.gen++
	switch a.msg {
	case nil:
	case &a.own:
		a.own.CapTable().Reset()
		a.ro.Release() // its hold on buf
	default:
		a.msg.Release()
	}
	a.msg = nil
	if len(freeAnswers) >= maxFreeAnswers {
		return
	}
	if cap(a.buf) > maxKeptBuf {
		a.buf = nil
	}
	freeAnswers = append(freeAnswers, a)
}

func (h *importHook) Send(ctx context.Context, s capnp.Send) (*capnp.Answer, capnp.ReleaseFunc) {
	res, release, err := h.call(s)
	if err != nil {
		return capnp.ErrorAnswer(s.Method, err), func() {}
	}
	return capnp.ImmediateAnswer(s.Method, res.ToPtr()), release
}

// CallSync implements callsync.Hook: the generated FooSync stubs call the
// host directly, without the Answer that Send must return.
func (h *importHook) CallSync(_ context.Context, s capnp.Send) (capnp.Struct, capnp.ReleaseFunc, error) {
	return h.call(s)
}
