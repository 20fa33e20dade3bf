package wasmhost

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// workerProcAttr has the kernel kill a compile worker whose server died
// (even of SIGKILL), rather than leave it to spend its budget for nothing.
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// limitAddressSpace sets RLIMIT_AS to what the calling process has mapped
// plus memory bytes. It counts from the worker's own address space, not from
// zero: Go reserves about 1.5 GiB at start that it never touches (far more
// under the race detector), so an absolute limit would measure the runtime,
// not the compile.
func limitAddressSpace(memory uint64) error {
	mapped, err := mappedBytes()
	if err != nil {
		return err
	}
	as := mapped + memory
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &cur); err == nil && cur.Max < as {
		as = cur.Max // inherited from a server that runs under a limit itself
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: as, Max: as}); err != nil {
		return fmt.Errorf("RLIMIT_AS: %w", err)
	}
	return nil
}

// mappedBytes is the calling process's current address space (the first
// field of /proc/self/statm, in pages).
func mappedBytes() (uint64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 0, fmt.Errorf("/proc/self/statm is empty")
	}
	pages, err := strconv.ParseUint(fields[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/self/statm: %w", err)
	}
	return pages * uint64(os.Getpagesize()), nil
}
