package gem

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Element types: the low nibble of an SBM1/SUBM type_usage byte. The
// UBYTEnN types do not occur there: they describe GEM3 skin weights.
const (
	TypeFloat1 = 0
	TypeFloat2 = 1
	TypeFloat3 = 2
	TypeFloat4 = 3
	TypeShort2 = 4 // two int16, not normalised (Direct3D SHORT2)
	TypeByte4  = 5 // four uint8, not normalised (Direct3D UBYTE4)
	TypeColor  = 6 // D3DCOLOR: bytes B, G, R, A
	TypeHalf4  = 7 // four IEEE half floats
	TypeByte4N = 8 // four uint8 / 255 (Direct3D UBYTE4N), in R, G, B, A order
)

const (
	typeUByte1N = 16 + iota // GEM3 skin weights: n × uint8 / 255
	typeUByte2N
	typeUByte3N
)

// Element usages: the high nibble of type_usage; usageWind and usagePSize
// come from GEM3 vertex_format and Direct3D FVF bits.
const (
	UsagePosition     = 0
	UsageNormal       = 1
	UsageColor        = 2
	UsageTexcoord     = 3
	UsageBlendWeight  = 4
	UsageBlendIndices = 5
	UsageTangent      = 6

	usageWind  = 16
	usagePSize = 17
)

var typeNames = map[int]string{
	TypeFloat1: "FLOAT1", TypeFloat2: "FLOAT2", TypeFloat3: "FLOAT3", TypeFloat4: "FLOAT4",
	TypeShort2: "SHORT2", TypeByte4: "BYTE4", TypeColor: "COLOR", TypeHalf4: "HALF4", TypeByte4N: "BYTE4N",
	typeUByte1N: "UBYTE1N", typeUByte2N: "UBYTE2N", typeUByte3N: "UBYTE3N",
}

var usageNames = map[int]string{
	UsagePosition: "POSITION", UsageNormal: "NORMAL", UsageColor: "COLOR", UsageTexcoord: "TEXCOORD",
	UsageBlendWeight: "BLENDWEIGHT", UsageBlendIndices: "BLENDINDICES", UsageTangent: "TANGENT",
	usageWind: "WIND", usagePSize: "PSIZE",
}

// typeSize is the byte size of each element type (0: unknown type).
func typeSize(t int) int {
	switch t {
	case TypeFloat1, TypeShort2, TypeByte4, TypeColor, TypeByte4N:
		return 4
	case TypeFloat2, TypeHalf4:
		return 8
	case TypeFloat3:
		return 12
	case TypeFloat4:
		return 16
	case typeUByte1N:
		return 1
	case typeUByte2N:
		return 2
	case typeUByte3N:
		return 3
	}
	return 0
}

// typeComps is the number of components an element type decodes to.
func typeComps(t int) int {
	switch t {
	case TypeFloat1, typeUByte1N:
		return 1
	case TypeFloat2, TypeShort2, typeUByte2N:
		return 2
	case TypeFloat3, typeUByte3N:
		return 3
	}
	return 4
}

// attr is one element of a computed vertex layout.
type attr struct {
	Usage, Index, Type int
	Offset             int
	// Slot numbers the UV or colour sets densely in usage-index order: a
	// declaration may use index 255 alone, which must not make 256 sets.
	Slot int
}

// layout is a submesh's vertex layout. Size is the computed size, which
// may be less than VERT's vertex_size: vertex_size is authoritative and the
// bytes past Size are extra data (tangents in MESH files, padding in maps).
type layout struct {
	Attrs []attr
	Size  int
	// Tangent16 is set when a MESH's tangents were found in the 16 bytes
	// that vertex_size has beyond the fvf layout.
	Tangent16 bool
	// UnknownFVF holds fvf bits this decoder does not interpret.
	UnknownFVF uint32
}

func (l *layout) add(usage, index, typ int) {
	l.Attrs = append(l.Attrs, attr{Usage: usage, Index: index, Type: typ, Offset: l.Size})
	l.Size += typeSize(typ)
}

func (l *layout) has(usage int) bool {
	for _, a := range l.Attrs {
		if a.Usage == usage {
			return true
		}
	}
	return false
}

// count is the number of elements of the given usage and usage index.
func (l *layout) count(usage, index int) int {
	n := 0
	for _, a := range l.Attrs {
		if a.Usage == usage && a.Index == index {
			n++
		}
	}
	return n
}

// uvCount is the number of UV sets of the layout.
func (l *layout) uvCount() int { return l.sets(UsageTexcoord) }

// colorCount is the number of colour sets of the layout.
func (l *layout) colorCount() int { return l.sets(UsageColor) }

func (l *layout) sets(usage int) int {
	n := 0
	for _, a := range l.Attrs {
		if a.Usage == usage {
			n = max(n, a.Slot+1)
		}
	}
	return n
}

// slots assigns each UV and colour element its dense set number.
func (l *layout) slots() {
	for _, usage := range []int{UsageTexcoord, UsageColor} {
		var used [256]bool
		for _, a := range l.Attrs {
			if a.Usage == usage && a.Index < len(used) {
				used[a.Index] = true
			}
		}
		var rank [256]int
		n := 0
		for i, u := range used {
			if u {
				rank[i] = n
				n++
			}
		}
		for k := range l.Attrs {
			if a := &l.Attrs[k]; a.Usage == usage && a.Index < len(rank) {
				a.Slot = rank[a.Index]
			}
		}
	}
}

// fvfKnown are the fvf bits fvfLayout interprets.
const fvfKnown = 0xE | 0x10 | 0x20 | 0x40 | 0x80 | 0xF00 | 0x1000

// fvfLayout follows Direct3D's FVF rules: position (XYZ, XYZRHW or XYZBn
// with n blend "betas"), blend data, normal, point size, diffuse and
// specular D3DCOLOR, then ((fvf>>8)&0xF) float2 UV sets.
func fvfLayout(fvf uint32) layout {
	var l layout
	betas := 0
	switch fvf & 0xE {
	case 0x2:
		l.add(UsagePosition, 0, TypeFloat3)
	case 0x4: // XYZRHW: the fourth float is a reciprocal w, not geometry
		l.add(UsagePosition, 0, TypeFloat4)
	case 0x6, 0x8, 0xA, 0xC, 0xE:
		l.add(UsagePosition, 0, TypeFloat3)
		betas = int(fvf&0xE-0x4) / 2
	}
	if betas > 0 {
		weights := betas
		if fvf&0x1000 != 0 { // LASTBETA_UBYTE4: the last beta holds 4 bone indices
			weights--
		}
		for i := 0; i < weights; i++ {
			l.add(UsageBlendWeight, i, TypeFloat1)
		}
		if fvf&0x1000 != 0 {
			l.add(UsageBlendIndices, 0, TypeByte4)
		}
	}
	if fvf&0x10 != 0 {
		l.add(UsageNormal, 0, TypeFloat3)
	}
	if fvf&0x20 != 0 {
		l.add(usagePSize, 0, TypeFloat1)
	}
	if fvf&0x40 != 0 {
		l.add(UsageColor, 0, TypeColor)
	}
	if fvf&0x80 != 0 {
		l.add(UsageColor, 1, TypeColor)
	}
	for i := 0; i < int(fvf>>8&0xF); i++ {
		l.add(UsageTexcoord, i, TypeFloat2)
	}
	l.UnknownFVF = fvf &^ fvfKnown
	return l
}

// gem3Layout follows the GEM3 vertex_format bits in bit order (the order
// is open: no real PM01 file is known). Decision for the skin bits, which
// the original text gives only as "uint8 / uint8[2] / uint8[3]": those are
// n−1 UNORM8 weights of n bones (the last weight is 1 − the others, as in
// Direct3D), and since bone indices must live somewhere, a uint8[4] of
// indices into the SUBM bone map follows them.
func gem3Layout(vf uint16) layout {
	var l layout
	if vf&0x1 != 0 {
		l.add(UsagePosition, 0, TypeFloat3)
	}
	if vf&0x2 != 0 {
		l.add(UsageNormal, 0, TypeFloat3)
	}
	if vf&0x4 != 0 {
		l.add(UsageColor, 0, TypeByte4N) // "rgba" in the original
	}
	if vf&0x8 != 0 {
		l.add(UsageColor, 1, TypeByte4N)
	}
	for i := 0; i < 4; i++ {
		if vf&(0x10<<i) != 0 {
			l.add(UsageTexcoord, i, TypeFloat2)
		}
	}
	if vf&0x100 != 0 {
		l.add(UsageTangent, 0, TypeFloat4)
	}
	switch vf & 0x600 {
	case 0x200:
		l.add(UsageBlendWeight, 0, typeUByte1N)
		l.add(UsageBlendIndices, 0, TypeByte4)
	case 0x400:
		l.add(UsageBlendWeight, 0, typeUByte2N)
		l.add(UsageBlendIndices, 0, TypeByte4)
	case 0x600:
		l.add(UsageBlendWeight, 0, typeUByte3N)
		l.add(UsageBlendIndices, 0, TypeByte4)
	}
	if vf&0x800 != 0 {
		l.add(usageWind, 0, TypeFloat1)
	}
	if vf&0xF000 != 0 {
		l.UnknownFVF = uint32(vf & 0xF000)
	}
	return l
}

// elementLayout lays out an SBM1/SUBM-AS2 declaration: elements follow one
// another in declaration order. It fails on a type or usage the format
// does not define.
func elementLayout(els []Element) (layout, error) {
	var l layout
	for i, e := range els {
		t, u := int(e.TypeUsage&0xF), int(e.TypeUsage>>4)
		if t > TypeByte4N {
			return l, fmt.Errorf("element %d: unknown type %d in type_usage 0x%02x", i, t, e.TypeUsage)
		}
		if u > UsageTangent {
			return l, fmt.Errorf("element %d: unknown usage %d in type_usage 0x%02x", i, u, e.TypeUsage)
		}
		if e.Stream != 0 {
			return l, fmt.Errorf("element %d: stream_index %d, but a file has one vertex stream", i, e.Stream)
		}
		l.add(u, int(e.UsageIndex), t)
	}
	return l, nil
}

// layoutOf computes a submesh's layout, applying the MESH tangent rule:
// when vertex_size exceeds the fvf layout by exactly 16 bytes, a float3
// tangent and a float sign follow (real files: panhard antenn1).
func layoutOf(s *Submesh, vertexSize int) (l layout, err error) {
	defer l.slots()
	switch s.Kind {
	case KindMESH:
		l := fvfLayout(s.FVF)
		if vertexSize-l.Size == 16 && !l.has(UsageTangent) {
			l.add(UsageTangent, 0, TypeFloat4)
			l.Tangent16 = true
		}
		return l, nil
	case KindSUBMGEM3:
		return gem3Layout(s.VertexFormat), nil
	default:
		return elementLayout(s.Elements)
	}
}

// readElem decodes one element of type t from b (len(b) ≥ typeSize(t)).
// Colours come out as RGBA whatever their byte order in the file.
func readElem(t int, b []byte) (v [4]float32) {
	switch t {
	case TypeFloat1:
		v[0] = f32(b)
	case TypeFloat2:
		v[0], v[1] = f32(b), f32(b[4:])
	case TypeFloat3:
		v[0], v[1], v[2] = f32(b), f32(b[4:]), f32(b[8:])
	case TypeFloat4:
		v[0], v[1], v[2], v[3] = f32(b), f32(b[4:]), f32(b[8:]), f32(b[12:])
	case TypeShort2:
		v[0] = float32(int16(binary.LittleEndian.Uint16(b)))
		v[1] = float32(int16(binary.LittleEndian.Uint16(b[2:])))
	case TypeByte4:
		v = [4]float32{float32(b[0]), float32(b[1]), float32(b[2]), float32(b[3])}
	case TypeColor:
		v = [4]float32{float32(b[2]) / 255, float32(b[1]) / 255, float32(b[0]) / 255, float32(b[3]) / 255}
	case TypeByte4N:
		v = [4]float32{float32(b[0]) / 255, float32(b[1]) / 255, float32(b[2]) / 255, float32(b[3]) / 255}
	case TypeHalf4:
		for i := range 4 {
			v[i] = halfToFloat(binary.LittleEndian.Uint16(b[2*i:]))
		}
	case typeUByte1N, typeUByte2N, typeUByte3N:
		for i := range typeComps(t) {
			v[i] = float32(b[i]) / 255
		}
	}
	return v
}

// writeElem is readElem's inverse (up to the type's precision).
func writeElem(t int, v [4]float32, b []byte) {
	switch t {
	case TypeFloat1, TypeFloat2, TypeFloat3, TypeFloat4:
		for i := range typeComps(t) {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v[i]))
		}
	case TypeShort2:
		binary.LittleEndian.PutUint16(b, uint16(int16(clampRound(v[0], -32768, 32767))))
		binary.LittleEndian.PutUint16(b[2:], uint16(int16(clampRound(v[1], -32768, 32767))))
	case TypeByte4:
		for i := range 4 {
			b[i] = byte(clampRound(v[i], 0, 255))
		}
	case TypeColor:
		b[0], b[1], b[2], b[3] = unorm8(v[2]), unorm8(v[1]), unorm8(v[0]), unorm8(v[3])
	case TypeByte4N:
		for i := range 4 {
			b[i] = unorm8(v[i])
		}
	case TypeHalf4:
		for i := range 4 {
			binary.LittleEndian.PutUint16(b[2*i:], floatToHalf(v[i]))
		}
	case typeUByte1N, typeUByte2N, typeUByte3N:
		for i := range typeComps(t) {
			b[i] = unorm8(v[i])
		}
	}
}

func f32(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

func clampRound(v float32, lo, hi float64) float64 {
	f := math.Round(float64(v))
	if !(f >= lo) { // also NaN
		return lo
	}
	return math.Min(f, hi)
}

func unorm8(v float32) byte { return byte(clampRound(v*255, 0, 255)) }

// halfToFloat converts an IEEE 754 binary16 value.
func halfToFloat(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1F
	mant := uint32(h) & 0x3FF
	switch {
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: value = mant × 2^−24
		f := float32(mant) / (1 << 24)
		if sign != 0 {
			f = -f
		}
		return f
	case exp == 0x1F:
		return math.Float32frombits(sign | 0x7F800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

// floatToHalf converts to binary16 with round-to-nearest-even.
func floatToHalf(f float32) uint16 {
	bits := math.Float32bits(f)
	sign := uint16(bits>>16) & 0x8000
	exp := int(bits>>23&0xFF) - 127 + 15
	mant := bits & 0x7FFFFF
	switch {
	case bits&0x7FFFFFFF > 0x7F800000: // NaN
		return sign | 0x7E00
	case exp >= 0x1F: // overflow or Inf
		return sign | 0x7C00
	case exp <= 0: // subnormal or zero
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint(14 - exp)
		h := mant >> shift
		rem := mant & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp)<<10 | mant>>13
	rem := mant & 0x1FFF
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, which is the right result
	}
	return sign | uint16(h)
}
