//go:build wasip1

package guest

import "unsafe"

// The host functions (docs/ABI.md).

//go:wasmimport gadgetd exchange
func exchange(ptr, size uint32) uint32

//go:wasmimport gadgetd take
func take(ptr uint32)

//go:wasmimport gadgetd release
func release(index uint32)

// in is the buffer gadgetd_alloc hands the host; out keeps the last answer
// alive until the host has read it.
var in, out []byte

//go:wasmexport gadgetd_alloc
func gadgetdAlloc(size uint32) uint32 {
	in = make([]byte, size)
	return addr(in)
}

//go:wasmexport gadgetd_deliver
func gadgetdDeliver(ptr, size uint32) uint64 {
	out = deliver(in[:size])
	return uint64(addr(out))<<32 | uint64(len(out))
}

// hostExchange sends the frame b and returns the length of the host's next
// frame, which hostTake then copies out.
func hostExchange(b []byte) uint32 { return exchange(addr(b), uint32(len(b))) }

func hostTake(buf []byte) { take(addr(buf)) }

func hostRelease(index uint32) { release(index) }

func addr(b []byte) uint32 {
	if len(b) == 0 {
		return 0
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}
