package store

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"
)

// TestWriteParts: the file writeParts makes holds its parts in order,
// whatever their sizes and alignments: a big aligned part (written with
// O_DIRECT, its unaligned tail through the buffer) first, after a small
// part (the file offset then unaligned: buffered) and after an aligned
// run, a big part that does not start on a boundary of memory, small
// parts between.
func TestWriteParts(t *testing.T) {
	big := func(n int, seed byte) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7) ^ seed
		}
		return b
	}
	a := big(directMin+5000, 1) // not a multiple of directAlign
	if uintptr(unsafe.Pointer(&a[0]))%directAlign != 0 {
		t.Fatalf("a big allocation at %p is not aligned", &a[0])
	}
	b := big(directMin+directAlign, 2)
	c := big(directMin+100, 3)[1:] // unaligned in memory
	small := []byte("small part")
	for i, parts := range [][][]byte{
		{a},
		{a, small, b},
		{small, a},
		{b, a, c, small},
		{b[:directMin], b},
		{nil, small, nil},
	} {
		f, err := os.Create(filepath.Join(t.TempDir(), "f"))
		if err != nil {
			t.Fatal(err)
		}
		if err := writeParts(f, parts); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		f.Close()
		got, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		if want := bytes.Join(parts, nil); !bytes.Equal(got, want) {
			t.Errorf("%d: file of %d bytes differs from its %d bytes of parts", i, len(got), len(want))
		}
	}
}
