package unigine

import (
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
// the scene is built, which copies from them and keeps none.
func release(f *File) {
	for i := range f.Surfaces {
		s := &f.Surfaces[i]
		indexScratch.put(s.CIndices)
		if !sameArray(s.TIndices, s.CIndices) { // one array for both (sameIndices): put once
			indexScratch.put(s.TIndices)
		}
		for k := range s.Targets {
			positionScratch.put(s.Targets[k].Positions)
			tangentQScratch.put(s.Targets[k].Tangents)
		}
		uvScratch.put(s.UV0)
		uvScratch.put(s.UV1)
		*s = Surface{}
	}
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
