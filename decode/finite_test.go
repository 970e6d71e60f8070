package decode

import (
	"math"
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
