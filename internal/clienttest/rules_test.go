package clienttest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/export/gltf"
	"github.com/meshfs/meshfs/export/obj"
)

// rulesScene exercises the import rules expectFrom explains: primitive A
// has an unused vertex (4), a degenerate triangle and a repeat of its first
// triangle in the other winding; primitive B repeats A's positions in
// vertices of its own, which Blender must not merge with A's. Mesh
// rules_uv has UVs, rules none: Blender's OBJ importer still gives rules a
// UV layer (the file has UVs).
func rulesScene() *decode.Scene {
	quad := [][3]float32{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {9, 9, 9}}
	return &decode.Scene{
		Materials: []decode.Material{{Name: "rules_a"}, {Name: "rules_b"}},
		Meshes: []decode.Mesh{{Name: "rules", Transform: decode.Identity(), Primitives: []decode.Primitive{
			{Material: 0, Positions: quad, Indices: []uint32{0, 1, 2, 0, 0, 1, 2, 1, 0, 0, 2, 3}},
			{Material: 1, Positions: quad[:3], Indices: []uint32{0, 1, 2}},
		}}, {Name: "rules_uv", Transform: decode.Identity(), Primitives: []decode.Primitive{
			{Material: 0, Positions: quad[:3], UVs: [][][2]float32{{{0, 0}, {1, 0}, {1, 1}}}, Indices: []uint32{0, 1, 2}},
		}}},
	}
}

// TestRulesScene pins what expectFrom derives from rulesScene, so the
// Blender run over its export (rulesFolder) checks the rules themselves:
// 4 + 3 vertices (the unused one dropped, none merged), 3 faces from the
// .glb (the degenerate and the repeated triangle deleted), 4 from the .obj
// (only the degenerate one), 5 + 1 (rules_uv) triangles for assimp.
func TestRulesScene(t *testing.T) {
	e := expectFrom(rulesScene())
	if len(e.meshes) != 2 {
		t.Fatalf("%d meshes", len(e.meshes))
	}
	m := e.meshes[0]
	if m.vertices != 7 || m.faces != 3 || m.objFaces != 4 || e.triangles != 6 {
		t.Errorf("vertices %d, faces %d (.obj %d), triangles %d; want 7, 3 (4), 6", m.vertices, m.faces, m.objFaces, e.triangles)
	}
}

// rulesFolder exports rulesScene with meshfs's exporters into a temporary
// folder and returns it as a mesh folder for the Blender and assimp checks
// (not the validator's: a degenerate triangle is the point of it).
func rulesFolder(t *testing.T) (*meshFolder, *fileExpect) {
	t.Helper()
	s := rulesScene()
	dir := t.TempDir()
	g, err := gltf.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	o, l, err := obj.Encode(s, "rules.mtl")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"rules.glb": g, "rules.obj": o, "rules.mtl": l} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := expectFrom(s)
	return &meshFolder{root: sourceRoot{label: "selftest"}, rel: "blender-rules", dir: dir,
		glb: filepath.Join(dir, "rules.glb"), obj: filepath.Join(dir, "rules.obj")}, &e
}
