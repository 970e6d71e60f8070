package decode

import "math"

// ZUpToYUp rotates a right-handed Z-up vector into glTF's Y-up frame:
// (x, y, z) → (x, z, −y). It is a rotation, so winding and tangent
// handedness stay as they are.
func ZUpToYUp(v [3]float32) [3]float32 { return [3]float32{v[0], v[2], -v[1]} }

// NormalizeWeights keeps the four largest influences of a vertex and scales
// them so their float32 sum is 1 (glTF requires that within a small
// tolerance). Influences with zero weight get joint 0. A vertex with no
// positive weight gets joint 0 with full weight, so every vertex is bound.
func NormalizeWeights(joints []uint16, weights []float32) ([4]uint16, [4]float32) {
	type inf struct {
		j uint16
		w float32
	}
	var buf [8]inf
	infs := buf[:0]
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
	// Stable insertion sort, heaviest first: at most 8 elements, and
	// sort.SliceStable's reflection would allocate once per vertex.
	for i := 1; i < len(infs); i++ {
		for k := i; k > 0 && infs[k].w > infs[k-1].w; k-- {
			infs[k], infs[k-1] = infs[k-1], infs[k]
		}
	}
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
	// Put the float32 rounding residue on the largest weight so the sum is 1.
	ow[0] += 1 - acc
	return oj, ow
}

// Normalize3 returns v scaled to unit length, or (0, 1, 0) when v has no
// usable length (glTF requires unit normals; a zero normal is invalid).
func Normalize3(v [3]float32) [3]float32 {
	l := math.Sqrt(float64(v[0])*float64(v[0]) + float64(v[1])*float64(v[1]) + float64(v[2])*float64(v[2]))
	if !(l > 1e-12) || math.IsInf(l, 0) {
		return [3]float32{0, 1, 0}
	}
	return [3]float32{float32(float64(v[0]) / l), float32(float64(v[1]) / l), float32(float64(v[2]) / l)}
}

// Finite reports whether every component is a finite number.
func Finite(v ...float32) bool {
	for _, f := range v {
		// All exponent bits set is NaN or ±Inf: one test instead of two
		// float64 conversions (this runs once per vertex component).
		if math.Float32bits(f)&0x7f800000 == 0x7f800000 {
			return false
		}
	}
	return true
}
