// Package memhost is the in-memory schema.Host for tests: it lets a test run
// a WebAssembly gadget in a real wasmhost.Runtime without the server, with
// storage kept in a map and the gadget's log lines kept in a slice.
//
// A Host is used like this:
//
//	h := memhost.New()
//	g := rt.NewSandbox(mod, h.Client(), wasmhost.WithCallScope(h.Begin))
//
// # Storage
//
// The storage is the server's: internal/storage's per-call transactions,
// limits and error texts, over its Memory backend instead of the server's
// bbolt file. Begin, passed to wasmhost.WithCallScope, opens the
// transaction of one top-level call; the call's reads see its unsaved
// writes; a call that succeeds commits them together, one that fails
// discards them. A commit can be made to fail (SetCommitErr), as a full
// disk would make the server's: the end of the call then returns the error
// and wasmhost fails the call. Writes outside any call scope (including the
// Put and Delete helpers tests seed data with) commit at once. The limits
// take the server's defaults; the With* options change them. One Host may
// back several gadgets in turn, as one gadget's durable storage outlives
// its instances; wasmhost never nests call scopes.
//
// # Inspection
//
// For assertions a test can read and write the data directly (Get, Put,
// Delete, Committed, Size), read the log (Logs, WaitLog), count commits
// (Commits) and entries Storage.list read (ListedEntries), and cut off every
// Storage capability the Host has lent (RevokeAll), as the server does when
// a gadget is removed.
package memhost
