package gltf

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// TestWritersFallback: each writer gives the same bytes through its view
// of the chunk (aligned destination) as through its per-component
// fallback (a destination one byte off, as a big-endian host would get
// for every destination), for data full of NaN, ±Inf, −0 and values out
// of range; and those bytes are the little-endian encoding of what the
// scalar helpers (fin, unit3, clamp01, the tangent w rule) say.
func TestWritersFallback(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	f := func() float32 {
		switch r.IntN(8) {
		case 0:
			return float32(math.NaN())
		case 1:
			return float32(math.Inf(1 - 2*r.IntN(2)))
		case 2:
			return float32(math.Copysign(0, -1))
		case 3:
			return 1
		}
		return float32(r.NormFloat64() * 3)
	}
	const n = 1001
	v2, v3, v4 := make([][2]float32, n), make([][3]float32, n), make([][4]float32, n)
	idx := make([]uint32, n)
	for i := range n {
		v2[i] = [2]float32{f(), f()}
		v3[i] = [3]float32{f(), f(), f()}
		v4[i] = [4]float32{f(), f(), f(), f()}
		idx[i] = r.Uint32()
	}
	le := func(vals ...float32) []byte {
		var out []byte
		for _, v := range vals {
			out = append(out, 0, 0, 0, 0)
			putF(out[len(out)-4:], v)
		}
		return out
	}
	var want2, want3, wantU, want4, wantT, want16, want32 []byte
	for i := range n {
		want2 = append(want2, le(fin(v2[i][0]), fin(v2[i][1]))...)
		want3 = append(want3, le(fin(v3[i][0]), fin(v3[i][1]), fin(v3[i][2]))...)
		u := unit3(v3[i])
		wantU = append(wantU, le(u[0], u[1], u[2])...)
		want4 = append(want4, le(clamp01(v4[i][0]), clamp01(v4[i][1]), clamp01(v4[i][2]), clamp01(v4[i][3]))...)
		t := unit3([3]float32{v4[i][0], v4[i][1], v4[i][2]})
		sign := float32(1)
		if v4[i][3] < 0 {
			sign = -1
		}
		wantT = append(wantT, le(t[0], t[1], t[2], sign)...)
		want16 = append(want16, byte(idx[i]), byte(idx[i]>>8))
		want32 = append(want32, byte(idx[i]), byte(idx[i]>>8), byte(idx[i]>>16), byte(idx[i]>>24))
	}
	for _, c := range []struct {
		name  string
		size  int
		write func([]byte)
		want  []byte
	}{
		{"finite2", 8, func(d []byte) { writeFinite2(d, v2) }, want2},
		{"finite3", 12, func(d []byte) { writeFinite3(d, v3) }, want3},
		{"unit3", 12, func(d []byte) { writeUnit3(d, v3) }, wantU},
		{"clamped4", 16, func(d []byte) { writeClamped4(d, v4) }, want4},
		{"tangents", 16, func(d []byte) { writeTangents(d, v4) }, wantT},
		{"indices16", 2, func(d []byte) { writeIndices16(d, idx) }, want16},
		{"indices32", 4, func(d []byte) { writeIndices32(d, idx) }, want32},
	} {
		for _, shift := range []int{0, 1} {
			buf := make([]byte, c.size*n+8)
			d := buf[shift : shift+c.size*n]
			if shift == 0 && hostLE && view[uint16](d, 1) == nil {
				t.Fatalf("%s: no view of an aligned destination on a little-endian host", c.name)
			}
			if shift == 1 && view[uint32](d, 1) != nil {
				t.Fatalf("%s: a view of a destination one byte off", c.name)
			}
			c.write(d)
			if !bytes.Equal(d, c.want) {
				t.Errorf("%s, destination offset %d: bytes differ from the scalar encoding", c.name, shift)
			}
		}
	}
}
