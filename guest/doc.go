// Package guest is the SDK for writing a gadget's server half in Go.
//
// A gadget is a WebAssembly module that gadgetd runs in a sandbox with no
// network, no files and no environment. Its whole world is the capabilities
// the host lends it, starting with a Host (storage, logging), and the
// capabilities clients pass in calls. This package hides the boundary (the
// cap-table ABI in docs/ABI.md) behind ordinary go-capnp types: a gadget
// implements the generated Server interfaces of its own schema and calls
// host capabilities through generated client types, exactly as it would in a
// normal Go program.
//
// A gadget is a wasip1 reactor. Its main package registers its main object
// in init and leaves main empty:
//
//	func init() { guest.Serve(app{}) } // app implements schema.Guest_Server
//	func main() {}
//
// and is built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o gadget.wasm .
//
// (`gadgetd blueprint build DIR` does this for you.)
//
// Concurrency: the host delivers one call at a time; while a gadget waits on a
// call to a capability that came from a client (a listener, say), the host may
// deliver further calls into it, so a listener can call back into the gadget
// without deadlock. As in any go-capnp server, a method that waits on such a
// call and wants other calls to the same object to run meanwhile must call
// its call's Go method first (see examples/counter).
//
// Errors keep their Cap'n Proto exception type across the boundary, both
// ways. A method that returns exc.New(exc.Overloaded, "", "busy") (or any
// error wrapping an *exc.Exception) fails its client's call with an
// overloaded exception; other errors are failed. An error from a host
// capability arrives with the type the host gave it, so exc.TypeOf and
// capnp.IsDisconnected work on it: a capability that is gone (revoked, its
// gadget removed) is disconnected, an unknown method is unimplemented.
//
// Storage writes made while handling a call commit when the call returns
// successfully, and are discarded if it fails or the instance dies; see
// schema/gadget.capnp for the exact rule.
package guest
