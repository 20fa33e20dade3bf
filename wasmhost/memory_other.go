//go:build !linux

package wasmhost

// Without mremap, linear memory is a Go slice that grows by copying, as in
// wazero; only its accounting differs.

func remapMemory(b []byte, size uint64) ([]byte, error) {
	nb := make([]byte, size)
	copy(nb, b)
	return nb, nil
}

func discardMemory([]byte) {}

func unmapMemory([]byte) {}
