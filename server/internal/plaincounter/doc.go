// Package plaincounter implements the counter example's Counter interface in
// plain Go, with no sandbox and no storage. It is the "bare go-capnp" baseline
// the full-stack benchmark is compared against, and a harmless bootstrap for
// transport tests.
package plaincounter
