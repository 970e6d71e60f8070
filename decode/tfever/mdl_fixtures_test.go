package tfever

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// The model fixtures are a small res/ tree under testdata/tfever/res:
// models/model/fixture/car.mdl (two LODs, nested nodes, a node without
// transf, a door mirrored in Y, KEYFRAME and FILE_REF sets, a box
// collider, metadata with translated strings) and sign.mdl, whose table a
// required script (scripts/fixture/signs.lua) builds and which requires a
// base-game module the tree does not hold (vec3). Their meshes and track
// are made by EncodeMsh and EncodeAni; the materials they name are not in
// the tree (a model must assemble without them).
const fixtureRes = "res/"

func translate(x, y, z float64) *[16]float64 {
	return &[16]float64{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, x, y, z, 1}
}

// doorSlide moves a door outwards (its node's −Y) by 0.2 m and along X by
// 0.6 m; the opposite set runs it back.
func doorSlide(forward bool) EncNodeAnim {
	a := EncNodeAnim{Set: "open_doors", Forward: forward, Keyframes: []EncKeyframe{
		{TimeMs: 0},
		{TimeMs: 300, Transl: [3]float64{0, -0.2, 0}},
		{TimeMs: 1000, Transl: [3]float64{0.6, -0.2, 0}},
	}}
	if !forward {
		a.Set = "close_doors"
		slices.Reverse(a.Keyframes)
		for i := range a.Keyframes {
			a.Keyframes[i].TimeMs = 1000 - a.Keyframes[i].TimeMs
		}
	}
	return a
}

func carModel() *EncModel {
	door := func(name string, transf *[16]float64) EncNode {
		return EncNode{Name: name, Transf: transf, Mesh: "fixture/door.msh", Materials: []string{"fixture/door.mtl"},
			Animations: []EncNodeAnim{doorSlide(true), doorSlide(false)}}
	}
	// The wheel turns 90° about Z; its spin is a track file.
	wheel := EncNode{Name: "wheel", Transf: &[16]float64{0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0.25, 1},
		Mesh: "fixture/door.msh", Materials: []string{"fixture/wheel.mtl"},
		Animations: []EncNodeAnim{{Set: "spin", File: "fixture/wheel_spin.ani"}}}
	return &EncModel{
		Requires: []string{"transf"},
		BBMin:    [3]float64{-1, -1.35, 0},
		BBMax:    [3]float64{1.25, 1.35, 2},
		Collider: `{ params = { halfExtents = { 1, 1.35, 1, }, }, transf = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 1, }, type = "BOX", }`,
		Metadata: `{ description = { name = _("fixture car"), }, cost = { price = 1000, }, }`,
		LODs: []EncLOD{
			{VisibleTo: 500, Node: EncNode{Name: "RootNode", Transf: translate(0, 0, 0), Children: []EncNode{
				{Name: "body", Transf: translate(0, 0, 1), Mesh: "fixture/cube.msh", Materials: []string{"fixture/body.mtl", "fixture/glass.mtl"}},
				door("door_l", translate(0.5, -1.1, 1)),
				door("door_r", &[16]float64{1, 0, 0, 0, 0, -1, 0, 0, 0, 0, 1, 0, 0.5, 1.1, 1, 1}),
				{Name: "bogie", Children: []EncNode{wheel}},
			}}},
			{VisibleFrom: 500, VisibleTo: 2000, Static: true, Node: EncNode{Name: "RootNode", Children: []EncNode{
				{Name: "body_lod1", Transf: translate(0, 0, 1), Mesh: "fixture/cube.msh", Materials: []string{"fixture/body.mtl", "fixture/glass.mtl"}},
			}}},
		},
	}
}

func signModel() *EncModel {
	return &EncModel{
		Requires: []string{"vec3"},
		BBMin:    [3]float64{-1, -1, 0},
		BBMax:    [3]float64{1, 1, 2},
		Collider: `{ params = { }, transf = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, }, type = "MESH", }`,
		Metadata: `{ }`,
		LODs: []EncLOD{{VisibleTo: 300, Node: EncNode{Name: "RootNode", Children: []EncNode{
			{Name: "plate", Transf: translate(0, 0, 1), Mesh: "fixture/cube.msh", Materials: []string{"fixture/sign.mtl", "fixture/sign_back.mtl"}},
		}}}},
	}
}

// wheelSpin turns the wheel about its node's Y axis.
func wheelSpin() ([]float64, [][16]float64) {
	times := []float64{0, 500, 1000}
	var ms [][16]float64
	for i := range times {
		a := float64(i) * math.Pi / 2
		c, s := math.Cos(a), math.Sin(a)
		ms = append(ms, [16]float64{c, 0, -s, 0, 0, 1, 0, 0, s, 0, c, 0, 0, 0, 0, 1})
	}
	return times, ms
}

// modelFixtures returns the model tree's files by path beneath
// testdata/tfever.
func modelFixtures(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	attrs, faces := cube(0.5)
	for name, m := range map[string]*EncMesh{"cube": tf2Cube(), "door": {Attrs: attrs, SubMeshes: []EncSubMesh{subMeshOf(faces, false)}}} {
		script, blob, err := EncodeMsh(m)
		if err != nil {
			t.Fatal(err)
		}
		out[fixtureRes+"models/mesh/fixture/"+name+".msh"] = script
		out[fixtureRes+"models/mesh/fixture/"+name+".msh.blob"] = blob
	}
	times, ms := wheelSpin()
	out[fixtureRes+"models/animation/fixture/wheel_spin.ani"] = EncodeAni(times, ms)
	out[fixtureRes+"models/model/fixture/car.mdl"] = EncodeMdl(carModel())
	mdl, lib := EncodeMdlRequire(signModel(), "fixture/signs")
	out[fixtureRes+"models/model/fixture/sign.mdl"] = mdl
	out[fixtureRes+"scripts/fixture/signs.lua"] = lib
	return out
}

// fixtureTree is modelFixtures keyed beneath res/.
func fixtureTree(t testing.TB) map[string][]byte {
	tree := map[string][]byte{}
	for p, b := range modelFixtures(t) {
		tree[strings.TrimPrefix(p, fixtureRes)] = b
	}
	return tree
}

func fixtureModel(t *testing.T, name string) (*decode.Model, *decode.Structure) {
	t.Helper()
	src := treeSource("models/model/fixture/"+name, fixtureTree(t))
	st, err := Mdl{}.Scan(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Mdl{}.DecodeModel(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	return m, st
}

// TestMdlRoundTrip: what EncodeMdl writes decodes to its nodes, parts,
// matrices (Y up), ranges and animations.
func TestMdlRoundTrip(t *testing.T) {
	enc := carModel()
	m, st := fixtureModel(t, "car.mdl")
	if len(m.LODs) != 2 {
		t.Fatalf("%d LODs", len(m.LODs))
	}
	var names []string
	for _, n := range m.LODs[0].Nodes {
		names = append(names, n.Name)
	}
	if want := []string{"RootNode", "body", "door_l", "door_r", "bogie", "wheel"}; !slices.Equal(names, want) {
		t.Errorf("nodes %v, want %v", names, want)
	}
	parents := []int{-1, 0, 0, 0, 0, 4}
	for i, n := range m.LODs[0].Nodes {
		if n.Parent != parents[i] {
			t.Errorf("%s: parent %d, want %d", n.Name, n.Parent, parents[i])
		}
	}
	lod0 := m.LODs[0]
	body := lod0.Nodes[1]
	// TF (0, 0, 1) is Y-up (0, 1, 0).
	if body.Matrix != (decode.Mat4{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1}) {
		t.Errorf("body matrix %v", body.Matrix)
	}
	if lod0.Nodes[4].Matrix != identity {
		t.Errorf("bogie without transf: %v", lod0.Nodes[4].Matrix)
	}
	if det3(lod0.Nodes[3].Matrix) >= 0 || det3(lod0.Nodes[2].Matrix) <= 0 {
		t.Errorf("mirror lost: door_l det %v, door_r det %v", det3(lod0.Nodes[2].Matrix), det3(lod0.Nodes[3].Matrix))
	}
	if p := body.Parts; len(p) != 1 || p[0].Mesh != (decode.Ref{Stored: "fixture/cube.msh", Base: decode.RefAssetRoot, Rel: "models/mesh/fixture/cube.msh"}) ||
		!slices.Equal(p[0].Materials, enc.LODs[0].Node.Children[0].Materials) || p[0].Skinned {
		t.Errorf("body parts %+v", p)
	}
	if m.LODs[1].VisibleFrom != 500 || m.LODs[1].VisibleTo != 2000 || m.LODs[0].VisibleTo != 500 {
		t.Errorf("ranges %v–%v, %v–%v", m.LODs[0].VisibleFrom, m.LODs[0].VisibleTo, m.LODs[1].VisibleFrom, m.LODs[1].VisibleTo)
	}
	var anims []string
	for _, a := range lod0.Animations {
		anims = append(anims, a.Name)
	}
	if want := []string{"close_doors/door_l", "open_doors/door_l", "close_doors/door_r", "open_doors/door_r", "spin/wheel"}; !slices.Equal(anims, want) {
		t.Errorf("animations %v, want %v", anims, want)
	}
	spin := lod0.Animations[4]
	if spin.File == nil || spin.File.Rel != "models/animation/fixture/wheel_spin.ani" || spin.Node != 5 || spin.Channels != nil {
		t.Errorf("spin %+v", spin)
	}
	if len(m.Colliders) != 1 || m.Colliders[0].Size != [3]float64{2, 2, 2.7} || m.Colliders[0].Matrix[13] != 1 {
		t.Errorf("colliders %+v", m.Colliders)
	}
	md, _ := m.Header.Get("metadata").(decode.Fields)
	if md == nil || md.Get("description").(decode.Fields).Get("name") != "fixture car" {
		t.Errorf("metadata %v", m.Header.Get("metadata"))
	}
	if got := st.Header.Get("meshes"); !slices.Equal(got.([]string), []string{"fixture/cube.msh", "fixture/door.msh"}) {
		t.Errorf("meshes %v", got)
	}
	if b, err := decode.HeaderJSON(st.Header); err != nil || !strings.Contains(string(b), `"unresolved"`) {
		t.Errorf("header.json %s, %v", b, err)
	}
}

// TestMdlRequireFixture: the sign's table comes from its script; the
// base-game module it requires but never uses is listed unresolved.
func TestMdlRequireFixture(t *testing.T) {
	m, st := fixtureModel(t, "sign.mdl")
	req := st.Header.Get("requires").([]decode.Fields)
	if len(req) != 2 || req[0].Get("module") != "fixture/signs" || req[0].Get("opened") != "res/scripts/fixture/signs.lua" ||
		req[1].Get("module") != "vec3" || req[1].Get("unresolved") == nil {
		t.Errorf("requires %v", req)
	}
	if len(m.LODs) != 1 || len(m.LODs[0].Nodes) != 2 || m.LODs[0].Nodes[1].Parts[0].Mesh.Rel != "models/mesh/fixture/cube.msh" {
		t.Errorf("model %+v", m.LODs)
	}
	if len(m.Colliders) != 0 {
		t.Errorf("a MESH collider became a shape: %+v", m.Colliders)
	}
}

// channelMatrix is the node transform the channels give at key i.
func channelMatrix(a decode.ModelAnimation, i int) decode.Mat4 {
	var trs decode.TRS
	for _, c := range a.Channels {
		switch c.Path {
		case decode.PathTranslation:
			copy(trs.Translation[:], c.Values[3*i:])
		case decode.PathRotation:
			copy(trs.Rotation[:], c.Values[4*i:])
		case decode.PathScale:
			copy(trs.Scale[:], c.Values[3*i:])
		}
	}
	return trs.Matrix()
}

// TestMdlKeyframeRelative: a KEYFRAME set moves its node in the node's own
// frame, so one track opens both the door and its mirror image outwards:
// at the last key both doors are 0.2 m further from the car's centre line
// and 0.6 m along +X.
func TestMdlKeyframeRelative(t *testing.T) {
	m, _ := fixtureModel(t, "car.mdl")
	lod := m.LODs[0]
	w := worlds(lod)
	for _, a := range lod.Animations {
		if a.Extras.Get("set") != "open_doors" {
			continue
		}
		n := lod.Nodes[a.Node]
		if len(a.Channels) != 3 {
			t.Fatalf("%s: %d channels", a.Name, len(a.Channels))
		}
		rest := w[a.Node]
		first := w[n.Parent].Mul(channelMatrix(a, 0))
		last := w[n.Parent].Mul(channelMatrix(a, 2))
		// The first key is the rest pose.
		for i := range rest {
			if math.Abs(first[i]-rest[i]) > 1e-6 {
				t.Fatalf("%s: key 0 %v, rest %v", a.Name, first, rest)
			}
		}
		// Y-up z is the game's −y: the doors at z = ±1.1 go to ±1.3.
		sign := map[string]float64{"door_l": 1, "door_r": -1}[n.Name]
		want := [3]float64{1.1, 1, 1.3 * sign}
		got := [3]float64{last[12], last[13], last[14]}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-6 {
				t.Errorf("%s: door at %v after opening, want %v", a.Name, got, want)
				break
			}
		}
		if det3(last) >= 0 != (sign > 0) {
			t.Errorf("%s: the mirror is lost while animated (det %v)", a.Name, det3(last))
		}
	}
}

// TestMdlFixtureBounds: the fixture's boundingInfo is its geometry's box,
// and the acceptance check's composition reproduces it.
func TestMdlFixtureBounds(t *testing.T) {
	m, _ := fixtureModel(t, "car.mdl")
	got := lodBounds(t, filepath.Join(fixtureDir, "res"), m.LODs[0], func(string) bool { return false })
	enc := carModel()
	want := bounds{[3]float64{enc.BBMin[0], enc.BBMin[2], -enc.BBMax[1]}, [3]float64{enc.BBMax[0], enc.BBMax[2], -enc.BBMin[1]}}
	for i := 0; i < 3; i++ {
		if math.Abs(got.min[i]-want.min[i]) > 1e-6 || math.Abs(got.max[i]-want.max[i]) > 1e-6 {
			t.Fatalf("bounds %v, want %v", got, want)
		}
	}
}
