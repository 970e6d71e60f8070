package gem

import (
	"fmt"
	"math"

	"github.com/meshfs/meshfs/decode"
)

func hex32(v uint32) string { return decode.Hex(uint64(v)) }

// floats renders floats for JSON, which has no NaN or infinity: those
// become strings, so a broken file still gives a readable header.json.
func floats(v ...float32) any {
	out := make([]any, len(v))
	clean := true
	for i, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			out[i] = fmt.Sprint(f)
			clean = false
		} else {
			out[i] = f
		}
	}
	if clean {
		return append([]float32(nil), v...)
	}
	return out
}

// headerFields lists every header field of the (possibly partial) file in
// a stable order: magic, chunk table, then one key per chunk type in a fixed
// order, then the submeshes and derived counts.
func headerFields(f *File) decode.Fields {
	var h decode.Fields
	h.Add("magic", f.Magic)
	switch f.Magic {
	case MagicEPLY:
		h.Add("variant", "EPLY: 16-bit index mesh")
	case MagicBPLY:
		h.Add("variant", "BPLY: large mesh, 32-bit indices")
	case MagicPM01:
		h.Add("variant", "PM01: GEM3 mesh")
	}
	table := []decode.Fields{}
	for _, c := range f.Chunks {
		sp := c.Where()
		var e decode.Fields
		e.Add("index", sp.Index)
		e.Add("fourcc", c.FourCC())
		e.Add("offset", sp.Offset)
		e.Add("length", sp.Length)
		table = append(table, e)
	}
	h.Add("chunk_count", len(f.Chunks))
	h.Add("chunks", table)

	var (
		vert  *Vert
		skin  *Skin
		subs  []*Submesh
		seen  = map[string]int{}
		keyed = func(key string) string {
			seen[key]++
			if n := seen[key]; n > 1 {
				return fmt.Sprintf("%s_%d", key, n)
			}
			return key
		}
	)
	for _, c := range f.Chunks {
		switch c := c.(type) {
		case *Vert:
			if vert == nil {
				vert = c
			}
		case *Skin:
			if skin == nil {
				skin = c
			}
		case *Submesh:
			subs = append(subs, c)
		}
	}
	mirrored := false
	for _, c := range f.Chunks {
		var e decode.Fields
		e.Add("chunk", c.Where().Index)
		switch c := c.(type) {
		case *Bounds:
			e.Add("min", floats(c.Min[:]...))
			e.Add("max", floats(c.Max[:]...))
			h.Add(keyed("bounds"), e)
		case *Skin:
			e.Add("bone_count", len(c.Bones))
			e.Add("bones", nonNil(c.Bones))
			h.Add(keyed("skin"), e)
		case *Vert:
			e.Add("count", c.Count)
			e.Add("size", c.Size)
			e.Add("flags", flagNames(uint32(c.Flags), vertFlagNames))
			e.Add("flags_hex", hex32(uint32(c.Flags)))
			e.Add("colors_halved", c.Flags&VertFullColor == 0)
			h.Add(keyed("vertices"), e)
		case *Indices:
			e.Add("fourcc", c.FourCC())
			e.Add("count", c.Count)
			e.Add("width", map[bool]int{false: 16, true: 32}[c.Wide])
			e.Add("triangles", c.Count/3)
			h.Add(keyed("indices"), e)
		case *Basis:
			var poly, tex decode.Fields
			poly.Add("center", floats(c.Poly[0][:]...))
			poly.Add("axis_x", floats(c.Poly[1][:]...))
			poly.Add("axis_y", floats(c.Poly[2][:]...))
			tex.Add("center", floats(c.Tex[0][:]...))
			tex.Add("axis_x", floats(c.Tex[1][:]...))
			tex.Add("axis_y", floats(c.Tex[2][:]...))
			e.Add("polygons", poly)
			e.Add("texture", tex)
			h.Add(keyed("basis"), e)
		case *InfoGrid:
			e.Add("grid_start", c.Start)
			e.Add("grid_end", c.End)
			e.Add("face_count", c.Count)
			h.Add(keyed("info_grid"), e)
		case *Adjacency:
			e.Add("face_count", c.Count)
			h.Add(keyed("adjacency"), e)
		case *Shadow:
			e.Add("face_count", c.Count)
			h.Add(keyed("shadow"), e)
		case *Markup:
			e.Add("size", c.Size)
			h.Add(keyed("markup"), e)
		case *Mirror:
			mirrored = true
		}
	}
	h.Add("mirrored", mirrored)

	list := []decode.Fields{}
	triangles := 0
	for i, s := range subs {
		triangles += int(s.FaceCount)
		list = append(list, submeshFields(i, s, vert, skin))
	}
	h.Add("submeshes", list)

	vertices, bones := 0, 0
	if vert != nil {
		vertices = int(vert.Count)
	}
	if skin != nil {
		bones = len(skin.Bones)
	}
	h.Add("counts", decode.SummaryFields(len(subs), triangles, vertices, bones, 0, 0))
	return h
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func submeshFields(i int, s *Submesh, vert *Vert, skin *Skin) decode.Fields {
	var e decode.Fields
	e.Add("index", i)
	e.Add("chunk", s.Index)
	e.Add("kind", s.Kind.String())
	vsize := 0
	if vert != nil {
		vsize = int(vert.Size)
	}
	switch s.Kind {
	case KindMESH:
		e.Add("fvf", hex32(s.FVF))
	case KindSUBMGEM3:
		e.Add("vertex_format", hex32(uint32(s.VertexFormat)))
	default:
		raw := []decode.Fields{}
		for _, el := range s.Elements {
			var r decode.Fields
			r.Add("type_usage", fmt.Sprintf("0x%02x", el.TypeUsage))
			r.Add("usage_index", el.UsageIndex)
			r.Add("stream_index", el.Stream)
			raw = append(raw, r)
		}
		e.Add("declaration", raw)
		tags := []decode.Fields{}
		for _, t := range s.Tags {
			var r decode.Fields
			r.Add("tag_index", t.Index)
			r.Add("tag_chunk", hex32(t.Chunk))
			tags = append(tags, r)
		}
		e.Add("tags", tags)
	}
	l, err := layoutOf(s, vsize)
	if err != nil {
		e.Add("layout_error", err.Error())
	} else {
		els := []decode.Fields{}
		for _, a := range l.Attrs {
			var r decode.Fields
			r.Add("usage", usageNames[a.Usage])
			r.Add("usage_index", a.Index)
			r.Add("type", typeNames[a.Type])
			r.Add("offset", a.Offset)
			els = append(els, r)
		}
		e.Add("vertex_elements", els)
		if l.Tangent16 {
			e.Add("format_size", l.Size-16)
		} else {
			e.Add("format_size", l.Size)
		}
		e.Add("layout_size", l.Size)
		if l.UnknownFVF != 0 {
			e.Add("unknown_format_bits", hex32(l.UnknownFVF))
		}
		if vert != nil {
			e.Add("extra_vertex_bytes", vsize-l.Size)
			e.Add("tangents_in_extra_bytes", l.Tangent16)
		}
	}
	e.Add("face_start", s.FaceStart)
	e.Add("face_count", s.FaceCount)
	if s.Kind == KindSUBMGEM3 {
		e.Add("vertex_start", s.VertexStart)
		e.Add("vertex_count", s.VertexCount)
		e.Add("flags", flagNames(s.Flags, gem3FlagNames))
	} else {
		e.Add("flags", flagNames(s.Flags, meshFlagNames))
	}
	e.Add("flags_hex", hex32(s.Flags))
	if s.Kind == KindSUBMAS2 {
		e.Add("unknown", s.Unknown)
	}
	if s.Kind == KindMESH && s.Flags&FlagSpecular != 0 {
		c := s.SpecularColor
		e.Add("specular_color", []int{int(c[0]), int(c[1]), int(c[2]), int(c[3])})
	}
	if s.Kind != KindMESH || s.Flags&FlagMaterial != 0 {
		e.Add("material", s.Material)
	} else {
		var t decode.Fields
		d, d1, sp, bu := textureSlots(s.FVF, s.Flags)
		if d {
			t.Add("diffuse", s.Diffuse)
		}
		if d1 {
			t.Add("diffuse_1", s.Diffuse1)
		}
		if sp {
			t.Add("specular", s.Specular)
		}
		if bu {
			t.Add("bump", s.Bump)
		}
		e.Add("textures", t)
	}
	if s.HasBoneMap {
		m := make([]int, len(s.BoneMap))
		names := make([]string, len(s.BoneMap))
		for k, v := range s.BoneMap {
			m[k] = int(v)
			switch {
			case v == 0:
				names[k] = "(mesh matrix)"
			case skin != nil && int(v) <= len(skin.Bones):
				names[k] = skin.Bones[v-1]
			default:
				names[k] = "(missing from SKIN)"
			}
		}
		e.Add("bone_map", m)
		e.Add("bone_map_rule", s.BoneMapRule)
		e.Add("bone_map_bones", names)
	}
	return e
}
