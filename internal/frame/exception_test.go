package frame_test

import (
	"errors"
	"fmt"
	"testing"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/internal/frame"
	"github.com/gadgetd/gadgetd/schema/abi"
)

var lim = frame.Limits{MaxBytes: 1 << 20, MaxCapTable: 64}

// roundTrip encodes an exception frame for err and decodes the error the
// other side sees.
func roundTrip(t *testing.T, err error) error {
	t.Helper()
	f, ferr := frame.New()
	if ferr != nil {
		t.Fatal(ferr)
	}
	if ferr := frame.SetException(f, err); ferr != nil {
		t.Fatal(ferr)
	}
	b, ferr := frame.Encode(f)
	if ferr != nil {
		t.Fatal(ferr)
	}
	got, ferr := frame.Decode(b, lim)
	if ferr != nil {
		t.Fatal(ferr)
	}
	if got.Which() != abi.Frame_Which_exception {
		t.Fatalf("decoded a %v frame, want exception", got.Which())
	}
	return frame.Exception(got)
}

func TestExceptionFramesCarryEveryType(t *testing.T) {
	for _, typ := range []exc.Type{exc.Failed, exc.Overloaded, exc.Disconnected, exc.Unimplemented} {
		for name, err := range map[string]error{
			"exc.New":               exc.New(typ, "", "it went wrong"),
			"wrapped by fmt":        fmt.Errorf("while doing this: %w", exc.New(typ, "", "it went wrong")),
			"annotated by go-capnp": exc.Annotate("", "x.capnp:I.m", exc.New(typ, "", "it went wrong")),
		} {
			got := roundTrip(t, err)
			if exc.TypeOf(got) != typ {
				t.Errorf("%v %s: the receiver's exc.TypeOf = %v", typ, name, exc.TypeOf(got))
			}
			if got.Error() != frame.Reason(err) {
				t.Errorf("%v %s: reason %q, want %q", typ, name, got, frame.Reason(err))
			}
		}
	}
	if got := roundTrip(t, errors.New("plain")); exc.TypeOf(got) != exc.Failed || got.Error() != "plain" {
		t.Errorf("a plain error arrives as %v %q, want failed \"plain\"", exc.TypeOf(got), got)
	}
	if !capnp.IsDisconnected(roundTrip(t, capnp.Disconnected("gone"))) {
		t.Error("capnp.IsDisconnected is false for a disconnected exception frame")
	}
}

// An exception frame as an ABI v1 guest written before the type existed
// sends it (the reason only; docs/ABI.md §4) means failed.
func TestAnExceptionFrameWithoutATypeMeansFailed(t *testing.T) {
	old := []byte{
		0, 0, 0, 0, 4, 0, 0, 0, // 1 segment of 4 words
		0, 0, 0, 0, 1, 0, 1, 0, // root -> Frame: 1 data word, 1 pointer
		2, 0, 0, 0, 0, 0, 0, 0, // union tag 2 = exception, nothing else
		1, 0, 0, 0, 0x22, 0, 0, 0, // reason: 4 bytes
		'o', 'l', 'd', 0, 0, 0, 0, 0,
	}
	f, err := frame.Decode(old, lim)
	if err != nil {
		t.Fatal(err)
	}
	got := frame.Exception(f)
	if exc.TypeOf(got) != exc.Failed || got.Error() != "old" {
		t.Fatalf("an untyped exception frame reads as %v %q, want failed \"old\"", exc.TypeOf(got), got)
	}
	// A type from a newer sender that this side does not know is failed
	// too, not a number clients cannot interpret.
	old[20] = 9 // Frame data bits 32-47: exception.type
	if f, err = frame.Decode(old, lim); err != nil {
		t.Fatal(err)
	}
	if typ := exc.TypeOf(frame.Exception(f)); typ != exc.Failed {
		t.Fatalf("an unknown exception type reads as %v, want failed", typ)
	}
}

func TestTypeOfFindsTheOutermostExceptionInTheChain(t *testing.T) {
	inner := exc.New(exc.Overloaded, "", "queue full")
	for _, tc := range []struct {
		err  error
		want exc.Type
	}{
		{errors.New("plain"), exc.Failed},
		{inner, exc.Overloaded},
		{fmt.Errorf("gadget g: %w", inner), exc.Overloaded},
		{&exc.Exception{Type: exc.Disconnected, Cause: fmt.Errorf("x: %w", inner)}, exc.Disconnected},
		{fmt.Errorf("y: %w", exc.Exception{Type: exc.Unimplemented, Cause: inner}), exc.Unimplemented},
		{errors.Join(errors.New("plain"), fmt.Errorf("z: %w", inner)), exc.Overloaded},
	} {
		if got := frame.TypeOf(tc.err); got != tc.want {
			t.Errorf("TypeOf(%q) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
