package unigine

import (
	"encoding/binary"
	"strings"
	"sync"
	"unsafe"
)

// scratch keeps large arrays of one element type between decodes: the
// index arrays of the raw model and the scene builder's frame table are
// only intermediates of Decode, tens of MB for a large mesh, which a fresh
// allocation would zero before they are overwritten anyway. get returns an
// array of n elements whose contents are stale: callers write every element
// before reading it. Only arrays nothing else refers to are put back.
type scratch[T any] struct{ p sync.Pool }

func (s *scratch[T]) get(n int) []T {
	if v, ok := s.p.Get().(*[]T); ok {
		if cap(*v) >= n {
			return (*v)[:n]
		}
		s.p.Put(v) // too small for this one; may fit another
	}
	return unzeroed[T](n) // stale contents are the contract anyway
}

func (s *scratch[T]) put(b []T) {
	var zero T
	if cap(b) > 0 && uintptr(cap(b))*unsafe.Sizeof(zero) <= maxPooled {
		s.p.Put(&b)
	}
}

var (
	indexScratch    scratch[uint32]     // indices; join's vertex pairs
	positionScratch scratch[[3]float32] // the raw model's positions
	tangentQScratch scratch[[4]int16]   // the raw model's tangent frames
	uvScratch       scratch[[2]float32] // the raw model's UVs
	normalScratch   scratch[[3]float32] // frame table: normals
	tangentScratch  scratch[[4]float32] // frame table: tangents
)

// release returns f's geometry arrays to the pools: Decode calls it once
// the scene is built, which copies from them and keeps none. Arrays read
// in place go back with their block's buffers (blocks, read's), the others
// to their pools.
func release(f *File, blocks []*blockBuffers) {
	for i := range f.Surfaces {
		s := &f.Surfaces[i]
		var bb *blockBuffers
		var block []byte
		if i < len(blocks) && blocks[i] != nil {
			bb = blocks[i]
			block = bb.raw
		}
		indexScratch.put(s.CIndices)
		if !sameArray(s.TIndices, s.CIndices) { // one array for both (sameIndices): put once
			indexScratch.put(s.TIndices)
		}
		for k := range s.Targets {
			if t := s.Targets[k]; !within(t.Positions, block) {
				positionScratch.put(t.Positions)
			}
			if t := s.Targets[k]; !within(t.Tangents, block) {
				tangentQScratch.put(t.Tangents)
			}
		}
		for _, uv := range [][][2]float32{s.UV0, s.UV1} {
			if !within(uv, block) {
				uvScratch.put(uv)
			}
		}
		if bb != nil {
			putBuffers(bb)
		}
		*s = Surface{}
	}
}

// usesBlock reports whether any of s's arrays was read in place from
// block.
func usesBlock(s *Surface, block []byte) bool {
	for _, t := range s.Targets {
		if within(t.Positions, block) || within(t.Tangents, block) {
			return true
		}
	}
	return within(s.UV0, block) || within(s.UV1, block)
}

// noZeroMin is the size from which unzeroed returns memory that is not
// zeroed first; below it make's zeroing costs next to nothing.
const noZeroMin = 64 << 10

// unzeroed returns n elements of a pointer-free type T whose contents are
// unspecified, for arrays the scene keeps (so they cannot come from a
// pool) and whose every element the caller writes before any is read:
// make would zero them first, a pass over tens of MB for a large mesh
// that the writes then repeat, on the goroutine that allocates (serial).
// A strings.Builder grown to the byte size holds memory allocated
// without zeroing (as export/gltf's output); the array is made over it:
// an allocation this large is page-aligned, enough for any T (not advised
// into huge pages: see export/gltf's newOutput). T must hold
// no pointers (the memory is a []byte's, which the collector does not
// scan). If a future Builder zeroed its memory, this would only be slower.
func unzeroed[T any](n int) []T {
	var zero T
	size := uintptr(n) * unsafe.Sizeof(zero)
	if size < noZeroMin {
		return make([]T, n)
	}
	var sb strings.Builder
	sb.Grow(int(size))
	sb.WriteByte(0) // a string of length 1: its data is the allocation's start
	p := unsafe.StringData(sb.String())
	if poisonHook != nil {
		poisonHook(unsafe.Slice(p, size))
	}
	return unsafe.Slice((*T)(unsafe.Pointer(p)), n)
}

// poisonHook, when set (by tests), is given the bytes of every array
// unzeroed returns, to fill with garbage: a result that changes shows an
// element read before it was written.
var poisonHook func([]byte)

// sameArray reports whether a and b start at the same element.
func sameArray(a, b []uint32) bool { return len(a) > 0 && len(b) > 0 && &a[0] == &b[0] }

// littleEndian reports whether this machine stores numbers as the files do.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// inPlace returns the n elements of T that b, the bytes r has just read,
// holds as the file stores them (little-endian fields, no padding) as an
// array over r's bytes themselves, when they outlive the parse
// (reader.inPlace) and this machine is little-endian; else nil, and the
// caller copies. An array that does not start aligned for T is first
// moved back by the few bytes that align it, over bytes already parsed
// (its count) that no array read in place covers (reader.kept). Such an
// array is a block's and never goes to a pool (release tells them
// apart); it saves the copy's fresh memory, tens of MB for a large mesh.
func inPlace[T [3]float32 | [4]int16 | [2]float32](r *reader, b []byte, n int) []T {
	var zero T
	if !r.inPlace || !littleEndian || n == 0 || uintptr(len(b)) != uintptr(n)*unsafe.Sizeof(zero) {
		return nil
	}
	end := r.pos // b is r.b[end-len(b):end]
	shift := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) % unsafe.Alignof(zero))
	if start := end - len(b); shift > 0 {
		if start-shift < r.kept {
			return nil
		}
		b = r.b[start-shift : end-shift]
		copy(b, r.b[start:end])
	}
	r.kept = end - shift
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// within reports whether the array starting at p lies in buf.
func within[T any](a []T, buf []byte) bool {
	if len(a) == 0 || len(buf) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	return p >= lo && p < lo+uintptr(len(buf))
}
