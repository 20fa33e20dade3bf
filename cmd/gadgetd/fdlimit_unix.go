//go:build unix

package main

import "syscall"

// openFileLimit returns the process's limit on open files (Go raises the
// soft limit to the hard one as it starts), or 0 if it cannot tell.
func openFileLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	return l.Cur
}
