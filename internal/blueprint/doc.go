// Package blueprint reads and builds blueprint directories.
//
// A blueprint directory is a Go guest package plus a manifest:
//
//	blueprint.json   {"name", "version", "description",
//	                  "schema":  path of the session's .capnp file, relative to the dir,
//	                  "session": "file.capnp:Interface" or a 0x interface id,
//	                  "ui":      path of the UI document, relative to the dir}
//	*.go             the guest (package main, built as a wasip1 reactor)
//	gadget.wasm      built by Build (not committed)
//	schema.bin       built by Build: the compiled schema, a serialized
//	                 capnp.schema.CodeGeneratorRequest (not committed)
//
// Build compiles a directory, Load reads a built one into a Bundle, and the
// schema helpers here are what the server uses to validate an installed
// blueprint's session interface.
package blueprint
