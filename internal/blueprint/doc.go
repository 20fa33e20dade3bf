// Package blueprint reads and validates blueprints: the manifest, a built
// blueprint directory (Load) and the compiled schema's session interface.
// The server uses it to check what it is asked to install; it runs no
// external program, and building a directory is package toolchain's job.
//
// A blueprint directory is a Go guest package plus a manifest:
//
//	blueprint.json   {"name", "version", "description",
//	                  "schema":  path of the session's .capnp file, relative to the dir,
//	                  "session": "file.capnp:Interface" or a 0x interface id,
//	                  "ui":      path of the UI document, relative to the dir}
//	*.go             the guest (package main, built as a wasip1 reactor)
//	gadget.wasm      built by toolchain.Build (not committed)
//	schema.bin       built by toolchain.Build: the compiled schema, a serialized
//	                 capnp.schema.CodeGeneratorRequest (not committed)
package blueprint
