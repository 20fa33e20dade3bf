// Package capserver is the one place gadgetd turns a Go implementation into a
// capnp.Client.
//
// go-capnp v3.1.0-alpha.2 panics in a library goroutine, killing the whole
// process, when a call pipelined onto an unresolved answer lands on a server
// that does not implement the method: server.Server.Send returns an
// ErrorAnswer with a nil PipelineCaller and AnswerQueue.Fulfill dereferences
// it. Routing unknown methods through HandleUnknownMethod makes them take the
// normal answer path, so a hostile client gets an "unimplemented" exception
// instead. Every capability gadgetd exports must be built here.
package capserver

import (
	"context"
	"fmt"

	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/exc"
	"capnproto.org/go/capnp/v3/server"
)

// New returns a client for methods, branded with brand (server.IsServer
// recovers it). shutdown, if non-nil, runs when the last reference is gone.
func New(methods []server.Method, brand any, shutdown server.Shutdowner) capnp.Client {
	return capnp.NewClient(NewServer(methods, brand, shutdown))
}

// NewServer is New without wrapping, for callers that need the *server.Server.
func NewServer(methods []server.Method, brand any, shutdown server.Shutdowner) *server.Server {
	srv := server.New(methods, brand, shutdown)
	srv.HandleUnknownMethod = Unimplemented
	// go-capnp sets a nil NewArena on the first in-process call, without a
	// lock: two first calls at once race. Set it here, to its default.
	srv.NewArena = newArena
	return srv
}

func newArena() capnp.Arena { return capnp.MultiSegment(nil) }

// Unimplemented is a server.Server.HandleUnknownMethod that answers every
// unknown method with an "unimplemented" exception through the normal path.
func Unimplemented(m capnp.Method) *server.Method {
	return &server.Method{
		Method: m,
		Impl:   func(context.Context, *server.Call) error { return NotImplemented(m) },
	}
}

// NotImplemented is the "unimplemented" exception for method m.
func NotImplemented(m capnp.Method) error {
	return capnp.Unimplemented(fmt.Sprintf("method @%d of interface %#016x is not implemented here", m.MethodID, m.InterfaceID))
}

// SendDirect answers the in-process call s at once, on the caller's
// goroutine: it places the arguments in a message of their own, runs serve
// on them with a segment of a message for the results, and returns the
// answer already resolved. A ClientHook's Send uses it, instead of a
// server.Server, for methods that never block for long and never call back
// into their caller: a server.Server queues every call for its own
// goroutine, and the caller then waits for two goroutine switches, there
// and back, per call. The answer's release frees the results.
func SendDirect(s capnp.Send, serve func(args capnp.Struct, results *capnp.Segment) (capnp.Struct, error)) (*capnp.Answer, capnp.ReleaseFunc) {
	args, err := placeArgs(s)
	if err != nil {
		return capnp.ErrorAnswer(s.Method, err), func() {}
	}
	defer releaseMessage(args)
	msg, seg, err := capnp.NewMessage(newArena())
	if err != nil {
		return capnp.ErrorAnswer(s.Method, err), func() {}
	}
	res, err := serve(args, seg)
	if err != nil {
		msg.Release()
		return capnp.ErrorAnswer(s.Method, err), func() {}
	}
	return capnp.ImmediateAnswer(s.Method, res.ToPtr()), msg.Release
}

// placeArgs builds s's arguments as server.Server does: in a message of
// their own, or a zero Struct if s has none.
func placeArgs(s capnp.Send) (capnp.Struct, error) {
	if s.PlaceArgs == nil {
		return capnp.Struct{}, nil
	}
	_, seg, err := capnp.NewMessage(newArena())
	if err != nil {
		return capnp.Struct{}, err
	}
	args, err := capnp.NewRootStruct(seg, s.ArgsSize)
	if err == nil {
		err = s.PlaceArgs(args)
	}
	if err != nil {
		seg.Message().Release()
		return capnp.Struct{}, exc.WrapError("place args", err)
	}
	return args, nil
}

func releaseMessage(s capnp.Struct) {
	if msg := s.Message(); msg != nil {
		msg.Release()
	}
}
