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
	if n < 2 || n > math.MaxUint32-1 {
		return 0
	}
	// Every vertex's hash, attribute by attribute (each a tight loop over
	// one array).
	h := make([]uint64, n)
	mixWords(h, words3(p.Positions), 3)
	mixWords(h, words3(p.Normals), 3)
	mixWords(h, words4(p.Tangents), 4)
	for _, uv := range p.UVs {
		mixWords(h, words2(uv), 2)
	}
	for _, c := range p.Colors {
		mixWords(h, words4(c), 4)
	}
	if len(p.Joints) == n {
		for v, j := range p.Joints {
			h[v] = (h[v] ^ (uint64(j[0]) | uint64(j[1])<<16 | uint64(j[2])<<32 | uint64(j[3])<<48)) * hashMul
		}
	}
	mixWords(h, words4(p.Weights), 4)
	for _, t := range p.Targets {
		mixWords(h, words3(t.Positions), 3)
		mixWords(h, words3(t.Normals), 3)
		mixWords(h, words3(t.Tangents), 3)
	}

	// An open-addressing table of the kept vertices; each slot holds the
	// vertex + 1 in its low half and its hash's high half in its high
	// half, so most probes are decided without reading another vertex.
	bits := uint(1)
	for 1<<bits < 2*n {
		bits++
	}
	slots := make([]uint64, 1<<bits)
	mask := uint64(len(slots) - 1)
	// newOf and keep are made at the first duplicate: until then every
	// vertex keeps its number.
	var newOf, keep []uint32
	for v := range n {
		hv := h[v]
		tag := hv &^ 0xffffffff
		s := (hv ^ hv>>29) & mask
		for {
			e := slots[s]
			if e == 0 {
				slots[s] = tag | uint64(v+1)
				if keep != nil {
					newOf[v] = uint32(len(keep))
					keep = append(keep, uint32(v))
				}
				break
			}
			if u := int(uint32(e)) - 1; e&^0xffffffff == tag && p.sameVertex(u, v) {
				if keep == nil {
					newOf = make([]uint32, n)
					keep = make([]uint32, v, n)
					for k := range v {
						newOf[k], keep[k] = uint32(k), uint32(k)
					}
				}
				newOf[v] = newOf[u]
				break
			}
			s = (s + 1) & mask
		}
	}
	if keep == nil {
		return 0
	}
	for i, x := range p.Indices {
		if int(x) < n {
			p.Indices[i] = newOf[x]
		}
	}
	p.keepVertices(keep)
	return n - len(keep)
}

// hashMul is the 64-bit golden-ratio multiplier of the vertex hash.
const hashMul = 0x9e3779b97f4a7c15

// mixWords mixes the words of each vertex's element (w words each, 2 to
// 4) into its hash, two words per multiplication; an attribute that is
// absent or of the wrong length is skipped.
func mixWords(h []uint64, words []uint32, w int) {
	if len(words) != w*len(h) {
		return
	}
	switch w {
	case 2:
		for v := range h {
			q := words[2*v : 2*v+2 : 2*v+2]
			h[v] = (h[v] ^ (uint64(q[0]) | uint64(q[1])<<32)) * hashMul
		}
	case 3:
		for v := range h {
			q := words[3*v : 3*v+3 : 3*v+3]
			x := (h[v] ^ (uint64(q[0]) | uint64(q[1])<<32)) * hashMul
			h[v] = (x ^ uint64(q[2])) * hashMul
		}
	case 4:
		for v := range h {
			q := words[4*v : 4*v+4 : 4*v+4]
			x := (h[v] ^ (uint64(q[0]) | uint64(q[1])<<32)) * hashMul
			h[v] = (x ^ (uint64(q[2]) | uint64(q[3])<<32)) * hashMul
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
func (p *Primitive) keepVertices(keep []uint32) {
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
func gather[T any](s []T, keep []uint32, n int) []T {
	if len(s) != n {
		return s
	}
	out := make([]T, len(keep))
	for i, k := range keep {
		out[i] = s[k]
	}
	return out
}
