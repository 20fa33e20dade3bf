// Package rpcguard hardens go-capnp connections against hostile peers.
//
// go-capnp v3.1.0-alpha.2 trusts its peer: it has no default message size
// bound that suits a server, walks capability tables of any length, keeps an
// unbounded answer table, and never times a connection out. This package puts
// a Transport in front of rpc.Conn that decodes every incoming message and
// enforces bounds before the RPC layer sees it, and an accept loop that bounds
// connections and applies deadlines. Limits documents each bound,
// transport.go's design comment and docs/RATIONALE.md say why pipelined calls
// are held; the tests in this package attack a real loopback TCP server and
// prove that it keeps serving everyone else.
package rpcguard
