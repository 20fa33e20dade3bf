// Package toolchain turns a blueprint's source directory into a loadable
// blueprint: it regenerates the Go bindings from the blueprint's .capnp
// (capnp compile -ogo), compiles the schema to schema.bin and builds the
// guest to gadget.wasm (go build, GOOS=wasip1). With node, it also writes
// the schema's JavaScript bindings for the gadget's UI (jsbindings.go).
//
// It runs external programs (go, capnp, capnpc-go, node) and so belongs to
// the command-line tools only: the server validates what it is sent with
// package blueprint and never links this one
// (TestServerDoesNotLinkTheToolchain).
//
// A build refuses, with an error that says how to fix it, a blueprint whose
// Go code would not be built from its own schema: a $Go.import that is not
// the package in the .capnp file's directory (a copied example keeps its
// original's), or a guest that does not import those bindings.
package toolchain
