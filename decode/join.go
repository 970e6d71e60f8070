package decode

import (
	"math"
	"unsafe"
)

// JoinByValue merges the vertices of p whose attributes are all bit-equal
// (every float compared by its bits, so −0 and +0 differ and a NaN equals
// only the same NaN): corners that look the same share one vertex. The kept
// vertices stay in their order, each class numbered by its first member, so
// the result is deterministic. It returns the number of vertices removed.
func (p *Primitive) JoinByValue() int {
	n := len(p.Positions)
	if n < 2 {
		return 0
	}
	h := make([]uint64, n)
	mix := func(v int, w uint32) { h[v] = (h[v] ^ uint64(w)) * 0x9e3779b97f4a7c15 }
	hashWords(h, words3(p.Positions), 3, mix)
	hashWords(h, words3(p.Normals), 3, mix)
	hashWords(h, words4(p.Tangents), 4, mix)
	for _, uv := range p.UVs {
		hashWords(h, words2(uv), 2, mix)
	}
	for _, c := range p.Colors {
		hashWords(h, words4(c), 4, mix)
	}
	if len(p.Joints) == n {
		for v, j := range p.Joints {
			mix(v, uint32(j[0])|uint32(j[1])<<16)
			mix(v, uint32(j[2])|uint32(j[3])<<16)
		}
	}
	hashWords(h, words4(p.Weights), 4, mix)
	for _, t := range p.Targets {
		hashWords(h, words3(t.Positions), 3, mix)
		hashWords(h, words3(t.Normals), 3, mix)
		hashWords(h, words3(t.Tangents), 3, mix)
	}

	bits := uint(1)
	for 1<<bits < 2*n {
		bits++
	}
	slots := make([]int32, 1<<bits) // vertex + 1; 0 is empty
	mask := uint64(len(slots) - 1)
	newOf := make([]uint32, n)
	keep := make([]int, 0, n)
	for v := range n {
		s := (h[v] ^ h[v]>>29) & mask
		for {
			e := slots[s]
			if e == 0 {
				slots[s] = int32(v + 1)
				newOf[v] = uint32(len(keep))
				keep = append(keep, v)
				break
			}
			if u := int(e - 1); h[u] == h[v] && p.sameVertex(u, v) {
				newOf[v] = newOf[u]
				break
			}
			s = (s + 1) & mask
		}
	}
	removed := n - len(keep)
	if removed == 0 {
		return 0
	}
	for i, x := range p.Indices {
		if int(x) < n {
			p.Indices[i] = newOf[x]
		}
	}
	p.keepVertices(keep)
	return removed
}

// hashWords mixes the words of each vertex's element (w words each) into
// its hash; an attribute that is absent or of the wrong length is skipped.
func hashWords(h []uint64, words []uint32, w int, mix func(v int, x uint32)) {
	if len(words) != w*len(h) {
		return
	}
	for v := range h {
		for _, x := range words[v*w : v*w+w] {
			mix(v, x)
		}
	}
}

// sameVertex reports whether vertices u and v have bit-equal attributes.
func (p *Primitive) sameVertex(u, v int) bool {
	if !sameWords(words3(p.Positions), 3, u, v) || !sameWords(words3(p.Normals), 3, u, v) ||
		!sameWords(words4(p.Tangents), 4, u, v) || !sameWords(words4(p.Weights), 4, u, v) {
		return false
	}
	if len(p.Joints) > max(u, v) && p.Joints[u] != p.Joints[v] {
		return false
	}
	for _, uv := range p.UVs {
		if !sameWords(words2(uv), 2, u, v) {
			return false
		}
	}
	for _, c := range p.Colors {
		if !sameWords(words4(c), 4, u, v) {
			return false
		}
	}
	for _, t := range p.Targets {
		if !sameWords(words3(t.Positions), 3, u, v) || !sameWords(words3(t.Normals), 3, u, v) ||
			!sameWords(words3(t.Tangents), 3, u, v) {
			return false
		}
	}
	return true
}

func sameWords(words []uint32, w, u, v int) bool {
	if len(words) < w*(max(u, v)+1) {
		return true
	}
	for k := range w {
		if words[u*w+k] != words[v*w+k] {
			return false
		}
	}
	return true
}

// words2, words3 and words4 view float arrays as their bits.
func words2(s [][2]float32) []uint32 { return asWords(s, 2) }
func words3(s [][3]float32) []uint32 { return asWords(s, 3) }
func words4(s [][4]float32) []uint32 { return asWords(s, 4) }

func asWords[A [2]float32 | [3]float32 | [4]float32](s []A, w int) []uint32 {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(s))), w*len(s))
}

// keepVertices keeps only the vertices listed in keep (old numbers, in
// their new order) in every per-vertex attribute. Indices must already
// use the new numbers.
func (p *Primitive) keepVertices(keep []int) {
	n := len(p.Positions)
	p.Positions = gather(p.Positions, keep, n)
	p.Normals = gather(p.Normals, keep, n)
	p.Tangents = gather(p.Tangents, keep, n)
	for i := range p.UVs {
		p.UVs[i] = gather(p.UVs[i], keep, n)
	}
	for i := range p.Colors {
		p.Colors[i] = gather(p.Colors[i], keep, n)
	}
	p.Joints = gather(p.Joints, keep, n)
	p.Weights = gather(p.Weights, keep, n)
	for i := range p.Targets {
		t := &p.Targets[i]
		t.Positions = gather(t.Positions, keep, n)
		t.Normals = gather(t.Normals, keep, n)
		t.Tangents = gather(t.Tangents, keep, n)
	}
}

// gather returns s[keep[0]], s[keep[1]], … in a new slice; a slice that is
// not per-vertex (nil, or of another length) is returned as it is.
func gather[T any](s []T, keep []int, n int) []T {
	if len(s) != n {
		return s
	}
	out := make([]T, len(keep))
	for i, k := range keep {
		out[i] = s[k]
	}
	return out
}

// nonFinite32 reports whether f is NaN or ±Inf.
func nonFinite32(f float32) bool { return math.Float32bits(f)&0x7f800000 == 0x7f800000 }
