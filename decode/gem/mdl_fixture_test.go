package gem

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

func g(name string, args ...string) *Node { return &Node{Name: name, Args: args} }

func (n *Node) with(children ...*Node) *Node { n.Children = append(n.Children, children...); return n }

func nums(v ...float64) []string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return s
}

// fixtureModel is a small tank whose parts are the .ply fixtures beside it
// (but a LOD and the gun, which are missing): a mirrored root, a hull with a wheel pair
// (one frame mirrored), a turret on a Position, a gun on a rotated
// Matrix34 with limits, a part with three LODs (the last {OFF}), a
// sequence with its file and one without, and one volume of each shape.
func fixtureModel() []*Node {
	return []*Node{
		g("Skeleton").with(
			g("animation").with(
				g("sequence", "fire").with(g("file", "gun_fire.anm"), g("speed", "0.75")),
				g("sequence", "open").with(g("speed", "0.5"), g("resume")),
			),
			g("bone", "basis").with(
				g("parameters", "WheelRadius=0.45;"),
				g("Orientation", nums(1, 0, 0, 0, -1, 0, 0, 0, 1)...),
				g("bone", "body").with(
					g("Matrix34", nums(1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 20)...),
					g("VolumeView", "eply_tangents_textures.ply"),
					g("bone", "revolute", "wheell").with(
						g("Matrix34", nums(1, 0, 0, 0, 0, -1, 0, 1, 0, 10, 26, -2)...),
						g("VolumeView", "eply_multi_uv.ply"),
					),
					g("bone", "revolute", "wheelr").with(
						g("Matrix34", nums(1, 0, 0, 0, 0, 1, 0, 1, 0, 10, -26, -2)...),
						g("VolumeView", "eply_multi_uv.ply"),
					),
					g("bone", "revolute", "turret").with(
						g("speed", "0.005"),
						g("Position", nums(9.5, 0, 10)...),
						g("LODView").with(g("VolumeView", "eply_mirrored_mror.ply"), g("VolumeView", "lod/turret_lod1.ply"), g("OFF")),
						g("bone", "revolute", "gun").with(
							g("limits", "-15", "15"),
							// A 30° turn about GEM Z, then the offset.
							g("Matrix34", nums(math.Cos(math.Pi/6), math.Sin(math.Pi/6), 0, -math.Sin(math.Pi/6), math.Cos(math.Pi/6), 0, 0, 0, 1, 26, 0, 8)...),
							g("VolumeView", "/entity/common/gun.ply"),
						),
					),
				),
			),
		),
		g("Volume", "hull").with(g("Box", nums(140, 60, 30)...), g("Bone", "body"), g("Position", nums(0, 0, 15)...)),
		g("Volume", "barrel").with(g("Cylinder", nums(2, 70)...), g("Bone", "gun"),
			g("Matrix34", nums(0, 1, 0, 0, 0, 1, 1, 0, 0, 35, 0, 0)...)),
		g("Volume", "turret").with(g("Polyhedron", "turret.vol"), g("Bone", "turret")),
		g("Volume", "ball").with(g("Sphere", "3"), g("Bone", "nobody")),
	}
}

// fixtureCrewman is a skinned figure: a bone chain with the names the
// skinned .ply fixture's SKIN gives, and a skin bone with two LODs.
func fixtureCrewman() []*Node {
	return []*Node{g("Skeleton").with(
		g("bone", "basis").with(
			g("Orientation", nums(1, 0, 0, 0, -1, 0, 0, 0, 1)...),
			g("bone", "pelvis").with(g("Position", nums(0, 0, 20)...),
				g("bone", "spine").with(g("Position", nums(0, 0, 6)...),
					g("bone", "neck").with(g("Position", nums(0, 0, 8)...),
						g("bone", "head").with(g("Position", nums(0, 0, 3)...))))),
			g("bone", "skin").with(g("Matrix34", nums(0, 1, 0, -1, 0, 0, 0, 0, 1, 0, 0, 18)...),
				g("LODView").with(g("VolumeView", "eply_skinned_0x800.ply"), g("OFF"))),
		))}
}

// fixtureAnm keys two bones over 11 frames: a position and rotation at
// frame 0 (visible), rotations at frames 5 and 10 of the first bone, a
// mirrored bone with scale, and a frame without keys.
func fixtureAnm() *Anm {
	half := float32(math.Sin(math.Pi / 4)) // 90° about an axis
	return &Anm{
		Version: 0x00060000, FrameCount: 11, HasFrameCount: true,
		Comments: []string{"made by meshfs's encoder"},
		Bones:    []string{"gun", "wheell"},
		Frames: []AnmFrame{
			{Number: 0, Keys: []AnmKey{
				{Bone: 0, Flags: KeyPosition | KeyRotation | KeyVisibleOn, Position: [3]float32{26, 0, 8}},
				{Bone: 1, Flags: KeyPosition | KeyRotation | KeyMirrored | KeyVisibleOn | KeyScale, Position: [3]float32{10, 26, -2}, Rotation: [3]float32{half, 0, 0}, Scale: [3]float32{1, 2, 3}},
			}},
			{Number: 5, Keys: []AnmKey{{Bone: 0, Flags: KeyRotation, Rotation: [3]float32{0, 0, half}}}},
			{Number: 7},
			{Number: 10, Keys: []AnmKey{
				{Bone: 0, Flags: KeyPosition | KeyRotation, Position: [3]float32{20, 0, 8}, Rotation: [3]float32{0, 0, 1}},
				{Bone: 1, Flags: KeyRotation | KeyMirrored, Rotation: [3]float32{0, half, 0}},
			}},
		},
	}
}

// fixtureLegacyAnm is the same kind of content in FRMN frames: matrices,
// one mirrored, a visibility record and a MESH block.
func fixtureLegacyAnm() *Anm {
	vis := uint32(0)
	return &Anm{
		Version: 0x00050000, FrameCount: 3, HasFrameCount: true,
		Bones: []string{"turret", "hatch"},
		Frames: []AnmFrame{
			{Legacy: true, Number: 0, Keys: []AnmKey{
				{Bone: 0, Flags: KeyPosition | KeyRotation, Matrix: &[12]float32{1, 0, 0, 0, 1, 0, 0, 0, 1, 9.5, 0, 10}},
				{Bone: 1, Flags: KeyPosition | KeyRotation | KeyVisibleOff | KeyMesh, Matrix: &[12]float32{1, 0, 0, 0, 1, 0, 0, 0, -1, 0, 2, 4},
					Visible: &vis, Mesh: []byte{1, 2, 3, 4, 5, 6, 7, 8}},
			}},
			{Legacy: true, Number: 2, Keys: []AnmKey{
				{Bone: 0, Flags: KeyPosition | KeyRotation, Matrix: &[12]float32{0, 1, 0, -1, 0, 0, 0, 0, 1, 9.5, 0, 12}},
			}},
		},
	}
}

func modelFixtures(t testing.TB) map[string][]byte {
	t.Helper()
	text, err := EncodeText(fixtureModel())
	if err != nil {
		t.Fatal(err)
	}
	text = append([]byte(";Made by meshfs's encoder for tests\n"), text...)
	crew, err := EncodeText(fixtureCrewman())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{"tank_small.mdl": text, "crewman.mdl": crew}
	for name, a := range map[string]*Anm{"gun_fire.anm": fixtureAnm(), "turret_frmn.anm": fixtureLegacyAnm()} {
		b, err := EncodeAnm(a)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	return out
}

func decodetestGolden(t *testing.T, name string, b []byte) {
	t.Helper()
	decodetest.Golden(t, filepath.Join(fixtureDir, name), b, *update, "go test ./decode/gem -run TestFixtures -update")
}

// TestFixturesModel checks that the committed .mdl and .anm fixtures are
// what the encoders write now; with -update it rewrites them.
func TestFixturesModel(t *testing.T) {
	for name, b := range modelFixtures(t) {
		decodetestGolden(t, name, b)
	}
}

// gemWorld places a point given in bone i's frame into the model's GEM
// space by the file's own rule (row vectors: p·R + t, up the chain).
func gemWorld(m *model, i int, p [3]float64) [3]float64 {
	for ; i >= 0; i = m.Bones[i].Parent {
		f := m.Bones[i].Frame
		var q [3]float64
		for c := 0; c < 3; c++ {
			q[c] = p[0]*f.Rows[0][c] + p[1]*f.Rows[1][c] + p[2]*f.Rows[2][c] + f.T[c]
		}
		p = q
	}
	return p
}

// TestModelFixture decodes the fixture model: each node's world matrix
// maps a point of its bone's frame where the file's own rule puts it,
// converted as the .ply decoder converts positions ((x, y, z) → (x, z,
// y)) with translations in metres; LODs, sequences and volumes follow
// the file.
func TestModelFixture(t *testing.T) {
	text := modelFixtures(t)["tank_small.mdl"]
	pm, err := parseModel("tank_small.mdl", text)
	if err != nil {
		t.Fatal(err)
	}
	src := &decode.Source{Name: "tank_small.mdl", R: bytes.NewReader(text), Size: int64(len(text))}
	m, err := Mdl{}.DecodeModel(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.LODs) != 3 {
		t.Fatalf("%d LODs, want 3", len(m.LODs))
	}
	for k, lod := range m.LODs {
		w := worlds(lod.Nodes)
		for i := range lod.Nodes {
			for _, p := range [][3]float64{{0, 0, 0}, {1, 2, 3}, {-5, 0.5, 7}} {
				want := gemWorld(pm, i, p)
				want = [3]float64{want[0] * MetresPerUnit, want[2] * MetresPerUnit, want[1] * MetresPerUnit}
				// The part's vertex p, converted and scaled as the
				// assembler places it.
				got := apply(w[i], [3]float64{p[0] * MetresPerUnit, p[2] * MetresPerUnit, p[1] * MetresPerUnit})
				for c := 0; c < 3; c++ {
					if math.Abs(got[c]-want[c]) > 1e-9 {
						t.Fatalf("LOD %d node %q: point %v lands at %v, want %v", k, lod.Nodes[i].Name, p, got, want)
					}
				}
			}
		}
		turret := lod.Nodes[4]
		switch {
		case k == 0 && (len(turret.Parts) != 1 || turret.Parts[0].Mesh.Rel != "eply_mirrored_mror.ply"),
			k == 1 && (len(turret.Parts) != 1 || turret.Parts[0].Mesh.Rel != "lod/turret_lod1.ply"),
			k == 2 && len(turret.Parts) != 0:
			t.Errorf("LOD %d: turret parts %+v", k, turret.Parts)
		}
		gun := lod.Nodes[5].Parts[0].Mesh
		if gun.Base != decode.RefAssetRoot || gun.Rel != "entity/common/gun.ply" || gun.Stored != "/entity/common/gun.ply" {
			t.Errorf("gun part %+v", gun)
		}
		if len(lod.Nodes[2].Parts) != 1 || lod.Nodes[2].Extras.Get("mirrored") != nil || lod.Nodes[3].Extras.Get("mirrored") != true {
			t.Errorf("wheels %+v %+v", lod.Nodes[2], lod.Nodes[3])
		}
	}
	if a := m.Animations; len(a) != 2 || a[0].File.Rel != "gun_fire.anm" || a[1].File.Rel != "open.anm" ||
		a[0].Extras.Get("speed") != 0.75 || a[1].Extras.Get("resume") != true {
		t.Errorf("animations %+v", a)
	}
	c := m.Colliders
	if len(c) != 4 || c[0].Kind != "box" || c[0].Node != 1 || c[0].Size != [3]float64{7, 1.5, 3} ||
		c[1].Kind != "cylinder" || c[1].Size != [3]float64{0.1, 3.5, 0} || c[1].Node != 5 ||
		c[2].Kind != "mesh" || c[2].Mesh.Rel != "turret.vol" || c[3].Kind != "sphere" || c[3].Node != -1 {
		t.Errorf("colliders %+v", c)
	}
	if c[0].Matrix[13] != 0.75 {
		t.Errorf("hull box at %v, want 0.75 m up", c[0].Matrix[12:15])
	}
	for _, part := range []decode.ModelPart{m.LODs[0].Nodes[1].Parts[0], m.LODs[0].Nodes[2].Parts[0]} {
		if part.Skinned || part.Mesh.Base != decode.RefModelDir {
			t.Errorf("rigid part %+v", part)
		}
	}
	round, err := ParseText("x", text)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := EncodeText(round)
	if !bytes.HasSuffix(text, again) {
		t.Error("EncodeText(ParseText(text)) differs from text")
	}
}

// TestCrewmanFixture: a part beside the model with a SKIN chunk is
// skinned; LOD 1 of a LODView ending in {OFF} has no part.
func TestCrewmanFixture(t *testing.T) {
	m, err := Mdl{}.DecodeModel(context.Background(), fileSource(t, filepath.Join(fixtureDir, "crewman.mdl")))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.LODs) != 2 {
		t.Fatalf("%d LODs", len(m.LODs))
	}
	skin := m.LODs[0].Nodes[5]
	if skin.Name != "skin" || len(skin.Parts) != 1 || !skin.Parts[0].Skinned || len(m.LODs[1].Nodes[5].Parts) != 0 {
		t.Errorf("skin node %+v, LOD 1 %+v", skin, m.LODs[1].Nodes[5])
	}
}
