package frame_test

import (
	"bytes"
	"testing"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/internal/frame"
	"github.com/gadgetd/gadgetd/schema/abi"
)

var envLim = frame.Limits{MaxBytes: 1 << 20, MaxCapTable: 64}

// params builds a struct of size sz in a fresh single-segment message, as
// the guest builds a call's params, and returns what AppendCall takes: the
// segment after its root pointer.
func params(t testing.TB, sz capnp.ObjectSize, fill func(capnp.Struct) error) []byte {
	t.Helper()
	_, seg, err := capnp.NewMessage(capnp.SingleSegment(nil))
	if err != nil {
		t.Fatal(err)
	}
	st, err := capnp.NewStruct(seg, sz)
	if err != nil {
		t.Fatal(err)
	}
	if err := fill(st); err != nil {
		t.Fatal(err)
	}
	return seg.Data()[8:]
}

// TestAppendCallDecodesToTheSameCall: a frame AppendCall writes, after
// whatever dst held, is the call frame go-capnp reads: its target, method,
// params (data, text, a nested struct) and capability table.
func TestAppendCallDecodesToTheSameCall(t *testing.T) {
	sz := capnp.ObjectSize{DataSize: 16, PointerCount: 2}
	content := params(t, sz, func(st capnp.Struct) error {
		st.SetUint64(0, 0x1122334455667788)
		st.SetUint32(8, 42)
		txt, err := capnp.NewText(st.Segment(), "hello")
		if err != nil {
			return err
		}
		if err := st.SetPtr(0, txt.ToPtr()); err != nil {
			return err
		}
		inner, err := capnp.NewStruct(st.Segment(), capnp.ObjectSize{DataSize: 8})
		if err != nil {
			return err
		}
		inner.SetUint64(0, 7)
		return st.SetPtr(1, inner.ToPtr())
	})
	caps := []frame.Ref{{Kind: frame.Host, Index: 3}, {}, {Kind: frame.Guest, Index: 4}}
	prefix := []byte("prefix")
	b := frame.AppendCall(bytes.Clone(prefix), 9, capnp.Method{InterfaceID: 0xabcdef0123, MethodID: 5}, content, sz, caps)
	if !bytes.HasPrefix(b, prefix) {
		t.Fatalf("AppendCall overwrote dst")
	}
	f, err := frame.Decode(b[len(prefix):], envLim)
	if err != nil {
		t.Fatal(err)
	}
	if f.Which() != abi.Frame_Which_call {
		t.Fatalf("frame is a %v, want a call", f.Which())
	}
	call, err := f.Call()
	if err != nil {
		t.Fatal(err)
	}
	if call.Target() != 9 || call.InterfaceId() != 0xabcdef0123 || call.MethodId() != 5 {
		t.Errorf("call = target %d, interface %#x, method %d; want 9, 0xabcdef0123, 5", call.Target(), call.InterfaceId(), call.MethodId())
	}
	p, err := call.Params()
	if err != nil {
		t.Fatal(err)
	}
	st, err := frame.Content(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != sz || st.Uint64(0) != 0x1122334455667788 || st.Uint32(8) != 42 {
		t.Errorf("params = size %v, words %#x, %d", st.Size(), st.Uint64(0), st.Uint32(8))
	}
	if txt, err := st.Ptr(0); err != nil || txt.Text() != "hello" {
		t.Errorf("params text = %q, %v; want hello", txt.Text(), err)
	}
	if inner, err := st.Ptr(1); err != nil || inner.Struct().Uint64(0) != 7 {
		t.Errorf("params nested struct = %d, %v; want 7", inner.Struct().Uint64(0), err)
	}
	list, err := p.CapTable()
	if err != nil {
		t.Fatal(err)
	}
	var got []frame.Ref
	for i := range list.Len() {
		switch d := list.At(i); d.Which() {
		case abi.CapDescriptor_Which_none:
			got = append(got, frame.Ref{})
		case abi.CapDescriptor_Which_guest:
			got = append(got, frame.Ref{Kind: frame.Guest, Index: d.Guest()})
		case abi.CapDescriptor_Which_host:
			got = append(got, frame.Ref{Kind: frame.Host, Index: d.Host()})
		}
	}
	if len(got) != len(caps) || got[0] != caps[0] || got[1] != caps[1] || got[2] != caps[2] {
		t.Errorf("cap table = %v, want %v", got, caps)
	}
}

// TestAppendCallWithEmptyParamsDecodesAsAnEmptyStruct: params of no words
// read as a (non-null) empty struct, and no capabilities as an empty table.
func TestAppendCallWithEmptyParamsDecodesAsAnEmptyStruct(t *testing.T) {
	b := frame.AppendCall(nil, 0, capnp.Method{InterfaceID: 1}, nil, capnp.ObjectSize{}, nil)
	f, err := frame.Decode(b, envLim)
	if err != nil {
		t.Fatal(err)
	}
	call, err := f.Call()
	if err != nil {
		t.Fatal(err)
	}
	p, err := call.Params()
	if err != nil {
		t.Fatal(err)
	}
	st, err := frame.Content(p)
	if err != nil || !st.IsValid() || st.Size() != (capnp.ObjectSize{}) {
		t.Errorf("content = %v (valid %v), %v; want an empty struct", st.Size(), st.IsValid(), err)
	}
	if list, err := p.CapTable(); err != nil || list.Len() != 0 {
		t.Errorf("cap table of %d, %v; want none", list.Len(), err)
	}
}

// returnFrame encodes a return frame as the host does (frame.New,
// SetContent, Describe), with content made by fill (nil: null content)
// and the given number of host capabilities in its table.
func returnFrame(t testing.TB, fill func(*capnp.Segment) (capnp.Ptr, error), caps int) []byte {
	t.Helper()
	f, err := frame.New()
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.NewReturn()
	if err != nil {
		t.Fatal(err)
	}
	if fill != nil {
		ptr, err := fill(p.Segment())
		if err != nil {
			t.Fatal(err)
		}
		if err := p.SetContent(ptr); err != nil {
			t.Fatal(err)
		}
	}
	list, err := p.NewCapTable(int32(caps))
	if err != nil {
		t.Fatal(err)
	}
	for i := range caps {
		list.At(i).SetHost(uint32(i + 1))
	}
	b, err := frame.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func results(seg *capnp.Segment) (capnp.Ptr, error) {
	st, err := capnp.NewStruct(seg, capnp.ObjectSize{DataSize: 8, PointerCount: 1})
	if err != nil {
		return capnp.Ptr{}, err
	}
	st.SetUint64(0, 0xfeed)
	txt, err := capnp.NewText(seg, "value")
	if err != nil {
		return capnp.Ptr{}, err
	}
	return st.ToPtr(), st.SetPtr(0, txt.ToPtr())
}

// rootOf reads the root struct of a message over b[8:], as the guest reads
// the results of a frame ReturnContent accepted.
func rootOf(t testing.TB, b []byte) capnp.Struct {
	t.Helper()
	msg, _, err := capnp.NewMessage(capnp.SingleSegment(b[8:]))
	if err != nil {
		t.Fatal(err)
	}
	root, err := msg.Root()
	if err != nil {
		t.Fatal(err)
	}
	return root.Struct()
}

// TestReturnContentReadsTheResultsDecodeReads: for the return frames a host
// sends for a call with no capabilities in its results (a struct, an empty
// struct, null), the results read through ReturnContent's root are those
// Decode reads.
func TestReturnContentReadsTheResultsDecodeReads(t *testing.T) {
	empty := func(seg *capnp.Segment) (capnp.Ptr, error) {
		st, err := capnp.NewStruct(seg, capnp.ObjectSize{})
		return st.ToPtr(), err
	}
	for name, fill := range map[string]func(*capnp.Segment) (capnp.Ptr, error){
		"struct": results, "empty struct": empty, "null": nil,
	} {
		t.Run(name, func(t *testing.T) {
			b := returnFrame(t, fill, 0)
			want := decodedContent(t, b)
			if !frame.ReturnContent(b, envLim) {
				t.Fatal("ReturnContent refused a return frame with no capabilities")
			}
			got := rootOf(t, b)
			if got.IsValid() != want.IsValid() || got.Size() != want.Size() {
				t.Fatalf("results = %v (valid %v), want %v (valid %v)", got.Size(), got.IsValid(), want.Size(), want.IsValid())
			}
			if fill == nil || want.Size().PointerCount == 0 {
				return
			}
			if got.Uint64(0) != 0xfeed {
				t.Errorf("results word = %#x, want 0xfeed", got.Uint64(0))
			}
			if txt, err := got.Ptr(0); err != nil || txt.Text() != "value" {
				t.Errorf("results text = %q, %v; want value", txt.Text(), err)
			}
		})
	}
}

func decodedContent(t testing.TB, b []byte) capnp.Struct {
	t.Helper()
	f, err := frame.Decode(bytes.Clone(b), envLim)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Return()
	if err != nil {
		t.Fatal(err)
	}
	st, err := frame.Content(p)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestReturnContentLeavesEveryOtherFrameAsItWas: frames with capabilities,
// calls, exceptions, releases, several segments or broken framing are
// refused, and their bytes left for Decode.
func TestReturnContentLeavesEveryOtherFrameAsItWas(t *testing.T) {
	multi := func() []byte {
		msg, seg, err := capnp.NewMessage(capnp.MultiSegment(nil))
		if err != nil {
			t.Fatal(err)
		}
		f, err := abi.NewRootFrame(seg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.NewReturn(); err != nil {
			t.Fatal(err)
		}
		// Force a second segment: a struct larger than the first has room for.
		if _, err := capnp.NewStruct(seg, capnp.ObjectSize{DataSize: 64 << 10}); err != nil {
			t.Fatal(err)
		}
		b, err := msg.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if b[0] == 0 {
			t.Fatal("the message has one segment")
		}
		return b
	}()
	frameOf := func(build func(abi.Frame) error) []byte {
		f, err := frame.New()
		if err != nil {
			t.Fatal(err)
		}
		if err := build(f); err != nil {
			t.Fatal(err)
		}
		b, err := frame.Encode(f)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	withCaps := returnFrame(t, results, 1)
	for name, b := range map[string][]byte{
		"capabilities": withCaps,
		"call":         frame.AppendCall(nil, 1, capnp.Method{}, nil, capnp.ObjectSize{}, nil),
		"exception": frameOf(func(f abi.Frame) error {
			return frame.SetException(f, exc.New(exc.Failed, "", "boom"))
		}),
		"release":     frameOf(func(f abi.Frame) error { f.SetRelease(3); return nil }),
		"segments":    multi,
		"truncated":   withCaps[:len(withCaps)-8],
		"empty":       nil,
		"header only": {0, 0, 0, 0, 0, 0, 0, 0},
	} {
		t.Run(name, func(t *testing.T) {
			was := bytes.Clone(b)
			if frame.ReturnContent(b, envLim) {
				t.Fatal("ReturnContent accepted it")
			}
			if !bytes.Equal(b, was) {
				t.Error("ReturnContent changed the bytes it refused")
			}
		})
	}
}

// FuzzReturnContentAgreesWithDecode: whatever bytes the host sends,
// ReturnContent never panics; if it refuses them, it leaves them as they
// were; if it accepts them, Decode reads them as a return frame with no
// capabilities, and the results through ReturnContent's root have the
// size, data and pointers of the results Decode reads.
func FuzzReturnContentAgreesWithDecode(f *testing.F) {
	for _, s := range seedFrames(f) {
		f.Add(s)
	}
	f.Add(returnFrame(f, results, 0))
	f.Add(returnFrame(f, nil, 0))
	f.Add(returnFrame(f, results, 2))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := bytes.Clone(b)
		if !frame.ReturnContent(c, envLim) {
			if !bytes.Equal(b, c) {
				t.Fatal("ReturnContent changed the bytes it refused")
			}
			return
		}
		fr, err := frame.Decode(b, envLim)
		if err != nil {
			t.Fatalf("ReturnContent accepted what Decode refuses: %v", err)
		}
		if fr.Which() != abi.Frame_Which_return {
			t.Fatalf("ReturnContent accepted a %v frame", fr.Which())
		}
		p, err := fr.Return()
		if err != nil {
			t.Fatal(err)
		}
		if list, err := p.CapTable(); err != nil || list.Len() != 0 {
			t.Fatalf("ReturnContent accepted a cap table of %d (%v)", list.Len(), err)
		}
		want, err := frame.Content(p)
		if err != nil {
			t.Fatalf("ReturnContent accepted content Decode refuses: %v", err)
		}
		got := rootOf(t, c)
		if got.IsValid() != want.IsValid() || got.Size() != want.Size() {
			t.Fatalf("results = %v (valid %v), Decode's %v (valid %v)", got.Size(), got.IsValid(), want.Size(), want.IsValid())
		}
		for off := capnp.DataOffset(0); off < capnp.DataOffset(want.Size().DataSize); off += 8 {
			if got.Uint64(off) != want.Uint64(off) {
				t.Fatalf("results word at %d = %#x, Decode's %#x", off, got.Uint64(off), want.Uint64(off))
			}
		}
		for i := range want.Size().PointerCount {
			if got.HasPtr(i) != want.HasPtr(i) {
				t.Fatalf("results pointer %d: set %v, Decode's %v", i, got.HasPtr(i), want.HasPtr(i))
			}
		}
	})
}
