package gltf

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// refBounds3 is bounds3 as one sequential pass.
func refBounds3(vs [][3]float32) (mn, mx [3]float32) {
	lo := [3]float32{fin(vs[0][0]), fin(vs[0][1]), fin(vs[0][2])}
	hi := lo
	for _, v := range vs[1:] {
		for c := range 3 {
			x := fin(v[c])
			if x < lo[c] {
				lo[c] = x
			}
			if x > hi[c] {
				hi[c] = x
			}
		}
	}
	return lo, hi
}

// TestBoundsParallel: bounds over arrays long enough to split, full of
// zeros of both signs, NaN and infinities, are bit for bit the sequential
// pass's (which keeps the first of equal values: 0 before −0 or after).
func TestBoundsParallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rng := rand.New(rand.NewPCG(11, 12))
	negZero := float32(math.Copysign(0, -1))
	vals := []float32{0, negZero, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1, -1}
	for trial := range 30 {
		n := 1 + rng.IntN(200000)
		vs := make([][3]float32, n)
		for i := range vs {
			for c := range 3 {
				vs[i][c] = vals[rng.IntN(len(vals))]
				switch trial % 3 {
				case 0:
					vs[i][c] = vals[rng.IntN(3)] // only zeros and NaN: ties everywhere
				case 1:
					// Finite only (zeros of both signs among them): the fast loop's answer.
					vs[i][c] = vals[rng.IntN(2)]
					if rng.IntN(4) != 0 {
						vs[i][c] = float32(rng.NormFloat64())
					}
				}
			}
		}
		mn, mx, finite := bounds3(vs)
		wl, wh := refBounds3(vs)
		wantFinite := true
		for _, v := range vs {
			for _, x := range v {
				wantFinite = wantFinite && fin(x) == x
			}
		}
		if finite != wantFinite {
			t.Fatalf("trial %d: finite = %v, want %v", trial, finite, wantFinite)
		}
		for c := range 3 {
			if math.Float64bits(mn[c]) != math.Float64bits(float64(wl[c])) || math.Float64bits(mx[c]) != math.Float64bits(float64(wh[c])) {
				t.Fatalf("trial %d, %d vertices, component %d: bounds %v..%v, want %v..%v", trial, n, c, mn[c], mx[c], wl[c], wh[c])
			}
		}
		idx := make([]uint32, n)
		var want uint32
		for i := range idx {
			idx[i] = rng.Uint32() >> rng.IntN(32)
			want = max(want, idx[i])
		}
		if got := maxIndex(idx); got != want {
			t.Fatalf("maxIndex = %d, want %d", got, want)
		}
	}
}
