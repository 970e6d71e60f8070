// Package obj exports a decode.Scene as Wavefront OBJ text and its MTL
// material library.
//
// Layout: a relative `mtllib`, an `o` per mesh, and per primitive its
// vertices (`v x y z`, or `v x y z r g b` when the primitive has a colour
// set, white for the other primitives of that mesh), `vt u 1-v` from the first UV set (OBJ's V axis points up, the
// scene's down), `vn`, then `g` + `usemtl` and its faces with 1-based global
// indices. Positions stay in the scene's Y-up convention, which is what
// Blender's and assimp's OBJ importers expect by default. Meshes that are
// not skinned get their node transform applied, as a glTF viewer would;
// skinned meshes are written in bind pose, like glTF's skinning ignores the
// node. Skins, morph targets and animations have no OBJ form and are left
// out.
//
// Numbers are written with strconv's shortest float32 form into one
// growing buffer: no fmt per number.
package obj

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"unicode"

	"github.com/meshfs/meshfs/decode"
)

// noMaterial names the material of primitives without one, when one
// follows a primitive with a material (OBJ's usemtl state would otherwise
// carry over).
const noMaterial = "meshfs_none"

// Encode returns the OBJ text of s, referring to the material library
// mtlName (a name relative to the .obj), and the MTL text.
func Encode(s *decode.Scene, mtlName string) (obj, mtl []byte, err error) {
	for mi := range s.Meshes {
		for pi := range s.Meshes[mi].Primitives {
			if err := check(&s.Meshes[mi].Primitives[pi]); err != nil {
				m := &s.Meshes[mi]
				return nil, nil, fmt.Errorf("mesh %d (%q) primitive %d (%q): %w", mi, m.Name, pi, m.Primitives[pi].Name, err)
			}
		}
	}
	matNames := materialNames(s.Materials)

	var segs segments
	segs.text("# meshfs\nmtllib " + lineSafe(mtlName) + "\n")

	var nv, nvt, nvn uint64 // vertices written so far, for global indices
	usedMtl, needNone := false, false
	for mi := range s.Meshes {
		m := &s.Meshes[mi]
		if !hasTriangles(m) {
			continue // an object without faces would be an empty object in importers
		}
		segs.text("o " + token(m.Name, "mesh_"+strconv.Itoa(mi)) + "\n")
		var xf *xform
		if !m.Skinned && !m.Transform.IsIdentity() {
			xf = newXform(m.Transform)
		}
		// Blender imports `v x y z r g b` colours only when every vertex
		// of the object has them: primitives without colours get white
		// (as Blender's glTF importer gives them).
		meshColors := false
		for pi := range m.Primitives {
			p := &m.Primitives[pi]
			if len(p.Indices) >= 3 && len(p.Colors) > 0 && len(p.Colors[0]) > 0 {
				meshColors = true
			}
		}
		for pi := range m.Primitives {
			p := &m.Primitives[pi]
			tris := len(p.Indices) / 3
			if tris == 0 || len(p.Positions) == 0 {
				continue
			}
			var colors [][4]float32
			if len(p.Colors) > 0 {
				colors = p.Colors[0]
			}
			var uvs [][2]float32
			if len(p.UVs) > 0 {
				uvs = p.UVs[0]
			}
			pos := p.Positions
			per := 40
			if meshColors {
				per += 36
			}
			segs.ranges(len(pos), per, func(w *writer, lo, hi int) {
				var c [][4]float32
				if colors != nil {
					c = colors[lo:hi]
				}
				w.vertices(pos[lo:hi], c, meshColors, xf)
			})
			if uvs != nil {
				segs.ranges(len(uvs), 28, func(w *writer, lo, hi int) {
					for _, t := range uvs[lo:hi] {
						w.str("vt ")
						w.f(t[0])
						w.sp()
						w.f(1 - fin(t[1]))
						w.nl()
					}
				})
			}
			if nr := p.Normals; nr != nil {
				segs.ranges(len(nr), 40, func(w *writer, lo, hi int) {
					for _, n := range nr[lo:hi] {
						if xf != nil {
							n = xf.normal(n)
						}
						w.str("vn ")
						w.vec3(n)
						w.nl()
					}
				})
			}

			head := "g " + token(p.Name, token(m.Name, "mesh_"+strconv.Itoa(mi))+"_"+strconv.Itoa(pi)) + "\n"
			if p.Material >= 0 && p.Material < len(s.Materials) {
				head += "usemtl " + matNames[p.Material] + "\n"
				usedMtl = true
			} else if usedMtl {
				head += "usemtl " + noMaterial + "\n"
				needNone = true
			}
			segs.text(head)
			idx := p.Indices[:3*tris]
			v0, vt0, vn0 := nv, nvt, nvn
			hasUV, hasN, flip := uvs != nil, p.Normals != nil, xf != nil && xf.flip
			digits := len(strconv.FormatUint(nv+uint64(len(pos)), 10)) + 1
			corner := digits
			if hasUV || hasN {
				corner += 2 * digits
			}
			segs.ranges(tris, 2+3*corner, func(w *writer, lo, hi int) {
				w.faces(idx[3*lo:3*hi], v0, vt0, vn0, hasUV, hasN, flip)
			})
			nv += uint64(len(pos))
			if uvs != nil {
				nvt += uint64(len(uvs))
			}
			if p.Normals != nil {
				nvn += uint64(len(p.Normals))
			}
		}
	}
	return segs.join(), materialLibrary(s.Materials, matNames, needNone), nil
}

// segments is the OBJ text as an ordered list of pieces: fixed text, or
// element ranges formatted by a function. Large files format their pieces
// on all CPUs, each into its own buffer, and join them once at the end.
type segments struct {
	list []segment
	size int // estimated total bytes
}

type segment struct {
	text   string
	fn     func(w *writer, lo, hi int)
	lo, hi int
	est    int // estimated bytes
	out    []byte
}

// segElems is the number of elements (vertices, triangles) in one piece.
const segElems = 1 << 15

func (s *segments) text(t string) {
	s.list = append(s.list, segment{text: t})
	s.size += len(t)
}

// ranges adds n elements formatted by fn, about per bytes each.
func (s *segments) ranges(n, per int, fn func(w *writer, lo, hi int)) {
	for lo := 0; lo < n; lo += segElems {
		hi := min(lo+segElems, n)
		s.list = append(s.list, segment{fn: fn, lo: lo, hi: hi, est: per * (hi - lo)})
		s.size += per * (hi - lo)
	}
}

func (s *segments) join() []byte {
	workers := runtime.GOMAXPROCS(0)
	format := func(g *segment) {
		w := &writer{b: make([]byte, 0, g.est)}
		g.fn(w, g.lo, g.hi)
		g.out = w.b
	}
	if s.size < 1<<20 || workers < 2 {
		// Small: format straight into the result.
		w := &writer{b: make([]byte, 0, s.size)}
		for i := range s.list {
			g := &s.list[i]
			if g.fn == nil {
				w.str(g.text)
			} else {
				g.fn(w, g.lo, g.hi)
			}
		}
		return w.b
	}
	decode.ParallelEach(len(s.list), func(i int) error {
		if g := &s.list[i]; g.fn != nil {
			format(g)
		}
		return nil
	})
	// Join: each piece's place is known now, so the copies run on all
	// CPUs too.
	at := make([]int, len(s.list)+1)
	for i := range s.list {
		at[i+1] = at[i] + len(s.list[i].text) + len(s.list[i].out)
	}
	out := make([]byte, at[len(s.list)])
	decode.ParallelEach(len(s.list), func(i int) error {
		g := &s.list[i]
		n := copy(out[at[i]:], g.text)
		copy(out[at[i]+n:], g.out)
		g.out = nil
		return nil
	})
	return out
}

func hasTriangles(m *decode.Mesh) bool {
	for i := range m.Primitives {
		if len(m.Primitives[i].Indices) >= 3 && len(m.Primitives[i].Positions) > 0 {
			return true
		}
	}
	return false
}

// check rejects primitives that break the scene contract in ways that
// cannot be written: an index past the vertices, attributes of another length.
func check(p *decode.Primitive) error {
	n := len(p.Positions)
	for _, i := range p.Indices[:len(p.Indices)/3*3] {
		if int64(i) >= int64(n) {
			return fmt.Errorf("index %d out of range for %d vertices", i, n)
		}
	}
	if len(p.Normals) != 0 && len(p.Normals) != n {
		return fmt.Errorf("normals: %d elements for %d vertices", len(p.Normals), n)
	}
	if len(p.UVs) > 0 && len(p.UVs[0]) != 0 && len(p.UVs[0]) != n {
		return fmt.Errorf("UV set 0: %d elements for %d vertices", len(p.UVs[0]), n)
	}
	if len(p.Colors) > 0 && len(p.Colors[0]) != 0 && len(p.Colors[0]) != n {
		return fmt.Errorf("colour set 0: %d elements for %d vertices", len(p.Colors[0]), n)
	}
	return nil
}

// materialNames gives each material a name usable after usemtl/newmtl:
// one token, never empty.
func materialNames(ms []decode.Material) []string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = token(m.Name, "material_"+strconv.Itoa(i))
	}
	return names
}

func materialLibrary(ms []decode.Material, names []string, needNone bool) []byte {
	w := &writer{b: make([]byte, 0, 64+128*len(ms))}
	w.str("# meshfs\n")
	done := map[string]bool{}
	for i := range ms {
		m := &ms[i]
		// Two materials of the same name are one material to an OBJ
		// reader; the first one's properties are written.
		if done[names[i]] {
			continue
		}
		done[names[i]] = true
		w.nl()
		w.str("newmtl ")
		w.str(names[i])
		w.nl()
		c := [4]float32{1, 1, 1, 1}
		if m.BaseColor != ([4]float32{}) {
			c = m.BaseColor
		}
		w.str("Kd ")
		w.f(clamp01(c[0]))
		w.sp()
		w.f(clamp01(c[1]))
		w.sp()
		w.f(clamp01(c[2]))
		w.nl()
		if m.AlphaBlend {
			w.str("d ")
			w.f(clamp01(c[3]))
			w.nl()
		}
		// A resolved texture is referenced where it is as a file; an
		// unresolved one by its name as stored.
		switch {
		case m.BaseColorMap != nil && m.BaseColorMap.Ref != "":
			w.str("map_Kd ")
			w.str(m.BaseColorMap.Ref)
			w.nl()
			if m.AlphaBlend || m.AlphaMask {
				w.str("map_d ")
				w.str(m.BaseColorMap.Ref)
				w.nl()
			}
		case diffuse(m.Textures) != "":
			w.str("map_Kd ")
			w.str(diffuse(m.Textures))
			w.nl()
		}
		if m.NormalMap != nil && m.NormalMap.Ref != "" {
			w.str("map_Bump ")
			w.str(m.NormalMap.Ref)
			w.nl()
		}
	}
	if needNone && !done[noMaterial] {
		w.str("\nnewmtl " + noMaterial + "\nKd 1 1 1\n")
	}
	return w.b
}

// diffuse returns the path of the material's diffuse texture: the one
// whose role is "diffuse", else the first whose role starts with it.
// Backslashes become slashes so the path resolves off Windows too.
func diffuse(ts []decode.Texture) string {
	pick := -1
	for i, t := range ts {
		if t.Path == "" {
			continue
		}
		if t.Role == "diffuse" {
			pick = i
			break
		}
		if pick < 0 && strings.HasPrefix(t.Role, "diffuse") {
			pick = i
		}
	}
	if pick < 0 {
		return ""
	}
	return lineSafe(strings.ReplaceAll(ts[pick].Path, `\`, "/"))
}

// token makes s one OBJ token: whitespace and control characters become
// '_'. An empty result becomes def.
func token(s, def string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return '_'
		}
		return r
	}, s)
	if s == "" {
		return def
	}
	return s
}

// lineSafe keeps s on one line.
func lineSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return '_'
		}
		return r
	}, s)
}

// xform applies a mesh node's TRS to positions (scale, rotate, translate)
// and to normals (inverse-transpose: divide by scale, rotate, renormalise).
type xform struct {
	t [3]float64
	s [3]float64
	r [9]float64 // row-major rotation matrix
	// flip is set for a mirroring transform (negative determinant): baked
	// into the positions it would turn faces inside out, so the winding is
	// reversed (glTF viewers do the same for a mirrored node).
	flip bool
}

func newXform(t decode.TRS) *xform {
	x := &xform{}
	q := t.Rotation
	l := math.Sqrt(float64(q[0])*float64(q[0]) + float64(q[1])*float64(q[1]) + float64(q[2])*float64(q[2]) + float64(q[3])*float64(q[3]))
	qx, qy, qz, qw := 0.0, 0.0, 0.0, 1.0
	if l > 1e-12 && !math.IsInf(l, 0) {
		qx, qy, qz, qw = float64(q[0])/l, float64(q[1])/l, float64(q[2])/l, float64(q[3])/l
	}
	x.r = [9]float64{
		1 - 2*(qy*qy+qz*qz), 2 * (qx*qy - qz*qw), 2 * (qx*qz + qy*qw),
		2 * (qx*qy + qz*qw), 1 - 2*(qx*qx+qz*qz), 2 * (qy*qz - qx*qw),
		2 * (qx*qz - qy*qw), 2 * (qy*qz + qx*qw), 1 - 2*(qx*qx+qy*qy),
	}
	for k := range 3 {
		x.t[k] = float64(fin(t.Translation[k]))
		x.s[k] = float64(fin(t.Scale[k]))
	}
	if x.s == ([3]float64{}) { // scale not filled in
		x.s = [3]float64{1, 1, 1}
	}
	x.flip = x.s[0]*x.s[1]*x.s[2] < 0
	return x
}

func (x *xform) point(p [3]float32) [3]float32 {
	v := [3]float64{float64(p[0]) * x.s[0], float64(p[1]) * x.s[1], float64(p[2]) * x.s[2]}
	var o [3]float32
	for k := range 3 {
		o[k] = float32(x.r[3*k]*v[0] + x.r[3*k+1]*v[1] + x.r[3*k+2]*v[2] + x.t[k])
	}
	return o
}

func (x *xform) normal(n [3]float32) [3]float32 {
	var v [3]float64
	for k := range 3 {
		if x.s[k] != 0 {
			v[k] = float64(n[k]) / x.s[k]
		}
	}
	var o [3]float32
	for k := range 3 {
		o[k] = float32(x.r[3*k]*v[0] + x.r[3*k+1]*v[1] + x.r[3*k+2]*v[2])
	}
	return decode.Normalize3(o)
}

type writer struct{ b []byte }

func (w *writer) str(s string) { w.b = append(w.b, s...) }
func (w *writer) nl()          { w.b = append(w.b, '\n') }
func (w *writer) sp()          { w.b = append(w.b, ' ') }

// f writes the shortest text that reads back as the same float32.
func (w *writer) f(v float32) {
	v = fin(v)
	if v == 0 {
		w.b = append(w.b, '0') // also for -0
		return
	}
	w.b = strconv.AppendFloat(w.b, float64(v), 'g', -1, 32)
}

func (w *writer) vec3(v [3]float32) {
	w.f(v[0])
	w.sp()
	w.f(v[1])
	w.sp()
	w.f(v[2])
}

// vertices writes `v` lines, with the colours' RGB appended, or white when
// white is set and there are no colours.
func (w *writer) vertices(pos [][3]float32, colors [][4]float32, white bool, xf *xform) {
	for i, p := range pos {
		if xf != nil {
			p = xf.point(p)
		}
		w.b = append(w.b, 'v', ' ')
		w.vec3(p)
		if colors == nil && white {
			w.str(" 1 1 1")
		}
		if colors != nil {
			c := colors[i]
			w.sp()
			w.f(clamp01(c[0]))
			w.sp()
			w.f(clamp01(c[1]))
			w.sp()
			w.f(clamp01(c[2]))
		}
		w.nl()
	}
}

// faces writes one `f` line per triangle; the vt and vn parts of each
// corner appear only when the primitive has UVs or normals. Each line is
// put together in a small array and appended once; when the v, vt and vn
// numbers of a corner are equal (the usual case: every primitive so far
// had all three) the number is formatted once.
func (w *writer) faces(idx []uint32, nv, nvt, nvn uint64, uv, normal, flip bool) {
	same := (!uv || nvt == nv) && (!normal || nvn == nv)
	var line [2 + 3*(1+3*maxDigits+2)]byte
	for t := 0; t+3 <= len(idx); t += 3 {
		tri := [3]uint32{idx[t], idx[t+1], idx[t+2]}
		if flip {
			tri[1], tri[2] = tri[2], tri[1]
		}
		line[0] = 'f'
		l := 1
		for _, i := range tri {
			line[l] = ' '
			l++
			d := putUint(line[l:], nv+uint64(i)+1)
			num := line[l : l+d]
			l += d
			if uv || normal {
				line[l] = '/'
				l++
				if uv {
					if same {
						l += copy(line[l:], num)
					} else {
						l += putUint(line[l:], nvt+uint64(i)+1)
					}
				}
				if normal {
					line[l] = '/'
					l++
					if same {
						l += copy(line[l:], num)
					} else {
						l += putUint(line[l:], nvn+uint64(i)+1)
					}
				}
			}
		}
		line[l] = '\n'
		w.b = append(w.b, line[:l+1]...)
	}
}

// maxDigits is the length of the largest uint64 in decimal.
const maxDigits = 20

// putUint writes v in decimal at the start of dst (which has room for
// maxDigits bytes) and returns the number of bytes written.
func putUint(dst []byte, v uint64) int {
	n := 1
	for x := v; x >= 10; x /= 10 {
		n++
	}
	dst = dst[:n]
	for i := n - 1; i > 0; i-- {
		q := v / 10
		dst[i] = byte('0' + v - 10*q)
		v = q
	}
	dst[0] = byte('0' + v)
	return n
}

func fin(f float32) float32 {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return 0
	}
	return f
}

func clamp01(f float32) float32 {
	if !(f > 0) {
		return 0
	}
	if f > 1 {
		return 1
	}
	return f
}
