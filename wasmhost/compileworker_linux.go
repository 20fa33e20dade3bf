package wasmhost

import "syscall"

// workerProcAttr has the kernel kill a compile worker whose server died
// (even of SIGKILL), rather than leave it to spend its budget for nothing.
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
