package decode

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Repair is one change Repair made to one attribute of one primitive
// because the source holds non-finite values (NaN, ±Inf) in it.
type Repair struct {
	Mesh, Primitive string
	// Attribute is "position", "normal", "tangent", "uv0", "uv1", …
	Attribute string
	// Vertices is how many of the primitive's vertices had a non-finite
	// value in the attribute.
	Vertices int
	// Action is what was done:
	//   - RepairDropTriangles: the triangles that use those vertices are
	//     dropped (Triangles counts them), and so are the vertices;
	//   - RepairRecompute: the normals are recomputed from the faces that
	//     use each vertex (area-weighted), the tangents from positions,
	//     normals and the first UV set;
	//   - RepairDropAttribute: the primitive's tangents are dropped, because
	//     the UVs cannot give a tangent for some vertex (no UV set, or its
	//     triangles have no UV area).
	Action    string
	Triangles int
}

// Repair actions.
const (
	RepairDropTriangles = "dropped triangles"
	RepairRecompute     = "recomputed"
	RepairDropAttribute = "dropped attribute"
)

// Repair applies the non-finite policy to every primitive of the scene and
// appends what it changed to s.Repairs. Every decoder applies it to the
// scene it returns (after JoinByValue: JoinAndRepair), so exporters see
// finite data only where the source was sound, and nothing is changed
// where it was.
//
// The policy, per primitive, in this order:
//  1. a vertex with a non-finite position or UV: the triangles that use it
//     are dropped, then the vertices no triangle uses;
//  2. a non-finite normal: recomputed as the normalised sum of the
//     (area-weighted) normals of the triangles that use the vertex, or
//     (0, 1, 0) when they have no area; a finite tangent of such a vertex
//     is made orthogonal to its new normal, and recomputed as in 3 when it
//     lay along it;
//  3. a non-finite tangent: recomputed from the triangles that use the
//     vertex, their positions and first UV set (Lengyel's method), made
//     orthogonal to the normal, with w = ±1 so that cross(normal, tangent)·w
//     points along increasing V; when some such vertex gets no usable
//     direction (no UV set, or no UV area), the primitive's tangents are
//     dropped.
//
// A primitive that loses all its triangles is removed (its mesh stays, so
// animation channels keep their targets). Non-finite values in other
// attributes (colours, weights, morph targets) are the exporters' to
// clamp; they do not change the shape.
func (s *Scene) Repair() { s.repair(nil) }

// JoinAndRepair joins the vertices of every primitive of s by value
// (JoinByValue, the primitives on all CPUs), then applies Repair: the
// join's pass over the attributes finds the primitives with a non-finite
// value, and Repair reads no other primitive again. Decoders call it on
// the scene they return.
func (s *Scene) JoinAndRepair() {
	var prims []*Primitive
	for mi := range s.Meshes {
		for pi := range s.Meshes[mi].Primitives {
			prims = append(prims, &s.Meshes[mi].Primitives[pi])
		}
	}
	sound := make(map[*Primitive]bool, len(prims))
	sounds := make([]bool, len(prims))
	_ = ParallelEach(len(prims), func(i int) error {
		_, sounds[i] = prims[i].joinByValue()
		return nil
	})
	for i, p := range prims {
		sound[p] = sounds[i]
	}
	s.repair(sound)
}

// repair is Repair, skipping the primitives sound holds as sound.
func (s *Scene) repair(sound map[*Primitive]bool) {
	for mi := range s.Meshes {
		m := &s.Meshes[mi]
		kept := m.Primitives[:0]
		for pi := range m.Primitives {
			p := &m.Primitives[pi]
			if sound[p] {
				kept = append(kept, *p)
				continue
			}
			had := len(p.Indices) >= 3
			for _, r := range p.Repair() {
				r.Mesh = m.Name
				s.Repairs = append(s.Repairs, r)
			}
			if had && len(p.Indices) < 3 {
				continue // every triangle dropped: no primitive
			}
			kept = append(kept, *p)
		}
		m.Primitives = kept
	}
}

// Repair applies Scene.Repair's policy to one primitive and returns what
// it changed (Mesh left empty).
func (p *Primitive) Repair() []Repair {
	if p.sound() {
		return nil
	}
	var out []Repair
	add := func(attr string, verts int, action string, tris int) {
		out = append(out, Repair{Primitive: p.Name, Attribute: attr, Vertices: verts, Action: action, Triangles: tris})
	}
	n := len(p.Positions)

	// 1. Positions and UVs: drop the triangles that use a bad vertex.
	var bad []bool
	mark := func(attr string, isBad func(v int) bool) {
		cnt := 0
		var vb []bool
		for v := range n {
			if isBad(v) {
				if vb == nil {
					vb = make([]bool, n)
				}
				vb[v] = true
				cnt++
			}
		}
		if cnt == 0 {
			return
		}
		tris := 0
		for t := 0; t+2 < len(p.Indices); t += 3 {
			if usesAny(vb, p.Indices[t:t+3]) {
				tris++
			}
		}
		add(attr, cnt, RepairDropTriangles, tris)
		if bad == nil {
			bad = vb
			return
		}
		for v, b := range vb {
			bad[v] = bad[v] || b
		}
	}
	mark("position", func(v int) bool { return !Finite(p.Positions[v][:]...) })
	for k, uv := range p.UVs {
		if len(uv) == n {
			mark(fmt.Sprintf("uv%d", k), func(v int) bool { return !Finite(uv[v][:]...) })
		}
	}
	if bad != nil {
		p.dropTriangles(bad)
		n = len(p.Positions)
	}

	// 2. Normals: recompute from the faces.
	var redoTangent []bool
	if len(p.Normals) == n {
		var nb []bool
		cnt := 0
		for v, nr := range p.Normals {
			if !Finite(nr[:]...) {
				if nb == nil {
					nb = make([]bool, n)
				}
				nb[v] = true
				cnt++
			}
		}
		if cnt > 0 {
			p.recomputeNormals(nb)
			add("normal", cnt, RepairRecompute, 0)
			if len(p.Tangents) == n {
				redoTangent = p.orthogonalizeTangents(nb)
			}
		}
	}

	// 3. Tangents: recompute from positions, normals and UVs.
	if len(p.Tangents) == n {
		cnt := 0
		for v, t := range p.Tangents {
			if !Finite(t[:]...) {
				if redoTangent == nil {
					redoTangent = make([]bool, n)
				}
				if !redoTangent[v] {
					redoTangent[v] = true
				}
				cnt++
			}
		}
		if cnt > 0 {
			if p.recomputeTangents(redoTangent) {
				add("tangent", cnt, RepairRecompute, 0)
			} else {
				p.Tangents = nil
				for i := range p.Targets {
					p.Targets[i].Tangents = nil
				}
				add("tangent", cnt, RepairDropAttribute, 0)
			}
		} else if redoTangent != nil && !p.recomputeTangents(redoTangent) {
			// Tangents that lay along a recomputed normal, with no UVs to
			// give them a direction.
			p.Tangents = nil
			for i := range p.Targets {
				p.Targets[i].Tangents = nil
			}
			add("tangent", 0, RepairDropAttribute, 0)
		}
	}
	return out
}

// sound reports whether every position, UV, normal and tangent is
// finite: one pass over their bits, which most primitives need alone.
func (p *Primitive) sound() bool {
	bad := nonFiniteWords(words3(p.Positions)) || nonFiniteWords(words3(p.Normals)) || nonFiniteWords(words4(p.Tangents))
	for _, uv := range p.UVs {
		bad = bad || nonFiniteWords(words2(uv))
	}
	return !bad
}

// nonFiniteWords reports whether some float32 of these bits is NaN or ±Inf.
func nonFiniteWords(w []uint32) bool {
	// An exponent of all ones plus one carries into the word's top bit.
	var acc uint32
	for _, x := range w {
		acc |= (x & 0x7f800000) + 0x00800000
	}
	return acc&0x80000000 != 0
}

// NonFiniteFloats reports whether some little-endian float32 in b (the
// whole words of it) is NaN or ±Inf. Scans use it to learn, without
// decoding, whether Repair will change a file's geometry.
func NonFiniteFloats(b []byte) bool {
	var acc uint32
	for i := 0; i+4 <= len(b); i += 4 {
		x := binary.LittleEndian.Uint32(b[i:])
		acc |= (x & 0x7f800000) + 0x00800000
	}
	return acc&0x80000000 != 0
}

func usesAny(bad []bool, tri []uint32) bool {
	for _, x := range tri {
		if int(x) < len(bad) && bad[x] {
			return true
		}
	}
	return false
}

// dropTriangles removes the triangles that use a vertex marked bad, then
// the vertices no triangle uses, keeping the order of the rest.
func (p *Primitive) dropTriangles(bad []bool) {
	n := len(p.Positions)
	kept := p.Indices[:0]
	for t := 0; t+2 < len(p.Indices); t += 3 {
		tri := p.Indices[t : t+3]
		if !usesAny(bad, tri) {
			kept = append(kept, tri...)
		}
	}
	p.Indices = kept
	used := make([]bool, n)
	for _, x := range p.Indices {
		if int(x) < n {
			used[x] = true
		}
	}
	newOf := make([]uint32, n)
	keep := make([]uint32, 0, n)
	for v, u := range used {
		if u {
			newOf[v] = uint32(len(keep))
			keep = append(keep, uint32(v))
		}
	}
	p.renumber(newOf, keep)
}

// recomputeNormals sets the normal of each vertex marked in redo to the
// normalised sum of the unnormalised normals (twice the area) of the
// triangles that use it.
func (p *Primitive) recomputeNormals(redo []bool) {
	acc := make(map[uint32][3]float64)
	for t := 0; t+2 < len(p.Indices); t += 3 {
		tri := p.Indices[t : t+3]
		if !usesAny(redo, tri) {
			continue
		}
		fn := faceNormal(p.Positions, tri)
		for _, x := range tri {
			if int(x) < len(redo) && redo[x] {
				a := acc[x]
				acc[x] = [3]float64{a[0] + fn[0], a[1] + fn[1], a[2] + fn[2]}
			}
		}
	}
	for v, r := range redo {
		if r {
			p.Normals[v] = unit64(acc[uint32(v)])
		}
	}
}

func faceNormal(pos [][3]float32, tri []uint32) [3]float64 {
	if int(max(tri[0], tri[1], tri[2])) >= len(pos) {
		return [3]float64{}
	}
	a, b, c := pos[tri[0]], pos[tri[1]], pos[tri[2]]
	e1 := [3]float64{float64(b[0] - a[0]), float64(b[1] - a[1]), float64(b[2] - a[2])}
	e2 := [3]float64{float64(c[0] - a[0]), float64(c[1] - a[1]), float64(c[2] - a[2])}
	return cross64(e1, e2)
}

func cross64(a, b [3]float64) [3]float64 {
	return [3]float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

func dot64(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

// unit64 is Normalize3 for a float64 vector.
func unit64(v [3]float64) [3]float32 {
	l := math.Sqrt(dot64(v, v))
	if !(l > 1e-12) || math.IsInf(l, 0) {
		return [3]float32{0, 1, 0}
	}
	return [3]float32{float32(v[0] / l), float32(v[1] / l), float32(v[2] / l)}
}

func vec64(v [3]float32) [3]float64 { return [3]float64{float64(v[0]), float64(v[1]), float64(v[2])} }

// minFrame is the smallest length, relative to the input's, of a tangent
// direction left after removing its part along the normal: below it the
// direction is noise.
const minFrame = 1e-6

// orthogonalizeTangents makes the finite tangents of the vertices marked in
// redo orthogonal to their (new) normals and unit length; it returns the
// vertices whose tangent lay along the normal and must be recomputed, or
// nil.
func (p *Primitive) orthogonalizeTangents(redo []bool) []bool {
	var again []bool
	for v, r := range redo {
		t := p.Tangents[v]
		if !r || !Finite(t[:]...) {
			continue
		}
		nr := vec64(p.Normals[v])
		tv := vec64([3]float32{t[0], t[1], t[2]})
		l0 := math.Sqrt(dot64(tv, tv))
		d := dot64(nr, tv)
		o := [3]float64{tv[0] - d*nr[0], tv[1] - d*nr[1], tv[2] - d*nr[2]}
		if l := math.Sqrt(dot64(o, o)); !(l > minFrame*l0) {
			if again == nil {
				again = make([]bool, len(redo))
			}
			again[v] = true
			continue
		}
		u := unit64(o)
		w := float32(1)
		if t[3] < 0 {
			w = -1
		}
		p.Tangents[v] = [4]float32{u[0], u[1], u[2], w}
	}
	return again
}

// recomputeTangents sets the tangent of each vertex marked in redo from
// the triangles that use it, their positions and first UV set; it reports
// false, changing nothing, when some marked vertex gets no usable direction.
func (p *Primitive) recomputeTangents(redo []bool) bool {
	if len(p.UVs) == 0 || len(p.UVs[0]) != len(p.Positions) {
		return false
	}
	uv := p.UVs[0]
	type frame struct{ s, t [3]float64 }
	acc := make(map[uint32]frame)
	for i := 0; i+2 < len(p.Indices); i += 3 {
		tri := p.Indices[i : i+3]
		if !usesAny(redo, tri) || int(max(tri[0], tri[1], tri[2])) >= len(p.Positions) {
			continue
		}
		a, b, c := vec64(p.Positions[tri[0]]), vec64(p.Positions[tri[1]]), vec64(p.Positions[tri[2]])
		ta, tb, tc := uv[tri[0]], uv[tri[1]], uv[tri[2]]
		e1 := [3]float64{b[0] - a[0], b[1] - a[1], b[2] - a[2]}
		e2 := [3]float64{c[0] - a[0], c[1] - a[1], c[2] - a[2]}
		s1, t1 := float64(tb[0]-ta[0]), float64(tb[1]-ta[1])
		s2, t2 := float64(tc[0]-ta[0]), float64(tc[1]-ta[1])
		det := s1*t2 - s2*t1
		if det == 0 || math.IsInf(det, 0) || math.IsNaN(det) {
			continue // no UV area: no direction from this triangle
		}
		// Weighted by the triangle's area in space over its area in UV
		// (Lengyel's sdir, tdir without the division's sign flip).
		r := 1 / det
		sd := [3]float64{(t2*e1[0] - t1*e2[0]) * r, (t2*e1[1] - t1*e2[1]) * r, (t2*e1[2] - t1*e2[2]) * r}
		td := [3]float64{(s1*e2[0] - s2*e1[0]) * r, (s1*e2[1] - s2*e1[1]) * r, (s1*e2[2] - s2*e1[2]) * r}
		// Weight by the space area too, so a sliver counts little.
		w := math.Sqrt(dot64(cross64(e1, e2), cross64(e1, e2))) * math.Abs(det)
		for _, x := range tri {
			if redo[x] {
				f := acc[x]
				for k := range 3 {
					f.s[k] += sd[k] * w
					f.t[k] += td[k] * w
				}
				acc[x] = f
			}
		}
	}
	out := make(map[int][4]float32, len(acc))
	for v, r := range redo {
		if !r {
			continue
		}
		f := acc[uint32(v)]
		sv := f.s
		var nr [3]float64
		if len(p.Normals) == len(p.Positions) {
			nr = vec64(p.Normals[v])
			d := dot64(nr, sv)
			sv = [3]float64{sv[0] - d*nr[0], sv[1] - d*nr[1], sv[2] - d*nr[2]}
		}
		l := math.Sqrt(dot64(sv, sv))
		if !(l > minFrame*math.Sqrt(dot64(f.s, f.s))) || !(l > 1e-30) || math.IsInf(l, 0) {
			return false
		}
		u := unit64(sv)
		w := float32(1)
		if nr != ([3]float64{}) && dot64(cross64(nr, vec64(u)), f.t) < 0 {
			w = -1
		}
		out[v] = [4]float32{u[0], u[1], u[2], w}
	}
	for v, t := range out {
		p.Tangents[v] = t
	}
	return true
}

// Fields renders repairs for header.json, in order.
func RepairFields(rs []Repair) []Fields {
	out := []Fields{}
	for _, r := range rs {
		var f Fields
		f.Add("mesh", r.Mesh)
		f.Add("primitive", r.Primitive)
		f.Add("attribute", r.Attribute)
		f.Add("vertices", r.Vertices)
		f.Add("action", r.Action)
		if r.Action == RepairDropTriangles {
			f.Add("triangles", r.Triangles)
		}
		out = append(out, f)
	}
	return out
}
