package frame_test

import (
	"testing"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/internal/frame"
	"github.com/gadgetd/gadgetd/schema/abi"
)

// seedFrames are well-formed frames of each kind, for the fuzzer to mutate.
func seedFrames(f *testing.F) [][]byte {
	var seeds [][]byte
	add := func(build func(abi.Frame) error) {
		fr, err := frame.New()
		if err != nil {
			f.Fatal(err)
		}
		if err := build(fr); err != nil {
			f.Fatal(err)
		}
		b, err := frame.Encode(fr)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	add(func(fr abi.Frame) error {
		c, err := fr.NewCall()
		if err != nil {
			return err
		}
		c.SetTarget(1)
		c.SetInterfaceId(0xabcdef)
		p, err := c.NewParams()
		if err != nil {
			return err
		}
		st, err := capnp.NewStruct(p.Segment(), capnp.ObjectSize{DataSize: 8, PointerCount: 1})
		if err != nil {
			return err
		}
		if err := p.SetContent(st.ToPtr()); err != nil {
			return err
		}
		caps, err := p.NewCapTable(2)
		if err != nil {
			return err
		}
		caps.At(0).SetHost(3)
		caps.At(1).SetGuest(4)
		return nil
	})
	add(func(fr abi.Frame) error { _, err := fr.NewReturn(); return err })
	add(func(fr abi.Frame) error { return frame.SetException(fr, exc.New(exc.Overloaded, "", "boom")) })
	add(func(fr abi.Frame) error { fr.SetRelease(7); return nil })
	return seeds
}

// FuzzDecodeNeverPanics: whatever bytes the other side of the boundary
// sends, decoding and reading every field gives values or errors, never a
// panic (a panic in a host function would be a crash of the host's
// worker; in the guest, of the gadget).
func FuzzDecodeNeverPanics(f *testing.F) {
	for _, s := range seedFrames(f) {
		f.Add(s)
	}
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	lim := frame.Limits{MaxBytes: 1 << 20, MaxCapTable: 64}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := frame.Decode(b, lim)
		if err != nil {
			return
		}
		var payloads []abi.Payload
		switch fr.Which() {
		case abi.Frame_Which_call:
			c, err := fr.Call()
			if err != nil {
				return
			}
			_, _, _ = c.Target(), c.InterfaceId(), c.MethodId()
			if p, err := c.Params(); err == nil {
				payloads = append(payloads, p)
			}
		case abi.Frame_Which_return:
			if p, err := fr.Return(); err == nil {
				payloads = append(payloads, p)
			}
		case abi.Frame_Which_exception:
			_ = frame.Exception(fr)
		case abi.Frame_Which_release:
			_ = fr.Release()
		}
		for _, p := range payloads {
			_, _ = frame.Content(p)
			_ = frame.Resolve(p, lim, func(frame.Ref) (capnp.Client, error) { return capnp.Client{}, nil })
		}
	})
}
