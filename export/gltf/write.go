package gltf

import (
	"encoding/binary"
	"math"
	"strings"
	"unsafe"

	"github.com/meshfs/meshfs/decode"
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

// writeIndices16 writes idx as 16-bit indices and returns the largest
// (the caller checks it against the vertex count): one pass, so each index
// is read from memory once.
func writeIndices16(d []byte, idx []uint32) uint32 {
	if w := view[uint16](d, len(idx)); w != nil {
		w = w[:len(idx)]
		var m0, m1 uint32
		i := 0
		for ; i+2 <= len(idx); i += 2 {
			q := idx[i : i+2 : i+2]
			e := w[i : i+2 : i+2]
			a, b := q[0], q[1]
			e[0], e[1] = uint16(a), uint16(b)
			m0, m1 = max(m0, a), max(m1, b)
		}
		if i < len(idx) {
			w[i] = uint16(idx[i])
			m0 = max(m0, idx[i])
		}
		return max(m0, m1)
	}
	for i, x := range idx {
		binary.LittleEndian.PutUint16(d[2*i:], uint16(x))
	}
	return maxIndexSerial(idx)
}

// writeIndices32 writes idx as 32-bit indices and returns the largest, in
// one pass (measured ≈ 10 % less CPU than a maximum pass and then a copy
// of the same range: the copy's reads hit the cache, but the stores and
// the loads of one loop overlap better). Four running maxima, as in
// maxIndexSerial.
func writeIndices32(d []byte, idx []uint32) uint32 {
	if w := view[uint32](d, len(idx)); w != nil {
		w = w[:len(idx)]
		var m0, m1, m2, m3 uint32
		i := 0
		for ; i+4 <= len(idx); i += 4 {
			q := idx[i : i+4 : i+4]
			e := w[i : i+4 : i+4]
			a, b, c, x := q[0], q[1], q[2], q[3]
			e[0], e[1], e[2], e[3] = a, b, c, x
			m0, m1, m2, m3 = max(m0, a), max(m1, b), max(m2, c), max(m3, x)
		}
		for ; i < len(idx); i++ {
			w[i] = idx[i]
			m0 = max(m0, idx[i])
		}
		return max(m0, m1, m2, m3)
	}
	for i, x := range idx {
		binary.LittleEndian.PutUint32(d[4*i:], x)
	}
	return maxIndexSerial(idx)
}

// finiteWords copies float32 bits, non-finite ones (all exponent bits
// set) as 0: fin on bits. Decoded data is nearly always all finite, so it
// first only checks, two words at a time, and then copies (the range is
// in cache by then); that is measured ≈ 40 % less CPU than the per-word
// loop, which is left for the ranges that do hold a NaN or ±Inf.
func finiteWords(w, src []uint32) {
	w = w[:len(src)]
	// An exponent of all ones plus one carries into the word's top bit,
	// and never beyond it, so both halves of a uint64 add at once.
	var bad uint64
	one := func(x uint32) { bad |= uint64((x & 0x7f800000) + 0x00800000) }
	rest := src
	if len(rest) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(rest)))%8 != 0 {
		one(rest[0]) // the pairs' loads are then aligned, on any CPU
		rest = rest[1:]
	}
	if len(rest) >= 2 {
		pairs := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(rest))), len(rest)/2)
		for _, x := range pairs {
			bad |= (x & 0x7f8000007f800000) + 0x0080000000800000
		}
	}
	if len(rest)%2 != 0 {
		one(rest[len(rest)-1])
	}
	if bad&0x8000000080000000 == 0 {
		copy(w, src)
		return
	}
	for i, x := range src {
		// keep is 0 (all zero bits) for a non-finite word, else all ones.
		keep := ((x&0x7f800000)+0x00800000)>>31 - 1
		w[i] = x & keep
	}
}

// floats returns the components of vs, arrays of N float32s, as one flat
// slice.
func floats[A [3]float32 | [4]float32](vs []A, n int) []float32 {
	if len(vs) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(vs))), n*len(vs))
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

// writeFinite3Known is writeFinite3 for data already known to be all
// finite (bounds3 said so): then fin changes nothing and a copy does.
func writeFinite3Known(d []byte, vs [][3]float32, finite bool) {
	if w := view[uint32](d, 3*len(vs)); w != nil && finite {
		copy(w, comps(vs, 3))
		return
	}
	writeFinite3(d, vs)
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

// unitWindow reports whether a squared length, computed in float64 from
// float32 components, is close enough to 1 that unit3 keeps the vector as
// it is. It is unit3's own test.
func unitWindow(l2 float64) bool { return l2 >= 1-4e-6 && l2 <= 1+4e-6 }

// surelyUnit is a cheaper test the fast loops below make first, on the
// squared length computed in float32 (no conversions): when it holds, so
// does unitWindow, so the vector is kept as unit3 would keep it. Each of
// the three products and two sums rounds by at most 2⁻²⁴ relative, so
// near 1 the float32 sum is within 3·10⁻⁷ of the exact one (the float64
// sum of exact products is within 10⁻¹⁵); and 1 ± 3.5·10⁻⁶ as float32 is
// within 6·10⁻⁸ of itself: |l2f − 1| ≤ 3.5·10⁻⁶ puts the exact |v|² within
// 3.9·10⁻⁶ of 1. When it fails, unitWindow decides (decoders hand over
// unit normals, so nearly never) and, outside it, decode.Normalize3.
func surelyUnit(l2f float32) bool { return l2f >= 1-3.5e-6 && l2f <= 1+3.5e-6 }

// writeUnit3 writes unit3 of each vector.
func writeUnit3(d []byte, vs [][3]float32) {
	if w := view[float32](d, 3*len(vs)); w != nil {
		src := floats(vs, 3)
		w = w[:len(src)]
		for i := 0; i+2 < len(src); i += 3 {
			x, y, z := src[i], src[i+1], src[i+2]
			if !surelyUnit(x*x+y*y+z*z) && !unitWindow(float64(x)*float64(x)+float64(y)*float64(y)+float64(z)*float64(z)) {
				u := decode.Normalize3([3]float32{x, y, z})
				x, y, z = u[0], u[1], u[2]
			}
			e := w[i : i+3 : i+3]
			e[0], e[1], e[2] = x, y, z
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
		src := floats(vs, 4)
		w = w[:len(src)]
		for i := 0; i+3 < len(src); i += 4 {
			s := src[i : i+4 : i+4]
			x, y, z := s[0], s[1], s[2]
			if !surelyUnit(x*x+y*y+z*z) && !unitWindow(float64(x)*float64(x)+float64(y)*float64(y)+float64(z)*float64(z)) {
				u := decode.Normalize3([3]float32{x, y, z})
				x, y, z = u[0], u[1], u[2]
			}
			tw := float32(1)
			if s[3] < 0 {
				tw = -1
			}
			e := w[i : i+4 : i+4]
			e[0], e[1], e[2], e[3] = x, y, z, tw
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
	if w := view[uint32](d, 4*len(vs)); w != nil {
		src := comps(vs, 4)
		w = w[:len(src)]
		// +0 up to 1 are the bit patterns 0 to 0x3f800000: clamp01 keeps
		// those, and decoded colours nearly always are. As in finiteWords,
		// check the range first (four running maxima), then copy it.
		var m0, m1, m2, m3 uint32
		for i := 0; i+3 < len(src); i += 4 {
			q := src[i : i+4 : i+4]
			m0, m1, m2, m3 = max(m0, q[0]), max(m1, q[1]), max(m2, q[2]), max(m3, q[3])
		}
		if max(m0, m1, m2, m3) <= 0x3f800000 {
			copy(w, src)
			return
		}
		for i, x := range src {
			// Anything else (negative, −0, above 1, NaN) goes through clamp01.
			if x > 0x3f800000 {
				x = math.Float32bits(clamp01(math.Float32frombits(x)))
			}
			w[i] = x
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

// newOutput returns a slice of n bytes whose contents are unspecified: the
// caller must write every one of them. make would zero them first, a
// pass over the whole .glb that glb's writes then repeat. A
// strings.Builder grown to n bytes holds memory allocated without zeroing
// (its bytes are only ever read after being written); the slice is made
// over that allocation, which Grow guarantees is at least n bytes. If a
// future Builder zeroed it, this would only be slower. The memory is not
// advised into huge pages: a huge page's fault takes a free 2 MiB block,
// which a virtual machine that reports free memory to its host has given
// back, and the host then faults it in again 4 KiB at a time (measured in
// a new daemon's first reads of a 1 M-triangle mesh: 2–3 times the CPU
// of the same memory in small pages).
func newOutput(n int) []byte {
	if n == 0 {
		return nil
	}
	var sb strings.Builder
	sb.Grow(n)
	sb.WriteByte(0) // a string of length 1: its data is the allocation's start
	return unsafe.Slice(unsafe.StringData(sb.String()), n)
}
