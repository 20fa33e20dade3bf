package guest

import (
	"errors"
	"testing"

	"capnproto.org/go/capnp/v3"
)

// TestParamsMessageComesBackEmptyAndZeroed: the params message a call built
// its params in is handed to the next call holding nothing, its memory
// zeroed (go-capnp assumes what it allocates is), with no capability left
// in its table; and go-capnp's layout is the one this relies on, so an
// upgrade cannot silently lose the reuse (paramsMessage would fall back to
// a message per call).
func TestParamsMessageComesBackEmptyAndZeroed(t *testing.T) {
	if segDataOffset < 0 {
		t.Fatal("capnp.Segment has no data []byte field: every call builds its params in a new message")
	}
	for range 2 {
		msg, seg, err := paramsMessage()
		if err != nil {
			t.Fatal(err)
		}
		if msg != &params {
			t.Fatal("paramsMessage did not hand out the kept params message")
		}
		if len(seg.Data()) != 0 {
			t.Fatalf("params segment holds %d bytes at the start of a call", len(seg.Data()))
		}
		st, err := capnp.NewStruct(seg, capnp.ObjectSize{DataSize: 8, PointerCount: 2})
		if err != nil {
			t.Fatal(err)
		}
		st.SetUint64(0, ^uint64(0))
		if err := st.SetNewText(0, "some text"); err != nil {
			t.Fatal(err)
		}
		st.SetPtr(1, capnp.NewInterface(seg, msg.CapTable().Add(capnp.ErrorClient(errors.New("a capability")))).ToPtr())
		doneParams(msg)
		if n := msg.CapTable().Len(); n != 0 {
			t.Fatalf("%d capabilities left in the params message", n)
		}
		data := seg.Data()
		if len(data) != 0 {
			t.Fatalf("params segment holds %d bytes after a call", len(data))
		}
		for i, b := range data[:cap(data)] {
			if b != 0 {
				t.Fatalf("byte %d of the params segment is %#x after a call, want 0", i, b)
			}
		}
	}
}
