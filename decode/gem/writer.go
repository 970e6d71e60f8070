package gem

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Encode writes f as a .ply file: the magic, then each chunk in order.
// Spans are ignored; counts are written from the data (VERT's vertex count
// is len(Data)/Size), so what Encode writes always parses back to f. It
// fails on values a field cannot hold (a name over 255 bytes, a 16-bit
// index over 65535, a GEM3 face range over 65535).
//
// Branches follow the reader exactly: which texture names a MESH stores
// follows from its flags and fvf, the bone map is written when HasBoneMap
// (under flag 0x800, or 0x10 for the original text's reading, or GEM3 0x2).
func Encode(f *File) ([]byte, error) {
	switch f.Magic {
	case MagicEPLY, MagicBPLY, MagicPM01:
	default:
		return nil, fmt.Errorf("gem: magic %q is not EPLY, BPLY or PM01", f.Magic)
	}
	size := 4
	for _, c := range f.Chunks {
		switch c := c.(type) {
		case *Vert:
			size += 12 + len(c.Data)
		case *Indices:
			size += 8 + 4*len(c.Values)
		default:
			size += 64
		}
	}
	w := &writer{b: make([]byte, 0, size)}
	w.b = append(w.b, f.Magic...)
	for i, c := range f.Chunks {
		w.b = append(w.b, c.FourCC()...)
		if err := w.chunk(f.Magic, c); err != nil {
			return nil, fmt.Errorf("gem: chunk %d (%s): %w", i, c.FourCC(), err)
		}
	}
	return w.b, nil
}

type writer struct{ b []byte }

func (w *writer) u8(v byte)     { w.b = append(w.b, v) }
func (w *writer) u16(v uint16)  { w.b = binary.LittleEndian.AppendUint16(w.b, v) }
func (w *writer) u32(v uint32)  { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *writer) f32(v float32) { w.u32(math.Float32bits(v)) }

func (w *writer) str(s string) error {
	if len(s) > 255 {
		return fmt.Errorf("name of %d bytes does not fit a string8", len(s))
	}
	w.u8(byte(len(s)))
	w.b = append(w.b, s...)
	return nil
}

func (w *writer) chunk(magic string, c Chunk) error {
	switch c := c.(type) {
	case *Bounds:
		for _, v := range c.Min {
			w.f32(v)
		}
		for _, v := range c.Max {
			w.f32(v)
		}
	case *Skin:
		w.u32(uint32(len(c.Bones)))
		for _, n := range c.Bones {
			if err := w.str(n); err != nil {
				return err
			}
		}
	case *Vert:
		if c.Size == 0 || len(c.Data)%int(c.Size) != 0 {
			return fmt.Errorf("%d bytes of vertex data are not a multiple of vertex_size %d", len(c.Data), c.Size)
		}
		w.u32(uint32(len(c.Data) / int(c.Size)))
		w.u16(c.Size)
		w.u16(c.Flags)
		w.b = append(w.b, c.Data...)
	case *Indices:
		w.u32(uint32(len(c.Values)))
		for _, v := range c.Values {
			if c.Wide {
				w.u32(v)
			} else if v > 0xFFFF {
				return fmt.Errorf("index %d does not fit INDX's 16 bits", v)
			} else {
				w.u16(uint16(v))
			}
		}
	case *Basis:
		for _, v := range c.Poly {
			w.f32(v[0])
			w.f32(v[1])
		}
		for _, v := range c.Tex {
			w.f32(v[0])
			w.f32(v[1])
		}
	case *InfoGrid:
		w.u32(uint32(c.Start[0]))
		w.u32(uint32(c.Start[1]))
		w.u32(uint32(c.End[0]))
		w.u32(uint32(c.End[1]))
		w.u32(uint32(len(c.Faces)))
		for _, v := range c.Faces {
			w.u16(v)
		}
	case *Adjacency:
		w.u32(uint32(len(c.Faces)))
		for _, f := range c.Faces {
			w.u16(f[0])
			w.u16(f[1])
			w.u16(f[2])
		}
	case *Shadow:
		w.u32(uint32(len(c.Casts)))
		w.b = append(w.b, c.Casts...)
	case *Mirror:
	case *Markup:
		w.u32(uint32(len(c.Data)))
		w.b = append(w.b, c.Data...)
	case *Submesh:
		if (c.Kind == KindSUBMGEM3) != (magic == MagicPM01) && c.Kind != KindMESH && c.Kind != KindSBM1 {
			return fmt.Errorf("a %s submesh cannot be stored under %s", c.Kind, magic)
		}
		return w.submesh(c)
	default:
		return fmt.Errorf("unknown chunk type %T", c)
	}
	return nil
}

func (w *writer) boneMap(s *Submesh) {
	w.u8(byte(len(s.BoneMap)))
	w.b = append(w.b, s.BoneMap...)
}

func (w *writer) submesh(s *Submesh) error {
	if len(s.BoneMap) > 255 {
		return fmt.Errorf("bone map of %d entries does not fit its u8 count", len(s.BoneMap))
	}
	switch s.Kind {
	case KindMESH:
		w.u32(s.FVF)
		w.u32(s.FaceStart)
		w.u32(s.FaceCount)
		w.u32(s.Flags)
		if s.Flags&FlagSpecular != 0 {
			w.b = append(w.b, s.SpecularColor[:]...)
		}
		if s.Flags&FlagMaterial != 0 {
			if err := w.str(s.Material); err != nil {
				return err
			}
		} else {
			d, d1, sp, bu := textureSlots(s.FVF, s.Flags)
			for _, t := range []struct {
				on   bool
				name string
			}{{d, s.Diffuse}, {d1, s.Diffuse1}, {sp, s.Specular}, {bu, s.Bump}} {
				if t.on {
					if err := w.str(t.name); err != nil {
						return err
					}
				}
			}
		}
		switch {
		case s.Flags&FlagSubSkin != 0:
			w.boneMap(s)
		case s.HasBoneMap && s.Flags&FlagSkinned != 0:
			w.boneMap(s) // the original text's reading
		case s.HasBoneMap:
			return fmt.Errorf("a MESH bone map needs flag 0x800 (or 0x10)")
		}
	case KindSBM1, KindSUBMAS2:
		for _, e := range s.Elements {
			if e.TypeUsage == 0xFF {
				return fmt.Errorf("type_usage 0xff is the declaration terminator")
			}
			w.b = append(w.b, e.TypeUsage, e.UsageIndex, e.Stream)
		}
		w.u8(0xFF)
		for _, t := range s.Tags {
			if t.Index == 0xFF {
				return fmt.Errorf("tag_index 0xff is the tag terminator")
			}
			w.u8(t.Index)
			w.u32(t.Chunk)
		}
		w.u8(0xFF)
		w.u32(s.FaceStart)
		w.u32(s.FaceCount)
		if s.Kind == KindSUBMAS2 {
			w.u32(s.Unknown[0])
			w.u32(s.Unknown[1])
		}
		w.u32(s.Flags)
		return w.str(s.Material)
	case KindSUBMGEM3:
		if s.FaceStart > 0xFFFF || s.FaceCount > 0xFFFF || s.Flags > 0xFFFF {
			return fmt.Errorf("GEM3 face_start %d, face_count %d or flags 0x%x exceed 16 bits", s.FaceStart, s.FaceCount, s.Flags)
		}
		w.u16(s.VertexFormat)
		w.u16(uint16(s.FaceStart))
		w.u16(uint16(s.FaceCount))
		w.u16(s.VertexStart)
		w.u16(s.VertexCount)
		w.u16(uint16(s.Flags))
		if s.Flags&GEM3Skin != 0 {
			w.boneMap(s)
		}
		return w.str(s.Material)
	default:
		return fmt.Errorf("unknown submesh kind %d", s.Kind)
	}
	return nil
}

// Vertex is one vertex as stored, in the file's own space (Z up, before
// the decoder's conversion), for PackVertices.
type Vertex struct {
	Position [3]float32
	Normal   [3]float32
	Tangent  [4]float32   // xyz and the ±1 sign
	UVs      [][2]float32 // by set, in usage-index order
	Colors   [][4]float32 // RGBA in [0, 1], as stored (already halved if the file halves)
	// Weights are the stored blend weights in layout order (the last
	// influence's weight is implicit and not stored).
	Weights []float32
	Bones   [4]byte // bone indices into the submesh's bone map
	Wind    float32 // GEM3 wind amplitude
}

// PackVertices lays verts out for submesh s in records of vertexSize bytes
// (bytes past the layout stay zero, except a MESH's tangents when
// vertexSize is the fvf size + 16).
func PackVertices(s *Submesh, vertexSize int, verts []Vertex) ([]byte, error) {
	l, err := layoutOf(s, vertexSize)
	if err != nil {
		return nil, err
	}
	if l.Size > vertexSize {
		return nil, fmt.Errorf("layout needs %d bytes, vertex_size is %d", l.Size, vertexSize)
	}
	out := make([]byte, vertexSize*len(verts))
	for i := range verts {
		v := &verts[i]
		rec := out[i*vertexSize : (i+1)*vertexSize]
		nw := 0
		for _, a := range l.Attrs {
			var val [4]float32
			switch a.Usage {
			case UsagePosition:
				copy(val[:], v.Position[:])
			case UsageNormal:
				copy(val[:], v.Normal[:])
				if a.Type == TypeByte4N || a.Type == TypeColor {
					for q := range 3 {
						val[q] = (val[q] + 1) / 2
					}
				}
			case UsageTangent:
				val = v.Tangent
			case UsageTexcoord:
				if a.Slot < len(v.UVs) {
					val[0], val[1] = v.UVs[a.Slot][0], v.UVs[a.Slot][1]
				}
			case UsageColor:
				if a.Slot < len(v.Colors) {
					val = v.Colors[a.Slot]
				}
			case UsageBlendWeight:
				for q := 0; q < typeComps(a.Type) && nw < len(v.Weights); q++ {
					val[q] = v.Weights[nw]
					nw++
				}
			case UsageBlendIndices:
				val = [4]float32{float32(v.Bones[0]), float32(v.Bones[1]), float32(v.Bones[2]), float32(v.Bones[3])}
			case usageWind:
				val[0] = v.Wind
			}
			writeElem(a.Type, val, rec[a.Offset:])
		}
	}
	return out, nil
}
