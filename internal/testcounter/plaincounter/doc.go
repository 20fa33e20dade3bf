// Package plaincounter implements the test counter's Counter interface
// (internal/testcounter/counterpb) in plain Go, with no sandbox and no
// storage. It is the "bare go-capnp" baseline the full-stack benchmark is
// compared against, and a harmless bootstrap for transport tests.
package plaincounter
