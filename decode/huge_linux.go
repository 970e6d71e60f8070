package decode

import (
	"syscall"
	"unsafe"
)

// AdviseHuge asks the kernel to back the whole 2 MiB pages within the
// size bytes at p with transparent huge pages (MADV_HUGEPAGE), for memory
// not touched yet. A large array fresh from the system otherwise costs a
// page fault, and the kernel's zeroing of the page, every 4 KiB on its
// first write: on a first conversion in a new mount (or after the runtime
// has given freed memory back), some 40 000 faults for a 1 M-triangle
// mesh, measured ≈ 40 ms of a ≈ 55 ms conversion (BenchmarkColdPathFresh);
// with huge pages, ≈ 10 ms. Linux's default THP mode ("madvise") gives
// huge pages only to memory advised so, and the Go runtime advises none.
// Only the advice is asked for: the result, and whether the kernel
// follows it, changes nothing but the cost of the faults. Used by the
// decoders for their large arrays and by the .glb writer for its output
// (9 000 faults for a 36 MB .glb).
func AdviseHuge(p unsafe.Pointer, size uintptr) {
	off, n := hugeRange(uintptr(p), size)
	if n == 0 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(p, off)), n)
	syscall.Madvise(b, syscall.MADV_HUGEPAGE) // an error (an old kernel) only leaves small pages
}

// hugeSize is the size of an x86-64 or arm64 (4 KiB granule) huge page.
const hugeSize = 2 << 20

// hugeRange returns the whole huge pages within the size bytes at addr:
// they start off bytes in and span n bytes (0: none).
func hugeRange(addr, size uintptr) (off, n uintptr) {
	off = (hugeSize - addr%hugeSize) % hugeSize // to the first boundary
	if off >= size {
		return 0, 0
	}
	return off, (size - off) &^ (hugeSize - 1)
}
