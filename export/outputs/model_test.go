package outputs_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	qgltf "github.com/qmuntal/gltf"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/export/gltf/validator"
	"github.com/meshfs/meshfs/export/outputs"
)

// testModel is a model format whose every file decodes to one hand-built
// Model: the assembly is tested apart from the model decoders.
type testModel struct{ model *decode.Model }

func (testModel) Name() string                        { return "test-mdl" }
func (testModel) Sniff(name string, head []byte) bool { return false }
func (testModel) StripExt(name string) string         { return strings.TrimSuffix(name, ".mdl") }
func (testModel) Decode(context.Context, *decode.Source) (*decode.Scene, error) {
	return nil, errors.New("a model is assembled, not decoded")
}

func (testModel) Scan(ctx context.Context, src *decode.Source) (*decode.Structure, error) {
	return &decode.Structure{Format: "test-mdl", Header: decode.Fields{{Key: "kind", Value: "test"}},
		Chunks: []decode.Chunk{{Name: "model.txt", Length: src.Size, Size: src.Size}}}, nil
}

func (f testModel) DecodeModel(ctx context.Context, src *decode.Source) (*decode.Model, error) {
	b := make([]byte, src.Size)
	if _, err := src.R.ReadAt(b, 0); err != nil {
		return nil, err
	}
	if strings.Contains(string(b), "broken") {
		return nil, decode.Errorf(src.Name, "", "lods", 0, "broken model")
	}
	return f.model, nil
}

func translate(x, y, z float64) decode.Mat4 {
	m := decode.Identity4()
	m[12], m[13], m[14] = x, y, z
	return m
}

// modelTree writes a model's folder: body.ply (rigid, used twice),
// skin.ply (skinned), cube.msh, walk.ani, broken.ply (fails), and the
// model file; nope.ply is missing.
func modelTree(t *testing.T) (dir string, model *decode.Model) {
	dir = t.TempDir()
	copyFile := func(from, to string) {
		b, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", from))
		if err != nil {
			t.Fatal(err)
		}
		put(t, filepath.Join(dir, to), b)
	}
	copyFile("gem/eply_tangents_textures.ply", "body.ply")
	copyFile("gem/eply_skinned_0x800.ply", "skin.ply")
	copyFile("tfever/tf2_cube.msh", "cube.msh")
	copyFile("tfever/tf2_cube.msh.blob", "cube.msh.blob")
	copyFile("tfever/walk.ani", "walk.ani")
	b, _ := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "gem", "eply_tangents_textures.ply"))
	put(t, filepath.Join(dir, "broken.ply"), b[:len(b)/3])
	put(t, filepath.Join(dir, "tank.mdl"), []byte("model text\n"))
	ani, _ := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "tfever", "walk.ani"))
	put(t, filepath.Join(dir, "bad.ani"), ani[:len(ani)/2])

	ref := func(name string) decode.Ref { return decode.Ref{Stored: name, Base: decode.RefModelDir, Rel: name} }
	mirror := translate(-1, 0, 0)
	mirror[0] = -1
	model = &decode.Model{
		Unit: "test unit", Scale: 2,
		LODs: []decode.ModelLOD{{
			VisibleFrom: 0, VisibleTo: 100,
			Nodes: []decode.ModelNode{
				{Name: "hull", Parent: -1, Matrix: translate(0, 1, 0), Parts: []decode.ModelPart{{Mesh: ref("skin.ply"), Skinned: true}}},
				{Name: "wheel_l", Parent: 0, Matrix: translate(1, 0, 0), Parts: []decode.ModelPart{{Mesh: ref("body.ply")}},
					Extras: decode.Fields{{Key: "kind", Value: "revolute"}}},
				{Name: "wheel_r", Parent: 0, Matrix: mirror, Parts: []decode.ModelPart{{Mesh: ref("body.ply")}}},
				{Name: "spine", Parent: 0, Matrix: translate(0, 0.5, 0)},
				{Name: "gone", Parent: 0, Parts: []decode.ModelPart{{Mesh: ref("nope.ply")}}},
				{Name: "bad", Parent: 0, Parts: []decode.ModelPart{{Mesh: ref("broken.ply")}}},
			},
			Animations: []decode.ModelAnimation{{Name: "spin", Node: -1, Channels: []decode.Channel{
				{Kind: decode.TargetJoint, Index: 1, Path: decode.PathRotation, Times: []float32{0, 1}, Values: []float32{0, 0, 0, 1, 0, 0.7071, 0, 0.7071}}}}},
		}, {
			VisibleFrom: 100, VisibleTo: 1000,
			Nodes: []decode.ModelNode{{Name: "box", Parent: -1, Matrix: translate(0, 0, 3),
				Parts: []decode.ModelPart{{Mesh: ref("cube.msh"), Materials: []string{"paint.mtl"}}}}},
		}},
		Animations: []decode.ModelAnimation{
			{Name: "walk", File: &decode.Ref{Stored: "walk.ani", Base: decode.RefModelDir, Rel: "walk.ani"}, Node: 1},
			{Name: "limp", File: &decode.Ref{Stored: "bad.ani", Base: decode.RefModelDir, Rel: "bad.ani"}, Node: 1},
		},
		Colliders: []decode.Collider{
			{Name: "hull_box", Kind: "box", Node: 0, Matrix: translate(0, 0.5, 0), Size: [3]float64{1, 2, 3}},
			{Name: "drum", Kind: "cylinder", Node: 1, Size: [3]float64{0.5, 1, 0}},
			{Name: "hull.vol", Kind: "mesh", Node: 0, Mesh: &decode.Ref{Stored: "hull.vol", Base: decode.RefModelDir, Rel: "hull.vol"}},
		},
	}
	return dir, model
}

func parseGLB(t *testing.T, b []byte) *qgltf.Document {
	t.Helper()
	doc := new(qgltf.Document)
	if err := qgltf.NewDecoder(strings.NewReader(string(b))).Decode(doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func nodeNamed(t *testing.T, doc *qgltf.Document, name string) int {
	t.Helper()
	for i, n := range doc.Nodes {
		if n.Name == name {
			return i
		}
	}
	t.Fatalf("no node %q", name)
	return -1
}

func parentOf(doc *qgltf.Document, i int) int {
	for p, n := range doc.Nodes {
		for _, c := range n.Children {
			if c == i {
				return p
			}
		}
	}
	return -1
}

// worldOf composes node i's transform with its ancestors'.
func worldOf(doc *qgltf.Document, i int) decode.Mat4 {
	n := doc.Nodes[i]
	t := decode.TRS{
		Translation: [3]float32{float32(n.Translation[0]), float32(n.Translation[1]), float32(n.Translation[2])},
		Rotation:    [4]float32{float32(n.Rotation[0]), float32(n.Rotation[1]), float32(n.Rotation[2]), float32(n.Rotation[3])},
		Scale:       [3]float32{float32(n.Scale[0]), float32(n.Scale[1]), float32(n.Scale[2])},
	}
	if t.Rotation == ([4]float32{}) {
		t.Rotation[3] = 1
	}
	if t.Scale == ([3]float32{}) {
		t.Scale = [3]float32{1, 1, 1}
	}
	m := t.Matrix()
	if p := parentOf(doc, i); p >= 0 {
		return worldOf(doc, p).Mul(m)
	}
	return m
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-5 }

func TestModelAssembly(t *testing.T) {
	dir, model := modelTree(t)
	m := outputs.New(filepath.Join(dir, "tank.mdl"), testModel{model})
	if got := m.LODs(); got != 2 {
		t.Fatalf("LODs = %d, want 2", got)
	}
	glbs, deps, err := m.ModelGLBs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(glbs) != 3 {
		t.Fatalf("%d glb files, want 2 LODs and the collision shapes", len(glbs))
	}
	for _, b := range glbs {
		validator.Check(t, b)
	}
	doc := parseGLB(t, glbs[0])

	// The root, named after the model, holds the LOD's root nodes.
	root := nodeNamed(t, doc, "tank")
	if len(doc.Scenes[0].Nodes) == 0 || doc.Scenes[0].Nodes[0] != root {
		t.Errorf("scene roots %v, want the model's root %d first", doc.Scenes[0].Nodes, root)
	}
	hull := nodeNamed(t, doc, "hull")
	if parentOf(doc, hull) != root {
		t.Errorf("hull's parent is %d, want the root", parentOf(doc, hull))
	}
	// Node transforms composed: wheel_l at (1, 1, 0); its part is a child
	// of it; wheel_r mirrors x.
	wl, wr := nodeNamed(t, doc, "wheel_l"), nodeNamed(t, doc, "wheel_r")
	if w := worldOf(doc, wl); !near(w[12], 1) || !near(w[13], 1) || !near(w[14], 0) {
		t.Errorf("wheel_l world translation %v, want (1, 1, 0)", w[12:15])
	}
	if ex, _ := json.Marshal(doc.Nodes[wl].Extras); !strings.Contains(string(ex), "revolute") {
		t.Errorf("wheel_l extras %s, want its kind", ex)
	}
	if w := worldOf(doc, wr); w.Det3() >= 0 || !near(w[12], -1) {
		t.Errorf("wheel_r world %v: want mirrored, at x = -1", w)
	}
	var onWheel []int
	for i, n := range doc.Nodes {
		if n.Mesh != nil && (parentOf(doc, i) == wl || parentOf(doc, i) == wr) {
			onWheel = append(onWheel, i)
		}
	}
	if len(onWheel) != 2 {
		t.Errorf("%d meshes on the wheels, want one each", len(onWheel))
	}
	// The skinned part is bound to the model's nodes by name (spine) and
	// to hull for the joints naming no node.
	if len(doc.Skins) != 1 {
		t.Fatalf("%d skins, want 1 (one skinned part)", len(doc.Skins))
	}
	joints := map[string]bool{}
	for _, j := range doc.Skins[0].Joints {
		joints[doc.Nodes[j].Name] = true
	}
	if !joints["spine"] || !joints["hull"] {
		t.Errorf("skin joints %v, want spine and hull", joints)
	}
	// Missing and failing parts: named empty nodes.
	gone := nodeNamed(t, doc, "nope.ply")
	if doc.Nodes[gone].Mesh != nil || parentOf(doc, gone) != nodeNamed(t, doc, "gone") {
		t.Errorf("nope.ply: want an empty node under gone")
	}
	bad := nodeNamed(t, doc, "broken.ply")
	if ex, _ := json.Marshal(doc.Nodes[bad].Extras); !strings.Contains(string(ex), "error") {
		t.Errorf("broken.ply extras %s, want its error", ex)
	}
	rootEx, _ := json.Marshal(doc.Nodes[root].Extras)
	if !strings.Contains(string(rootEx), "nope.ply") || !strings.Contains(string(rootEx), "broken.ply") || !strings.Contains(string(rootEx), "bad.ani") {
		t.Errorf("root extras %s: want unresolved nope.ply and failed broken.ply", rootEx)
	}
	// Animations on nodes: the inline one on wheel_l, walk.ani on it too.
	anims := map[string]int{}
	for _, a := range doc.Animations {
		for _, c := range a.Channels {
			anims[a.Name] = *c.Target.Node
		}
	}
	if anims["spin"] != wl || anims["walk"] != wl {
		t.Errorf("animations %v, want spin and walk on wheel_l (%d)", anims, wl)
	}
	// The model's scale is in the parts' geometry, not on a node.
	for _, n := range doc.Nodes {
		if s := n.Scale; s != [3]float64{} && (math.Abs(math.Abs(s[0])-1) > 1e-6 || math.Abs(s[1]-1) > 1e-6) {
			t.Errorf("node %q scaled %v", n.Name, s)
		}
	}
	seen := map[string]bool{}
	for _, im := range doc.Images {
		if seen[im.Name] {
			t.Errorf("image %q embedded twice", im.Name)
		}
		seen[im.Name] = true
	}

	// LOD 1: the override names the material.
	doc1 := parseGLB(t, glbs[1])
	found := false
	for _, mat := range doc1.Materials {
		if strings.Contains(mat.Name, "paint.mtl") {
			found = true
		}
	}
	if !found {
		t.Errorf("LOD 1 materials %v: want the override paint.mtl", doc1.Materials)
	}
	box := nodeNamed(t, doc1, "box")
	if w := worldOf(doc1, box); !near(w[14], 3) {
		t.Errorf("box at %v, want z = 3", w[12:15])
	}

	// Collision shapes: each on its node; the missing polyhedron a named
	// empty node.
	docC := parseGLB(t, glbs[2])
	hb := -1
	for i, n := range docC.Nodes {
		if n.Name == "hull_box" && n.Mesh != nil {
			hb = i
		}
	}
	if hb < 0 || docC.Nodes[parentOf(docC, hb)].Name != "hull" {
		t.Fatalf("no hull_box mesh on hull")
	}
	acc := docC.Accessors[docC.Meshes[*docC.Nodes[hb].Mesh].Primitives[0].Attributes[qgltf.POSITION]]
	if acc.Max[0] != 0.5 || acc.Max[1] != 1 || acc.Max[2] != 1.5 {
		t.Errorf("hull_box extends to %v, want (0.5, 1, 1.5)", acc.Max)
	}
	if w := worldOf(docC, hb); !near(w[13], 1.5) {
		t.Errorf("hull_box at y %v, want 1.5 (hull 1 + its own 0.5)", w[13])
	}
	if v := nodeNamed(t, docC, "hull.vol"); docC.Nodes[v].Mesh != nil {
		t.Error("the missing hull.vol has a mesh")
	}

	// Dependencies: every part file read, and a companion.
	want := map[string]bool{"body.ply": false, "skin.ply": false, "cube.msh": false, "cube.msh.blob": false, "walk.ani": false}
	for _, d := range deps {
		if _, ok := want[filepath.Base(d.Path)]; ok {
			want[filepath.Base(d.Path)] = true
		}
	}
	for n, ok := range want {
		if !ok {
			t.Errorf("deps lack %s", n)
		}
	}
}

func TestModelHeader(t *testing.T) {
	dir, model := modelTree(t)
	m := outputs.New(filepath.Join(dir, "tank.mdl"), testModel{model})
	st, err := m.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, deps, err := m.HeaderDeps(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Kind string
		Unit string
		LODs []struct {
			File                   string
			VisibleFrom, VisibleTo float64 `json:"-"`
			Parts                  []map[string]any
		} `json:"lod_files"`
		Unresolved []map[string]any
		Failed     []map[string]any
	}
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if h.Kind != "test" || h.Unit != "test unit" || len(h.LODs) != 2 || h.LODs[1].File != "tank.lod1.glb" {
		t.Errorf("header %s", b)
	}
	if len(h.Unresolved) != 2 || h.Unresolved[0]["name"] != "nope.ply" || h.Unresolved[1]["name"] != "hull.vol" {
		t.Errorf("unresolved %v, want the part nope.ply and the collider hull.vol", h.Unresolved)
	}
	if len(h.Failed) != 2 || h.Failed[0]["name"] != "broken.ply" || h.Failed[1]["name"] != "bad.ani" {
		t.Errorf("failed %v, want the part broken.ply and the animation bad.ani", h.Failed)
	}
	names := map[string]bool{}
	for _, d := range deps {
		names[filepath.Base(d.Path)] = true
	}
	for _, n := range []string{"body.ply", "cube.msh", "cube.msh.blob", "walk.ani"} {
		if !names[n] {
			t.Errorf("header deps lack %s: %v", n, names)
		}
	}
}

// folderOf is what the folder of m holds, file by file, made as the tree
// makes each (a format of the test's own is no tree's: the functions the
// tree calls): header.json and chunks/ from the scan, the GLB files from
// the model's assembly, its preview, error.txt when either fails, by the folder
// table's rule. Names of chunks are "chunks/NAME".
func folderOf(t *testing.T, m *outputs.Mesh) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	st, scanErr := m.Scan(ctx)
	glbs, convErr := m.GLBFiles(ctx)
	if scanErr != nil {
		convErr = nil // not converted
	}
	out := map[string][]byte{}
	for _, e := range m.Files(outputs.State{Chunks: st != nil && len(st.Chunks) > 0, Broken: scanErr != nil || convErr != nil}) {
		switch e.Output {
		case outputs.OutHeader:
			hdr, err := m.Header(st, scanErr)
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name] = outputs.HeaderWithError(hdr, convErr)
		case outputs.OutChunks:
			for i := range st.Chunks {
				b, err := m.ChunkBytes(&st.Chunks[i])
				if err != nil {
					t.Fatal(err)
				}
				out[outputs.ChunksDir+"/"+st.Chunks[i].Name] = b
			}
		case outputs.OutGLB:
			out[e.Name] = glbs[e.Part]
		case outputs.OutPreview:
			b, err := m.PreviewFile(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name] = b
		case outputs.OutError:
			out[e.Name] = outputs.ErrorText(scanErr, convErr)
		default:
			t.Errorf("%s: a model's folder holds %s", m.Path, e.Name)
		}
	}
	return out
}

func TestModelFolder(t *testing.T) {
	dir, model := modelTree(t)
	m := outputs.New(filepath.Join(dir, "tank.mdl"), testModel{model})
	out := folderOf(t, m)
	for _, n := range []string{"header.json", "tank.glb", "tank.lod1.glb", "tank.collision.glb", "chunks/model.txt"} {
		if len(out[n]) == 0 {
			t.Errorf("no %s", n)
		}
	}
	for _, n := range []string{"error.txt", "tank.obj", "tank.lod2.glb"} {
		if _, ok := out[n]; ok {
			t.Errorf("%s made for a model that assembles", n)
		}
	}
	if _, ok := m.Entry("tank.lod1.glb"); !ok {
		t.Error("no entry tank.lod1.glb")
	}
	if _, ok := m.Entry("tank.lod2.glb"); ok {
		t.Error("an entry for a third LOD the model lacks")
	}

	// The mount asks a folder's OBJ conversion for error.txt: a model
	// has none, and it fails only as the model file does.
	if o, l, err := m.OBJFiles(context.Background()); o != nil || l != nil || err != nil {
		t.Errorf("OBJFiles of a model: %d, %d bytes, %v", len(o), len(l), err)
	}

	// Only an unreadable model fails the folder.
	put(t, filepath.Join(dir, "tank.mdl"), []byte("broken"))
	if _, _, err := m.OBJFiles(context.Background()); err == nil || !strings.Contains(err.Error(), "broken model") {
		t.Errorf("OBJFiles of a broken model: %v", err)
	}
	out2 := folderOf(t, m)
	if b, ok := out2["error.txt"]; !ok || !strings.Contains(string(b), "broken model") {
		t.Errorf("error.txt %q (%v)", b, ok)
	}
	if _, ok := out2["tank.glb"]; ok {
		t.Error("tank.glb made for a broken model")
	}
}
