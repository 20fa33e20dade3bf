// Package storage is a gadget's key-value storage as the gadget's calls see
// it: the one implementation of its per-call transactions, its limits and
// their error texts, for the server and for tests alike.
//
// A Data holds one gadget's storage over a Store, the backend that keeps the
// committed entries. Begin, passed to wasmhost.WithCallScope, opens the
// transaction of one top-level call into the guest: the call's writes are
// buffered, its reads (Get and List) see them, and when the call returns
// they are committed together, in the order the call first wrote each key,
// or discarded if the call failed. A write outside any call scope, or made
// with a context from OwnTransaction, is a transaction of its own and
// commits at once: the server gives every caller but the gadget's own guest
// such a context (a client, or another gadget, using a Storage the gadget
// delegated), so that only the guest's calls join its running call.
//
// Every write is checked against Limits: the size of a key, of a value and
// of all the gadget's data; and, inside a call, how many keys the call has
// changed and how many bytes its buffered writes hold (deletes of keys that
// do not exist count too). A list answers within the list byte budget,
// always with at least one entry, and holds at most that much of the Store
// at once.
//
// Two backends implement Store: Memory here, for tests (internal/memhost),
// and the server's bbolt database through store.GadgetData. Store carries no
// type of either, so that a distributed backend can implement it later.
//
// Methods serves a Data as the schema.Storage capability; callers wrap it
// with internal/capserver. Serve answers the same methods on the caller's
// goroutine, for in-process calls (capserver.SendDirect).
package storage
