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
//	                  "ui":      path of the UI document, relative to the dir,
//	                  "bindings": the gatekeepers its gadgets ask for (optional),
//	                  "permissions": its own permissions (optional), a list of
//	                             {"name", "title", "description"},
//	                  "roles":   {"viewer": [names], "editor": [names]} (optional)}
//	*.go             the guest (package main, built as a wasip1 reactor)
//	gadget.wasm      built by toolchain.Build (not committed)
//	schema.bin       built by toolchain.Build: the compiled schema, a serialized
//	                 capnp.schema.CodeGeneratorRequest (not committed)
//
// Permissions (Access) are the blueprint's own, as Sandstorm's PermissionDef
// and RoleDef: at most 32, each named by 1 to 32 lower-case letters, digits
// and dashes, starting with a letter, with a title. "roles" says which of
// them the platform's viewer and editor roles bundle. An owner holds every
// permission; a role "roles" leaves out holds none of its own (so a new
// permission is the owner's alone until a role lists it); an editor also
// holds what a viewer does. The guest reads the caller's set in
// Caller.permissions and enforces it.
package blueprint
