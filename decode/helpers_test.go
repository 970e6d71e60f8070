package decode

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// TestFinite checks the bit test against math.IsNaN/IsInf on the edge
// values: infinities, quiet and signalling NaNs, the largest finite values
// and subnormals.
func TestFinite(t *testing.T) {
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1, math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		math.Float32frombits(0x7f800001), math.Float32frombits(0xffc00000), math.Float32frombits(0x7f7fffff)}
	for _, v := range vals {
		want := !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0)
		if got := Finite(v); got != want {
			t.Errorf("Finite(%v [%#x]) = %v, want %v", v, math.Float32bits(v), got, want)
		}
		if got := Finite(1, v, 2); got != want {
			t.Errorf("Finite(1, %v, 2) = %v, want %v", v, got, want)
		}
	}
	if !Finite() {
		t.Error("Finite() = false")
	}
}

// refNormalizeWeights is NormalizeWeights as first written, with
// sort.SliceStable: the reference for the insertion sort.
func refNormalizeWeights(joints []uint16, weights []float32) ([4]uint16, [4]float32) {
	type inf struct {
		j uint16
		w float32
	}
	var infs []inf
	for i := range joints {
		if i >= len(weights) {
			break
		}
		w := weights[i]
		if !(w > 0) || math.IsInf(float64(w), 0) {
			continue
		}
		merged := false
		for k := range infs {
			if infs[k].j == joints[i] {
				infs[k].w += w
				merged = true
				break
			}
		}
		if !merged {
			infs = append(infs, inf{joints[i], w})
		}
	}
	var oj [4]uint16
	var ow [4]float32
	if len(infs) == 0 {
		ow[0] = 1
		return oj, ow
	}
	sort.SliceStable(infs, func(a, b int) bool { return infs[a].w > infs[b].w })
	if len(infs) > 4 {
		infs = infs[:4]
	}
	var sum float64
	for _, in := range infs {
		sum += float64(in.w)
	}
	var acc float32
	for i, in := range infs {
		oj[i] = in.j
		ow[i] = float32(float64(in.w) / sum)
		acc += ow[i]
	}
	ow[0] += 1 - acc
	return oj, ow
}

// TestNormalizeWeightsMatchesStableSort: random influence lists with ties,
// repeated joints, zero, negative and non-finite weights, up to 12 long.
func TestNormalizeWeightsMatchesStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	special := []float32{0, -1, 0.25, 0.5, 1, float32(math.Inf(1)), float32(math.NaN())}
	for range 20000 {
		n := rng.IntN(13)
		js := make([]uint16, n)
		ws := make([]float32, n)
		for i := range n {
			js[i] = uint16(rng.IntN(6))
			if rng.IntN(3) == 0 {
				ws[i] = special[rng.IntN(len(special))]
			} else {
				ws[i] = float32(rng.IntN(5)) / 4 // ties are common
			}
		}
		gj, gw := NormalizeWeights(js, ws)
		wj, ww := refNormalizeWeights(js, ws)
		if gj != wj || math.Float32bits(gw[0]) != math.Float32bits(ww[0]) || gw != ww {
			t.Fatalf("NormalizeWeights(%v, %v) = %v %v, want %v %v", js, ws, gj, gw, wj, ww)
		}
	}
}
