package gem

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/meshfs/meshfs/decode"
)

// maxFaceReuse bounds how often, on average, submeshes may reference each
// face of the index chunk. Real files partition the faces (1×); without a
// bound a few bytes of submesh chunks could claim the same large range
// thousands of times and make the scene far larger than the file.
const maxFaceReuse = 4

// maxExpansion bounds the decoded scene's size relative to the input it
// comes from (real files: about 2).
const maxExpansion = 32

// vertexCost is the scene bytes one vertex of layout l takes.
func vertexCost(l *layout, basis bool) int64 {
	n := int64(12 + 12 + 16 + 4) // position, normal, tangent, remap
	n += 8 * int64(l.uvCount()+1)
	n += 16 * int64(l.colorCount())
	n += 8 + 16 // joints, weights
	if basis {
		n += 8
	}
	return n
}

// BuildScene converts a parsed file into a scene in meshfs's convention:
// one mesh named after the file, one primitive per submesh with faces, one
// material per submesh, and a skeleton when the file is skinned.
//
// Space: GEM data is Z up and left-handed (Direct3D). Following FORMATS.md,
// positions, normals and tangents are mirrored in Y (the Y mirror the games
// put in each model's .mdl root; tangent signs flip with it), mirrored
// submeshes (flag 0x40 or an MROR chunk) get their winding reversed, and
// everything is rotated from Z up to Y up. Units stay as stored.
func BuildScene(ctx context.Context, f *File, file string) (*decode.Scene, error) {
	b := &builder{file: file, f: f}
	return b.build(ctx)
}

type builder struct {
	file   string
	f      *File
	vert   *Vert
	idx    *Indices
	skin   *Skin
	basis  *Basis
	mirror bool
	// own is set when the File is the builder's to change: a submesh
	// whose face range no other submesh shares then numbers its vertices
	// in place, its primitive's Indices being its slice of the index
	// chunk's values (one allocation of the file's size saved).
	own bool
	// src is the file, set by Decode: VERT's records may have been left in
	// it (Vert.Data nil) to be read by stream or loadVert.
	src io.ReaderAt
}

func section(c Chunk) string {
	return fmt.Sprintf("%s (chunk %d)", c.FourCC(), c.Where().Index)
}

func (b *builder) errf(c Chunk, field string, off int64, format string, args ...any) error {
	return decode.Errorf(b.file, section(c), field, off, format, args...)
}

// second is the error for a second chunk of a kind the scene uses once:
// nothing says which submeshes it would belong to.
func (b *builder) second(have Chunk, c Chunk) error {
	return b.errf(c, "fourcc", c.Where().Offset, "a second %s chunk (the first is chunk %d)", c.FourCC(), have.Where().Index)
}

func (b *builder) build(ctx context.Context) (*decode.Scene, error) {
	var subs []*Submesh
	for _, c := range b.f.Chunks {
		var err error
		switch c := c.(type) {
		case *Vert:
			if b.vert != nil {
				err = b.second(b.vert, c)
			}
			b.vert = c
		case *Indices:
			if b.idx != nil {
				err = b.second(b.idx, c)
			}
			b.idx = c
		case *Skin:
			if b.skin != nil {
				err = b.second(b.skin, c)
			}
			b.skin = c
		case *Basis:
			if b.basis != nil {
				err = b.second(b.basis, c)
			}
			b.basis = c
		case *Mirror:
			b.mirror = true
		case *Submesh:
			subs = append(subs, c)
		}
		if err != nil {
			return nil, err
		}
	}
	scene := &decode.Scene{}
	if len(subs) == 0 {
		return scene, nil
	}

	// Check the submeshes against the index chunk before building anything.
	var faces, claimed uint64
	if b.idx != nil {
		faces = uint64(len(b.idx.Values)) / 3 // the data, not the count field: a File may be built in memory
	}
	layouts := make([]layout, len(subs))
	anyBlend := false
	for i, s := range subs {
		if s.FaceCount == 0 {
			continue
		}
		if b.vert == nil || b.idx == nil {
			return nil, b.errf(s, "face_count", s.Offset, "submesh has %d faces but the file has no VERT or index chunk", s.FaceCount)
		}
		if uint64(s.FaceStart)+uint64(s.FaceCount) > faces {
			return nil, b.errf(s, "face_start", s.Offset, "faces %d..%d outside the %d faces of %s",
				s.FaceStart, uint64(s.FaceStart)+uint64(s.FaceCount), faces, b.idx.FourCC())
		}
		claimed += uint64(s.FaceCount)
		l, err := layoutOf(s, int(b.vert.Size))
		if err != nil {
			return nil, b.errf(s, "vertex_elements", s.Offset, "%v", err)
		}
		if !l.has(UsagePosition) {
			return nil, b.errf(s, "fvf", s.Offset, "the vertex format (%s) has no position", formatDesc(s))
		}
		if l.Size > int(b.vert.Size) {
			return nil, b.errf(s, "fvf", s.Offset, "the vertex format (%s) needs %d bytes but VERT's vertex_size is %d",
				formatDesc(s), l.Size, b.vert.Size)
		}
		if l.has(UsageBlendWeight) || l.has(UsageBlendIndices) {
			anyBlend = true
		}
		layouts[i] = l
	}
	if claimed > maxFaceReuse*faces {
		return nil, decode.Errorf(b.file, section(b.idx), "face_count", b.idx.Offset,
			"submeshes claim %d faces, more than %d× the %d faces stored", claimed, maxFaceReuse, faces)
	}
	// Bound the scene by the input: each primitive holds its referenced
	// vertices again, so many submeshes over few wide vertices could
	// otherwise decode to far more memory than the file justifies.
	var out, in int64
	if b.vert != nil && b.idx != nil {
		in = int64(b.vertices())*int64(b.vert.Size) + 2*int64(len(b.idx.Values))
		var spans int64
		for _, c := range b.f.Chunks {
			spans += c.Where().Length
		}
		in = max(in, spans) // the file's size when it was parsed
		for i, s := range subs {
			if s.FaceCount > 0 {
				out += 12*int64(s.FaceCount) + min(3*int64(s.FaceCount), int64(b.vertices()))*vertexCost(&layouts[i], b.basis != nil)
			}
		}
	}
	if out > maxExpansion*in+1<<20 {
		return nil, decode.Errorf(b.file, section(subs[0]), "face_count", subs[0].Offset,
			"the submeshes would decode to about %d bytes from %d bytes of input", out, in)
	}

	nbones := 0
	if b.skin != nil {
		nbones = len(b.skin.Bones)
	}
	for _, s := range subs {
		for k, v := range s.BoneMap {
			if int(v) > nbones {
				return nil, b.errf(s, "bone_map", s.Offset, "bone_map[%d] = %d, but SKIN has %d bones", k, v, nbones)
			}
		}
	}
	base := Format{}.StripExt(filepath.Base(b.file))
	if b.skin != nil || anyBlend {
		// The .ply has no transforms: joint 0 is a common root standing for
		// the mesh's own matrix (bone map value 0), joint N is SKIN bone N−1.
		sk := &decode.Skeleton{Joints: make([]decode.Joint, 0, nbones+1)}
		sk.Joints = append(sk.Joints, decode.Joint{Name: "root", Parent: -1, Rest: decode.Identity()})
		for k := 0; k < nbones; k++ {
			sk.Joints = append(sk.Joints, decode.Joint{Name: b.skin.Bones[k], Parent: 0, Rest: decode.Identity()})
		}
		scene.Skeleton = sk
	}

	mesh := decode.Mesh{Name: base, Skinned: anyBlend, Transform: decode.Identity()}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	inPlace := b.exclusive(subs)
	prims, errs := b.primitives(ctx, subs, layouts, nbones, inPlace)
	for i, s := range subs {
		mat := material(i, s)
		scene.Materials = append(scene.Materials, mat)
		if s.FaceCount == 0 {
			continue // a primitive needs at least one triangle
		}
		if errs[i] != nil {
			return nil, errs[i] // the first submesh's error, as in one pass
		}
		p := prims[i]
		p.Name = mat.Name
		p.Material = i
		if anyBlend && p.Joints == nil {
			// Every primitive of a skinned mesh is bound: to the root.
			p.Joints = make([][4]uint16, len(p.Positions))
			p.Weights = make([][4]float32, len(p.Positions))
			for k := range p.Weights {
				p.Weights[k][0] = 1
			}
		}
		mesh.Primitives = append(mesh.Primitives, p)
	}
	if len(mesh.Primitives) > 0 {
		scene.Meshes = append(scene.Meshes, mesh)
	}
	scene.JoinAndRepair()
	return scene, nil
}

// primitives builds the primitive of every submesh with faces. Files of
// many submeshes build several at once (each worker with its own remap
// table); every submesh is attempted and errs[i] holds submesh i's error,
// so the caller reports the first in file order.
func (b *builder) primitives(ctx context.Context, subs []*Submesh, layouts []layout, nbones int, inPlace []bool) ([]decode.Primitive, []error) {
	prims := make([]decode.Primitive, len(subs))
	errs := make([]error, len(subs))
	var work []int
	corners := 0
	for i, s := range subs {
		if s.FaceCount > 0 {
			work = append(work, i)
			corners += 3 * int(s.FaceCount)
		}
	}
	if len(work) == 0 {
		return prims, errs
	}
	workers := 1
	if len(work) > 1 && corners >= 2*decode.ParallelGrain {
		workers = min(runtime.GOMAXPROCS(0), len(work))
	}
	nv := b.vertices()
	// each runs fn for every submesh with faces, several at once on large
	// files; each worker has its own remap table, −1 between calls.
	remaps := make([][]int32, workers)
	each := func(fn func(i int, remap []int32) error) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for wk := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				remap := remaps[wk]
				if remap == nil {
					remap = make([]int32, nv)
					for k := range remap {
						remap[k] = -1
					}
					remaps[wk] = remap
				}
				for {
					w := int(next.Add(1)) - 1
					if w >= len(work) {
						return
					}
					i := work[w]
					if errs[i] != nil {
						continue
					}
					if err := ctx.Err(); err != nil {
						errs[i] = err
						continue
					}
					errs[i] = fn(i, remap)
				}
			}()
		}
		wg.Wait()
	}

	// First every submesh's vertices are numbered, which tells which
	// records each uses; then the records are converted, from the file
	// when the submeshes read (almost) disjoint ranges of them.
	orders := make([][]uint32, len(subs))
	each(func(i int, remap []int32) error {
		var err error
		prims[i].Indices, orders[i], err = b.numberSub(subs[i], remap, inPlace[i])
		for _, v := range orders[i] {
			remap[v] = -1
		}
		return err
	})
	for _, i := range work {
		if errs[i] != nil {
			return prims, errs // build reports the first submesh's
		}
	}
	stream := false
	if b.vert.Data == nil && b.src != nil {
		if stream = streamable(work, layouts, orders, nv); !stream {
			if err := b.loadVert(); err != nil {
				errs[work[0]] = err
				return prims, errs
			}
		}
	}
	each(func(i int, remap []int32) error {
		return b.fill(&prims[i], subs[i], &layouts[i], nbones, orders[i], remap, stream)
	})
	return prims, errs
}

// streamable reports whether the submeshes' records may be converted
// straight from the file (stream) rather than from VERT's data in memory:
// every layout converts by column (unskinned, one position), and the
// ranges of records the submeshes use overlap so little that reading each
// range reads VERT about once.
func streamable(work []int, layouts []layout, orders [][]uint32, nv int) bool {
	total := 0
	for _, i := range work {
		l := &layouts[i]
		if l.has(UsageBlendWeight) || l.has(UsageBlendIndices) || l.count(UsagePosition, 0) != 1 {
			return false
		}
		if lo, hi, ok := span(orders[i]); ok {
			total += int(hi-lo) + 1
		}
	}
	return total <= nv+nv/4
}

// span returns the lowest and highest record of order.
func span(order []uint32) (lo, hi uint32, ok bool) {
	if len(order) == 0 {
		return 0, 0, false
	}
	lo, hi = order[0], order[0]
	for _, v := range order {
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi, true
}

// exclusive reports, per submesh, whether its vertices may be numbered in
// place: the builder owns the File and no other submesh's face range
// overlaps the submesh's (reading faces another primitive has already
// renumbered would be wrong).
func (b *builder) exclusive(subs []*Submesh) []bool {
	out := make([]bool, len(subs))
	if !b.own {
		return out
	}
	type span struct {
		lo, hi uint64
		i      int
	}
	var spans []span
	for i, s := range subs {
		if s.FaceCount > 0 {
			spans = append(spans, span{uint64(s.FaceStart), uint64(s.FaceStart) + uint64(s.FaceCount), i})
		}
	}
	slices.SortFunc(spans, func(x, y span) int { return cmp.Compare(x.lo, y.lo) })
	var reach uint64 // the furthest end of the spans before k
	for k, sp := range spans {
		if (k == 0 || reach <= sp.lo) && (k == len(spans)-1 || sp.hi <= spans[k+1].lo) {
			out[sp.i] = true
		}
		reach = max(reach, sp.hi)
	}
	return out
}

// vertices is the number of whole vertex records VERT holds.
func (b *builder) vertices() int {
	if b.vert.Size == 0 {
		return 0
	}
	if b.vert.Data == nil && b.src != nil {
		return int(b.vert.Count) // left in the file (see stream); the parse checked the claim
	}
	return len(b.vert.Data) / int(b.vert.Size)
}

// loadVert reads VERT's records, which the parse left in the file.
func (b *builder) loadVert() error {
	v := b.vert
	data := make([]byte, int64(v.Count)*int64(v.Size))
	off := v.Offset + 12
	if at, err := readAtParallel(b.src, data, off); err != nil {
		return &decode.FormatError{File: b.file, Section: section(v), Field: "vertices", Offset: at,
			Msg: fmt.Sprintf("reading %d bytes at 0x%x", len(data), off), Err: err}
	}
	v.Data = data
	return nil
}

func formatDesc(s *Submesh) string {
	switch s.Kind {
	case KindMESH:
		return "fvf " + hex32(s.FVF)
	case KindSUBMGEM3:
		return "vertex_format " + hex32(uint32(s.VertexFormat))
	}
	return fmt.Sprintf("%d declared elements", len(s.Elements))
}

// material describes submesh i: named after its material, or its diffuse
// texture when it stores texture names.
func material(i int, s *Submesh) decode.Material {
	m := decode.Material{Name: s.Material}
	if s.Kind == KindMESH && s.Flags&FlagMaterial == 0 {
		m.Name = s.Diffuse
		for _, t := range []decode.Texture{
			{Role: "diffuse", Path: s.Diffuse}, {Role: "specular", Path: s.Specular},
			{Role: "bump", Path: s.Bump}, {Role: "diffuse1", Path: s.Diffuse1}} {
			if t.Path != "" {
				m.Textures = append(m.Textures, t)
			}
		}
	}
	if m.Name == "" {
		m.Name = fmt.Sprintf("submesh %d", i)
	}
	if s.Kind == KindSUBMGEM3 {
		m.DoubleSided = s.Flags&GEM3TwoSided != 0
	} else {
		m.DoubleSided = s.Flags&FlagTwoSided != 0
		m.AlphaBlend = s.Flags&FlagAlpha != 0
	}
	return m
}

// convert mirrors Y and rotates Z up to Y up: (x, y, z) → (x, z, y).
func convert(x, y, z float32) [3]float32 { return decode.ZUpToYUp([3]float32{x, -y, z}) }

// finite maps NaN and ±Inf (all exponent bits set) to 0.
func finite(v float32) float32 {
	if math.Float32bits(v)&0x7f800000 == 0x7f800000 {
		return 0
	}
	return v
}

func clamp01(v float32) float32 {
	switch {
	case !(v > 0):
		return 0
	case v > 1:
		return 1
	}
	return v
}

// numberSub and fill build one submesh's primitive: only the vertices its
// faces reference, numbered in order of first use, so padding vertices
// never appear.
//
// numberSub numbers submesh s's vertices (see number) and returns its
// primitive's indices and the record of each vertex. In place, the indices
// are the submesh's own slice of the index chunk's values.
func (b *builder) numberSub(s *Submesh, remap []int32, inPlace bool) (idx, order []uint32, err error) {
	first := 3 * int(s.FaceStart)
	faces := b.idx.Values[first : first+3*int(s.FaceCount)]
	if inPlace {
		idx = faces[:len(faces):len(faces)]
	} else {
		idx = make([]uint32, len(faces))
	}
	// Mirrored meshes store counter-clockwise faces (their normals agree
	// with (b−a)×(c−a)); after the Y mirror that turns clockwise.
	flip := (s.Kind != KindSUBMGEM3 && s.Flags&FlagMirrored != 0) || b.mirror
	order, err = b.number(faces, first, remap, idx, flip)
	return idx, order, err
}

// fill makes p's attributes for the records of order, reading them from
// the file (stream) or from VERT's data. remap must hold −1 for every
// vertex and does again on return.
func (b *builder) fill(p *decode.Primitive, s *Submesh, l *layout, nbones int, order []uint32, remap []int32, stream bool) error {
	n := len(order)
	var (
		uvSets   = l.uvCount()
		colorSet = l.colorCount()
		weights  []attr
		indices  *attr
	)
	p.Normals, p.Tangents, p.UVs, p.Colors, p.Joints, p.Weights = nil, nil, nil, nil, nil, nil
	for k, a := range l.Attrs {
		switch a.Usage {
		case UsageNormal:
			if a.Index == 0 && p.Normals == nil {
				p.Normals = make([][3]float32, n)
			}
		case UsageTangent:
			if a.Index == 0 && p.Tangents == nil {
				p.Tangents = make([][4]float32, n)
			}
		case UsageBlendWeight:
			weights = append(weights, a)
		case UsageBlendIndices:
			if indices == nil {
				indices = &l.Attrs[k]
			}
		}
	}
	p.Positions = make([][3]float32, n)
	if uvSets > 0 || b.basis != nil {
		extra := 0
		if b.basis != nil {
			extra = 1
		}
		p.UVs = make([][][2]float32, uvSets+extra)
		for k := range p.UVs {
			p.UVs[k] = make([][2]float32, n)
		}
	}
	if colorSet > 0 {
		p.Colors = make([][][4]float32, colorSet)
		for k := range p.Colors {
			p.Colors[k] = make([][4]float32, n)
		}
	}
	skinned := len(weights) > 0 || indices != nil
	if skinned {
		p.Joints = make([][4]uint16, n)
		p.Weights = make([][4]float32, n)
	}
	f := &filler{b: b, p: p, s: s, l: l, uvSets: uvSets, nbones: nbones, skinned: skinned,
		halved: b.vert.Flags&VertFullColor == 0, indices: indices}
	if stream {
		for j, v := range order {
			remap[v] = int32(j)
		}
		err := f.stream(order, remap)
		for _, v := range order {
			remap[v] = -1
		}
		return err
	}
	// Each vertex writes only its own element of p's slices, so ranges of
	// vertices convert in parallel; the error returned is the one the
	// lowest vertex meets, as in a sequential loop.
	byColumn := !skinned && l.count(UsagePosition, 0) == 1
	return decode.Parallel(len(order), func(lo, hi int) error {
		if byColumn {
			f.columns(order[lo:hi], lo)
			return nil
		}
		for j := lo; j < hi; j++ {
			if err := f.vertex(j, order[j]); err != nil {
				return err
			}
		}
		return nil
	})
}

// badIndex is the error for index k of the index chunk, v, which is past
// the count VERT records.
func (b *builder) badIndex(k int, v, count uint32) error {
	width := int64(2)
	if b.idx.Wide {
		width = 4
	}
	return decode.Errorf(b.file, section(b.idx), fmt.Sprintf("indices[%d]", k),
		b.idx.Offset+8+int64(k)*width, "index %d but VERT has %d vertices", v, count)
}

// number numbers the vertices that faces (indices first, first+1, … of the
// index chunk) reference in order of first use: it fills idx with the new
// numbers, winding reversed when flip is set, and returns the VERT record
// of each number, whose new number remap then holds. remap must hold −1
// for every vertex; the caller sets those of order back to −1.
//
// Large lists are numbered on all CPUs in three passes: each part of the
// list finds the vertices it uses in its own order of first use (a bitset
// per part); one pass over those short lists, in part order, gives every
// vertex the number a sequential walk would; then the parts write idx. The
// error is the one for the lowest bad index, as in a sequential walk.
func (b *builder) number(faces []uint32, first int, remap []int32, idx []uint32, flip bool) ([]uint32, error) {
	count := uint32(b.vertices())
	parts := 1
	if len(faces) >= 2*decode.ParallelGrain {
		parts = min(runtime.GOMAXPROCS(0), len(faces)/decode.ParallelGrain)
	}
	var order []uint32
	if parts <= 1 {
		order = make([]uint32, 0, min(len(faces), int(count)))
		for k, v := range faces {
			if v >= count {
				for _, v := range order {
					remap[v] = -1
				}
				return nil, b.badIndex(first+k, v, count)
			}
			r := remap[v]
			if r < 0 {
				r = int32(len(order))
				remap[v] = r
				order = append(order, v)
			}
			idx[k] = uint32(r)
		}
		if flip {
			for t := 0; t+2 < len(idx); t += 3 {
				idx[t+1], idx[t+2] = idx[t+2], idx[t+1]
			}
		}
	} else {
		// Parts end on whole triangles, so that the last pass can flip
		// winding within its own part.
		tris := len(faces) / 3
		bound := func(r int) int { return 3 * (tris * r / parts) }
		used := make([][]uint32, parts)
		err := decode.ParallelEach(parts, func(r int) error {
			lo, hi := bound(r), bound(r+1)
			if r == parts-1 {
				hi = len(faces)
			}
			seen := make([]uint64, (count+63)/64)
			list := make([]uint32, 0, min(hi-lo, int(count)))
			for k, v := range faces[lo:hi] {
				if v >= count {
					return b.badIndex(first+lo+k, v, count)
				}
				w, m := v>>6, uint64(1)<<(v&63)
				if seen[w]&m == 0 {
					seen[w] |= m
					list = append(list, v)
				}
			}
			used[r] = list
			return nil
		})
		if err != nil {
			return nil, err
		}
		n := 0
		for _, list := range used {
			n += len(list)
		}
		order = make([]uint32, 0, min(n, int(count)))
		for _, list := range used {
			for _, v := range list {
				if remap[v] < 0 {
					remap[v] = int32(len(order))
					order = append(order, v)
				}
			}
		}
		decode.ParallelEach(parts, func(r int) error {
			lo, hi := bound(r), bound(r+1)
			if r == parts-1 {
				hi = len(faces)
			}
			d, f := idx[lo:hi], faces[lo:hi]
			for k, v := range f {
				d[k] = uint32(remap[v])
			}
			if flip {
				for t := 0; t+2 < len(d); t += 3 {
					d[t+1], d[t+2] = d[t+2], d[t+1]
				}
			}
			return nil
		})
	}
	return order, nil
}

// filler converts VERT records into a primitive's attributes.
type filler struct {
	b               *builder
	p               *decode.Primitive
	s               *Submesh
	l               *layout
	uvSets, nbones  int
	skinned, halved bool
	indices         *attr // the first BLENDINDICES element, or nil
}

// columns converts the VERT records vs into elements j0, j0+1, … of the
// primitive, giving exactly what vertex gives, but attribute by attribute
// over blocks of vertices small enough to stay in cache between
// attributes: one decision per attribute and block instead of per element,
// and tight loops for the common types. Attributes run in layout order, so
// a later element of the same usage wins as in vertex. Only for layouts
// without skinning and with one position, which cannot fail.
func (f *filler) columns(vs []uint32, j0 int) {
	size := int(f.b.vert.Size)
	blk := block{data: f.b.vert.Data}
	for lo := 0; lo < len(vs); lo += blockLen {
		part := vs[lo:min(lo+blockLen, len(vs))]
		blk.n = len(part)
		for k, v := range part {
			blk.offs[k], blk.outs[k] = int(v)*size, j0+lo+k
		}
		f.block(&blk)
	}
}

// streamWindow is the most bytes of records stream reads at once: a window
// stays in cache while its records are converted.
const streamWindow = 256 << 10

// stream converts the vertices of order, whose elements remap gives, from
// VERT's records in the file: the records from the lowest used to the
// highest are read a window at a time (one range per CPU when there are
// many), and each used one is converted into its element. Every record is
// read once, from the file into a window in cache, instead of into a copy
// of VERT the size of the file's vertex data and again from there.
func (f *filler) stream(order []uint32, remap []int32) error {
	if len(order) == 0 {
		return nil
	}
	b := f.b
	size := int(b.vert.Size)
	lo, hi := order[0], order[0]
	for _, v := range order {
		lo, hi = min(lo, v), max(hi, v)
	}
	first, n := int(lo), int(hi-lo)+1
	parts := 1
	if len(order) >= 2*decode.ParallelGrain {
		parts = min(runtime.GOMAXPROCS(0), len(order)/decode.ParallelGrain)
	}
	per := max(1, streamWindow/size) // records per window
	return decode.ParallelEach(parts, func(r int) error {
		from, to := first+n*r/parts, first+n*(r+1)/parts
		buf := make([]byte, min(per, to-from)*size)
		blk := &block{}
		for w := from; w < to; w += per {
			cnt := min(per, to-w)
			d := buf[:cnt*size]
			off := b.vert.Offset + 12 + int64(w)*int64(size)
			if got, err := b.src.ReadAt(d, off); got < len(d) {
				if err == nil || errors.Is(err, io.EOF) {
					err = io.ErrUnexpectedEOF
				}
				return &decode.FormatError{File: b.file, Section: section(b.vert), Field: "vertices", Offset: off + int64(got),
					Msg: fmt.Sprintf("reading %d bytes at 0x%x", len(d), off), Err: err}
			}
			blk.data, blk.n = d, 0
			for i, j := range remap[w : w+cnt] {
				if j < 0 {
					continue
				}
				blk.offs[blk.n], blk.outs[blk.n] = i*size, int(j)
				if blk.n++; blk.n == blockLen {
					f.block(blk)
					blk.n = 0
				}
			}
			if blk.n > 0 {
				f.block(blk)
			}
		}
		return nil
	})
}

// blockLen is the number of records a block converts attribute by
// attribute: few enough that their bytes stay in cache between
// attributes.
const blockLen = 256

// block is up to blockLen VERT records to convert: record k starts at
// data[offs[k]] and becomes element outs[k] of the primitive. data is
// VERT's data, or a window of it read from the file (see stream).
type block struct {
	n    int
	data []byte
	offs [blockLen]int
	outs [blockLen]int
}

// block converts the records of blk, attribute by attribute in layout
// order.
func (f *filler) block(blk *block) {
	for k := range f.l.Attrs {
		f.column(&f.l.Attrs[k], blk)
	}
}

// column converts attribute a of the records of blk.
func (f *filler) column(a *attr, blk *block) {
	b, p := f.b, f.p
	size := int(b.vert.Size)
	data := blk.data
	n, offs, outs := blk.n, &blk.offs, &blk.outs
	off, typ := a.Offset, a.Type
	switch a.Usage {
	case UsagePosition:
		if a.Index != 0 {
			return
		}
		pos := p.Positions
		var uv [][2]float32
		if b.basis != nil {
			uv = p.UVs[f.uvSets]
		}
		if typ == TypeFloat3 && uv == nil {
			positions3(pos, blk, off)
			return
		}
		for k := range n {
			// A non-finite position is kept: decode.Repair drops the
			// triangles that use it.
			val := read3(typ, data[offs[k]+off:])
			pos[outs[k]] = convert(val[0], val[1], val[2])
			if uv != nil {
				uv[outs[k]] = basisUV(b.basis, val[0], val[1])
			}
		}
	case UsageNormal:
		if a.Index != 0 {
			return
		}
		nr := p.Normals
		if typ == TypeFloat3 {
			for k := range n {
				o := offs[k] + off
				e := data[o : o+12 : o+12]
				nr[outs[k]] = normalOf(f32(e), f32(e[4:]), f32(e[8:]))
			}
			return
		}
		unorm := typ == TypeByte4N || typ == TypeColor || typ == typeUByte3N
		for k := range n {
			val := read3(typ, data[offs[k]+off:])
			if unorm {
				val[0], val[1], val[2] = 2*val[0]-1, 2*val[1]-1, 2*val[2]-1
			}
			nr[outs[k]] = normalOf(val[0], val[1], val[2])
		}
	case UsageTexcoord:
		// Non-finite UVs are kept: decode.Repair drops their triangles.
		uv := p.UVs[a.Slot]
		if typ == TypeFloat2 {
			for k := range n {
				o := offs[k] + off
				e := data[o : o+8 : o+8]
				uv[outs[k]] = [2]float32{f32(e), f32(e[4:])}
			}
			return
		}
		for k := range n {
			val := readElem(typ, data[offs[k]+off:])
			uv[outs[k]] = [2]float32{val[0], val[1]}
		}
	case UsageColor:
		col := p.Colors[a.Slot]
		if typ == TypeColor || typ == TypeByte4N {
			// Bytes: each component is one of 256 values, looked up in
			// tables made by the generic loop's own arithmetic.
			rgb := &unormColor
			if f.halved {
				rgb = &halvedColor
			}
			r, g, bl := 0, 1, 2 // BYTE4N: R, G, B, A
			if typ == TypeColor {
				r, bl = 2, 0 // D3DCOLOR: B, G, R, A
			}
			for k := range n {
				o := offs[k] + off
				e := data[o : o+4 : o+4]
				col[outs[k]] = [4]float32{rgb[e[r]], rgb[e[g]], rgb[e[bl]], unormColor[e[3]]}
			}
			return
		}
		for k := range n {
			col[outs[k]] = colorOf(readElem(typ, data[offs[k]+off:]), typeComps(typ) == 4, f.halved)
		}
	default:
		// Tangents (rare, and each needs all four components) and usages
		// the scene does not use go element by element as in vertex.
		for k := range n {
			f.tangent(a, data[offs[k]:offs[k]+size], outs[k])
		}
	}
}

// positions3 converts FLOAT3 positions on their bits: convert is a swap of
// y and z (the Y mirror's negation and the rotation's cancel).
func positions3(pos [][3]float32, blk *block, off int) {
	data := blk.data
	for k := range blk.n {
		o := blk.offs[k] + off
		e := data[o : o+12 : o+12]
		x, y, z := lsb.Uint32(e), lsb.Uint32(e[4:]), lsb.Uint32(e[8:])
		pos[blk.outs[k]] = [3]float32{math.Float32frombits(x), math.Float32frombits(z), math.Float32frombits(y)}
	}
}

var lsb = binary.LittleEndian

// normalOf converts a stored normal: unit length in the scene's frame, or
// nan3 when a component is not finite (decode.Repair recomputes it).
func normalOf(x, y, z float32) [3]float32 {
	if !decode.Finite(x, y, z) {
		return nan3
	}
	return unitNormal(convert(x, y, z))
}

// nan3 and nan4 stand for a normal or tangent with a non-finite component,
// whatever its other components: one value, so such vertices still join.
var (
	nan3 = [3]float32{float32(math.NaN()), float32(math.NaN()), float32(math.NaN())}
	nan4 = [4]float32{float32(math.NaN()), float32(math.NaN()), float32(math.NaN()), float32(math.NaN())}
)

// unitNormal is decode.Normalize3 with a shortcut for a vector whose
// squared length is exactly 1 (axis-aligned normals, common in maps): its
// square root is 1 and dividing by it changes no bit, so v is the answer.
func unitNormal(v [3]float32) [3]float32 {
	x, y, z := float64(v[0]), float64(v[1]), float64(v[2])
	if x*x+y*y+z*z == 1 {
		return v
	}
	return decode.Normalize3(v)
}

// colorOf turns a decoded colour element into the scene's RGBA: non-finite
// components become 0, a missing alpha 1; halved colours have RGB doubled
// (the engine doubles them on load; alpha is blend data); all clamped to
// [0, 1].
func colorOf(val [4]float32, four, halved bool) [4]float32 {
	c := [4]float32{finite(val[0]), finite(val[1]), finite(val[2]), 1}
	if four {
		c[3] = finite(val[3])
	}
	if halved {
		c[0], c[1], c[2] = 2*c[0], 2*c[1], 2*c[2]
	}
	return [4]float32{clamp01(c[0]), clamp01(c[1]), clamp01(c[2]), clamp01(c[3])}
}

// unormColor and halvedColor are colorOf's RGB result for each byte of a
// D3DCOLOR or BYTE4N element (stored as is, and stored halved); alpha is
// never doubled, so it always comes from unormColor.
var unormColor, halvedColor = colorTables()

func colorTables() (full, halved [256]float32) {
	for i := range 256 {
		v := readElem(TypeByte4N, []byte{byte(i), 0, 0, 0})
		full[i] = colorOf(v, true, false)[0]
		halved[i] = colorOf(v, true, true)[0]
	}
	return full, halved
}

// read3 is readElem with the FLOAT3 case (positions, normals) inline.
func read3(t int, b []byte) [4]float32 {
	if t == TypeFloat3 {
		b = b[:12]
		return [4]float32{f32(b), f32(b[4:]), f32(b[8:])}
	}
	return readElem(t, b)
}

// tangent converts attribute a of record rec into element j when it is the
// tangent; other usages are ignored (vertex handles weights).
func (f *filler) tangent(a *attr, rec []byte, j int) {
	if a.Usage != UsageTangent || a.Index != 0 {
		return
	}
	val := readElem(a.Type, rec[a.Offset:])
	if a.Type == TypeByte4N || a.Type == TypeColor {
		val[0], val[1], val[2], val[3] = 2*val[0]-1, 2*val[1]-1, 2*val[2]-1, 2*val[3]-1
	}
	if !decode.Finite(val[0], val[1], val[2]) || typeComps(a.Type) == 4 && !decode.Finite(val[3]) {
		f.p.Tangents[j] = nan4 // decode.Repair recomputes it
		return
	}
	t := decode.Normalize3(convert(val[0], val[1], val[2]))
	sign := float32(-1) // the Y mirror flips handedness
	if typeComps(a.Type) == 4 && val[3] < 0 {
		sign = 1
	}
	f.p.Tangents[j] = [4]float32{t[0], t[1], t[2], sign}
}

// vertex converts VERT record v into element j of the primitive.
func (f *filler) vertex(j int, v uint32) error {
	b, p, s, l := f.b, f.p, f.s, f.l
	uvSets, nbones, skinned, halved, indices := f.uvSets, f.nbones, f.skinned, f.halved, f.indices
	size := int(b.vert.Size)
	rec := b.vert.Data[int(v)*size : int(v)*size+size]
	var w [8]float32
	nw := 0
	for _, a := range l.Attrs {
		val := readElem(a.Type, rec[a.Offset:])
		switch a.Usage {
		case UsagePosition:
			if a.Index != 0 {
				continue
			}
			p.Positions[j] = convert(val[0], val[1], val[2]) // non-finite: decode.Repair's
			if b.basis != nil {
				p.UVs[uvSets][j] = basisUV(b.basis, val[0], val[1])
			}
		case UsageNormal:
			if a.Index != 0 {
				continue
			}
			if a.Type == TypeByte4N || a.Type == TypeColor || a.Type == typeUByte3N {
				val[0], val[1], val[2] = 2*val[0]-1, 2*val[1]-1, 2*val[2]-1
			}
			p.Normals[j] = normalOf(val[0], val[1], val[2])
		case UsageTangent:
			f.tangent(&a, rec, j)
		case UsageTexcoord:
			p.UVs[a.Slot][j] = [2]float32{val[0], val[1]} // non-finite: decode.Repair's
		case UsageColor:
			p.Colors[a.Slot][j] = colorOf(val, typeComps(a.Type) == 4, halved)
		case UsageBlendWeight:
			for q := 0; q < typeComps(a.Type) && nw < len(w); q++ {
				w[nw] = finite(val[q])
				nw++
			}
		}
	}
	if !skinned {
		return nil
	}
	var bi [4]int
	ni := 0
	if indices != nil {
		val := readElem(indices.Type, rec[indices.Offset:])
		ni = typeComps(indices.Type)
		for q := range ni {
			bi[q] = int(clampRound(val[q], 0, 255))
		}
	}
	// Direct3D blending: k influences, the last weight implicit
	// (1 − the others) when fewer weights than influences are stored.
	k := nw + 1
	if indices == nil {
		for q := range min(k, 4) {
			bi[q] = q // non-indexed blending: matrices 0, 1, ...
		}
	} else if k > ni {
		k = ni
	}
	k = min(k, 4)
	if k > nw {
		sum := float32(0)
		for q := 0; q < k-1; q++ {
			sum += w[q]
		}
		w[k-1] = 1 - sum
	}
	recOff := b.vert.Offset + 12 + int64(v)*int64(size)
	if indices != nil {
		recOff += int64(indices.Offset)
	}
	var joints [4]uint16
	for q := range k {
		jt := bi[q]
		if s.HasBoneMap {
			if jt >= len(s.BoneMap) {
				if w[q] > 0 {
					return decode.Errorf(b.file, section(b.vert), "vertices", recOff,
						"vertex %d, used by %s, has bone index %d but the bone map has %d entries", v, section(s), jt, len(s.BoneMap))
				}
				jt = 0
			} else {
				jt = int(s.BoneMap[jt])
			}
		} else if jt > nbones {
			if w[q] > 0 {
				return decode.Errorf(b.file, section(b.vert), "vertices", recOff,
					"vertex %d, used by %s, has bone index %d but SKIN has %d bones", v, section(s), jt, nbones)
			}
			jt = 0
		}
		joints[q] = uint16(jt)
	}
	p.Joints[j], p.Weights[j] = decode.NormalizeWeights(joints[:k], w[:k])
	return nil
}

// basisUV generates a map UV from a stored position, as FORMATS.md gives
// it for BAS2: project (x, y) − polygons.center on the polygon axes
// (dot / |axis|²), then map the result onto the texture axes.
func basisUV(bs *Basis, x, y float32) [2]float32 {
	dx, dy := float64(x)-float64(bs.Poly[0][0]), float64(y)-float64(bs.Poly[0][1])
	proj := func(ax [2]float32) float64 {
		l2 := float64(ax[0])*float64(ax[0]) + float64(ax[1])*float64(ax[1])
		if !(l2 > 0) || math.IsInf(l2, 0) {
			return 0
		}
		return (dx*float64(ax[0]) + dy*float64(ax[1])) / l2
	}
	gx, gy := proj(bs.Poly[1]), proj(bs.Poly[2])
	u := float64(bs.Tex[0][0]) + gx*float64(bs.Tex[1][0]) + gy*float64(bs.Tex[2][0])
	v := float64(bs.Tex[0][1]) + gx*float64(bs.Tex[1][1]) + gy*float64(bs.Tex[2][1])
	return [2]float32{finite(float32(u)), finite(float32(v))}
}
