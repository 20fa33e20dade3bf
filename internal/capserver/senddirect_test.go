package capserver_test

import (
	"errors"
	"testing"

	"capnproto.org/go/capnp/v3"

	"github.com/gadgetd/gadgetd/internal/capserver"
)

// SendDirect runs the call before it returns: the answer is resolved, with
// serve's results, or with serve's error, or with the error of placing the
// arguments (and then serve never runs).
func TestSendDirectAnswersBeforeItReturns(t *testing.T) {
	method := capnp.Method{InterfaceID: 0xfeed, MethodID: 1}
	send := func(place func(capnp.Struct) error, serve func(args capnp.Struct, seg *capnp.Segment) (capnp.Struct, error)) (capnp.Struct, error) {
		t.Helper()
		ans, release := capserver.SendDirect(capnp.Send{Method: method, ArgsSize: capnp.ObjectSize{DataSize: 8}, PlaceArgs: place}, serve)
		t.Cleanup(release)
		select {
		case <-ans.Done():
		default:
			t.Fatal("SendDirect returned an answer that is not resolved yet")
		}
		return ans.Struct()
	}
	placeSeven := func(args capnp.Struct) error { args.SetUint64(0, 7); return nil }
	double := func(args capnp.Struct, seg *capnp.Segment) (capnp.Struct, error) {
		res, err := capnp.NewStruct(seg, capnp.ObjectSize{DataSize: 8})
		res.SetUint64(0, 2*args.Uint64(0))
		return res, err
	}

	if res, err := send(placeSeven, double); err != nil || res.Uint64(0) != 14 {
		t.Fatalf("results = %d, %v; want 14", res.Uint64(0), err)
	}
	failed := errors.New("serve failed")
	if _, err := send(placeSeven, func(capnp.Struct, *capnp.Segment) (capnp.Struct, error) { return capnp.Struct{}, failed }); !errors.Is(err, failed) {
		t.Fatalf("err = %v, want serve's error", err)
	}
	served := false
	_, err := send(func(capnp.Struct) error { return errors.New("bad args") }, func(capnp.Struct, *capnp.Segment) (capnp.Struct, error) {
		served = true
		return capnp.Struct{}, nil
	})
	if err == nil || served {
		t.Fatalf("a call whose arguments could not be placed: err = %v, served = %v; want an error and no call", err, served)
	}
}
