package unigine

import (
	"fmt"
	"math"
	"runtime"

	"github.com/meshfs/meshfs/decode"
)

// Scene turns the raw model into meshfs's neutral scene: one mesh per
// surface, named as the surface (so that each surface is a named object in
// Blender; an unnamed one is called name_i), in Y-up (UNIGINE is Z-up),
// with the skin and morph targets when the file has them (each mesh has its
// surface's targets). The raw model has been
// validated by the reader (indices, counts, joints, transforms), so this
// step does not fail on read files; file names errors for hand-built ones.
// Each primitive's vertices are joined by value, and non-finite positions
// and UVs, which the reader keeps, repaired (decode.Scene.JoinAndRepair) (their triangles dropped; header.json's
// "repairs" lists them, see Scan).
func Scene(f *File, file, name string) (*decode.Scene, error) {
	sc := &decode.Scene{}
	shift := 0
	if len(f.Joints) > 0 {
		sk, sh, err := skeleton(f, file)
		if err != nil {
			return nil, err
		}
		sc.Skeleton, shift = sk, sh
	}
	for i := range f.Anims {
		for _, j := range f.Anims[i].Animated {
			if j < 0 || int(j) >= len(f.Joints) {
				return nil, decode.Errorf(file, fmt.Sprintf("animation %d", i), "animated_joints", 0, "joint %d is not one of the %d joints", j, len(f.Joints))
			}
		}
		chans, err := animChannels(&f.Anims[i], shift, file)
		if err != nil {
			return nil, err
		}
		if chans == nil {
			continue
		}
		an := fmt.Sprintf("%s_animation_%d", name, i)
		if i < len(f.Names) && f.Names[i] != "" {
			an = f.Names[i]
		}
		sc.Animations = append(sc.Animations, decode.Animation{Name: an, Channels: chans})
	}
	perSurface := targetNames(f)
	// Surfaces convert independently: large files do them on all CPUs,
	// reporting the first surface's error.
	prims := make([]decode.Primitive, len(f.Surfaces))
	one := func(i int) (err error) {
		prims[i], err = primitive(f, i, file, shift, perSurface[i])
		return err
	}
	corners := 0
	for i := range f.Surfaces {
		corners += len(f.Surfaces[i].CIndices)
	}
	var err error
	if corners >= 2*decode.ParallelGrain {
		err = decode.ParallelEach(len(prims), one)
	} else {
		for i := range prims {
			if err = one(i); err != nil {
				break
			}
		}
	}
	if err != nil {
		return nil, err
	}
	sc.Meshes = make([]decode.Mesh, len(prims))
	var matOf []int
	sc.Materials, matOf = surfaceMaterials(f, name)
	for i := range prims {
		mn := surfaceName(f, i, name)
		prims[i].Material = matOf[i]
		sc.Meshes[i] = decode.Mesh{Name: mn, Primitives: prims[i : i+1 : i+1], Skinned: sc.Skeleton != nil, TargetNames: perSurface[i], Transform: decode.Identity()}
	}
	sc.JoinAndRepair()
	return sc, nil
}

// surfaceName is surface i's name, or name_i for an unnamed one.
func surfaceName(f *File, i int, name string) string {
	if n := f.Surfaces[i].Name; n != "" {
		return n
	}
	return fmt.Sprintf("%s_%d", name, i)
}

// surfaceMaterials names the materials of f: a mesh file holds no material,
// its surfaces are given theirs by name (the engine's .mat files, which
// export/outputs looks for), so each distinct surface name (surfaceName) is
// one material of that name. It returns them in order of first use and
// each surface's index into them.
func surfaceMaterials(f *File, name string) ([]decode.Material, []int) {
	var mats []decode.Material
	of := make([]int, len(f.Surfaces))
	at := map[string]int{}
	for i := range f.Surfaces {
		n := surfaceName(f, i, name)
		k, ok := at[n]
		if !ok {
			k = len(mats)
			at[n] = k
			mats = append(mats, decode.Material{Name: n})
		}
		of[i] = k
	}
	return mats, of
}

// targetNames returns per surface the name of each of its targets k ≥ 1
// (target 0 is the surface's base, not a target). Unnamed targets are
// called "target_k"; a name repeated within a surface gets ".2", ".3"...
func targetNames(f *File) [][]string {
	per := make([][]string, len(f.Surfaces))
	for i, s := range f.Surfaces {
		used := map[string]int{}
		for k := 1; k < len(s.Targets); k++ {
			n := s.Targets[k].Name
			if n == "" {
				n = fmt.Sprintf("target_%d", k)
			}
			if used[n]++; used[n] > 1 {
				n = fmt.Sprintf("%s.%d", n, used[n])
			}
			per[i] = append(per[i], n)
		}
	}
	return per
}

// join makes one glTF vertex per unique (coordinate, triangle) index pair,
// numbered in order of first use, and returns each vertex's pair and the
// triangle list over the new vertices. Most triangle vertices belong to one
// coordinate vertex, so a table by triangle index answers most corners and
// a map holds only the pairs that share a triangle vertex. A corner outside
// nc coordinate or ntv triangle vertices stops the join: bad is its index
// (−1 when every corner is in range).
//
// When ci and ti are one array (the reader's sameIndices: a surface
// without seams), every pair is (v, v): see joinSame. cOf and tOf are then
// one array too.
func join(ci, ti []uint32, nc, ntv int) (cOf, tOf, idx []uint32, bad int) {
	if sameArray(ci, ti) && len(ti) >= len(ci) {
		vOf, idx, bad := joinSame(ci, min(nc, ntv))
		return vOf, vOf, idx, bad
	}
	idx = unzeroed[uint32](len(ci)) // every corner is written (or idx dropped)
	// byT holds a triangle vertex's first glTF vertex plus one, so that
	// the zeroed allocation already means "none yet".
	byT := make([]uint32, ntv)
	var extra map[uint64]uint32
	// Usually one glTF vertex per triangle vertex: written in place up to
	// ntv, appended beyond (a triangle vertex shared by coordinate vertices).
	cOf = indexScratch.get(ntv) // written up to n before being read
	tOf = indexScratch.get(ntv)
	n := uint32(0)
	ti = ti[:len(ci)]
	for k, c := range ci {
		t := ti[k]
		if uint64(c) >= uint64(nc) || uint64(t) >= uint64(ntv) {
			return nil, nil, nil, k
		}
		if v := byT[t]; v != 0 {
			if cOf[v-1] == c {
				idx[k] = v - 1
				continue
			}
			key := uint64(c)<<32 | uint64(t)
			if extra == nil {
				extra = map[uint64]uint32{}
			}
			if w, ok := extra[key]; ok {
				idx[k] = w
				continue
			}
			extra[key] = n
		} else {
			byT[t] = n + 1
		}
		idx[k] = n
		if int(n) < len(cOf) {
			cOf[n], tOf[n] = c, t
		} else {
			cOf = append(cOf, c)
			tOf = append(tOf, t)
		}
		n++
	}
	return cOf[:n], tOf[:n], idx, -1
}

// joinSame is join for corners whose coordinate and triangle indices are
// the same list ci, over n = min(nc, ntv) vertices: each glTF vertex is
// one index value, numbered in order of first use, so one table by value
// answers every corner (no pair to compare, no map). A corner at n or
// beyond stops it, as in join.
func joinSame(ci []uint32, n int) (vOf, idx []uint32, bad int) {
	idx = unzeroed[uint32](len(ci)) // every corner is written (or idx dropped)
	// byV is each vertex's first-use number plus one; zero: none yet.
	// Cleared by a write pass of its own: make leaves memory fresh from
	// the system untouched, and its first access here, a read, would map
	// the shared zero page that the write after it faults out again
	// (copying it and flushing the other CPUs' TLBs), page by page.
	byV := unzeroed[uint32](n)
	clear(byV)
	vOf = indexScratch.get(n) // written up to the vertex count before being read
	nv := uint32(0)
	un := uint32(n)
	for k, c := range ci {
		if c >= un {
			indexScratch.put(vOf)
			return nil, nil, k
		}
		v := byV[c]
		if v == 0 {
			vOf[nv] = c
			nv++
			byV[c] = nv
			v = nv
		}
		idx[k] = v - 1
	}
	return vOf[:nv], idx, -1
}

// frame decodes a tangent-frame quaternion (FORMATS.md §3.1) into a unit
// normal and tangent with the bitangent sign, in the file's Z-up axes.
func frame(q [4]int16) (n, t [3]float64, sign float32) {
	x, y, z, w := float64(q[0])/32767, float64(q[1])/32767, float64(q[2])/32767, float64(q[3])/32767
	l := math.Sqrt(x*x + y*y + z*z + w*w)
	if l < 1e-6 {
		// No frame: the identity's (normal +Z, tangent +X).
		return [3]float64{0, 0, 1}, [3]float64{1, 0, 0}, 1
	}
	x, y, z, w = x/l, y/l, z/l, w/l
	n = [3]float64{2 * (x*z + w*y), 2 * (y*z - w*x), 1 - 2*(x*x+y*y)}
	t = [3]float64{1 - 2*(y*y+z*z), 2 * (x*y + w*z), 2 * (x*z - w*y)}
	sign = 1
	if q[3] < 0 {
		sign = -1
	}
	return n, t, sign
}

func yup(v [3]float64) [3]float32 {
	return decode.ZUpToYUp([3]float32{float32(v[0]), float32(v[1]), float32(v[2])})
}

// primitive converts surface si; names are its targets k ≥ 1.
func primitive(f *File, si int, file string, shift int, names []string) (decode.Primitive, error) {
	s := &f.Surfaces[si]
	p := decode.Primitive{Name: s.Name, Material: -1}
	if len(s.Targets) == 0 {
		return p, decode.Errorf(file, fmt.Sprintf("surface %d", si), "morph_target_count", 0, "surface has no base target")
	}
	base := s.Targets[0]
	nc, ntv := len(base.Positions), len(base.Tangents)
	if len(s.CIndices) != len(s.TIndices) || len(s.CIndices)%3 != 0 {
		return p, decode.Errorf(file, fmt.Sprintf("surface %d", si), "indices", 0, "%d coordinate and %d triangle indices", len(s.CIndices), len(s.TIndices))
	}
	// The reader has checked all this; a File built by hand may not be.
	sec := fmt.Sprintf("surface %d", si)
	for k, t := range s.Targets {
		if len(t.Positions) != nc || (len(t.Tangents) != 0 && len(t.Tangents) != ntv) {
			return p, decode.Errorf(file, sec, fmt.Sprintf("morph_target[%d]", k), 0, "%d vertices and %d tangents, the base has %d and %d", len(t.Positions), len(t.Tangents), nc, ntv)
		}
	}
	for _, a := range []struct {
		name string
		n    int
		want int
	}{{"uv0", len(s.UV0), ntv}, {"uv1", len(s.UV1), ntv}, {"colors", len(s.Colors), ntv}, {"weights", len(s.Weights), nc}} {
		if a.n != 0 && a.n != a.want {
			return p, decode.Errorf(file, sec, a.name, 0, "%d entries for %d vertices", a.n, a.want)
		}
	}
	for i, in := range s.Weights {
		if len(in) > 4 {
			return p, decode.Errorf(file, sec, "weights", 0, "vertex %d has %d influences", i, len(in))
		}
		for _, x := range in {
			if x.Joint < 0 || int(x.Joint) >= len(f.Joints) {
				return p, decode.Errorf(file, sec, "weights", 0, "vertex %d: joint %d of %d", i, x.Joint, len(f.Joints))
			}
		}
	}
	// Frames are decoded once per triangle vertex into a table the glTF
	// vertices copy from, or once per glTF vertex straight into the
	// primitive. A large surface takes the table, filled on the other
	// CPUs while join runs: join is one sequential pass and the frames are
	// the costliest per-vertex step, so the two overlap. A small one takes
	// the table only when it has fewer triangle vertices than glTF
	// vertices (a triangle vertex shared by several coordinate vertices),
	// so that no frame is decoded twice.
	var normals [][3]float32
	var tangents [][4]float32
	fillTable := func() {
		// Every entry is written: stale scratch arrays do, and they go
		// back once the vertices have copied from them.
		normals = normalScratch.get(ntv)
		tangents = tangentScratch.get(ntv)
		decode.Parallel(ntv, func(lo, hi int) error {
			bt := base.Tangents
			t := lo
			for ; t+1 < hi; t += 2 {
				frameVectors2(bt[t], bt[t+1], &normals[t], &normals[t+1], &tangents[t], &tangents[t+1])
			}
			if t < hi {
				normals[t], tangents[t] = frameVectors(bt[t])
			}
			return nil
		})
	}
	var tableDone chan struct{}
	if ntv >= 2*decode.ParallelGrain && runtime.GOMAXPROCS(0) >= 2 {
		tableDone = make(chan struct{})
		go func() {
			defer close(tableDone)
			fillTable()
		}()
	}
	cOf, tOf, idx, bad := join(s.CIndices, s.TIndices, nc, ntv)
	if tableDone != nil {
		<-tableDone
	}
	if bad >= 0 {
		return p, decode.Errorf(file, fmt.Sprintf("surface %d", si), "indices", 0, "corner %d (%d, %d) outside %d coordinate and %d triangle vertices", bad, s.CIndices[bad], s.TIndices[bad], nc, ntv)
	}
	p.Indices = idx
	nv := len(cOf)
	if tableDone == nil && nv > ntv {
		fillTable()
	}
	// The vertex fill below writes every element of these arrays (and of
	// the UV sets with a source, the colours, joints and weights), so
	// they are not zeroed first.
	p.Positions = unzeroed[[3]float32](nv)
	p.Normals = unzeroed[[3]float32](nv)
	p.Tangents = unzeroed[[4]float32](nv)
	// Per-vertex attribute sets, each taken from its triangle vertex; a nil
	// source leaves its set zero (UV1 without UV0 keeps the set numbering).
	var uvSrc [][][2]float32
	for _, uvs := range [][][2]float32{s.UV0, s.UV1} {
		if len(uvs) == 0 {
			if len(s.UV1) > 0 && len(p.UVs) == 0 {
				p.UVs = append(p.UVs, make([][2]float32, nv))
				uvSrc = append(uvSrc, nil)
			}
			continue
		}
		p.UVs = append(p.UVs, unzeroed[[2]float32](nv))
		uvSrc = append(uvSrc, uvs)
	}
	var col [][4]float32
	if len(s.Colors) > 0 {
		col = unzeroed[[4]float32](nv)
		p.Colors = [][][4]float32{col}
	}
	skinned := shift >= 0 && len(f.Joints) > 0
	if skinned {
		p.Joints = unzeroed[[4]uint16](nv)
		p.Weights = unzeroed[[4]float32](nv)
	}
	// Every glTF vertex is independent of the others: fill them in
	// parallel, one attribute at a time over each range (tight loops over
	// local slices).
	pos, nrm, tng := p.Positions, p.Normals, p.Tangents
	bp, bt := base.Positions, base.Tangents
	decode.Parallel(nv, func(lo, hi int) error {
		for v := lo; v < hi; v++ {
			pos[v] = decode.ZUpToYUp(bp[cOf[v]])
		}
		if normals != nil {
			for v := lo; v < hi; v++ {
				t := tOf[v]
				nrm[v], tng[v] = normals[t], tangents[t]
			}
		} else {
			v := lo
			for ; v+1 < hi; v += 2 {
				frameVectors2(bt[tOf[v]], bt[tOf[v+1]], &nrm[v], &nrm[v+1], &tng[v], &tng[v+1])
			}
			if v < hi {
				nrm[v], tng[v] = frameVectors(bt[tOf[v]])
			}
		}
		for k, src := range uvSrc {
			if src == nil {
				continue
			}
			dst := p.UVs[k]
			for v := lo; v < hi; v++ {
				dst[v] = src[tOf[v]]
			}
		}
		if col != nil {
			for v := lo; v < hi; v++ {
				c := s.Colors[tOf[v]]
				col[v] = [4]float32{float32(c[0]) / 255, float32(c[1]) / 255, float32(c[2]) / 255, float32(c[3]) / 255}
			}
		}
		if skinned {
			for v := lo; v < hi; v++ {
				var js [4]uint16
				var ws [4]float32
				var in []Influence
				if len(s.Weights) > 0 {
					in = s.Weights[cOf[v]]
				}
				for k, x := range in {
					js[k] = uint16(int(x.Joint) + shift)
					ws[k] = float32(x.Weight) / 65535
				}
				p.Joints[v], p.Weights[v] = decode.NormalizeWeights(js[:len(in)], ws[:len(in)])
			}
		}
		return nil
	})
	if normals != nil {
		normalScratch.put(normals)
		tangentScratch.put(tangents)
	}
	// Morph targets: deltas from the base.
	if len(names) > 0 {
		p.Targets = make([]decode.MorphTarget, len(names))
		for ti := range names {
			mt := decode.MorphTarget{Positions: make([][3]float32, nv)}
			tg := s.Targets[ti+1]
			for v := range nv {
				c := cOf[v]
				a, b := tg.Positions[c], base.Positions[c]
				mt.Positions[v] = decode.ZUpToYUp([3]float32{a[0] - b[0], a[1] - b[1], a[2] - b[2]})
			}
			if len(tg.Tangents) == ntv && ntv > 0 {
				mt.Normals, mt.Tangents = frameDeltas(tg.Tangents, p.Normals, p.Tangents, tOf)
			}
			p.Targets[ti] = mt
		}
	}
	// The vertex pairs are join's working arrays; the primitive keeps none.
	indexScratch.put(cOf)
	if !sameArray(tOf, cOf) {
		indexScratch.put(tOf)
	}
	return p, nil
}

// frameVectors decodes a tangent-frame quaternion into the glTF vertex's
// unit normal and tangent (with the bitangent sign), in Y-up axes. It is
// frame, yup and decode.Normalize3 written out as one straight line: the
// same float64 operations in the same order (so the same bits), but with
// no calls and no arrays between them, which let the CPU overlap the
// divisions and square roots of the two vectors; it runs once per vertex
// and was the decoder's costliest step.
func frameVectors(q [4]int16) (nrm [3]float32, tan [4]float32) {
	x, y, z, w := unitShort(q[0]), unitShort(q[1]), unitShort(q[2]), unitShort(q[3])
	l := math.Sqrt(x*x + y*y + z*z + w*w)
	var nx, ny, nz, tx, ty, tz float64
	if l < 1e-6 {
		// No frame: the identity's (normal +Z, tangent +X).
		nx, ny, nz, tx, ty, tz = 0, 0, 1, 1, 0, 0
	} else {
		x, y, z, w = x/l, y/l, z/l, w/l
		nx, ny, nz = 2*(x*z+w*y), 2*(y*z-w*x), 1-2*(x*x+y*y)
		tx, ty, tz = 1-2*(y*y+z*z), 2*(x*y+w*z), 2*(x*z-w*y)
	}
	sign := float32(1)
	if q[3] < 0 && l >= 1e-6 {
		sign = -1
	}
	// Z up to Y up: (x, y, z) → (x, z, −y), rounded to float32 first as
	// yup does, then normalised in float64 as decode.Normalize3 does.
	nrm = normalizeYUp(float32(nx), float32(ny), float32(nz))
	t := normalizeYUp(float32(tx), float32(ty), float32(tz))
	return nrm, [4]float32{t[0], t[1], t[2], sign}
}

// unitShort is float64(s)/32767, computed without a division: the product
// by the reciprocal, corrected by its residual (two fused multiply-adds),
// is the correctly rounded quotient for every int16 (TestUnitShort checks
// all 65 536), and a division is the slowest step of a frame.
func unitShort(s int16) float64 {
	const inv = 1.0 / 32767
	f := float64(s)
	r := f * inv
	return math.FMA(math.FMA(-r, 32767, f), inv, r)
}

// normalizeYUp is decode.Normalize3(decode.ZUpToYUp(v)) for v = (a, b, c).
func normalizeYUp(a, b, c float32) [3]float32 {
	v0, v1, v2 := float64(a), float64(c), float64(-b)
	l := math.Sqrt(v0*v0 + v1*v1 + v2*v2)
	if !(l > 1e-12) || l > math.MaxFloat64 {
		return [3]float32{0, 1, 0}
	}
	return [3]float32{float32(v0 / l), float32(v1 / l), float32(v2 / l)}
}

// frameDeltas returns a target's normal and tangent deltas from the base
// frames (baseN, baseT: the primitive's, per glTF vertex), or nil for
// either when the target does not change it.
func frameDeltas(qs [][4]int16, baseN [][3]float32, baseT [][4]float32, tOf []uint32) (dn, dt [][3]float32) {
	nv := len(tOf)
	dn = make([][3]float32, nv)
	dt = make([][3]float32, nv)
	var anyN, anyT bool
	for v := range nv {
		t := tOf[v]
		n, tg, _ := frame(qs[t])
		nn := decode.Normalize3(yup(n))
		tt := decode.Normalize3(yup(tg))
		bn, bt := baseN[v], baseT[v]
		dn[v] = [3]float32{nn[0] - bn[0], nn[1] - bn[1], nn[2] - bn[2]}
		dt[v] = [3]float32{tt[0] - bt[0], tt[1] - bt[1], tt[2] - bt[2]}
		anyN = anyN || dn[v] != [3]float32{}
		anyT = anyT || dt[v] != [3]float32{}
	}
	if !anyN {
		dn = nil
	}
	if !anyT {
		dt = nil
	}
	return dn, dt
}

// frameVectors2 is frameVectors of two frames at once, their operations
// interleaved: one frame is a chain of divisions and square roots each
// waiting on the one before, too long for the CPU to overlap with the
// next frame's on its own; two independent chains side by side do
// (65 536 frames: ≈ 4.7 → 3.0 ms, BenchmarkFrameVectors2). The operations on
// each frame are frameVectors' own, in the same order, so the bits are
// the same. A frame of near-zero length (no frame) or whose vectors
// normalizeYUp would treat as degenerate takes the one-frame path.
func frameVectors2(q0, q1 [4]int16, n0, n1 *[3]float32, t0, t1 *[4]float32) {
	x0, y0, z0, w0 := unitShort(q0[0]), unitShort(q0[1]), unitShort(q0[2]), unitShort(q0[3])
	x1, y1, z1, w1 := unitShort(q1[0]), unitShort(q1[1]), unitShort(q1[2]), unitShort(q1[3])
	l0 := math.Sqrt(x0*x0 + y0*y0 + z0*z0 + w0*w0)
	l1 := math.Sqrt(x1*x1 + y1*y1 + z1*z1 + w1*w1)
	if l0 < 1e-6 || l1 < 1e-6 {
		*n0, *t0 = frameVectors(q0)
		*n1, *t1 = frameVectors(q1)
		return
	}
	x0, y0, z0, w0 = x0/l0, y0/l0, z0/l0, w0/l0
	x1, y1, z1, w1 = x1/l1, y1/l1, z1/l1, w1/l1
	// Normal and tangent in Z-up, rounded to float32 (as frameVectors),
	// then to Y up: (x, y, z) → (x, z, −y), back in float64.
	na0, nb0, nc0 := float64(float32(2*(x0*z0+w0*y0))), float64(float32(1-2*(x0*x0+y0*y0))), float64(-float32(2*(y0*z0-w0*x0)))
	na1, nb1, nc1 := float64(float32(2*(x1*z1+w1*y1))), float64(float32(1-2*(x1*x1+y1*y1))), float64(-float32(2*(y1*z1-w1*x1)))
	ta0, tb0, tc0 := float64(float32(1-2*(y0*y0+z0*z0))), float64(float32(2*(x0*z0-w0*y0))), float64(-float32(2*(x0*y0+w0*z0)))
	ta1, tb1, tc1 := float64(float32(1-2*(y1*y1+z1*z1))), float64(float32(2*(x1*z1-w1*y1))), float64(-float32(2*(x1*y1+w1*z1)))
	ln0 := math.Sqrt(na0*na0 + nb0*nb0 + nc0*nc0)
	ln1 := math.Sqrt(na1*na1 + nb1*nb1 + nc1*nc1)
	lt0 := math.Sqrt(ta0*ta0 + tb0*tb0 + tc0*tc0)
	lt1 := math.Sqrt(ta1*ta1 + tb1*tb1 + tc1*tc1)
	if !(ln0 > 1e-12) || !(ln1 > 1e-12) || !(lt0 > 1e-12) || !(lt1 > 1e-12) ||
		ln0 > math.MaxFloat64 || ln1 > math.MaxFloat64 || lt0 > math.MaxFloat64 || lt1 > math.MaxFloat64 {
		*n0, *t0 = frameVectors(q0)
		*n1, *t1 = frameVectors(q1)
		return
	}
	*n0 = [3]float32{float32(na0 / ln0), float32(nb0 / ln0), float32(nc0 / ln0)}
	*n1 = [3]float32{float32(na1 / ln1), float32(nb1 / ln1), float32(nc1 / ln1)}
	s0, s1 := float32(1), float32(1)
	if q0[3] < 0 {
		s0 = -1
	}
	if q1[3] < 0 {
		s1 = -1
	}
	*t0 = [4]float32{float32(ta0 / lt0), float32(tb0 / lt0), float32(tc0 / lt0), s0}
	*t1 = [4]float32{float32(ta1 / lt1), float32(tb1 / lt1), float32(tc1 / lt1), s1}
}
