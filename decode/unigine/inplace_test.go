package unigine

import (
	"context"
	"reflect"
	"testing"
)

// TestInPlace: Decode's read takes the positions, tangent frames and UVs
// of a blocked file in place from the decompressed block (moving an
// unaligned array back over its count), and the scene it builds is the
// one built from arrays copied out (Read's), for several sizes (the
// counts' lengths change the arrays' alignment) and every blocked version.
func TestInPlace(t *testing.T) {
	for _, magic := range []string{MagicMS15, MagicMS14, MagicSK10} {
		for _, n := range []int{3, 20, 90, 300} {
			src, err := Encode(bigGridFile(magic, n))
			if err != nil {
				t.Fatal(err)
			}
			copied, err := Read(context.Background(), memSource("g.mesh", src))
			if err != nil {
				t.Fatal(err)
			}
			want, err := Scene(copied, "g.mesh", "g")
			if err != nil {
				t.Fatal(err)
			}
			f, blocks, err := read(context.Background(), memSource("g.mesh", src), false, true)
			if err != nil {
				t.Fatal(err)
			}
			s := &f.Surfaces[0]
			if blocks[0] == nil {
				t.Fatalf("%s %d: no array read in place", magic, n)
			}
			block := blocks[0].raw
			inPlace := 0
			for _, ok := range []bool{within(s.Targets[0].Positions, block), within(s.Targets[0].Tangents, block), within(s.UV0, block)} {
				if ok {
					inPlace++
				}
			}
			if !reflect.DeepEqual(s.Targets, copied.Surfaces[0].Targets) || !reflect.DeepEqual(s.UV0, copied.Surfaces[0].UV0) {
				t.Errorf("%s %d: the arrays read in place differ from the copied ones", magic, n)
			}
			got, err := Scene(f, "g.mesh", "g")
			release(f, blocks)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %d: the scene differs from the one built from copies", magic, n)
			}
			if inPlace != 3 {
				t.Errorf("%s %d: %d of the 3 arrays read in place", magic, n, inPlace)
			}
		}
	}
}
