package decode

import (
	"testing"
	"unsafe"
)

// TestHugeRange: the advised range is whole huge pages, all within the
// allocation, and as long as can be.
func TestHugeRange(t *testing.T) {
	for _, addr := range []uintptr{0, 1, 4096, hugeSize - 1, hugeSize, 3*hugeSize + 12345} {
		for _, size := range []uintptr{0, 1, hugeSize - 1, hugeSize, hugeSize + 1, 2*hugeSize + 7, 36e6} {
			off, n := hugeRange(addr, size)
			if n == 0 {
				if size >= 2*hugeSize {
					t.Errorf("addr %#x size %d: no range", addr, size)
				}
				continue
			}
			if (addr+off)%hugeSize != 0 || n%hugeSize != 0 || off+n > size || size-(off+n) >= hugeSize || off >= hugeSize {
				t.Errorf("addr %#x size %d: off %d n %d", addr, size, off, n)
			}
		}
	}
}

// TestAdviseHugeKeepsContents: advising written memory changes none of it.
func TestAdviseHugeKeepsContents(t *testing.T) {
	b := make([]byte, 5*hugeSize+333)
	for i := range b {
		b[i] = byte(i * 7)
	}
	AdviseHuge(unsafe.Pointer(&b[0]), uintptr(len(b)))
	for i := range b {
		if b[i] != byte(i*7) {
			t.Fatalf("byte %d changed", i)
		}
	}
}
