// Package memhost is the in-memory schema.Host for tests: it lets a test run
// a WebAssembly gadget in a real wasmhost.Runtime without the server, with
// storage kept in a map and the gadget's log lines kept in a slice.
//
// A Host is used like this:
//
//	h := memhost.New()
//	g := rt.NewGadget(mod, h.Client(), wasmhost.WithCallScope(h.Begin))
//
// # Transactions
//
// The storage follows the same per-call transaction rule as the server's
// (server/storage.go): Begin, passed to wasmhost.WithCallScope, opens a
// buffer for the writes of one top-level call; the call's reads (get and
// list) see its own unsaved writes; when the call succeeds its writes commit
// together, and when it fails they are discarded. A commit can be made to
// fail (SetCommitErr), as a full disk would make the server's: the end
// function then returns the error and wasmhost fails the call, so its caller
// is never told "done" about writes that were lost. Writes made outside any
// call scope (including the Put and Delete helpers used by tests to seed
// data) apply at once, as the server applies them. Like the server, a Host
// keeps at most one transaction open at a time: wasmhost never nests scopes,
// and one Host may back several gadgets in turn, as one gadget's durable
// storage outlives its instances.
//
// # Limits
//
// Writes are checked against the limits schema/gadget.capnp documents, with
// the server's defaults (keys up to 512 bytes, values up to 1 MiB, 64 MiB of
// keys plus values in total); WithMaxKeyBytes, WithMaxValueBytes and
// WithMaxTotalBytes change them. A write past a limit fails with an error
// naming the limit, and the rest of the transaction is kept. Like the
// server's, every write a call buffers (a delete of a missing key too)
// counts against the per-call limits (WithMaxCallWrites, WithMaxCallBytes),
// and Storage.list returns at most 1000 entries and at most
// WithMaxListBytes of keys and values (but always one entry) per call.
//
// # Inspection
//
// For assertions a test can read and write the data directly (Get, Put,
// Delete, Committed, Size), read the log (Logs, WaitLog), count commits
// (Commits) and entries read through Storage.list (ListedEntries), and cut off
// every Storage capability the Host has lent (RevokeAll), as the server does
// when a gadget is removed.
package memhost
