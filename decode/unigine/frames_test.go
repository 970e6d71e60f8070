package unigine

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// TestFrameVectorsBits: frameVectors, written out for speed, gives the
// very bits of the plain composition frame → yup → decode.Normalize3 for
// random quaternions of every magnitude, the zero quaternion (no frame)
// and negative w (bitangent sign), signed zeros included.
func TestFrameVectorsBits(t *testing.T) {
	bitsOf := func(v ...float32) (o [4]uint32) {
		for i, f := range v {
			o[i] = math.Float32bits(f)
		}
		return o
	}
	check := func(q [4]int16) {
		t.Helper()
		gotN, gotT := frameVectors(q)
		n, tg, sign := frame(q)
		wantN, tt := decode.Normalize3(yup(n)), decode.Normalize3(yup(tg))
		wantT := [4]float32{tt[0], tt[1], tt[2], sign}
		if bitsOf(gotN[:]...) != bitsOf(wantN[:]...) || bitsOf(gotT[:]...) != bitsOf(wantT[:]...) {
			t.Fatalf("%v: got %v %v, want %v %v", q, gotN, gotT, wantN, wantT)
		}
	}
	for _, q := range [][4]int16{{}, {0, 0, 0, -1}, {0, 0, 0, 32767}, {32767, 0, 0, 0}, {0, 0, 0, -32767}, {-32767, -32767, -32767, -32767}, {1, 0, 0, 0}} {
		check(q)
	}
	rng := rand.New(rand.NewPCG(1, 3))
	for range 200000 {
		var q [4]int16
		for k := range q {
			q[k] = int16(rng.IntN(65535) - 32767)
		}
		check(q)
		for k := range q {
			q[k] >>= rng.IntN(16) // small and zero components too
		}
		check(q)
	}
}

// BenchmarkFrameVectors decodes 65 536 random tangent frames.
func BenchmarkFrameVectors(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	qs := make([][4]int16, 1<<16)
	for i := range qs {
		for k := range qs[i] {
			qs[i][k] = int16(rng.IntN(65535) - 32767)
		}
	}
	ns := make([][3]float32, len(qs))
	ts := make([][4]float32, len(qs))
	for b.Loop() {
		for i, q := range qs {
			ns[i], ts[i] = frameVectors(q)
		}
	}
}
