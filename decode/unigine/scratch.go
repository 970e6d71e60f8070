package unigine

import (
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
	return make([]T, n)
}

func (s *scratch[T]) put(b []T) {
	var zero T
	if cap(b) > 0 && uintptr(cap(b))*unsafe.Sizeof(zero) <= maxPooled {
		s.p.Put(&b)
	}
}

var (
	indexScratch   scratch[uint32]     // coordinate and triangle indices
	normalScratch  scratch[[3]float32] // frame table: normals
	tangentScratch scratch[[4]float32] // frame table: tangents
)

// release returns f's index arrays to indexScratch: Decode calls it once
// the scene is built, which keeps none of them.
func release(f *File) {
	for i := range f.Surfaces {
		s := &f.Surfaces[i]
		indexScratch.put(s.CIndices)
		indexScratch.put(s.TIndices)
		s.CIndices, s.TIndices = nil, nil
	}
}
