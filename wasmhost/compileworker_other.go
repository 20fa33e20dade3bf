//go:build !linux

package wasmhost

import "syscall"

// workerProcAttr: outside Linux a compile worker outlives a server that
// died, until its CPU budget ends it.
func workerProcAttr() *syscall.SysProcAttr { return nil }
