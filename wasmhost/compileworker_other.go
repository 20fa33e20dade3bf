//go:build !linux

package wasmhost

import "syscall"

// workerProcAttr: outside Linux a compile worker outlives a server that
// died, until its CPU budget ends it.
func workerProcAttr() *syscall.SysProcAttr { return nil }

// limitAddressSpace: outside Linux the compile worker has no memory bound
// (macOS does not enforce RLIMIT_AS); its CPU budget still ends it.
func limitAddressSpace(memory uint64) error { return nil }
