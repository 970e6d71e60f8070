package gltf

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// The writers below put scene data into the binary chunk. glTF stores
// little-endian numbers, as the usual hosts do: there the chunk's bytes
// are viewed as the scene's own element types and filled with plain loads
// and stores (a bulk copy for 32-bit indices) instead of one PutUint32 per
// component. On a big-endian host, or for a destination that is not
// aligned (the builder aligns every view to 4 bytes, so that would be a
// bug elsewhere), the per-component fallback gives the same bytes.

// hostLE reports whether the host stores numbers little-endian.
var hostLE = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// view returns d as n elements of T when d may be written through such a
// view (little-endian host, d aligned for T and long enough), else nil.
func view[T uint16 | uint32 | float32](d []byte, n int) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if !hostLE || n == 0 || len(d) < n*size || uintptr(unsafe.Pointer(unsafe.SliceData(d)))%uintptr(size) != 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(d))), n)
}

// comps returns the components of vs, arrays of N float32s, as one flat
// slice of their bits.
func comps[A [2]float32 | [3]float32 | [4]float32](vs []A, n int) []uint32 {
	if len(vs) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(vs))), n*len(vs))
}

func writeIndices16(d []byte, idx []uint32) {
	if w := view[uint16](d, len(idx)); w != nil {
		for i, x := range idx {
			w[i] = uint16(x)
		}
		return
	}
	for i, x := range idx {
		binary.LittleEndian.PutUint16(d[2*i:], uint16(x))
	}
}

func writeIndices32(d []byte, idx []uint32) {
	if w := view[uint32](d, len(idx)); w != nil {
		copy(w, idx)
		return
	}
	for i, x := range idx {
		binary.LittleEndian.PutUint32(d[4*i:], x)
	}
}

// finiteWords copies float32 bits, non-finite ones (all exponent bits
// set) as 0: fin on bits.
func finiteWords(w, src []uint32) {
	w = w[:len(src)]
	for i, x := range src {
		if x&0x7f800000 == 0x7f800000 {
			x = 0
		}
		w[i] = x
	}
}

func writeFinite3(d []byte, vs [][3]float32) {
	if w := view[uint32](d, 3*len(vs)); w != nil {
		finiteWords(w, comps(vs, 3))
		return
	}
	d = d[:12*len(vs)]
	for i, v := range vs {
		put3(d[12*i:], [3]float32{fin(v[0]), fin(v[1]), fin(v[2])})
	}
}

func writeFinite2(d []byte, vs [][2]float32) {
	if w := view[uint32](d, 2*len(vs)); w != nil {
		finiteWords(w, comps(vs, 2))
		return
	}
	for i, v := range vs {
		putF(d[8*i:], fin(v[0]))
		putF(d[8*i+4:], fin(v[1]))
	}
}

// writeUnit3 writes unit3 of each vector.
func writeUnit3(d []byte, vs [][3]float32) {
	if w := view[float32](d, 3*len(vs)); w != nil {
		for i, v := range vs {
			u := unit3(v)
			e := w[3*i : 3*i+3 : 3*i+3]
			e[0], e[1], e[2] = u[0], u[1], u[2]
		}
		return
	}
	for i, v := range vs {
		put3(d[12*i:], unit3(v))
	}
}

// writeTangents writes tangents as glTF wants them: xyz through unit3,
// w ±1 (−1 for a negative w, 1 otherwise).
func writeTangents(d []byte, vs [][4]float32) {
	if w := view[float32](d, 4*len(vs)); w != nil {
		for i, v := range vs {
			u := unit3([3]float32{v[0], v[1], v[2]})
			e := w[4*i : 4*i+4 : 4*i+4]
			e[0], e[1], e[2], e[3] = u[0], u[1], u[2], 1
			if v[3] < 0 {
				e[3] = -1
			}
		}
		return
	}
	for i, v := range vs {
		xyz := unit3([3]float32{v[0], v[1], v[2]})
		w := float32(1)
		if v[3] < 0 {
			w = -1
		}
		e := d[16*i : 16*i+16]
		put3(e, xyz)
		putF(e[12:], w)
	}
}

// writeClamped4 writes colours with each component clamped to [0, 1].
func writeClamped4(d []byte, vs [][4]float32) {
	if w := view[float32](d, 4*len(vs)); w != nil {
		for i, v := range vs {
			e := w[4*i : 4*i+4 : 4*i+4]
			e[0], e[1], e[2], e[3] = clamp01(v[0]), clamp01(v[1]), clamp01(v[2]), clamp01(v[3])
		}
		return
	}
	for i, v := range vs {
		e := d[16*i : 16*i+16]
		putF(e[0:], clamp01(v[0]))
		putF(e[4:], clamp01(v[1]))
		putF(e[8:], clamp01(v[2]))
		putF(e[12:], clamp01(v[3]))
	}
}

func putF(b []byte, f float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(f)) }

func put3(b []byte, v [3]float32) {
	b = b[:12]
	binary.LittleEndian.PutUint32(b[0:], math.Float32bits(v[0]))
	binary.LittleEndian.PutUint32(b[4:], math.Float32bits(v[1]))
	binary.LittleEndian.PutUint32(b[8:], math.Float32bits(v[2]))
}
