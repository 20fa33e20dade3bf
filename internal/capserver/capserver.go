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
		Impl: func(context.Context, *server.Call) error {
			return capnp.Unimplemented(fmt.Sprintf("method @%d of interface %#016x is not implemented here", m.MethodID, m.InterfaceID))
		},
	}
}
