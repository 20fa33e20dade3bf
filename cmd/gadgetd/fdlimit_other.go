//go:build !unix

package main

// openFileLimit returns 0: this system has no limit fitConnections checks.
func openFileLimit() uint64 { return 0 }
