package obj

import (
	"bufio"
	"bytes"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

// ---- a small OBJ/MTL reader for the tests ----

type corner struct{ v, vt, vn int } // 1-based; 0 = absent

type group struct {
	object, name, material string
	faces                  [][3]corner
}

type parsed struct {
	mtllib  string
	objects []string
	v       [][3]float32
	vColor  [][3]float32 // nil entries when a vertex has no colour
	hasCol  []bool
	vt      [][2]float32
	vn      [][3]float32
	groups  []*group
}

func parseFloats(t *testing.T, fields []string) []float32 {
	t.Helper()
	out := make([]float32, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseFloat(f, 32)
		if err != nil {
			t.Fatalf("bad number %q: %v", f, err)
		}
		out[i] = float32(v)
	}
	return out
}

func parseOBJ(t *testing.T, text []byte) *parsed {
	t.Helper()
	p := &parsed{}
	var cur *group
	object := ""
	material := ""
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		fs := strings.Fields(line)
		switch fs[0] {
		case "mtllib":
			p.mtllib = strings.TrimPrefix(line, "mtllib ")
		case "o":
			if len(fs) != 2 {
				t.Fatalf("o line %q is not one token", line)
			}
			object = fs[1]
			p.objects = append(p.objects, object)
		case "v":
			n := parseFloats(t, fs[1:])
			switch len(n) {
			case 3:
				p.v = append(p.v, [3]float32(n))
				p.vColor = append(p.vColor, [3]float32{})
				p.hasCol = append(p.hasCol, false)
			case 6:
				p.v = append(p.v, [3]float32(n[:3]))
				p.vColor = append(p.vColor, [3]float32(n[3:]))
				p.hasCol = append(p.hasCol, true)
			default:
				t.Fatalf("v line %q", line)
			}
		case "vt":
			p.vt = append(p.vt, [2]float32(parseFloats(t, fs[1:3])))
		case "vn":
			p.vn = append(p.vn, [3]float32(parseFloats(t, fs[1:4])))
		case "g":
			if len(fs) != 2 {
				t.Fatalf("g line %q is not one token", line)
			}
			cur = &group{object: object, name: fs[1]}
			material = ""
			p.groups = append(p.groups, cur)
		case "usemtl":
			if len(fs) != 2 {
				t.Fatalf("usemtl line %q is not one token", line)
			}
			material = fs[1]
			cur.material = material
		case "f":
			if len(fs) != 4 {
				t.Fatalf("face %q is not a triangle", line)
			}
			var f [3]corner
			for k, c := range fs[1:] {
				parts := strings.Split(c, "/")
				nums := make([]int, 3)
				for j, s := range parts {
					if s == "" {
						continue
					}
					n, err := strconv.Atoi(s)
					if err != nil || n < 1 {
						t.Fatalf("face corner %q", c)
					}
					nums[j] = n
				}
				f[k] = corner{nums[0], nums[1], nums[2]}
				if f[k].v > len(p.v) || f[k].vt > len(p.vt) || f[k].vn > len(p.vn) {
					t.Fatalf("face %q refers past what was defined (v %d vt %d vn %d)", line, len(p.v), len(p.vt), len(p.vn))
				}
			}
			cur.faces = append(cur.faces, f)
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	return p
}

type mtlMat struct {
	kd    [3]float32
	d     float32
	hasD  bool
	mapKd string
}

func parseMTL(t *testing.T, text []byte) (map[string]*mtlMat, []string) {
	t.Helper()
	out := map[string]*mtlMat{}
	var order []string
	var cur *mtlMat
	for _, line := range strings.Split(string(text), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		key, rest, _ := strings.Cut(line, " ")
		switch key {
		case "newmtl":
			if strings.ContainsAny(rest, " \t") {
				t.Fatalf("newmtl %q has whitespace", rest)
			}
			if out[rest] != nil {
				t.Fatalf("newmtl %q twice", rest)
			}
			cur = &mtlMat{}
			out[rest] = cur
			order = append(order, rest)
		case "Kd":
			cur.kd = [3]float32(parseFloats(t, strings.Fields(rest)))
		case "d":
			cur.d, cur.hasD = parseFloats(t, []string{rest})[0], true
		case "map_Kd":
			cur.mapKd = rest
		default:
			t.Fatalf("unexpected MTL line %q", line)
		}
	}
	return out, order
}

// ---- scenes ----

func quadGrid(w, h int, x0 float32) decode.Primitive {
	p := decode.Primitive{Material: -1}
	for j := range h {
		for i := range w {
			p.Positions = append(p.Positions, [3]float32{x0 + float32(i)*0.3, float32(i*j) * 0.01, float32(j) * -0.7})
		}
	}
	for j := range h - 1 {
		for i := range w - 1 {
			a := uint32(j*w + i)
			p.Indices = append(p.Indices, a, a+uint32(w), a+1, a+1, a+uint32(w), a+uint32(w)+1)
		}
	}
	return p
}

func withNormals(p decode.Primitive) decode.Primitive {
	for i := range p.Positions {
		p.Normals = append(p.Normals, decode.Normalize3([3]float32{float32(i%3) - 1, 1, float32(i%5) * 0.1}))
	}
	return p
}

func withUVs(p decode.Primitive, sets int) decode.Primitive {
	for s := range sets {
		uv := make([][2]float32, len(p.Positions))
		for i := range uv {
			uv[i] = [2]float32{float32(i) * 0.013, float32(i%11)*0.09 + float32(s)}
		}
		p.UVs = append(p.UVs, uv)
	}
	return p
}

func withColors(p decode.Primitive, sets int) decode.Primitive {
	for s := range sets {
		c := make([][4]float32, len(p.Positions))
		for i := range c {
			c[i] = [4]float32{float32(i%7) / 7, float32(s) * 0.5, 0.25, 1}
		}
		p.Colors = append(p.Colors, c)
	}
	return p
}

func testScene() *decode.Scene {
	a := withColors(withUVs(withNormals(quadGrid(4, 3, 0)), 2), 2)
	a.Name, a.Material = "body surface", 0
	b := withNormals(quadGrid(3, 3, 5)) // normals only
	b.Name, b.Material = "trim", 1
	c := withUVs(quadGrid(2, 4, -2), 1) // UVs only
	c.Material = 2
	d := quadGrid(3, 2, 9) // positions only, no material
	empty := decode.Primitive{Material: 0}
	return &decode.Scene{
		Materials: []decode.Material{
			{Name: "red paint", BaseColor: [4]float32{1, 0, 0, 1}, Textures: []decode.Texture{{Role: "bump", Path: "n.dds"}, {Role: "diffuse", Path: `tex\car red.dds`}}},
			{Name: "glass", AlphaBlend: true, BaseColor: [4]float32{0.5, 0.5, 0.6, 0.3}},
			{Name: ""},
		},
		Meshes: []decode.Mesh{
			{Name: "car body", Primitives: []decode.Primitive{a, b, empty}},
			{Name: "wheel", Primitives: []decode.Primitive{c, d}},
			{Name: "nothing", Primitives: []decode.Primitive{empty}},
		},
	}
}

// ---- tests ----

func TestRoundTrip(t *testing.T) {
	s := testScene()
	objText, mtlText, err := Encode(s, "car.mtl")
	if err != nil {
		t.Fatal(err)
	}
	o := parseOBJ(t, objText)
	if o.mtllib != "car.mtl" {
		t.Errorf("mtllib %q", o.mtllib)
	}
	if len(o.objects) != 2 || o.objects[0] != "car_body" || o.objects[1] != "wheel" {
		t.Errorf("objects %q (a mesh without triangles is left out)", o.objects)
	}
	type want struct {
		mesh, prim int
		material   string
	}
	wants := []want{{0, 0, "red_paint"}, {0, 1, "glass"}, {1, 0, "material_2"}, {1, 1, "meshfs_none"}}
	if len(o.groups) != len(wants) {
		t.Fatalf("%d groups, want %d (the empty primitive is skipped)", len(o.groups), len(wants))
	}
	totalV, totalVT, totalVN := 0, 0, 0
	for gi, w := range wants {
		g := o.groups[gi]
		m := &s.Meshes[w.mesh]
		p := &m.Primitives[w.prim]
		if g.object != o.objects[w.mesh] || g.material != w.material {
			t.Errorf("group %d (%q) in object %q with material %q, want %q", gi, g.name, g.object, g.material, w.material)
		}
		if len(g.faces) != len(p.Indices)/3 {
			t.Fatalf("group %d: %d faces, want %d", gi, len(g.faces), len(p.Indices)/3)
		}
		totalV += len(p.Positions)
		if len(p.UVs) > 0 {
			totalVT += len(p.Positions)
		}
		if p.Normals != nil {
			totalVN += len(p.Normals)
		}
		for fi, f := range g.faces {
			for k, c := range f {
				i := p.Indices[3*fi+k]
				if o.v[c.v-1] != p.Positions[i] {
					t.Fatalf("group %d face %d corner %d: v %v, want %v", gi, fi, k, o.v[c.v-1], p.Positions[i])
				}
				if (c.vt != 0) != (len(p.UVs) > 0) || (c.vn != 0) != (p.Normals != nil) {
					t.Fatalf("group %d face %d corner %+v: vt/vn presence wrong", gi, fi, c)
				}
				if c.vt != 0 {
					uv := p.UVs[0][i]
					if got := o.vt[c.vt-1]; got != [2]float32{uv[0], 1 - uv[1]} {
						t.Fatalf("vt %v for uv %v, want v' = 1 - v", got, uv)
					}
				}
				if c.vn != 0 && o.vn[c.vn-1] != p.Normals[i] {
					t.Fatalf("vn %v, want %v", o.vn[c.vn-1], p.Normals[i])
				}
				switch {
				case len(p.Colors) > 0:
					col := p.Colors[0][i]
					if !o.hasCol[c.v-1] || o.vColor[c.v-1] != [3]float32{col[0], col[1], col[2]} {
						t.Fatalf("vertex colour %v, want first set %v", o.vColor[c.v-1], col)
					}
				case w.mesh == 0:
					// Another primitive of this mesh has colours: white here,
					// so the whole object keeps its colour attribute.
					if !o.hasCol[c.v-1] || o.vColor[c.v-1] != [3]float32{1, 1, 1} {
						t.Fatalf("group %d: vertex colour %v, want white", gi, o.vColor[c.v-1])
					}
				case o.hasCol[c.v-1]:
					t.Fatalf("colour on a vertex of a mesh without colours")
				}
			}
		}
	}
	if len(o.v) != totalV || len(o.vt) != totalVT || len(o.vn) != totalVN {
		t.Errorf("v/vt/vn counts %d/%d/%d, want %d/%d/%d", len(o.v), len(o.vt), len(o.vn), totalV, totalVT, totalVN)
	}

	mats, order := parseMTL(t, mtlText)
	if strings.Join(order, ",") != "red_paint,glass,material_2,meshfs_none" {
		t.Errorf("materials %v", order)
	}
	if m := mats["red_paint"]; m.kd != [3]float32{1, 0, 0} || m.hasD || m.mapKd != "tex/car red.dds" {
		t.Errorf("red_paint %+v", m)
	}
	if m := mats["glass"]; m.kd != [3]float32{0.5, 0.5, 0.6} || !m.hasD || m.d != 0.3 || m.mapKd != "" {
		t.Errorf("glass %+v", m)
	}
	if m := mats["material_2"]; m.kd != [3]float32{1, 1, 1} {
		t.Errorf("default material %+v", m)
	}
}

func TestNoMaterialFirstNeedsNoExtraMaterial(t *testing.T) {
	s := &decode.Scene{Meshes: []decode.Mesh{{Name: "m", Primitives: []decode.Primitive{quadGrid(2, 2, 0)}}}}
	objText, mtlText, err := Encode(s, "m.mtl")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(objText, []byte("usemtl")) || bytes.Contains(mtlText, []byte("newmtl")) {
		t.Errorf("material written for a scene without materials:\n%s\n%s", objText, mtlText)
	}
}

func TestTransformAndMirror(t *testing.T) {
	p := withNormals(quadGrid(2, 2, 0))
	// Rotate 90° about Y, scale x by -2 (mirroring), translate.
	h := float32(math.Sqrt2 / 2)
	tr := decode.TRS{Translation: [3]float32{1, 2, 3}, Rotation: [4]float32{0, h, 0, h}, Scale: [3]float32{-2, 1, 1}}
	sk := withNormals(quadGrid(2, 2, 0))
	s := &decode.Scene{Meshes: []decode.Mesh{
		{Name: "moved", Transform: tr, Primitives: []decode.Primitive{p}},
		{Name: "skinned", Skinned: true, Transform: tr, Primitives: []decode.Primitive{sk}},
	}}
	objText, _, err := Encode(s, "x.mtl")
	if err != nil {
		t.Fatal(err)
	}
	o := parseOBJ(t, objText)
	for i, v := range p.Positions {
		// scale → (-2x, y, z); rotate +90° about Y: (x, y, z) → (z, y, -x); translate.
		want := [3]float32{v[2] + 1, v[1] + 2, 2*v[0] + 3}
		for c := range 3 {
			if math.Abs(float64(o.v[i][c]-want[c])) > 1e-5 {
				t.Fatalf("vertex %d: %v, want %v", i, o.v[i], want)
			}
		}
	}
	for fi, f := range o.groups[0].faces {
		tri := p.Indices[3*fi : 3*fi+3]
		if f[0].v-1 != int(tri[0]) || f[1].v-1 != int(tri[2]) || f[2].v-1 != int(tri[1]) {
			t.Fatalf("mirrored face %d = %+v, want winding reversed from %v", fi, f, tri)
		}
	}
	// The skinned mesh is in bind pose: untouched.
	base := len(p.Positions)
	for i, v := range sk.Positions {
		if o.v[base+i] != v {
			t.Fatalf("skinned vertex %d moved: %v, want %v", i, o.v[base+i], v)
		}
	}
	for fi, f := range o.groups[1].faces {
		if f[1].v-1-base != int(sk.Indices[3*fi+1]) {
			t.Fatalf("skinned face winding changed")
		}
	}
}

func TestNamesAndNumbers(t *testing.T) {
	p := quadGrid(2, 2, 0)
	p.Name = "a\tb\nc"
	p.Material = 0
	p.Positions[0] = [3]float32{float32(math.NaN()), float32(math.Inf(-1)), -0.0000123}
	s := &decode.Scene{
		Materials: []decode.Material{{Name: "dup"}, {Name: "dup", BaseColor: [4]float32{0, 1, 0, 1}}},
		Meshes:    []decode.Mesh{{Name: "line\nbreak", Primitives: []decode.Primitive{p}}},
	}
	objText, mtlText, err := Encode(s, "we\nird.mtl")
	if err != nil {
		t.Fatal(err)
	}
	o := parseOBJ(t, objText) // fails on any multi-token name
	if o.objects[0] != "line_break" || o.groups[0].name != "a_b_c" || o.mtllib != "we_ird.mtl" {
		t.Errorf("names %q %q %q", o.objects, o.groups[0].name, o.mtllib)
	}
	if o.v[0] != [3]float32{0, 0, -0.0000123} {
		t.Errorf("vertex 0 %v", o.v[0])
	}
	mats, order := parseMTL(t, mtlText) // fails on a repeated newmtl
	if len(order) != 1 || mats["dup"].kd != [3]float32{1, 1, 1} {
		t.Errorf("duplicate names: %v %+v", order, mats["dup"])
	}
}

func TestContractErrors(t *testing.T) {
	p := quadGrid(2, 2, 0)
	p.Indices[2] = 4
	if _, _, err := Encode(&decode.Scene{Meshes: []decode.Mesh{{Primitives: []decode.Primitive{p}}}}, "x.mtl"); err == nil ||
		!strings.Contains(err.Error(), "index 4") {
		t.Errorf("err = %v", err)
	}
	q := withUVs(quadGrid(2, 2, 0), 1)
	q.UVs[0] = q.UVs[0][:2]
	if _, _, err := Encode(&decode.Scene{Meshes: []decode.Mesh{{Primitives: []decode.Primitive{q}}}}, "x.mtl"); err == nil ||
		!strings.Contains(err.Error(), "UV") {
		t.Errorf("err = %v", err)
	}
}

func TestDeterministic(t *testing.T) {
	a1, b1, _ := Encode(testScene(), "m.mtl")
	a2, b2, _ := Encode(testScene(), "m.mtl")
	if !bytes.Equal(a1, a2) || !bytes.Equal(b1, b2) {
		t.Error("same scene, different output")
	}
}

// TestLargeParallel checks the parallel path (over 1 MB of text) gives the
// serial path's bytes and a file whose face corners find their vertices.
func TestLargeParallel(t *testing.T) {
	a := withColors(withUVs(withNormals(quadGrid(300, 200, 0)), 1), 1)
	b := withNormals(quadGrid(250, 150, 100))
	s := &decode.Scene{Meshes: []decode.Mesh{{Name: "a", Primitives: []decode.Primitive{a}}, {Name: "b", Primitives: []decode.Primitive{b}}}}
	par, _, err := Encode(s, "x.mtl")
	if err != nil {
		t.Fatal(err)
	}
	if len(par) < 2<<20 {
		t.Fatalf("only %d bytes: not the parallel path", len(par))
	}
	prev := runtime.GOMAXPROCS(1)
	ser, _, err := Encode(s, "x.mtl")
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(par, ser) {
		t.Fatal("parallel and serial output differ")
	}
	o := parseOBJ(t, par)
	if len(o.v) != len(a.Positions)+len(b.Positions) || len(o.vt) != len(a.Positions) || len(o.vn) != len(o.v) {
		t.Fatalf("counts v %d vt %d vn %d", len(o.v), len(o.vt), len(o.vn))
	}
	for gi, p := range []*decode.Primitive{&a, &b} {
		g := o.groups[gi]
		if len(g.faces) != len(p.Indices)/3 {
			t.Fatalf("group %d: %d faces", gi, len(g.faces))
		}
		for fi, f := range g.faces {
			for k, c := range f {
				i := p.Indices[3*fi+k]
				if o.v[c.v-1] != p.Positions[i] || o.vn[c.vn-1] != p.Normals[i] {
					t.Fatalf("group %d face %d corner %d wrong", gi, fi, k)
				}
			}
		}
	}
}

// BenchmarkEncode1MTriangles writes a 1 M-triangle mesh with normals and
// UVs; bytes are the OBJ's.
func BenchmarkEncode1MTriangles(b *testing.B) {
	p := withUVs(withNormals(quadGrid(708, 708, 0)), 1)
	s := &decode.Scene{Meshes: []decode.Mesh{{Name: "big", Primitives: []decode.Primitive{p}}}}
	o, _, err := Encode(s, "big.mtl")
	if err != nil {
		b.Fatal(err)
	}
	decodetest.Loop(b, int64(len(o)), func() error {
		if _, _, err := Encode(s, "big.mtl"); err != nil {
			return err
		}
		return nil
	})
}

// TestRandomScenes writes random scenes full of awkward values (NaN, ±Inf,
// names with spaces and newlines, mirrored transforms, empty primitives):
// the output must always parse, every face corner must point at an
// existing v/vt/vn, and the face count must match the scene's.
func TestRandomScenes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	f := func() float32 {
		switch r.IntN(10) {
		case 0:
			return float32(math.NaN())
		case 1:
			return float32(math.Inf(1 - 2*r.IntN(2)))
		}
		return r.Float32()*4 - 2
	}
	names := []string{"", "a b", "x\ny", "\t", "ok", "ünï cödé"}
	for i := range 200 {
		s := &decode.Scene{}
		for range r.IntN(3) {
			s.Materials = append(s.Materials, decode.Material{Name: names[r.IntN(len(names))], AlphaBlend: r.IntN(2) == 0,
				Textures: []decode.Texture{{Role: "diffuse", Path: names[r.IntN(len(names))]}}})
		}
		faces := 0
		for range r.IntN(4) {
			m := decode.Mesh{Name: names[r.IntN(len(names))], Skinned: r.IntN(3) == 0}
			if r.IntN(2) == 0 {
				m.Transform = decode.TRS{Translation: [3]float32{f(), f(), f()}, Rotation: [4]float32{f(), f(), f(), f()}, Scale: [3]float32{f(), f(), f()}}
			}
			for range r.IntN(3) {
				n := r.IntN(20)
				p := decode.Primitive{Name: names[r.IntN(len(names))], Material: r.IntN(4) - 1}
				for range n {
					p.Positions = append(p.Positions, [3]float32{f(), f(), f()})
				}
				if n > 0 {
					for range r.IntN(20) {
						p.Indices = append(p.Indices, uint32(r.IntN(n)))
					}
					faces += len(p.Indices) / 3
				}
				if r.IntN(2) == 0 {
					p.Normals = make([][3]float32, n)
					for k := range p.Normals {
						p.Normals[k] = [3]float32{f(), f(), f()}
					}
				}
				if r.IntN(2) == 0 {
					p.UVs = [][][2]float32{make([][2]float32, n)}
					for k := range p.UVs[0] {
						p.UVs[0][k] = [2]float32{f(), f()}
					}
				}
				if r.IntN(2) == 0 {
					p.Colors = [][][4]float32{make([][4]float32, n)}
					for k := range p.Colors[0] {
						p.Colors[0][k] = [4]float32{f(), f(), f(), f()}
					}
				}
				m.Primitives = append(m.Primitives, p)
			}
			s.Meshes = append(s.Meshes, m)
		}
		objText, mtlText, err := Encode(s, names[r.IntN(len(names))])
		if err != nil {
			t.Fatalf("scene %d: %v", i, err)
		}
		o := parseOBJ(t, objText)
		got := 0
		for _, g := range o.groups {
			got += len(g.faces)
		}
		if got != faces {
			t.Fatalf("scene %d: %d faces, want %d", i, got, faces)
		}
		for k, v := range o.v {
			if !decode.Finite(v[:]...) || !decode.Finite(o.vColor[k][:]...) {
				t.Fatalf("scene %d: non-finite vertex %v", i, v)
			}
		}
		parseMTL(t, mtlText)
	}
}
