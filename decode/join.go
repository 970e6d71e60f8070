package decode

import (
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"
)

// JoinByValue merges the vertices of p whose attributes are all bit-equal
// (every float compared by its bits, so −0 and +0 differ and a NaN equals
// only the same NaN): corners that look the same share one vertex. The kept
// vertices stay in their order, each class numbered by its first member, so
// the result is deterministic. It returns the number of vertices removed.
//
// The join is partitioned: the vertices are hashed (a sequential pass over
// each attribute), then split by the top bits of their hash into
// partitions of about joinPart vertices, kept in vertex order, and each
// partition is joined in its own small table (one that stays in the CPU's
// cache), on all CPUs. Equal vertices have equal hashes, so they always
// meet in one partition; no access strays over the whole vertex set.
func (p *Primitive) JoinByValue() int {
	removed, _ := p.joinByValue()
	return removed
}

// joinByValue is JoinByValue, also reporting whether p is sound (every
// position, normal, tangent and UV finite), learnt in the hashing pass.
func (p *Primitive) joinByValue() (removed int, sound bool) {
	n := len(p.Positions)
	if n < 2 || n > math.MaxUint32-1 {
		return 0, p.sound()
	}
	h, sound := p.vertexHashes()

	// pbits top bits of the hash choose the partition.
	pbits := 0
	for n>>pbits > joinPart && pbits < 8 {
		pbits++
	}
	parts := 1 << pbits
	ids, hs, start := partition(h, pbits)

	// Each partition reports its duplicates as (vertex, its class's first
	// member) pairs; a worker joins a run of partitions in one table.
	dups := make([][][2]uint32, parts)
	run := max(1, parts/(2*runtime.GOMAXPROCS(0)))
	join := func(lo, hi int) error {
		var slots []uint64
		for k := lo; k < hi; k++ {
			a, b := start[k], start[k+1]
			size := 1 << max(4, bits.Len(uint(2*(b-a))))
			if cap(slots) < size {
				slots = make([]uint64, size)
			} else {
				slots = slots[:size]
				clear(slots)
			}
			var vs []uint32
			if ids != nil {
				vs = ids[a:b]
			}
			dups[k] = p.joinPartition(slots, vs, hs[a:b])
		}
		return nil
	}
	if parts == 1 {
		join(0, 1)
	} else {
		_ = chunkedOn(runtime.GOMAXPROCS(0), parts, run, join)
	}

	total := 0
	for _, d := range dups {
		total += len(d)
	}
	if total == 0 {
		return 0, sound
	}
	// firstOf[v] is v's class's first member; classes are numbered in
	// the order of their first members.
	firstOf := make([]uint32, n)
	for v := range firstOf {
		firstOf[v] = uint32(v)
	}
	for _, d := range dups {
		for _, e := range d {
			firstOf[e[0]] = e[1]
		}
	}
	newOf := firstOf // rewritten in place: firstOf[v] ≤ v is numbered already
	keep := make([]uint32, 0, n-total)
	for v := range newOf {
		if u := newOf[v]; int(u) != v {
			newOf[v] = newOf[u]
			continue
		}
		newOf[v] = uint32(len(keep))
		keep = append(keep, uint32(v))
	}
	p.renumber(newOf, keep)
	return n - len(keep), sound
}

// joinPart is the number of vertices a partition of JoinByValue aims at:
// its table (two 8-byte slots a vertex) stays within a core's L2 cache.
const joinPart = 1 << 14

// vertexHashes is every vertex's hash over all its attributes, attribute
// by attribute (each a tight loop over one array), in ranges on all CPUs.
// sound is Primitive.sound's answer, from the same ranges while they are
// in the cache.
func (p *Primitive) vertexHashes() (h []uint64, sound bool) {
	n := len(p.Positions)
	// Not zeroed: the positions' pass writes every hash before any is
	// read. Memory fresh from the system that is read first maps the
	// shared zero page, and the write after it faults again to copy it
	// and flushes the other CPUs' TLBs.
	h = unzeroed64(n)
	var bad atomic.Bool
	_ = Parallel(n, func(lo, hi int) error {
		hr := h[lo:hi]
		pos := words3(p.Positions)[3*lo : 3*hi]
		for v := range hr {
			q := pos[3*v : 3*v+3 : 3*v+3]
			hr[v] = (uint64(q[0]) | uint64(q[1])<<32) * hashMul // mixWords' step from a zero hash
			hr[v] = (hr[v] ^ uint64(q[2])) * hashMul
		}
		if nonFiniteWords(pos) {
			bad.Store(true)
		}
		mix := func(words []uint32, w int) {
			if len(words) == w*n {
				mixWords(hr, words[w*lo:w*hi], w)
			}
		}
		// mixCheck is mix for an attribute sound tests.
		mixCheck := func(words []uint32, w int) {
			if len(words) == w*n {
				mixWords(hr, words[w*lo:w*hi], w)
				if nonFiniteWords(words[w*lo : w*hi]) {
					bad.Store(true)
				}
			}
		}
		mixCheck(words3(p.Normals), 3)
		mixCheck(words4(p.Tangents), 4)
		for _, uv := range p.UVs {
			mixCheck(words2(uv), 2)
		}
		for _, c := range p.Colors {
			mix(words4(c), 4)
		}
		if len(p.Joints) == n {
			for v, j := range p.Joints[lo:hi] {
				hr[v] = (hr[v] ^ (uint64(j[0]) | uint64(j[1])<<16 | uint64(j[2])<<32 | uint64(j[3])<<48)) * hashMul
			}
		}
		mix(words4(p.Weights), 4)
		for _, t := range p.Targets {
			mix(words3(t.Positions), 3)
			mix(words3(t.Normals), 3)
			mix(words3(t.Tangents), 3)
		}
		// A multiplication carries bits upwards only: without a final
		// mix, the low bits (the table slot) would see only the low
		// mantissa bits, which grid-like data has all zero.
		for v, x := range hr {
			x ^= x >> 33
			x *= 0xff51afd7ed558ccd
			x ^= x >> 33
			x *= 0xc4ceb9fe1a85ec53
			hr[v] = x ^ x>>33
		}
		return nil
	})
	// An attribute of another length is not hashed, but sound tests it.
	odd := func(words []uint32, w int) bool { return len(words) != w*n && nonFiniteWords(words) }
	if bad.Load() || odd(words3(p.Positions), 3) || odd(words3(p.Normals), 3) || odd(words4(p.Tangents), 4) {
		return h, false
	}
	for _, uv := range p.UVs {
		if odd(words2(uv), 2) {
			return h, false
		}
	}
	return h, true
}

// partition orders the vertices by the top pbits bits of their hashes h,
// each partition in vertex order: partition k is ids[start[k]:start[k+1]],
// hs the same vertices' hashes. With one partition ids is nil (the
// identity) and hs is h.
func partition(h []uint64, pbits int) (ids []uint32, hs []uint64, start []int) {
	if pbits == 0 {
		return nil, h, []int{0, len(h)}
	}
	shift := 64 - pbits
	start = make([]int, 1<<pbits+1)
	for _, x := range h {
		start[x>>shift+1]++
	}
	for k := 1; k < len(start); k++ {
		start[k] += start[k-1]
	}
	next := slices.Clone(start[:len(start)-1])
	ids = make([]uint32, len(h))
	hs = make([]uint64, len(h))
	for v, x := range h {
		k := x >> shift
		i := next[k]
		next[k]++
		ids[i], hs[i] = uint32(v), x
	}
	return ids, hs, start
}

// joinPartition joins the vertices ids (in increasing order; nil for all
// of them) whose hashes are hs, in the empty open-addressing table slots
// (a power of two, more than twice the vertices). Each slot holds the
// vertex + 1 in its low half and its hash's high half in its high half, so
// most probes are decided without reading another vertex. It returns each
// later member of a class with the class's first member.
func (p *Primitive) joinPartition(slots []uint64, ids []uint32, hs []uint64) [][2]uint32 {
	mask := uint64(len(slots) - 1)
	var dups [][2]uint32
	for i, hv := range hs {
		v := uint32(i)
		if ids != nil {
			v = ids[i]
		}
		tag := hv &^ 0xffffffff
		s := hv & mask
		for {
			e := slots[s]
			if e == 0 {
				slots[s] = tag | uint64(v+1)
				break
			}
			if u := uint32(e) - 1; e&^0xffffffff == tag && p.sameVertex(int(u), int(v)) {
				dups = append(dups, [2]uint32{v, u})
				break
			}
			s = (s + 1) & mask
		}
	}
	return dups
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

// renumber gives every index x its new number newOf[x] (an index out of
// range is left as it is) and keeps only the vertices listed in keep
// (keepVertices).
func (p *Primitive) renumber(newOf, keep []uint32) {
	n := len(p.Positions)
	for i, x := range p.Indices {
		if int(x) < n {
			p.Indices[i] = newOf[x]
		}
	}
	p.keepVertices(keep)
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

// unzeroed64 returns n uint64s whose contents are unspecified, for an
// array whose every element the caller writes before reading any: make
// zeroes memory the heap reuses (and leaves memory fresh from the system
// as it is, all zero), a pass the writes repeat. A strings.Builder grown
// to the byte size holds memory allocated without zeroing (as
// export/gltf's output); from 64 KiB on the allocation is page-aligned.
// If a future Builder zeroed its memory, this would only be slower.
func unzeroed64(n int) []uint64 {
	if n < 8<<10 {
		return make([]uint64, n)
	}
	var sb strings.Builder
	sb.Grow(8 * n)
	sb.WriteByte(0) // a string of length 1: its data is the allocation's start
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.StringData(sb.String()))), n)
}
