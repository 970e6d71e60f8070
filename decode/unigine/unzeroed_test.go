package unigine

import (
	"context"
	"reflect"
	"testing"
)

// TestUnzeroedArraysAllWritten decodes large surfaces (every scene array
// above unzeroed's threshold) with the unzeroed arrays filled with garbage
// first and compares with a decode whose arrays were zeroed: an element
// read before being written, or left unwritten, would differ. The
// surfaces have every attribute the vertex fill writes (UVs, colours,
// weights, a morph target) and, in the second file, UV1 without UV0 (a
// set that must stay zero).
func TestUnzeroedArraysAllWritten(t *testing.T) {
	withAll := func(uv0 bool) *File {
		f := bigGridFile(MagicSK10, 100) // 10 000 vertices: 80 kB of UVs
		s := &f.Surfaces[0]
		n := len(s.Targets[0].Positions)
		s.UV1 = make([][2]float32, n)
		s.Colors = make([][4]uint8, n)
		s.Weights = make([][]Influence, n)
		for i := range n {
			s.UV1[i] = [2]float32{float32(i%7) / 7, float32(i%11) / 11}
			s.Colors[i] = [4]uint8{uint8(i), uint8(i >> 8), 200, 255}
			s.Weights[i] = []Influence{{Joint: 0, Weight: 65535}}
		}
		if !uv0 {
			s.UV0 = nil
		}
		morph := Target{Name: "lift", Positions: append([][3]float32(nil), s.Targets[0].Positions...)}
		for i := range morph.Positions {
			morph.Positions[i][2] += 0.5
		}
		s.Targets = append(s.Targets, morph)
		return f
	}
	for _, uv0 := range []bool{true, false} {
		b, err := Encode(withAll(uv0))
		if err != nil {
			t.Fatal(err)
		}
		poisonHook = func(p []byte) { clear(p) } // the reference: zeroed arrays
		want, err := Format{}.Decode(context.Background(), memSource("z.mesh_skinned", b))
		poisonHook = nil
		if err != nil {
			t.Fatal(err)
		}
		poisoned := 0
		poisonHook = func(p []byte) {
			poisoned++
			for i := range p {
				p[i] = 0xa5
			}
		}
		got, err := Format{}.Decode(context.Background(), memSource("z.mesh_skinned", b))
		poisonHook = nil
		if err != nil {
			t.Fatal(err)
		}
		if poisoned < 6 {
			t.Fatalf("uv0 %v: only %d arrays went through unzeroed; the surface is too small for the test", uv0, poisoned)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("uv0 %v: the scene depends on the unzeroed arrays' prior contents", uv0)
		}
	}
}
