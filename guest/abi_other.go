//go:build !wasip1

package guest

// Outside the sandbox there is no host to talk to. These keep the package
// buildable (and vettable) on every platform; a gadget only ever runs as
// GOOS=wasip1.

func hostExchange([]byte) uint32 { panic(notInSandbox) }

func hostTake([]byte) { panic(notInSandbox) }

const notInSandbox = "guest: gadgets run only under gadgetd (GOOS=wasip1 GOARCH=wasm)"

func hostRelease(uint32) {}
