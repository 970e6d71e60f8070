package unigine

import (
	"context"
	"fmt"
	"path/filepath"
	"unicode/utf8"

	"github.com/meshfs/meshfs/decode"
)

// Scan reads the header, the trailing offset table and the block headers,
// then each surface's blocks for the counts that only they hold: the
// triangle-vertex (tangent) count, the UV sets, colours, weights and morph
// target vertex counts in the geometry block, the spatial tree's node count
// in the collision block. header.json needs them, and they cost a pass
// over the file, so the pass is kept as cheap as it can be: each block is
// read and decompressed once, one surface at a time, into two buffers that
// every surface reuses (a scan holds one decompressed block, the largest,
// never all of them); only the counts are read,
// arrays are stepped over by arithmetic (compact indices by counting the
// bytes that end them), no float is converted and no geometry is built. chunks/ stays lazy: one
// surface's chunk decompresses that block only, when it is read.
//
// The one check on values: the base positions and UV sets are tested for
// NaN and ±Inf as they are stepped over (an OR over their bits); a file
// that has some is decoded once more for header.json's "repairs" (see
// addRepairs), a sound one lists none.
//
// A broken block ends the pass: header.json keeps the counts read so far
// (the broken surface's up to the fault) and Scan returns the positioned
// error. ms11/ms10 have no blocks: their stream is walked the same way,
// which also finds where each surface's bytes end.
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
		st.Header = headerFields(h, nil, nil)
		return st, err
	}
	st.Materials, _ = surfaceMaterials(&h.file, Format{}.StripExt(filepath.Base(src.Name)))
	if !h.lay.blocks {
		return scanStream(ctx, src, r, h, st)
	}
	l, err := locate(src, h)
	st.Header = headerFields(h, l, nil)
	if err != nil {
		return st, err
	}
	counts := make([]*surfCounts, len(h.surf))
	bb := getBuffers()
	defer putBuffers(bb)
	for i, sh := range h.surf {
		if err = ctx.Err(); err != nil {
			break
		}
		counts[i] = newSurfCounts(sh)
		if err = scanSurface(src, h, l, i, bb, counts[i]); err != nil {
			break
		}
	}
	st.Header = headerFields(h, l, counts)
	st.Chunks = blockChunks(src, h, l)
	if err == nil {
		addRepairs(ctx, src, st, counts)
	}
	return st, err
}

// blockChunks lists a blocked file's chunks: the header, each surface's
// geometry and collision blocks, the offset table.
func blockChunks(src *decode.Source, h *header, l *fileLayout) []decode.Chunk {
	var cs []decode.Chunk
	n := len(h.surf)
	width := len(fmt.Sprint(n + 1))
	width = max(width, 2)
	cs = append(cs, decode.Chunk{Name: fmt.Sprintf("%0*d_header.bin", width, 0), Offset: 0, Length: h.end, Size: h.end})
	for i, s := range h.file.Surfaces {
		prefix := fmt.Sprintf("%0*d_%s", width, i+1, chunkSurfaceName(s.Name))
		cs = append(cs, blockChunk(src, prefix+".geometry.bin", l.geom[i], geometrySection(i)))
		if h.lay.collision {
			cs = append(cs, blockChunk(src, prefix+".collision.bin", l.coll[i], collisionSection(i)))
		}
	}
	return append(cs, decode.Chunk{Name: fmt.Sprintf("%0*d_offsets.bin", width, n+1), Offset: l.table, Length: 8 * int64(n), Size: 8 * int64(n)})
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

// scanStream walks an ms11/ms10 stream to find each surface's bytes,
// reading its counts on the way as the blocked formats' scan does.
func scanStream(ctx context.Context, src *decode.Source, r *reader, h *header, st *decode.Structure) (*decode.Structure, error) {
	n := len(h.surf)
	width := max(len(fmt.Sprint(n)), 2)
	st.Chunks = append(st.Chunks, decode.Chunk{Name: fmt.Sprintf("%0*d_header.bin", width, 0), Offset: 0, Length: h.end, Size: h.end})
	f := &h.file
	counts := make([]*surfCounts, n)
	animAt := r.offset()
	if err := r.readAnims(ctx, f, false); err != nil {
		st.Header = headerFields(h, nil, counts)
		return st, err
	}
	if end := r.offset(); end > animAt {
		st.Chunks = append(st.Chunks, decode.Chunk{Name: fmt.Sprintf("%0*d_header_animations.bin", width, 0), Offset: animAt, Length: end - animAt, Size: end - animAt})
	}
	for i := range f.Surfaces {
		if err := ctx.Err(); err != nil {
			st.Header = headerFields(h, nil, counts)
			return st, err
		}
		start := r.offset()
		r.section = fmt.Sprintf("surface %d geometry", i)
		counts[i] = newSurfCounts(h.surf[i])
		countGeometry(r, h.lay, h.surf[i], counts[i])
		if r.err != nil {
			break
		}
		st.Chunks = append(st.Chunks, decode.Chunk{
			Name:   decode.SafeName(fmt.Sprintf("%0*d_%s.geometry.bin", width, i+1, chunkSurfaceName(f.Surfaces[i].Name))),
			Offset: start, Length: r.offset() - start, Size: r.offset() - start,
		})
	}
	if r.err == nil {
		tailAt := r.offset()
		r.streamEnd(f)
		if n := int64(len(f.Tail)); n > 0 {
			st.Chunks = append(st.Chunks, decode.Chunk{Name: fmt.Sprintf("%0*d_tail.bin", width, len(h.surf)+1), Offset: tailAt, Length: n, Size: n})
		}
	}
	st.Header = headerFields(h, nil, counts)
	if r.err == nil {
		addRepairs(ctx, src, st, counts)
	}
	return st, r.err
}

// addRepairs adds header.json's "repairs": what Decode's decode.Scene.Repair
// changes, as decode.RepairFields lists them. A file whose counted arrays
// are all finite gets an empty list without a decode; one with NaN or ±Inf
// in a position or UV is decoded for the exact list. A decode that fails
// leaves the key out: Decode reports that error.
func addRepairs(ctx context.Context, src *decode.Source, st *decode.Structure, counts []*surfCounts) {
	bad := false
	for _, c := range counts {
		bad = bad || (c != nil && c.nonFinite)
	}
	var rs []decode.Repair
	if bad {
		sc, err := Format{}.Decode(ctx, src)
		if err != nil {
			return
		}
		rs = sc.Repairs
	}
	st.Header.Add("repairs", decode.RepairFields(rs))
}

// headerFields lists every header field for header.json, in file order,
// then the derived counts. l may be nil (ms11, or a layout error); counts
// holds what Scan read from each surface's geometry (nil, or an entry nil
// or −1, where it did not get that far).
func headerFields(h *header, l *fileLayout, counts []*surfCounts) decode.Fields {
	f := &h.file
	var fs decode.Fields
	fs.Add("magic", f.Magic)
	if h.lay.spatial {
		fs.Add("spatial_tree_triangles", f.SpatialTreeTriangles)
	}
	fs.Add("bounds", boundsFields(f.Bounds))
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
	if h.lay.names {
		names := f.Names
		if names == nil {
			names = []string{}
		}
		fs.Add("names", names)
		anims := make([]decode.Fields, len(f.Anims))
		for i, a := range f.Anims {
			var af decode.Fields
			af.Add("name", f.Names[i])
			animated := make([]string, len(a.Animated))
			for k, j := range a.Animated {
				animated[k] = f.Joints[j].Name
			}
			af.Add("animated_joint_count", len(a.Animated))
			af.Add("animated_joints", animated)
			af.Add("mask", a.Mask)
			af.Add("frames", a.Frames)
			anims[i] = af
		}
		fs.Add("animations", anims)
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
		var c *surfCounts
		if i < len(counts) {
			c = counts[i]
		}
		// The header's counts where it has them (ms15, sk10, ms14), else
		// the stream's (ms11/ms10).
		ci, ti := sh.cIndices, sh.tIndices
		if ci < 0 && c != nil {
			ci, ti = c.cIndices, c.tIndices
		}
		vertices := func(k int) int {
			if v := sh.targets[k].vertices; v >= 0 {
				return v
			}
			if c != nil {
				return c.targets[k].vertices
			}
			return -1
		}
		var sf decode.Fields
		sf.Add("index", i)
		sf.Add("name", s.Name)
		if h.lay.lightmap {
			sf.Add("lightmap_uv_channel", s.LightmapChannel)
			sf.Add("lightmap_resolution", s.LightmapResolution)
		}
		if ci >= 0 && ti >= 0 {
			sf.Add("coordinate_indices", ci)
			sf.Add("triangle_indices", ti)
			sf.Add("triangles", ci/3)
			tris += int64(ci / 3)
			indices += int64(ci)
		}
		sf.Add("bounds", boundsFields(s.Bounds))
		if len(sh.targets) > 0 && vertices(0) >= 0 {
			sf.Add("coordinate_vertices", vertices(0))
			verts += int64(vertices(0))
		}
		if c != nil {
			addCount := func(key string, v int) {
				if v >= 0 {
					sf.Add(key, v)
				}
			}
			if len(c.targets) > 0 {
				addCount("triangle_vertices", c.targets[0].tangents)
			}
			if h.lay.weights {
				addCount("weights", c.weights)
			}
			if c.uv0 >= 0 && c.uv1 >= 0 {
				sets := 0
				for _, n := range []int{c.uv0, c.uv1} {
					if n > 0 {
						sets++
					}
				}
				sf.Add("uv_sets", sets)
			}
			addCount("uv0", c.uv0)
			addCount("uv1", c.uv1)
			addCount("colors", c.colors)
		}
		if h.lay.targets {
			ts := make([]decode.Fields, len(sh.targets))
			for k, t := range sh.targets {
				var tf decode.Fields
				tf.Add("name", t.name)
				if v := vertices(k); v >= 0 {
					tf.Add("vertices", v)
				}
				if c != nil && c.targets[k].tangents >= 0 {
					tf.Add("tangents", c.targets[k].tangents)
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
		if h.lay.collision && c != nil && c.nodes >= 0 {
			sf.Add("spatial_tree_nodes", c.nodes)
		}
		surfs[i] = sf
	}
	fs.Add("surfaces", surfs)
	if h.lay.blocks {
		fs.Add("estimated_ram", f.RAM)
	}
	if len(f.Tail) > 0 {
		fs.Add("unknown_tail_bytes", len(f.Tail))
	}
	// Derived totals: ms11/ms10's come from the walk of the stream, as far
	// as it got.
	fs.Add("coordinate_vertices", verts)
	fs.Add("indices", indices)
	fs.Add("triangles", tris)
	// Each surface is a mesh with its own morph targets; target 0 is the base.
	targets := 0
	for _, sh := range h.surf {
		targets += max(0, len(sh.targets)-1)
	}
	anims := 0
	for _, a := range f.Anims {
		if len(a.Animated) > 0 && a.Frames > 0 {
			anims++
		}
	}
	fs.Add("counts", decode.SummaryFields(len(f.Surfaces), int(tris), int(verts), len(f.Joints), targets, anims))
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
