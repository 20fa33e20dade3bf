package client

import (
	"capnproto.org/go/capnp/v3"
	"capnproto.org/go/capnp/v3/server"

	"github.com/gadgetd/gadgetd/internal/capserver"
)

// Export makes a capability of a Go implementation, for a client to hand the
// server (a listener, say); methods come from the generated X_Methods:
//
//	l := counterpb.Listener(client.Export(counterpb.Listener_Methods(nil, impl)))
//
// Use it rather than the generated X_ServerToClient. A gadget chooses what it
// calls on the capabilities it is given, and with go-capnp v3.1.0-alpha.2 a
// call pipelined onto an unresolved answer that reaches a method the server
// lacks panics in a library goroutine, ending the client's process. Export
// answers such a method with an "unimplemented" exception instead.
func Export(methods []server.Method) capnp.Client {
	return capserver.New(methods, nil, nil)
}
