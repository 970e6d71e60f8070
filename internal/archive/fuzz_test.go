package archive

import (
	"bytes"
	"testing"
)

// FuzzOpen: any bytes list and read without a panic, a hang or an
// unclean name, and their listing survives MarshalBinary/UnmarshalBinary.
func FuzzOpen(f *testing.F) {
	f.Add(rawZip([]rawEntry{storedEntry("a/b.txt", []byte("hello")), deflatedEntry(f, "c.bin", bytes.Repeat([]byte("xy"), 300))}))
	f.Add(rawZip([]rawEntry{storedEntry("../x", nil), storedEntry("d/", nil)}))
	f.Add(zipFiles(f, map[string][]byte{"x/y.msh": []byte("data"), "z.txt": bytes.Repeat([]byte("z"), 1000)}, 0))
	f.Add([]byte("PK\x05\x06" + string(make([]byte, 18))))
	f.Fuzz(func(t *testing.T, data []byte) {
		var listed, read, refused int
		var worst float64
		if msg := hostileOne(variant{name: "fuzz.zip", data: data}, &listed, &read, &refused, &worst); msg != "" {
			t.Fatal(msg)
		}
	})
}
