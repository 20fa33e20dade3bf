// Package js holds gadgetd's JavaScript Cap'n Proto client (capnp-es, pinned,
// with the fixes in PATCHES.md) and the Go tests that drive it: against a
// real gadgetd server on loopback (client_test.go), and against a bare
// go-capnp peer for the protocol fixes a server cannot provoke on demand
// (peer_test.go). The tests run node on the scripts in test/; see README.md.
//
// The package has no Go API. The JS sources are in src/, the bundles they
// build are committed in web/static and embedded by package web.
package js
