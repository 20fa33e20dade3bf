package client

import (
	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/server"

	"github.com/gadgetd/gadgetd/internal/capserver"
)

// Export makes a capability of a Go implementation, for a client to hand the
// server (a listener, say); methods come from the generated X_Methods.
// released, if not nil, runs once the server and everyone it passed the
// capability to have let go of it: for a listener, that its subscription
// ended (see the schema's watch methods).
//
//	l := counterpb.Listener(client.Export(counterpb.Listener_Methods(nil, impl), nil))
//
// Use it rather than the generated X_ServerToClient. A gadget chooses what it
// calls on the capabilities it is given, and with go-capnp v3.1.0-alpha.2 a
// call pipelined onto an unresolved answer that reaches a method the server
// lacks panics in a library goroutine, ending the client's process. Export
// answers such a method with an "unimplemented" exception instead.
func Export(methods []server.Method, released func()) capnp.Client {
	if released == nil {
		return capserver.New(methods, nil, nil)
	}
	return capserver.New(methods, nil, releasedFunc(released))
}

// releasedFunc is a server.Shutdowner that runs a function.
type releasedFunc func()

func (f releasedFunc) Shutdown() { f() }
