// Package notestest holds the tests of the notes example gadget
// (examples/notes). The gadget itself is a wasip1 main package, so its tests
// live here: they build it to WebAssembly, run it in a real wasmhost.Runtime
// on the in-memory test Host of internal/memhost (with the server's storage
// transactions and limits), and talk to it through notespb.Notes exactly as a
// client of gadgetd would.
package notestest
