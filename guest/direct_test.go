package guest

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/exc"

	"github.com/gadgetd/gadgetd/guest/callsync"
	"github.com/gadgetd/gadgetd/internal/frame"
	"github.com/gadgetd/gadgetd/schema"
	"github.com/gadgetd/gadgetd/schema/abi"
)

// These tests run natively: delivery needs no host until the guest calls
// one, and these methods do not.

// withExport makes c the guest's only export, index 1, for one test.
func withExport(t *testing.T, c capnp.Client) {
	t.Helper()
	saved, savedNext := exports, nextExport
	exports = map[uint32]*export{1: {client: c}}
	nextExport = 2
	t.Cleanup(func() {
		for _, e := range exports {
			e.client.Release()
		}
		exports, nextExport = saved, savedNext
	})
}

// deliverCall delivers a call of Guest.open (or another method of the
// Guest interface) to export 1 and returns the decoded answer.
func deliverCall(t *testing.T, methodID uint16, userID string) abi.Frame {
	t.Helper()
	f, err := frame.New()
	if err != nil {
		t.Fatal(err)
	}
	call, err := f.NewCall()
	if err != nil {
		t.Fatal(err)
	}
	call.SetTarget(1)
	call.SetInterfaceId(schema.Guest_TypeID)
	call.SetMethodId(methodID)
	p, err := call.NewParams()
	if err != nil {
		t.Fatal(err)
	}
	params, err := schema.NewGuest_open_Params(p.Segment())
	if err != nil {
		t.Fatal(err)
	}
	caller, err := params.NewCaller()
	if err != nil {
		t.Fatal(err)
	}
	if err := caller.SetUserId(userID); err != nil {
		t.Fatal(err)
	}
	if err := p.SetContent(capnp.Struct(params).ToPtr()); err != nil {
		t.Fatal(err)
	}
	answer, err := frame.Decode(deliver(encode(f)), limits)
	if err != nil {
		t.Fatal(err)
	}
	return answer
}

// opener is a Guest whose Open records the stack it ran on and answers
// with a session (itself).
type opener struct {
	stack  *string
	userID *string
}

func (o opener) Open(ctx context.Context, call schema.Guest_open) error {
	// On go-capnp's queue, Go hands the queue to a new goroutine; on the
	// direct path there is none, and Go must do nothing.
	call.Go()
	buf := make([]byte, 64<<10)
	*o.stack = string(buf[:runtime.Stack(buf, false)])
	caller, err := call.Args().Caller()
	if err != nil {
		return err
	}
	if *o.userID, err = caller.UserId(); err != nil {
		return err
	}
	res, err := call.AllocResults()
	if err != nil {
		return err
	}
	return res.SetSession(capnp.Client(schema.Guest_ServerToClient(o)))
}

func TestCallsToGeneratedServersRunOnTheDeliveringGoroutine(t *testing.T) {
	var stack, userID string
	withExport(t, capnp.Client(schema.Guest_ServerToClient(opener{&stack, &userID})))

	answer := deliverCall(t, 0, "u1")
	// Had call.Go started a queue goroutine for a server that is not
	// there, it would crash the test binary now.
	for range 10 {
		runtime.Gosched()
	}
	if answer.Which() != abi.Frame_Which_return {
		t.Fatalf("answer is a %v frame (%v), want return", answer.Which(), frame.Exception(answer))
	}
	// Run by go-capnp's server.Server, the method would be on the
	// server's goroutine, under handleCalls, and deliver would not be on
	// its stack.
	if !strings.Contains(stack, "guest.deliver") || strings.Contains(stack, "handleCalls") {
		t.Fatalf("the method did not run directly under deliver:\n%s", stack)
	}
	if userID != "u1" {
		t.Errorf("the method read userId %q from its params, want u1", userID)
	}
	// Its results are in the answer: the session, lent as a new export.
	ret, err := answer.Return()
	if err != nil {
		t.Fatal(err)
	}
	caps, err := ret.CapTable()
	if err != nil {
		t.Fatal(err)
	}
	if caps.Len() != 1 || caps.At(0).Which() != abi.CapDescriptor_Which_guest || caps.At(0).Guest() != 2 {
		t.Fatalf("answer lends %d capabilities (first %v), want the session as guest export 2", caps.Len(), caps.At(0).Which())
	}
	if _, ok := exports[2]; !ok {
		t.Fatal("the session is not among the exports")
	}
}

func TestAnUnknownMethodOfAGeneratedServerIsUnimplemented(t *testing.T) {
	var stack, userID string
	withExport(t, capnp.Client(schema.Guest_ServerToClient(opener{&stack, &userID})))

	answer := deliverCall(t, 9, "u1")
	if answer.Which() != abi.Frame_Which_exception {
		t.Fatalf("answer is a %v frame, want exception", answer.Which())
	}
	if typ := exc.TypeOf(frame.Exception(answer)); typ != exc.Unimplemented {
		t.Fatalf("exception type %v, want unimplemented", typ)
	}
	if stack != "" {
		t.Fatal("a method ran")
	}
}

func TestExportsThatAreNotGeneratedServersTakeGoCapnpsPath(t *testing.T) {
	withExport(t, capnp.ErrorClient(errors.New("no such thing")))

	answer := deliverCall(t, 0, "u1")
	if answer.Which() != abi.Frame_Which_exception {
		t.Fatalf("answer is a %v frame, want exception", answer.Which())
	}
	if err := frame.Exception(answer); !strings.Contains(err.Error(), "no such thing") {
		t.Fatalf("exception %q, want the error client's", err)
	}
	if exports[1].direct {
		t.Fatal("an error client was dispatched directly")
	}
}

// The generated FooSync stubs find the guest's host capabilities through
// their brand (guest/callsync), and so skip go-capnp's client path.
func TestHostCapabilitiesAnswerSyncStubsThemselves(t *testing.T) {
	c := capnp.NewClient(&importHook{index: 0})
	defer c.Release()
	snap := c.Snapshot()
	defer snap.Release()
	if _, ok := snap.Brand().Value.(callsync.Hook); !ok {
		t.Fatalf("a host capability's brand is %T, not a callsync.Hook", snap.Brand().Value)
	}
}
