// Package interop holds tests that drive gadgetd from clients written in other
// languages, built with those languages' own Cap'n Proto implementations.
//
// cxx_test.go builds the gadgetd binary and starts `gadgetd serve --dev` on
// loopback ports with a temporary data directory, then builds the C++ client
// in cxx/client.c++ with g++ against Debian's libcapnp-dev (0.9.2): it runs
// `capnp compile -oc++` on the committed schema (schema/*.capnp and
// examples/counter/counterpb/counter.capnp) and links with
// `pkg-config capnp-rpc`. The client logs in, creates a counter gadget and
// increments it in one pipelined chain, then a second run opens the same
// gadget by id, sees the count go up, and removes it with Gadget.remove
// (after which its info() fails with "unknown gadget id"); both runs check
// that a wrong token fails with "invalid token".
//
// The test needs g++, capnp, pkg-config and libcapnp-dev (scripts/deps.sh
// installs them). Without them it skips, except under CI=true, where it fails.
// Set GADGETD_BIN to test an already built gadgetd binary instead of building
// ./cmd/gadgetd.
//
// The package has no non-test code.
package interop
