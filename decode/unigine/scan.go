package unigine

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/meshfs/meshfs/decode"
)

// Scan reads the header, the trailing offset table and the block headers,
// never block data: header.json and chunks/ cost a few small reads however
// large the mesh, and one surface's chunk decompresses that block only.
//
// What header.json therefore leaves out: the counts that live inside the
// compressed blocks (triangle vertices = tangent count, UV sets, colours,
// weights; the spatial tree's node count in the collision block). They
// would take decompressing every block; the decompressed blocks are in
// chunks/ for whoever needs them. ms11/ms10 have no blocks, so their
// stream is walked to find where each surface's bytes end.
func (Format) Scan(ctx context.Context, src *decode.Source) (*decode.Structure, error) {
	st := &decode.Structure{Format: Name}
	r := newFileReader(src.Name, "header", src.R, src.Size)
	h, err := parseHeader(r)
	if h == nil {
		if len(r.b) >= 4 {
			// An unknown version: header.json still shows which.
			st.Header.Add("magic", string(r.b[:4]))
			return st, err
		}
		return nil, err
	}
	if err != nil {
		st.Header = headerFields(h, nil)
		return st, err
	}
	if !h.lay.blocks {
		return scanStream(ctx, src, r, h, st)
	}
	l, err := locate(src, h)
	st.Header = headerFields(h, l)
	if err != nil {
		return st, err
	}
	n := len(h.surf)
	width := len(fmt.Sprint(n + 1))
	width = max(width, 2)
	st.Chunks = append(st.Chunks, decode.Chunk{Name: fmt.Sprintf("%0*d_header.bin", width, 0), Offset: 0, Length: h.end, Size: h.end})
	for i, s := range h.file.Surfaces {
		prefix := fmt.Sprintf("%0*d_%s", width, i+1, chunkSurfaceName(s.Name))
		st.Chunks = append(st.Chunks, blockChunk(src, prefix+".geometry.bin", l.geom[i], geometrySection(i)))
		if h.lay.collision {
			st.Chunks = append(st.Chunks, blockChunk(src, prefix+".collision.bin", l.coll[i], collisionSection(i)))
		}
	}
	st.Chunks = append(st.Chunks, decode.Chunk{Name: fmt.Sprintf("%0*d_offsets.bin", width, n+1), Offset: l.table, Length: 8 * int64(n), Size: 8 * int64(n)})
	return st, nil
}

// chunkSurfaceName makes a surface name safe for a chunk name and short
// enough that the chunk's suffix survives SafeName's length limit.
func chunkSurfaceName(name string) string {
	s := decode.SafeName(name)
	for len(s) > 64 {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return decode.SafeName(s)
}

func blockChunk(src *decode.Source, name string, b block, section string) decode.Chunk {
	return decode.Chunk{
		Name:   decode.SafeName(name),
		Offset: b.off, Length: b.length(), Size: b.raw,
		Load: func() ([]byte, error) { return loadBlock(src, b, section) },
	}
}

// scanStream walks an ms11/ms10 stream to find each surface's bytes.
func scanStream(ctx context.Context, src *decode.Source, r *reader, h *header, st *decode.Structure) (*decode.Structure, error) {
	st.Header = headerFields(h, nil)
	n := len(h.surf)
	width := max(len(fmt.Sprint(n)), 2)
	st.Chunks = append(st.Chunks, decode.Chunk{Name: fmt.Sprintf("%0*d_header.bin", width, 0), Offset: 0, Length: h.end, Size: h.end})
	f := &h.file
	// The stream keeps its counts inside each surface's data, so the walk
	// (which has to parse it anyway to find where a surface ends) fills in
	// the summary counts the header could not give.
	var tris, verts int
	for i := range f.Surfaces {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		start := r.offset()
		r.section = fmt.Sprintf("surface %d geometry", i)
		var s Surface
		parseGeometry(r, h.lay, h.surf[i], &s, len(f.Joints))
		if r.err != nil {
			return st, r.err
		}
		tris += len(s.CIndices) / 3
		if len(s.Targets) > 0 {
			verts += len(s.Targets[0].Positions)
		}
		setSummary(st.Header, "triangles", tris)
		setSummary(st.Header, "vertices", verts)
		st.Chunks = append(st.Chunks, decode.Chunk{
			Name:   decode.SafeName(fmt.Sprintf("%0*d_%s.geometry.bin", width, i+1, chunkSurfaceName(f.Surfaces[i].Name))),
			Offset: start, Length: r.offset() - start, Size: r.offset() - start,
		})
	}
	r.section = "end"
	r.magic("final magic", f.Magic)
	if r.err == nil && r.left() != 0 {
		r.fail("", nil, "%d bytes after the final magic", r.left())
	}
	return st, r.err
}

// headerFields lists every header field for header.json, in file order,
// then the derived counts. l may be nil (ms11, or a layout error).
func headerFields(h *header, l *fileLayout) decode.Fields {
	f := &h.file
	var fs decode.Fields
	fs.Add("magic", f.Magic)
	if h.lay.spatial {
		fs.Add("spatial_tree_triangles", f.SpatialTreeTriangles)
	}
	fs.Add("bounds", boundsFields(f.Bounds))
	if h.lay.blockCounts {
		fs.Add("unknown_after_bounds", f.Reserved)
	}
	if h.lay.skin || h.lay.bones {
		fs.Add("joint_count", len(f.Joints))
		if h.lay.skin {
			fs.Add("bind_transform_count", len(f.Bind))
			fs.Add("rest_transform_count", len(f.Rest))
		}
		joints := make([]decode.Fields, len(f.Joints))
		for i, j := range f.Joints {
			var jf decode.Fields
			jf.Add("name", j.Name)
			jf.Add("parent", j.Parent)
			if i < len(f.Bind) {
				key := "bind"
				if !h.lay.skin {
					key = "transform" // ms14: one parent-relative transform per bone
				}
				jf.Add(key, transformFields(f.Bind[i]))
			}
			if i < len(f.Rest) {
				jf.Add("rest", transformFields(f.Rest[i]))
			}
			joints[i] = jf
		}
		fs.Add("joints", joints)
	}
	if h.lay.skin {
		fs.Add("skeleton_guid", f.SkeletonGUID)
		fs.Add("skeleton_path", f.SkeletonPath)
	}
	fs.Add("surface_count", len(f.Surfaces))
	var tris, verts, indices int64
	surfs := make([]decode.Fields, len(f.Surfaces))
	for i, s := range f.Surfaces {
		sh := h.surf[i]
		var sf decode.Fields
		sf.Add("index", i)
		sf.Add("name", s.Name)
		if h.lay.lightmap {
			sf.Add("lightmap_uv_channel", s.LightmapChannel)
			sf.Add("lightmap_resolution", s.LightmapResolution)
		}
		if sh.cIndices >= 0 {
			sf.Add("coordinate_indices", sh.cIndices)
			sf.Add("triangle_indices", sh.tIndices)
			sf.Add("triangles", sh.cIndices/3)
			tris += int64(sh.cIndices / 3)
			indices += int64(sh.cIndices)
		}
		sf.Add("bounds", boundsFields(s.Bounds))
		if len(sh.targets) > 0 && sh.targets[0].vertices >= 0 {
			sf.Add("coordinate_vertices", sh.targets[0].vertices)
			verts += int64(sh.targets[0].vertices)
		}
		if h.lay.targets {
			ts := make([]decode.Fields, len(sh.targets))
			for k, t := range sh.targets {
				var tf decode.Fields
				tf.Add("name", t.name)
				if t.vertices >= 0 {
					tf.Add("vertices", t.vertices)
				}
				ts[k] = tf
			}
			sf.Add("morph_targets", ts)
		}
		if l != nil {
			sf.Add("geometry_block", blockFields(l.geom[i]))
			if i < len(l.coll) {
				sf.Add("collision_block", blockFields(l.coll[i]))
			}
		}
		surfs[i] = sf
	}
	fs.Add("surfaces", surfs)
	if h.lay.blocks {
		fs.Add("estimated_ram", f.RAM)
	}
	// Derived totals (ms11/ms10 keep their counts in the stream: left out).
	if !h.lay.blockCounts {
		fs.Add("coordinate_vertices", verts)
		fs.Add("indices", indices)
		fs.Add("triangles", tris)
	}
	// Morph targets are matched across surfaces by name; target 0 is the base.
	targets := map[string]bool{}
	for _, sh := range h.surf {
		for k := 1; k < len(sh.targets); k++ {
			targets[sh.targets[k].name] = true
		}
	}
	fs.Add("counts", decode.SummaryFields(len(f.Surfaces), int(tris), int(verts), len(f.Joints), len(targets), 0))
	return fs
}

func boundsFields(b Bounds) decode.Fields {
	var f decode.Fields
	f.Add("min", jsonFloats(b.Min[:]))
	f.Add("max", jsonFloats(b.Max[:]))
	f.Add("sphere_center", jsonFloats(b.SphereCenter[:]))
	f.Add("sphere_radius", jsonFloat(b.SphereRadius))
	return f
}

// jsonFloat keeps a float as a number, or spells NaN and infinities as
// strings, which JSON has no numbers for (bounds are not validated: the
// decoder does not use them).
func jsonFloat(v float32) any {
	if !finite(v) {
		return fmt.Sprint(v)
	}
	return v
}

func jsonFloats(v []float32) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = jsonFloat(x)
	}
	return out
}

func transformFields(t Transform) decode.Fields {
	var f decode.Fields
	f.Add("position", t.Position)
	f.Add("rotation", t.Rotation)
	f.Add("scale", t.Scale)
	return f
}

func blockFields(b block) decode.Fields {
	var f decode.Fields
	f.Add("offset", b.off)
	f.Add("uncompressed_size", b.raw)
	f.Add("compressed_size", b.packed)
	f.Add("lz4", !b.stored())
	return f
}

// setSummary sets one key of the "counts" object of header fields h.
func setSummary(h decode.Fields, key string, v int) {
	if c, ok := h.Get("counts").(decode.Fields); ok {
		for i := range c {
			if c[i].Key == key {
				c[i].Value = v
			}
		}
	}
}
