package unigine

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/meshfs/meshfs/decode"
	"github.com/pierrec/lz4/v4"
)

// Encode writes f in the version its Magic names (ms15, sk10, ms14, ms13,
// ms12, ms11 or ms10). ms10 keeps a tangent frame's
// x, y, z and the sign of w. A stream with a name list needs one of Anims
// per name. Counts are taken from the slices; index widths follow the vertex
// counts as the reader expects. A surface's blocks are LZ4-compressed
// unless Stored is set or compression does not shrink them. It exists to
// make fixtures and round-trip tests: it checks only what it needs to write
// a file the reader accepts.
func Encode(f *File) ([]byte, error) {
	lay, ok := layoutOf(f.Magic)
	if !ok {
		return nil, fmt.Errorf("unigine: cannot write magic %q", f.Magic)
	}
	if lay.blocks && len(f.Tail) > 0 {
		return nil, fmt.Errorf("unigine: %s has no tail", f.Magic)
	}
	w := &writer{}
	w.raw([]byte(f.Magic))
	if lay.spatial {
		w.compact(f.SpatialTreeTriangles)
	}
	w.bounds(f.Bounds)
	switch {
	case lay.skin:
		w.u32(uint32(len(f.Joints)))
		w.joints(f.Joints)
		for _, ts := range [][]Transform{f.Bind, f.Rest} {
			w.u32(uint32(len(ts)))
			for _, t := range ts {
				w.transform(t)
			}
		}
		w.str32(f.SkeletonGUID)
		w.str32(f.SkeletonPath)
	case lay.bones:
		w.compact(int32(len(f.Joints)))
		w.joints(f.Joints)
		if len(f.Bind) != len(f.Joints) {
			return nil, fmt.Errorf("unigine: %s needs one transform per bone: %d for %d", f.Magic, len(f.Bind), len(f.Joints))
		}
	}
	if lay.names {
		w.compact(int32(len(f.Names)))
		for _, n := range f.Names {
			w.str(n)
		}
	} else if len(f.Names) > 0 {
		return nil, fmt.Errorf("unigine: %s has no name list", f.Magic)
	}
	w.compact(int32(len(f.Surfaces)))
	for i := range f.Surfaces {
		s := &f.Surfaces[i]
		if len(s.Targets) == 0 || (!lay.targets && len(s.Targets) != 1) {
			return nil, fmt.Errorf("unigine: surface %d has %d targets", i, len(s.Targets))
		}
		w.str(s.Name)
		if lay.lightmap {
			w.b = append(w.b, byte(s.LightmapChannel), byte(s.LightmapResolution))
		}
		if !lay.blockCounts {
			w.compact(int32(len(s.CIndices)))
			w.compact(int32(len(s.TIndices)))
		}
		w.bounds(s.Bounds)
		if lay.targets {
			w.compact(int32(len(s.Targets)))
			for _, t := range s.Targets {
				w.str(t.Name)
				if !lay.blockCounts {
					w.compact(int32(len(t.Positions)))
				}
			}
		} else {
			w.compact(int32(len(s.Targets[0].Positions)))
		}
	}
	if lay.blocks {
		w.u64(uint64(f.RAM))
	}
	w.raw([]byte(f.Magic))
	if lay.bones {
		for _, t := range f.Bind {
			w.transform(t)
		}
	}
	if len(f.Anims) != len(f.Names) {
		return nil, fmt.Errorf("unigine: %d animations for %d names: a stream stores one per name", len(f.Anims), len(f.Names))
	}
	for i := range f.Anims {
		a := &f.Anims[i]
		if a.Magic != f.Magic || len(a.Flags) != a.Frames*len(a.Animated) || len(a.Values) != valueTotal(a) {
			return nil, fmt.Errorf("unigine: animation %d: magic %q, %d records and %d values for %d frames of %d joints", i, a.Magic, len(a.Flags), len(a.Values), a.Frames, len(a.Animated))
		}
		w.compact(int32(len(a.Animated)))
		for _, j := range a.Animated {
			w.u16(uint16(j))
		}
		w.b = append(w.b, a.Mask)
		w.animFrames(a)
	}
	if !lay.blocks {
		for i := range f.Surfaces {
			geometry(w, lay, &f.Surfaces[i])
		}
		w.raw(f.Tail)
		w.raw([]byte(f.Magic))
		return w.b, nil
	}
	offsets := make([]uint64, len(f.Surfaces))
	for i := range f.Surfaces {
		g := &writer{}
		geometry(g, lay, &f.Surfaces[i])
		offsets[i] = uint64(len(w.b))
		w.block(g.b, f.Surfaces[i].Stored)
	}
	w.raw([]byte(f.Magic))
	if lay.collision {
		for i := range f.Surfaces {
			s := &f.Surfaces[i]
			c := s.Collision
			if c == nil {
				c = CollisionBlock(len(s.CIndices)/3, s.Bounds)
			}
			w.block(c, s.Stored)
		}
		w.raw([]byte(f.Magic))
	}
	for _, o := range offsets {
		w.u64(o)
	}
	w.raw([]byte(f.Magic))
	return w.b, nil
}

// geometry writes a surface's geometry block contents.
func geometry(w *writer, lay layout, s *Surface) {
	for _, t := range s.Targets {
		if lay.blockCounts {
			w.compact(int32(len(t.Positions)))
		}
		for _, p := range t.Positions {
			w.f32s(p[:]...)
		}
		w.compact(int32(len(t.Tangents)))
		for _, q := range t.Tangents {
			if lay.tangents7 {
				// w ≥ 0 and the bitangent's sign in a byte.
				sign := byte(0x7f)
				if q[3] < 0 {
					q, sign = [4]int16{-q[0], -q[1], -q[2], -q[3]}, 0x81
				}
				w.u16(uint16(q[0]))
				w.u16(uint16(q[1]))
				w.u16(uint16(q[2]))
				w.b = append(w.b, sign)
				continue
			}
			for _, c := range q {
				w.u16(uint16(c))
			}
		}
	}
	if lay.weights {
		w.compact(int32(len(s.Weights)))
		for _, in := range s.Weights {
			w.b = append(w.b, byte(len(in)))
			for _, x := range in {
				w.u16(uint16(x.Joint))
				w.u16(x.Weight)
			}
		}
	}
	for _, uvs := range [][][2]float32{s.UV0, s.UV1} {
		w.compact(int32(len(uvs)))
		for _, uv := range uvs {
			w.f32s(uv[:]...)
		}
	}
	w.compact(int32(len(s.Colors)))
	for _, c := range s.Colors {
		w.raw(c[:])
	}
	if lay.blockCounts {
		w.compact(int32(len(s.CIndices)))
	}
	w.indices(lay, s.CIndices, len(s.Targets[0].Positions))
	if lay.blockCounts {
		w.compact(int32(len(s.TIndices)))
	}
	w.indices(lay, s.TIndices, len(s.Targets[0].Tangents))
}

// CollisionBlock makes a minimal collision block for tris triangles: an
// edge flag per triangle, and a spatial tree of one leaf holding them all.
func CollisionBlock(tris int, b Bounds) []byte {
	w := &writer{}
	w.compact(int32(tris))
	w.b = append(w.b, make([]byte, tris)...)
	w.compact(int32(tris))
	for k := range tris {
		w.compact(int32(3 * k))
	}
	w.compact(1)           // one node
	w.b = append(w.b, 0)   // split axis
	w.compact(-1)          // left
	w.compact(-1)          // right
	w.compact(0)           // start
	w.compact(int32(tris)) // end
	w.f32s(b.Min[:]...)    // node bounds
	w.f32s(b.Max[:]...)    //
	w.f32s(0)              // split distance
	return w.b
}

type writer struct{ b []byte }

func (w *writer) raw(p []byte)    { w.b = append(w.b, p...) }
func (w *writer) compact(v int32) { w.b = appendCompact(w.b, v) }
func (w *writer) u16(v uint16)    { w.b = binary.LittleEndian.AppendUint16(w.b, v) }
func (w *writer) u32(v uint32)    { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *writer) u64(v uint64)    { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *writer) f32s(v ...float32) {
	for _, x := range v {
		w.u32(math.Float32bits(x))
	}
}

func (w *writer) str(s string) {
	w.compact(int32(len(s) + 1))
	w.raw([]byte(s))
	w.b = append(w.b, 0)
}

func (w *writer) str32(s string) {
	w.u32(uint32(len(s) + 1))
	w.raw([]byte(s))
	w.b = append(w.b, 0)
}

func (w *writer) bounds(b Bounds) {
	w.f32s(b.Min[:]...)
	w.f32s(b.Max[:]...)
	w.f32s(b.SphereCenter[:]...)
	w.f32s(b.SphereRadius)
}

func (w *writer) transform(t Transform) {
	w.f32s(t.Position[:]...)
	w.f32s(t.Rotation[:]...)
	w.f32s(t.Scale[:]...)
}

func (w *writer) joints(js []Joint) {
	for _, j := range js {
		w.str(j.Name)
		w.u16(uint16(j.Parent))
	}
}

func (w *writer) indices(lay layout, idx []uint32, n int) {
	switch lay.indexWidth(n) {
	case 1:
		for _, v := range idx {
			w.b = append(w.b, byte(v))
		}
	case 2:
		for _, v := range idx {
			w.u16(uint16(v))
		}
	case 4:
		for _, v := range idx {
			w.u32(v)
		}
	default:
		for _, v := range idx {
			w.compact(int32(v))
		}
	}
}

// block writes data as a compressed block, or stored when asked or when
// LZ4 does not make it smaller (equal sizes mean stored to the reader, so a
// compressed block must be strictly smaller).
func (w *writer) block(data []byte, stored bool) {
	if !stored && len(data) > 0 {
		buf := make([]byte, lz4.CompressBlockBound(len(data)))
		n, err := lz4.CompressBlock(data, buf, nil)
		if err == nil && n > 0 && n < len(data) {
			w.u64(uint64(len(data)))
			w.u64(uint64(n))
			w.raw(buf[:n])
			return
		}
	}
	w.u64(uint64(len(data)))
	w.u64(uint64(len(data)))
	w.raw(data)
}

// FrameQuat encodes a tangent frame (unit normal n, unit tangent t
// orthogonal to it, bitangent sign ±1) as the quaternion shorts the format
// stores: the rotation whose columns are t, n×t, n, with w's sign carrying
// the bitangent sign (FORMATS.md §3.1).
func FrameQuat(n, t [3]float32, sign float32) [4]int16 {
	N := [3]float64{float64(n[0]), float64(n[1]), float64(n[2])}
	T := [3]float64{float64(t[0]), float64(t[1]), float64(t[2])}
	B := [3]float64{N[1]*T[2] - N[2]*T[1], N[2]*T[0] - N[0]*T[2], N[0]*T[1] - N[1]*T[0]}
	var m decode.Mat4
	copy(m[0:3], T[:])
	copy(m[4:7], B[:])
	copy(m[8:11], N[:])
	m[15] = 1
	r := m.TRS().Rotation
	q := [4]float64{float64(r[0]), float64(r[1]), float64(r[2]), float64(r[3])}
	if (sign < 0) != (q[3] < 0) {
		q = [4]float64{-q[0], -q[1], -q[2], -q[3]}
	}
	var s [4]int16
	for i, c := range q {
		s[i] = int16(max(-32767, min(32767, int(c*32767))))
	}
	if sign < 0 && s[3] == 0 {
		s[3] = -1 // w = 0 reads as +1: keep the sign visible
	}
	return s
}
