package gltf

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/gltf/validator"
	qgltf "github.com/qmuntal/gltf"
	"github.com/qmuntal/gltf/modeler"
)

// ---- scene builders ----

// grid returns a primitive of w×h vertices on a bumpy sheet with (w-1)(h-1)
// quads, each two counter-clockwise triangles facing +Y. Attributes other
// than positions and indices are added by the tests.
func grid(w, h int, x0 float32) decode.Primitive {
	p := decode.Primitive{Material: -1}
	for j := range h {
		for i := range w {
			p.Positions = append(p.Positions, [3]float32{x0 + float32(i)*0.25, float32((i*7+j*3)%5) * 0.01, float32(j) * 0.25})
		}
	}
	for j := range h - 1 {
		for i := range w - 1 {
			a := uint32(j*w + i)
			b, c, d := a+1, a+uint32(w), a+uint32(w)+1
			p.Indices = append(p.Indices, a, c, b, b, c, d)
		}
	}
	return p
}

func rnd(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }

func unitVec(r *rand.Rand) [3]float32 {
	for {
		v := [3]float32{r.Float32()*2 - 1, r.Float32()*2 - 1, r.Float32()*2 - 1}
		l := math.Sqrt(float64(v[0]*v[0] + v[1]*v[1] + v[2]*v[2]))
		if l > 0.1 && l < 1 {
			return decode.Normalize3(v)
		}
	}
}

func addNormals(p *decode.Primitive, seed uint64) {
	r := rnd(seed)
	p.Normals = make([][3]float32, len(p.Positions))
	for i := range p.Normals {
		p.Normals[i] = unitVec(r)
	}
}

func addUVs(p *decode.Primitive, sets int, seed uint64) {
	r := rnd(seed)
	for range sets {
		uv := make([][2]float32, len(p.Positions))
		for i := range uv {
			uv[i] = [2]float32{r.Float32()*2 - 0.5, r.Float32()}
		}
		p.UVs = append(p.UVs, uv)
	}
}

func addColors(p *decode.Primitive, sets int, seed uint64) {
	r := rnd(seed)
	for range sets {
		c := make([][4]float32, len(p.Positions))
		for i := range c {
			c[i] = [4]float32{r.Float32(), r.Float32(), r.Float32(), 1 - r.Float32()/2}
		}
		p.Colors = append(p.Colors, c)
	}
}

func addTangents(p *decode.Primitive, seed uint64) {
	r := rnd(seed)
	p.Tangents = make([][4]float32, len(p.Positions))
	for i := range p.Tangents {
		v := unitVec(r)
		w := float32(1)
		if i%3 == 0 {
			w = -1
		}
		p.Tangents[i] = [4]float32{v[0], v[1], v[2], w}
	}
}

// ---- reading back ----

type readBack struct {
	t   *testing.T
	doc *qgltf.Document
	glb []byte
}

// encode exports s, fails on any validator error, and decodes the .glb
// with qmuntal/gltf.
func encode(t *testing.T, s *decode.Scene) *readBack {
	t.Helper()
	glb, err := Encode(s)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if len(glb)%4 != 0 {
		t.Errorf("GLB length %d not a multiple of 4", len(glb))
	}
	if rep := validator.Check(t, glb); rep != nil && rep.Issues.NumWarnings > 0 {
		// Typical scenes must not warn either; see TestKnownWarnings for
		// the scenes that do.
		t.Errorf("validator warnings %v", rep.Codes(validator.SeverityWarning))
	}
	doc := new(qgltf.Document)
	if err := qgltf.NewDecoder(bytes.NewReader(glb)).Decode(doc); err != nil {
		t.Fatalf("qmuntal/gltf cannot read the output: %v", err)
	}
	if len(doc.Buffers) > 1 {
		t.Errorf("%d buffers, want one", len(doc.Buffers))
	}
	if doc.Asset.Generator != "meshfs" {
		t.Errorf("generator %q", doc.Asset.Generator)
	}
	return &readBack{t, doc, glb}
}

func (r *readBack) acc(i int) any {
	r.t.Helper()
	v, err := modeler.ReadAccessor(r.doc, r.doc.Accessors[i], nil)
	if err != nil {
		r.t.Fatalf("accessor %d: %v", i, err)
	}
	return v
}

func (r *readBack) indices(p *qgltf.Primitive) []uint32 {
	r.t.Helper()
	v, err := modeler.ReadIndices(r.doc, r.doc.Accessors[*p.Indices], nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return v
}

func (r *readBack) attr(p *qgltf.Primitive, name string) any {
	r.t.Helper()
	i, ok := p.Attributes[name]
	if !ok {
		r.t.Fatalf("primitive has no %s (has %v)", name, p.Attributes)
	}
	return r.acc(i)
}

func (r *readBack) nodeByName(name string) int {
	r.t.Helper()
	for i, n := range r.doc.Nodes {
		if n.Name == name {
			return i
		}
	}
	r.t.Fatalf("no node %q", name)
	return -1
}

func equalSlices[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// checkPrimitive asserts that a clean scene primitive came back unchanged.
func checkPrimitive(r *readBack, what string, gp *qgltf.Primitive, p *decode.Primitive) {
	t := r.t
	t.Helper()
	if gp.Mode != qgltf.PrimitiveTriangles {
		t.Errorf("%s: mode %v", what, gp.Mode)
	}
	equalSlices(t, what+" indices", r.indices(gp), p.Indices)
	equalSlices(t, what+" POSITION", r.attr(gp, "POSITION").([][3]float32), p.Positions)
	pa := r.doc.Accessors[gp.Attributes["POSITION"]]
	var mn, mx [3]float32
	for c := range 3 {
		mn[c], mx[c] = float32(math.Inf(1)), float32(math.Inf(-1))
		for _, v := range p.Positions {
			mn[c], mx[c] = min(mn[c], v[c]), max(mx[c], v[c])
		}
		if pa.Min[c] != float64(mn[c]) || pa.Max[c] != float64(mx[c]) {
			t.Errorf("%s: POSITION bounds %v..%v, want %v..%v", what, pa.Min, pa.Max, mn, mx)
		}
	}
	if p.Normals != nil {
		equalSlices(t, what+" NORMAL", r.attr(gp, "NORMAL").([][3]float32), p.Normals)
	} else if _, ok := gp.Attributes["NORMAL"]; ok {
		t.Errorf("%s: NORMAL without scene normals", what)
	}
	if p.Tangents != nil && p.Normals != nil {
		equalSlices(t, what+" TANGENT", r.attr(gp, "TANGENT").([][4]float32), p.Tangents)
	} else if _, ok := gp.Attributes["TANGENT"]; ok {
		t.Errorf("%s: TANGENT without NORMAL", what)
	}
	for k, uv := range p.UVs {
		equalSlices(t, what+" TEXCOORD", r.attr(gp, "TEXCOORD_"+string(rune('0'+k))).([][2]float32), uv)
	}
	if _, ok := gp.Attributes["TEXCOORD_"+string(rune('0'+len(p.UVs)))]; ok {
		t.Errorf("%s: more TEXCOORD sets than the scene's %d", what, len(p.UVs))
	}
	for k, c := range p.Colors {
		equalSlices(t, what+" COLOR", r.attr(gp, "COLOR_"+string(rune('0'+k))).([][4]float32), c)
	}
	if _, ok := gp.Attributes["COLOR_"+string(rune('0'+len(p.Colors)))]; ok {
		t.Errorf("%s: more COLOR sets than the scene's %d", what, len(p.Colors))
	}
}

// ---- tests ----

func TestStaticMultiPrimitive(t *testing.T) {
	a, b := grid(4, 3, 0), grid(5, 5, 2)
	addNormals(&a, 1)
	addNormals(&b, 2)
	addUVs(&a, 1, 3)
	a.Material, b.Material = 1, 0
	c := grid(3, 3, -3)
	s := &decode.Scene{
		Materials: []decode.Material{{Name: "stone"}, {Name: "moss"}},
		Meshes: []decode.Mesh{
			{Name: "ground", Primitives: []decode.Primitive{a, b}},
			{Name: "rock", Primitives: []decode.Primitive{c},
				Transform: decode.TRS{Translation: [3]float32{1, 2, 3}, Rotation: [4]float32{0, 0.6, 0, 0.8}, Scale: [3]float32{2, 2, 2}}},
		},
	}
	r := encode(t, s)
	doc := r.doc
	if len(doc.Meshes) != 2 || len(doc.Nodes) != 2 || len(doc.Scenes) != 1 || len(doc.Scenes[0].Nodes) != 2 {
		t.Fatalf("%d meshes, %d nodes, scenes %v", len(doc.Meshes), len(doc.Nodes), doc.Scenes)
	}
	for i, m := range s.Meshes {
		n := doc.Nodes[i]
		if n.Name != m.Name || doc.Meshes[*n.Mesh].Name != m.Name {
			t.Errorf("node %d: %q mesh %q, want %q", i, n.Name, doc.Meshes[*n.Mesh].Name, m.Name)
		}
		gm := doc.Meshes[*n.Mesh]
		if len(gm.Primitives) != len(m.Primitives) {
			t.Fatalf("mesh %q: %d primitives", m.Name, len(gm.Primitives))
		}
		for j := range m.Primitives {
			checkPrimitive(r, m.Name, gm.Primitives[j], &m.Primitives[j])
			gmat := gm.Primitives[j].Material
			if mi := m.Primitives[j].Material; mi < 0 && gmat != nil || mi >= 0 && (gmat == nil || doc.Materials[*gmat].Name != s.Materials[mi].Name) {
				t.Errorf("mesh %q primitive %d material %v, want scene material %d", m.Name, j, gmat, mi)
			}
			if ct := doc.Accessors[*gm.Primitives[j].Indices].ComponentType; ct != qgltf.ComponentUshort {
				t.Errorf("small mesh indices are %v, want u16", ct)
			}
		}
	}
	if n := doc.Nodes[0]; n.Translation != [3]float64{} || n.Rotation != [4]float64{0, 0, 0, 1} || n.Scale != [3]float64{1, 1, 1} {
		t.Errorf("identity node has TRS %v %v %v", n.Translation, n.Rotation, n.Scale)
	}
	n := doc.Nodes[1]
	if n.Translation != [3]float64{1, 2, 3} || n.Rotation != [4]float64{0, float64(float32(0.6)), 0, float64(float32(0.8))} || n.Scale != [3]float64{2, 2, 2} {
		t.Errorf("rock node TRS %v %v %v", n.Translation, n.Rotation, n.Scale)
	}
	if doc.Skins != nil || doc.Animations != nil {
		t.Errorf("static scene has skins or animations")
	}
}

func TestAttributeSets(t *testing.T) {
	p := grid(6, 4, 0)
	addNormals(&p, 4)
	addTangents(&p, 5)
	addUVs(&p, 3, 6)
	addColors(&p, 2, 7)
	s := &decode.Scene{Meshes: []decode.Mesh{{Name: "m", Primitives: []decode.Primitive{p}}}}
	r := encode(t, s)
	gp := r.doc.Meshes[0].Primitives[0]
	checkPrimitive(r, "m", gp, &p)
	for _, name := range []string{"TEXCOORD_0", "TEXCOORD_1", "TEXCOORD_2", "COLOR_0", "COLOR_1", "TANGENT", "NORMAL"} {
		a := r.doc.Accessors[gp.Attributes[name]]
		bv := r.doc.BufferViews[*a.BufferView]
		if bv.Target != qgltf.TargetArrayBuffer || bv.ByteStride%4 != 0 || bv.ByteStride == 0 || bv.ByteOffset%4 != 0 {
			t.Errorf("%s buffer view %+v", name, bv)
		}
	}
}

func TestTangentsNeedNormals(t *testing.T) {
	p := grid(3, 3, 0)
	addTangents(&p, 30)
	s := &decode.Scene{Meshes: []decode.Mesh{{Name: "m", Primitives: []decode.Primitive{p}}}}
	r := encode(t, s)
	checkPrimitive(r, "m", r.doc.Meshes[0].Primitives[0], &p)
}

func TestMaterials(t *testing.T) {
	p := grid(3, 3, 0)
	q := grid(3, 3, 1)
	q.Material = 1
	u := grid(3, 3, 2)
	u.Material = 7 // out of range: no material rather than an invalid index
	s := &decode.Scene{
		Materials: []decode.Material{
			{Name: "glass pane", AlphaBlend: true, BaseColor: [4]float32{0.5, 0.6, 0.7, 0.25}},
			{Name: "leaf", DoubleSided: true, Textures: []decode.Texture{
				{Role: "diffuse", Path: "tex/leaf_d.dds"}, {Role: "bump", Path: "tex/leaf_n.dds"}, {Role: "diffuse", Path: "tex/leaf2.dds"}}},
			{Name: "unused"},
		},
		Meshes: []decode.Mesh{{Name: "m", Primitives: []decode.Primitive{p, q, u}}},
	}
	s.Meshes[0].Primitives[0].Material = 0
	r := encode(t, s)
	ms := r.doc.Materials
	if len(ms) != 3 {
		t.Fatalf("%d materials", len(ms))
	}
	for i, m := range s.Materials {
		gm := ms[i]
		if gm.Name != m.Name || gm.DoubleSided != m.DoubleSided || (gm.AlphaMode == qgltf.AlphaBlend) != m.AlphaBlend {
			t.Errorf("material %d = %q double %v alpha %v, want %+v", i, gm.Name, gm.DoubleSided, gm.AlphaMode, m)
		}
		if gm.PBRMetallicRoughness == nil || *gm.PBRMetallicRoughness.MetallicFactor != 0 {
			t.Errorf("material %q is not a dielectric: %+v", m.Name, gm.PBRMetallicRoughness)
		}
	}
	if c := *ms[0].PBRMetallicRoughness.BaseColorFactor; c != [4]float64{float64(float32(0.5)), float64(float32(0.6)), float64(float32(0.7)), 0.25} {
		t.Errorf("base colour %v", c)
	}
	if c := *ms[1].PBRMetallicRoughness.BaseColorFactor; c != [4]float64{1, 1, 1, 1} {
		t.Errorf("default base colour %v, want white", c)
	}
	tex := ms[1].Extras.(map[string]any)["textures"].(map[string]any)
	if tex["diffuse"] != "tex/leaf_d.dds" || tex["bump"] != "tex/leaf_n.dds" || tex["diffuse_2"] != "tex/leaf2.dds" || len(tex) != 3 {
		t.Errorf("texture extras %v", tex)
	}
	if len(r.doc.Images) != 0 || len(r.doc.Textures) != 0 {
		t.Errorf("images were embedded")
	}
	prims := r.doc.Meshes[0].Primitives
	if *prims[0].Material != 0 || *prims[1].Material != 1 || prims[2].Material != nil {
		t.Errorf("primitive materials %v %v %v", prims[0].Material, prims[1].Material, prims[2].Material)
	}
}

// TestSurfaceNames: a named primitive's material carries its name (see
// MaterialName), made once per name and scene material and keeping the
// scene material's look; unnamed primitives and primitives named after
// their material use the scene's.
func TestSurfaceNames(t *testing.T) {
	prim := func(name string, mat int, x float32) decode.Primitive {
		p := grid(2, 2, x)
		p.Name, p.Material = name, mat
		return p
	}
	s := &decode.Scene{
		Materials: []decode.Material{{Name: "body.mtl", DoubleSided: true}, {Name: "glass.mtl", AlphaBlend: true}},
		Meshes: []decode.Mesh{{Name: "m", Primitives: []decode.Primitive{
			prim("body.mtl", 0, 0), // a GEM section: named after its material
			prim("", 1, 1),         // unnamed
			prim("submesh2", 1, 2), // a Transport Fever submesh
			prim("Корпус", -1, 3),  // a UNIGINE surface, no material
			prim("submesh2", 1, 4), // the same name and material again
			prim("submesh5", 0, 5), // another name on material 0
			prim("Корпус", -1, 6),  // and the surface again
		}}},
	}
	r := encode(t, s)
	var names []string
	for _, m := range r.doc.Materials {
		names = append(names, m.Name)
	}
	want := []string{"body.mtl", "glass.mtl", "submesh2 (glass.mtl)", "Корпус", "submesh5 (body.mtl)"}
	equalSlices(t, "material names", names, want)
	var got []int
	for _, p := range r.doc.Meshes[0].Primitives {
		got = append(got, int(*p.Material))
	}
	equalSlices(t, "primitive materials", got, []int{0, 1, 2, 3, 2, 4, 3})
	if m := r.doc.Materials[2]; m.AlphaMode != qgltf.AlphaBlend {
		t.Errorf("%q lost its scene material's alpha blending", m.Name)
	}
	if m := r.doc.Materials[4]; !m.DoubleSided {
		t.Errorf("%q lost its scene material's two sides", m.Name)
	}
	if m := r.doc.Materials[3]; *m.PBRMetallicRoughness.MetallicFactor != 0 {
		t.Errorf("%q is not a dielectric", m.Name)
	}
}

func TestIndexTypes(t *testing.T) {
	for _, tc := range []struct {
		verts, maxIndex int
		want            qgltf.ComponentType
	}{
		{65535, 65534, qgltf.ComponentUshort},
		{65536, 65535, qgltf.ComponentUint}, // 65535 is u16's primitive restart value
		{70000, 69999, qgltf.ComponentUint},
		{70000, 1000, qgltf.ComponentUshort}, // what counts is the largest index
	} {
		p := decode.Primitive{Material: -1, Positions: make([][3]float32, tc.verts)}
		for i := range p.Positions {
			p.Positions[i] = [3]float32{float32(i % 300), float32(i / 300), float32(i%7) * 0.1}
		}
		for i := 0; i+2 <= tc.maxIndex; i += 3 {
			p.Indices = append(p.Indices, uint32(i), uint32(i+1), uint32(i+2))
		}
		p.Indices = append(p.Indices, 0, uint32(tc.maxIndex-1), uint32(tc.maxIndex))
		r := encode(t, &decode.Scene{Meshes: []decode.Mesh{{Name: "big", Primitives: []decode.Primitive{p}}}})
		gp := r.doc.Meshes[0].Primitives[0]
		if ct := r.doc.Accessors[*gp.Indices].ComponentType; ct != tc.want {
			t.Errorf("%d vertices, max index %d: indices %v, want %v", tc.verts, tc.maxIndex, ct, tc.want)
		}
		checkPrimitive(r, "big", gp, &p)
	}
}

// skinnedScene has two root joints (hip → thigh → shin, and prop → propTip),
// 4 influences per vertex given unnormalised, and inverse binds for some
// joints only.
func skinnedScene(nJoints int) *decode.Scene {
	sk := &decode.Skeleton{Joints: []decode.Joint{
		{Name: "hip", Parent: -1, Rest: decode.TRS{Translation: [3]float32{0, 1, 0}, Rotation: [4]float32{0, 0, 0, 1}, Scale: [3]float32{1, 1, 1}}},
		{Name: "thigh", Parent: 0, Rest: decode.TRS{Translation: [3]float32{0.2, -0.1, 0}, Rotation: [4]float32{0, 0, 0.6, 0.8}, Scale: [3]float32{1, 1, 1}}},
		{Name: "shin", Parent: 1, Rest: decode.TRS{Translation: [3]float32{0, -0.5, 0}, Rotation: [4]float32{0, 0, 0, 1}, Scale: [3]float32{1, 1, 1}}},
		{Name: "prop", Parent: -1},
		{Name: "propTip", Parent: 3, Rest: decode.TRS{Translation: [3]float32{0, 0, 0.3}, Rotation: [4]float32{0, 0, 0, 1}, Scale: [3]float32{1, 1, 1}}},
	}}
	ib := [16]float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -1, 0, 1}
	sk.Joints[0].InverseBind = &ib
	ib2 := [16]float32{0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 0.5, -0.2, 0, 1}
	sk.Joints[1].InverseBind = &ib2
	for i := len(sk.Joints); i < nJoints; i++ {
		sk.Joints = append(sk.Joints, decode.Joint{Name: "extra" + string(rune('A'+i%26)) + string(rune('a'+i/26%26)), Parent: 4})
	}
	p := grid(6, 5, 0)
	addNormals(&p, 9)
	r := rnd(10)
	p.Joints = make([][4]uint16, len(p.Positions))
	p.Weights = make([][4]float32, len(p.Positions))
	for i := range p.Joints {
		perm := r.Perm(nJoints)
		for k := range 4 {
			p.Joints[i][k] = uint16(perm[k])
			p.Weights[i][k] = 0.1 + r.Float32()*3 // sums far from 1
		}
	}
	q := grid(3, 3, 5) // a second primitive with no influences at all
	return &decode.Scene{
		Skeleton: sk,
		Meshes:   []decode.Mesh{{Name: "body", Skinned: true, Primitives: []decode.Primitive{p, q}}},
	}
}

func TestSkin(t *testing.T) {
	s := skinnedScene(5)
	r := encode(t, s)
	doc := r.doc
	if len(doc.Skins) != 1 {
		t.Fatalf("%d skins", len(doc.Skins))
	}
	skin := doc.Skins[0]
	joints := s.Skeleton.Joints
	if len(skin.Joints) != len(joints) {
		t.Fatalf("skin has %d joints", len(skin.Joints))
	}
	parentOf := map[int]int{}
	for i, n := range doc.Nodes {
		for _, c := range n.Children {
			if _, dup := parentOf[c]; dup {
				t.Fatalf("node %d has two parents", c)
			}
			parentOf[c] = i
		}
	}
	for i, j := range joints {
		n := doc.Nodes[skin.Joints[i]]
		if n.Name != j.Name {
			t.Errorf("skin joint %d is %q, want %q", i, n.Name, j.Name)
		}
		if j.Parent >= 0 && parentOf[skin.Joints[i]] != skin.Joints[j.Parent] {
			t.Errorf("joint %q parent node %d, want %d", j.Name, parentOf[skin.Joints[i]], skin.Joints[j.Parent])
		}
		rest := j.Rest
		if rest.IsIdentity() {
			rest = decode.Identity()
		}
		for c := range 3 {
			if n.Translation[c] != float64(rest.Translation[c]) || n.Scale[c] != float64(rest.Scale[c]) {
				t.Errorf("joint %q TRS %v %v, want %+v", j.Name, n.Translation, n.Scale, rest)
			}
		}
		for c := range 4 {
			if n.Rotation[c] != float64(rest.Rotation[c]) {
				t.Errorf("joint %q rotation %v, want %v", j.Name, n.Rotation, rest.Rotation)
			}
		}
	}
	// Two root joints share one common root, the skin's skeleton.
	root := *skin.Skeleton
	if doc.Nodes[root].Name != "Armature" || len(doc.Nodes[root].Children) != 2 ||
		parentOf[skin.Joints[0]] != root || parentOf[skin.Joints[3]] != root {
		t.Errorf("skeleton root %d %+v", root, doc.Nodes[root])
	}
	// The mesh node is a scene root, not under the joints.
	meshNode := r.nodeByName("body")
	if _, ok := parentOf[meshNode]; ok || doc.Nodes[meshNode].Skin == nil || *doc.Nodes[meshNode].Skin != 0 {
		t.Errorf("mesh node parent/skin wrong: %+v", doc.Nodes[meshNode])
	}
	if sn := doc.Scenes[0].Nodes; len(sn) != 2 || sn[0] != meshNode || sn[1] != root {
		t.Errorf("scene roots %v", sn)
	}
	// Inverse binds: given, or identity.
	ibm := r.acc(*skin.InverseBindMatrices).([][4][4]float32)
	ibView := doc.BufferViews[*doc.Accessors[*skin.InverseBindMatrices].BufferView]
	if ibView.Target != 0 || ibView.ByteStride != 0 {
		t.Errorf("IBM buffer view has target %v stride %d", ibView.Target, ibView.ByteStride)
	}
	for i, j := range joints {
		want := identity16
		if j.InverseBind != nil {
			want = *j.InverseBind
		}
		got := ibm[i]
		for c := range 16 {
			if got[c%4][c/4] != want[c] { // qmuntal reads MAT4 as [row][column]
				t.Fatalf("joint %q IBM %v, want %v", j.Name, got, want)
			}
		}
	}
	// Influences: same joints, weights proportional and summing to 1 in float32.
	gm := doc.Meshes[*doc.Nodes[meshNode].Mesh]
	gp := gm.Primitives[0]
	p := &s.Meshes[0].Primitives[0]
	if ct := doc.Accessors[gp.Attributes["JOINTS_0"]].ComponentType; ct != qgltf.ComponentUbyte {
		t.Errorf("JOINTS_0 is %v, want u8 for 5 joints", ct)
	}
	checkPrimitive(r, "body", gp, p)
	gj := r.attr(gp, "JOINTS_0").([][4]uint8)
	gw := r.attr(gp, "WEIGHTS_0").([][4]float32)
	for i := range p.Joints {
		wantJ, wantW := decode.NormalizeWeights(p.Joints[i][:], p.Weights[i][:])
		var sum float32
		for k := range 4 {
			sum += gw[i][k]
		}
		if sum != 1 && math.Abs(float64(sum)-1) > 2e-7 {
			t.Fatalf("vertex %d weights %v sum to %v", i, gw[i], sum)
		}
		var total float32
		for k := range 4 {
			total += p.Weights[i][k]
		}
		for k := range 4 {
			var in float32 // the input weight of the same joint
			for m := range 4 {
				if p.Joints[i][m] == uint16(gj[i][k]) {
					in = p.Weights[i][m]
				}
			}
			if uint16(gj[i][k]) != wantJ[k] || math.Abs(float64(gw[i][k]-wantW[k])) > 1e-6 ||
				math.Abs(float64(gw[i][k]-in/total)) > 1e-6 {
				t.Fatalf("vertex %d influences %v %v, want %v %v (input %v %v)", i, gj[i], gw[i], wantJ, wantW, p.Joints[i], p.Weights[i])
			}
		}
	}
	// The primitive without influences is bound wholly to joint 0.
	qj := r.attr(gm.Primitives[1], "JOINTS_0").([][4]uint8)
	qw := r.attr(gm.Primitives[1], "WEIGHTS_0").([][4]float32)
	for i := range qj {
		if qj[i] != [4]uint8{} || qw[i] != [4]float32{1, 0, 0, 0} {
			t.Fatalf("unbound vertex %d: %v %v", i, qj[i], qw[i])
		}
	}
}

func TestSkinSingleRootAndManyJoints(t *testing.T) {
	s := skinnedScene(300)
	// Re-parent the second root under the first: a single root needs no
	// extra node.
	s.Skeleton.Joints[3].Parent = 2
	r := encode(t, s)
	doc := r.doc
	skin := doc.Skins[0]
	if *skin.Skeleton != skin.Joints[0] {
		t.Errorf("skeleton %d, want the root joint %d", *skin.Skeleton, skin.Joints[0])
	}
	for _, n := range doc.Nodes {
		if n.Name == "Armature" {
			t.Errorf("common root added for a single-root skeleton")
		}
	}
	gp := doc.Meshes[0].Primitives[0]
	if ct := doc.Accessors[gp.Attributes["JOINTS_0"]].ComponentType; ct != qgltf.ComponentUshort {
		t.Fatalf("JOINTS_0 is %v, want u16 for 300 joints", ct)
	}
	gj := r.attr(gp, "JOINTS_0").([][4]uint16)
	p := &s.Meshes[0].Primitives[0]
	for i := range p.Joints {
		wantJ, _ := decode.NormalizeWeights(p.Joints[i][:], p.Weights[i][:])
		if gj[i] != wantJ {
			t.Fatalf("vertex %d joints %v, want %v", i, gj[i], wantJ)
		}
	}
	for i, j := range s.Skeleton.Joints {
		if doc.Nodes[skin.Joints[i]].Name != j.Name {
			t.Fatalf("joint %d name %q, want %q", i, doc.Nodes[skin.Joints[i]].Name, j.Name)
		}
	}
}

func TestMorphTargets(t *testing.T) {
	p := grid(4, 4, 0)
	addNormals(&p, 11)
	r0 := rnd(12)
	for k := range 2 {
		var mt decode.MorphTarget
		for range p.Positions {
			mt.Positions = append(mt.Positions, [3]float32{r0.Float32() - 0.5, r0.Float32() * float32(k+1), 0})
			mt.Normals = append(mt.Normals, [3]float32{0, r0.Float32() * 0.1, 0})
		}
		p.Targets = append(p.Targets, mt)
	}
	q := grid(3, 2, 3)
	q.Targets = []decode.MorphTarget{{Positions: make([][3]float32, len(q.Positions))}, {}} // second target absent
	q.Targets[0].Positions[2] = [3]float32{0, 1, 0}
	s := &decode.Scene{Meshes: []decode.Mesh{{Name: "face", TargetNames: []string{"smile", "blink"}, Primitives: []decode.Primitive{p, q}}}}
	r := encode(t, s)
	gm := r.doc.Meshes[0]
	names, _ := gm.Extras.(map[string]any)["targetNames"].([]any)
	if len(names) != 2 || names[0] != "smile" || names[1] != "blink" {
		t.Errorf("targetNames %v", gm.Extras)
	}
	if len(gm.Weights) != 2 || gm.Weights[0] != 0 || gm.Weights[1] != 0 {
		t.Errorf("mesh weights %v", gm.Weights)
	}
	for pi, gp := range gm.Primitives {
		sp := &s.Meshes[0].Primitives[pi]
		checkPrimitive(r, "face", gp, sp)
		if len(gp.Targets) != 2 {
			t.Fatalf("primitive %d has %d targets", pi, len(gp.Targets))
		}
		for k, ta := range gp.Targets {
			want := make([][3]float32, len(sp.Positions))
			if k < len(sp.Targets) && sp.Targets[k].Positions != nil {
				want = sp.Targets[k].Positions
			}
			equalSlices(t, "target POSITION", r.acc(ta["POSITION"]).([][3]float32), want)
			a := r.doc.Accessors[ta["POSITION"]]
			if len(a.Min) != 3 || len(a.Max) != 3 {
				t.Errorf("target POSITION without bounds")
			}
			if k < len(sp.Targets) && sp.Targets[k].Normals != nil {
				equalSlices(t, "target NORMAL", r.acc(ta["NORMAL"]).([][3]float32), sp.Targets[k].Normals)
			} else if _, ok := ta["NORMAL"]; ok {
				t.Errorf("primitive %d target %d has NORMAL deltas it was not given", pi, k)
			}
		}
	}
}

func animatedScene() *decode.Scene {
	s := skinnedScene(5)
	s.Meshes = append(s.Meshes, decode.Mesh{Name: "door", Primitives: []decode.Primitive{grid(3, 3, 9)}})
	s.Animations = []decode.Animation{
		{Name: "open", Channels: []decode.Channel{
			{Kind: decode.TargetMesh, Index: 1, Path: decode.PathTranslation, Times: []float32{0, 0.5, 1}, Values: []float32{0, 0, 0, 1, 0, 0, 2, 0.5, 0}},
			{Kind: decode.TargetMesh, Index: 1, Path: decode.PathScale, Step: true, Times: []float32{0, 2}, Values: []float32{1, 1, 1, 2, 2, 2}},
		}},
		{Name: "walk", Channels: []decode.Channel{
			{Kind: decode.TargetJoint, Index: 1, Path: decode.PathRotation, Times: []float32{0.1, 0.2, 0.4},
				Values: []float32{0, 0, 0, 1, 0, 0, 0.6, 0.8, 0, 0.8, 0, 0.6}},
			{Kind: decode.TargetJoint, Index: 0, Path: decode.PathTranslation, Step: true, Times: []float32{0, 1.5}, Values: []float32{0, 1, 0, 0, 1.1, 0}},
			{Kind: decode.TargetJoint, Index: 4, Path: decode.PathScale, Times: []float32{0}, Values: []float32{1, 2, 1}},
		}},
	}
	return s
}

func TestAnimations(t *testing.T) {
	s := animatedScene()
	r := encode(t, s)
	doc := r.doc
	if len(doc.Animations) != len(s.Animations) {
		t.Fatalf("%d animations", len(doc.Animations))
	}
	for ai, a := range s.Animations {
		ga := doc.Animations[ai]
		if ga.Name != a.Name || len(ga.Channels) != len(a.Channels) {
			t.Fatalf("animation %d: %q with %d channels", ai, ga.Name, len(ga.Channels))
		}
		for ci, c := range a.Channels {
			gc := ga.Channels[ci]
			smp := ga.Samplers[gc.Sampler]
			var wantNode string
			if c.Kind == decode.TargetMesh {
				wantNode = s.Meshes[c.Index].Name
			} else {
				wantNode = s.Skeleton.Joints[c.Index].Name
			}
			if doc.Nodes[*gc.Target.Node].Name != wantNode || string(gc.Target.Path) != string(c.Path) {
				t.Errorf("%s/%d targets %q.%v, want %q.%s", a.Name, ci, doc.Nodes[*gc.Target.Node].Name, gc.Target.Path, wantNode, c.Path)
			}
			wantInterp := qgltf.InterpolationLinear
			if c.Step {
				wantInterp = qgltf.InterpolationStep
			}
			if smp.Interpolation != wantInterp {
				t.Errorf("%s/%d interpolation %v", a.Name, ci, smp.Interpolation)
			}
			equalSlices(t, "times", r.acc(smp.Input).([]float32), c.Times)
			in := doc.Accessors[smp.Input]
			if in.Min[0] != float64(c.Times[0]) || in.Max[0] != float64(c.Times[len(c.Times)-1]) {
				t.Errorf("%s/%d input bounds %v %v", a.Name, ci, in.Min, in.Max)
			}
			var got []float32
			switch v := r.acc(smp.Output).(type) {
			case [][3]float32:
				for _, e := range v {
					got = append(got, e[:]...)
				}
			case [][4]float32:
				for _, e := range v {
					got = append(got, e[:]...)
				}
			default:
				t.Fatalf("output type %T", v)
			}
			equalSlices(t, "values", got, c.Values)
			for _, ai := range []int{smp.Input, smp.Output} {
				if bv := doc.BufferViews[*doc.Accessors[ai].BufferView]; bv.Target != 0 || bv.ByteStride != 0 {
					t.Errorf("animation buffer view %+v", bv)
				}
			}
		}
	}
}

// TestRepairs feeds values that break glTF rules and checks the output is
// valid and repaired the documented way.
func TestRepairs(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	p := grid(3, 3, 0)
	p.Positions[1] = [3]float32{nan, 1, inf}
	addNormals(&p, 13)
	p.Normals[0] = [3]float32{}
	p.Normals[1] = [3]float32{0, 3, 4}
	p.Normals[2] = [3]float32{nan, 0, 0}
	addTangents(&p, 14)
	p.Tangents[0] = [4]float32{2, 0, 0, 0.3}
	p.Tangents[1] = [4]float32{0, 0, 1, -7}
	addColors(&p, 1, 15)
	p.Colors[0][0] = [4]float32{1.5, -1, nan, 0.5}
	addUVs(&p, 1, 16)
	p.UVs[0][0] = [2]float32{inf, 0.5}
	p.Joints = make([][4]uint16, len(p.Positions))
	p.Weights = make([][4]float32, len(p.Positions))
	for i := range p.Weights {
		p.Joints[i] = [4]uint16{0, 1, 2, 3}
		p.Weights[i] = [4]float32{0.25, 0.25, 0.25, 0.25}
	}
	p.Joints[0], p.Weights[0] = [4]uint16{1, 1, 9, 2}, [4]float32{0.5, 0.5, 0.9, 0}   // duplicate, out of range, zero weight with joint 2
	p.Joints[1], p.Weights[1] = [4]uint16{1, 2, 0, 0}, [4]float32{-1, nan, 0, 0}      // nothing usable
	p.Joints[2], p.Weights[2] = [4]uint16{3, 2, 1, 0}, [4]float32{1, 0, 0, 0}         // valid but zero weights with joints
	p.Joints[3], p.Weights[3] = [4]uint16{3, 2, 1, 0}, [4]float32{0.1, 0.1, 0.1, 0.1} // sum 0.4
	p.Indices = append(p.Indices, 0, 1)                                               // a partial triangle
	empty := decode.Primitive{Material: -1}
	noTris := grid(2, 2, 0)
	noTris.Indices = nil
	s := &decode.Scene{
		Skeleton: &decode.Skeleton{Joints: []decode.Joint{
			{Name: "a", Parent: 2, Rest: decode.TRS{Rotation: [4]float32{0, 0, 2, 0}}}, // loop a→c→b→a, non-unit rotation
			{Name: "b", Parent: 0, Rest: decode.TRS{Translation: [3]float32{0, 1, 0}}},
			{Name: "c", Parent: 1},
			{Name: "d", Parent: 3, InverseBind: &[16]float32{1, 0, 0, 9, 0, 1, 0, 0, 0, 0, 1, 0, nan, 0, 0, 1}},
		}},
		Meshes: []decode.Mesh{
			{Name: "m", Skinned: true, Primitives: []decode.Primitive{p, empty, noTris}},
			{Name: "nothing", Primitives: []decode.Primitive{empty}},
		},
		Animations: []decode.Animation{{Name: "bad", Channels: []decode.Channel{
			{Kind: decode.TargetJoint, Index: 0, Path: decode.PathRotation, Times: []float32{-1, 0, 0, nan, 1, 0.5, 2},
				Values: []float32{0, 0, 0, 1, 0, 0, 0, 2, 9, 9, 9, 9, 9, 9, 9, 9, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1}},
			{Kind: decode.TargetJoint, Index: 0, Path: decode.PathRotation, Times: []float32{0}, Values: []float32{0, 0, 0, 1}},   // duplicate target
			{Kind: decode.TargetJoint, Index: 99, Path: decode.PathScale, Times: []float32{0}, Values: []float32{1, 1, 1}},        // no such joint
			{Kind: decode.TargetMesh, Index: 1, Path: "weights", Times: []float32{0}, Values: []float32{1}},                       // unsupported path
			{Kind: decode.TargetMesh, Index: 1, Path: decode.PathTranslation, Times: []float32{0, 1}, Values: []float32{1, 2, 3}}, // one value only
		}}, {Name: "empty"}},
	}
	r := encode(t, s)
	doc := r.doc
	if len(doc.Meshes) != 1 || len(doc.Meshes[0].Primitives) != 1 {
		t.Fatalf("empty primitives or meshes were emitted: %d meshes", len(doc.Meshes))
	}
	if n := doc.Nodes[1]; n.Name != "nothing" || n.Mesh != nil {
		t.Errorf("node of an empty mesh: %+v", n)
	}
	gp := doc.Meshes[0].Primitives[0]
	if idx := r.indices(gp); len(idx) != len(p.Indices)-2 {
		t.Errorf("%d indices, want the partial triangle dropped", len(idx))
	}
	if pos := r.attr(gp, "POSITION").([][3]float32); pos[1] != [3]float32{0, 1, 0} {
		t.Errorf("non-finite position became %v", pos[1])
	}
	nr := r.attr(gp, "NORMAL").([][3]float32)
	if nr[0] != [3]float32{0, 1, 0} || nr[1] != [3]float32{0, 0.6, 0.8} || nr[2] != [3]float32{0, 1, 0} || nr[3] != p.Normals[3] {
		t.Errorf("normals %v", nr[:4])
	}
	tg := r.attr(gp, "TANGENT").([][4]float32)
	if tg[0] != [4]float32{1, 0, 0, 1} || tg[1] != [4]float32{0, 0, 1, -1} {
		t.Errorf("tangents %v", tg[:2])
	}
	if c := r.attr(gp, "COLOR_0").([][4]float32)[0]; c != [4]float32{1, 0, 0, 0.5} {
		t.Errorf("colour %v", c)
	}
	if uv := r.attr(gp, "TEXCOORD_0").([][2]float32)[0]; uv != [2]float32{0, 0.5} {
		t.Errorf("uv %v", uv)
	}
	gj := r.attr(gp, "JOINTS_0").([][4]uint8)
	gw := r.attr(gp, "WEIGHTS_0").([][4]float32)
	if gj[0] != [4]uint8{1, 0, 0, 0} || gw[0] != [4]float32{1, 0, 0, 0} {
		t.Errorf("vertex 0 influences %v %v", gj[0], gw[0])
	}
	if gj[1] != [4]uint8{0, 0, 0, 0} || gw[1] != [4]float32{1, 0, 0, 0} {
		t.Errorf("vertex 1 influences %v %v", gj[1], gw[1])
	}
	if gj[2] != [4]uint8{3, 0, 0, 0} || gw[2] != [4]float32{1, 0, 0, 0} {
		t.Errorf("vertex 2 influences %v %v", gj[2], gw[2])
	}
	if gw[3][0]+gw[3][1]+gw[3][2]+gw[3][3] != 1 || math.Abs(float64(gw[3][0])-0.25) > 1e-6 {
		t.Errorf("vertex 3 influences %v %v", gj[3], gw[3])
	}
	// The loop is cut: exactly one of a, b, c became a root.
	if doc.Skins[0].Skeleton == nil {
		t.Errorf("no skeleton root")
	}
	if q := doc.Nodes[doc.Skins[0].Joints[0]].Rotation; q != [4]float64{0, 0, 1, 0} {
		t.Errorf("rotation not normalised: %v", q)
	}
	ibm := r.acc(*doc.Skins[0].InverseBindMatrices).([][4][4]float32)
	if ibm[3] != [4][4]float32{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}} {
		t.Errorf("repaired IBM %v", ibm[3])
	}
	// Kept: the repaired rotation, and the translation cut to its one key.
	if len(doc.Animations) != 1 || len(doc.Animations[0].Channels) != 2 {
		t.Fatalf("%d animations, %+v", len(doc.Animations), doc.Animations)
	}
	smp := doc.Animations[0].Samplers[0]
	equalSlices(t, "repaired times", r.acc(smp.Input).([]float32), []float32{0, 1, 2})
	q := r.acc(smp.Output).([][4]float32)
	if q[0] != [4]float32{0, 0, 0, 1} || q[1] != [4]float32{0, 0, 0, 1} || q[2] != [4]float32{0, 0, 0, 1} {
		t.Errorf("repaired rotations %v", q)
	}
	smp = doc.Animations[0].Samplers[1]
	equalSlices(t, "cut times", r.acc(smp.Input).([]float32), []float32{0})
	if v := r.acc(smp.Output).([][3]float32); len(v) != 1 || v[0] != [3]float32{1, 2, 3} {
		t.Errorf("cut translation %v", v)
	}
}

func TestContractErrors(t *testing.T) {
	bad := grid(3, 3, 0)
	bad.Indices[4] = 9
	if _, err := Encode(&decode.Scene{Meshes: []decode.Mesh{{Name: "m", Primitives: []decode.Primitive{bad}}}}); err == nil ||
		!strings.Contains(err.Error(), "index 9") {
		t.Errorf("out-of-range index: err = %v", err)
	}
	short := grid(3, 3, 0)
	short.Normals = make([][3]float32, 2)
	if _, err := Encode(&decode.Scene{Meshes: []decode.Mesh{{Name: "m", Primitives: []decode.Primitive{short}}}}); err == nil ||
		!strings.Contains(err.Error(), "normals") {
		t.Errorf("short normals: err = %v", err)
	}
}

func TestEmptyScene(t *testing.T) {
	r := encode(t, &decode.Scene{})
	if len(r.doc.Buffers) != 0 || len(r.doc.Nodes) != 0 {
		t.Errorf("empty scene: %d buffers, %d nodes", len(r.doc.Buffers), len(r.doc.Nodes))
	}
}

// TestKnownWarnings pins the validator warnings an export can still carry,
// each for a scene that asks for something glTF ignores: a transform on a
// skinned mesh's node, and an animation of that node.
func TestKnownWarnings(t *testing.T) {
	validator.Need(t)
	s := skinnedScene(5)
	s.Meshes[0].Transform = decode.TRS{Translation: [3]float32{0, 0, 1}, Rotation: [4]float32{0, 0, 0, 1}, Scale: [3]float32{1, 1, 1}}
	s.Animations = []decode.Animation{{Name: "slide", Channels: []decode.Channel{
		{Kind: decode.TargetMesh, Index: 0, Path: decode.PathTranslation, Times: []float32{0, 1}, Values: []float32{0, 0, 0, 1, 0, 0}}}}}
	glb, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	rep := validator.Check(t, glb)
	codes := rep.Codes(validator.SeverityWarning)
	slices.Sort(codes)
	got := strings.Join(codes, ",")
	if got != "ANIMATION_CHANNEL_TARGET_NODE_SKIN,NODE_SKINNED_MESH_LOCAL_TRANSFORMS" {
		t.Errorf("warnings %q", got)
	}
}

// bigScene has enough data (≈15 MB) to take the parallel write path.
func bigScene() *decode.Scene {
	p := grid(600, 500, 0)
	addNormals(&p, 17)
	addTangents(&p, 18)
	addUVs(&p, 1, 19)
	return &decode.Scene{Meshes: []decode.Mesh{{Name: "big", Primitives: []decode.Primitive{p}}}}
}

func TestLargeAndDeterministic(t *testing.T) {
	for _, s := range []*decode.Scene{animatedScene(), bigScene()} {
		a, err := Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		prev := runtime.GOMAXPROCS(1)
		b, err := Encode(s)
		runtime.GOMAXPROCS(prev)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("two encodings of the same scene differ (parallel vs serial)")
		}
	}
	s := bigScene()
	r := encode(t, s)
	checkPrimitive(r, "big", r.doc.Meshes[0].Primitives[0], &s.Meshes[0].Primitives[0])
}

// BenchmarkEncode1MTriangles exports a 1 M-triangle mesh with normals,
// tangents and one UV set; bytes are the .glb's.
func BenchmarkEncode1MTriangles(b *testing.B) {
	p := grid(708, 708, 0) // 2·707² ≈ 1.0 M triangles, 501 k vertices
	addNormals(&p, 20)
	addTangents(&p, 21)
	addUVs(&p, 1, 22)
	s := &decode.Scene{Meshes: []decode.Mesh{{Name: "big", Primitives: []decode.Primitive{p}}}}
	glb, err := Encode(s)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	decodetest.Loop(b, int64(len(glb)), func() error {
		if _, err := Encode(s); err != nil {
			return err
		}
		return nil
	})
}

// randomScene builds a scene of random shape whose numbers are often
// invalid (NaN, ±Inf, huge, negative weights, joints out of range, parent
// loops, unsorted times), within the scene contract's lengths and indices.
func randomScene(r *rand.Rand) *decode.Scene {
	f := func() float32 {
		switch r.IntN(12) {
		case 0:
			return float32(math.NaN())
		case 1:
			return float32(math.Inf(1 - 2*r.IntN(2)))
		case 2:
			return 0
		case 3:
			return r.Float32() * 1e30
		}
		return r.Float32()*4 - 2
	}
	s := &decode.Scene{}
	for range r.IntN(3) {
		s.Materials = append(s.Materials, decode.Material{Name: "m", DoubleSided: r.IntN(2) == 0, AlphaBlend: r.IntN(2) == 0,
			BaseColor: [4]float32{f(), f(), f(), f()}})
	}
	nJoints := r.IntN(4) * r.IntN(120)
	if nJoints > 0 {
		s.Skeleton = &decode.Skeleton{}
		for i := range nJoints {
			j := decode.Joint{Name: "j", Parent: r.IntN(nJoints+2) - 2,
				Rest: decode.TRS{Translation: [3]float32{f(), f(), f()}, Rotation: [4]float32{f(), f(), f(), f()}, Scale: [3]float32{f(), f(), f()}}}
			if r.IntN(2) == 0 {
				var m [16]float32
				for k := range m {
					m[k] = f()
				}
				j.InverseBind = &m
			}
			_ = i
			s.Skeleton.Joints = append(s.Skeleton.Joints, j)
		}
	}
	for mi := range 1 + r.IntN(3) {
		m := decode.Mesh{Name: "mesh", Skinned: r.IntN(2) == 0}
		if r.IntN(3) == 0 {
			m.Transform = decode.TRS{Translation: [3]float32{f(), f(), f()}, Rotation: [4]float32{f(), f(), f(), f()}, Scale: [3]float32{f(), f(), f()}}
		}
		nt := r.IntN(3)
		for range r.IntN(2) + nt {
			m.TargetNames = append(m.TargetNames, "t")
		}
		for range 1 + r.IntN(3) {
			n := r.IntN(40)
			p := decode.Primitive{Material: r.IntN(4) - 1}
			for range n {
				p.Positions = append(p.Positions, [3]float32{f(), f(), f()})
			}
			if n > 0 {
				for range r.IntN(30) {
					p.Indices = append(p.Indices, uint32(r.IntN(n)))
				}
			}
			vec3s := func() [][3]float32 {
				v := make([][3]float32, n)
				for i := range v {
					v[i] = [3]float32{f(), f(), f()}
				}
				return v
			}
			if r.IntN(2) == 0 {
				p.Normals = vec3s()
			}
			if r.IntN(2) == 0 {
				p.Tangents = make([][4]float32, n)
				for i := range p.Tangents {
					p.Tangents[i] = [4]float32{f(), f(), f(), f()}
				}
			}
			for range r.IntN(3) {
				uv := make([][2]float32, n)
				for i := range uv {
					uv[i] = [2]float32{f(), f()}
				}
				p.UVs = append(p.UVs, uv)
			}
			for range r.IntN(3) {
				c := make([][4]float32, n)
				for i := range c {
					c[i] = [4]float32{f(), f(), f(), f()}
				}
				p.Colors = append(p.Colors, c)
			}
			if r.IntN(2) == 0 {
				p.Joints = make([][4]uint16, n)
				p.Weights = make([][4]float32, n)
				for i := range n {
					for k := range 4 {
						p.Joints[i][k] = uint16(r.IntN(nJoints + 3))
						p.Weights[i][k] = f()
					}
				}
			}
			for range nt + r.IntN(2) {
				var t decode.MorphTarget
				t.Positions = vec3s()
				if r.IntN(2) == 0 {
					t.Normals = vec3s()
				}
				if r.IntN(2) == 0 {
					t.Tangents = vec3s()
				}
				p.Targets = append(p.Targets, t)
			}
			m.Primitives = append(m.Primitives, p)
		}
		_ = mi
		s.Meshes = append(s.Meshes, m)
	}
	for range r.IntN(3) {
		a := decode.Animation{Name: "a"}
		for range r.IntN(5) {
			c := decode.Channel{Kind: decode.TargetKind(r.IntN(2)), Index: r.IntN(4) - 1,
				Path: []decode.Path{decode.PathTranslation, decode.PathRotation, decode.PathScale, "weights"}[r.IntN(4)], Step: r.IntN(2) == 0}
			keys := r.IntN(6)
			for k := range keys {
				c.Times = append(c.Times, float32(k)*0.5+f()*0.3)
			}
			for range keys*4 - r.IntN(3) {
				c.Values = append(c.Values, f())
			}
			a.Channels = append(a.Channels, c)
		}
		s.Animations = append(s.Animations, a)
	}
	return s
}

// TestRandomScenesValidate exports random, mostly broken scenes: Encode
// must not panic and every output must have 0 validator errors.
func TestRandomScenesValidate(t *testing.T) {
	r := rnd(99)
	dir := t.TempDir()
	var paths []string
	for i := range 60 {
		s := randomScene(r)
		glb, err := Encode(s)
		if err != nil {
			t.Fatalf("scene %d: %v", i, err)
		}
		p := filepath.Join(dir, "r"+strconv.Itoa(i)+".glb")
		if err := os.WriteFile(p, glb, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if err := validator.Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skipf("encoded %d random scenes; not validated: %v", len(paths), err)
	}
	reports, err := validator.ValidateFiles(paths...)
	if err != nil {
		t.Fatal(err)
	}
	var draws, skins, anims, morphs int
	for i, rep := range reports {
		draws += rep.Info.DrawCallCount
		anims += rep.Info.AnimationCount
		if rep.Info.HasSkins {
			skins++
		}
		if rep.Info.HasMorphTargets {
			morphs++
		}
		// The only warnings left are for what glTF ignores by design
		// (see TestKnownWarnings).
		for _, code := range rep.Codes(validator.SeverityWarning) {
			if code != "NODE_SKINNED_MESH_LOCAL_TRANSFORMS" && code != "ANIMATION_CHANNEL_TARGET_NODE_SKIN" {
				t.Errorf("random scene %d: warning %s", i, code)
			}
		}
		if rep.Fatal != "" || rep.Issues.NumErrors > 0 {
			t.Errorf("random scene %d:", i)
			validator.CheckReport(t, rep)
		}
	}
	// The generator must reach every feature, or the test proves little.
	if draws < 60 || skins < 10 || anims < 10 || morphs < 10 {
		t.Errorf("random scenes too tame: %d draw calls, %d with skins, %d animations, %d with morph targets", draws, skins, anims, morphs)
	}
	t.Logf("%d draw calls, %d with skins, %d animations, %d with morph targets", draws, skins, anims, morphs)
}
