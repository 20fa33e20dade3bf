package wasmhost

import "golang.org/x/sys/unix"

// remapMemory grows b (nil at first) to size bytes of zeroed memory, keeping
// its contents, without copying them.
func remapMemory(b []byte, size uint64) ([]byte, error) {
	switch {
	case size == 0:
		return []byte{}, nil
	case len(b) == 0:
		// MAP_NORESERVE: pages cost memory when touched, not when mapped.
		return unix.Mmap(-1, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	default:
		return unix.Mremap(b, int(size), unix.MREMAP_MAYMOVE)
	}
}

// discardMemory returns b's pages to the system; b stays mapped and reads as
// zeros.
func discardMemory(b []byte) {
	if len(b) > 0 {
		unix.Madvise(b, unix.MADV_DONTNEED)
	}
}

func unmapMemory(b []byte) {
	if len(b) > 0 {
		unix.Munmap(b)
	}
}
