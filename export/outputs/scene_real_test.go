package outputs_test

import (
	"context"
	"encoding/json"
	"github.com/meshfs/meshfs/decode"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	qgltf "github.com/qmuntal/gltf"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/unigine"
	"github.com/meshfs/meshfs/export/gltf/validator"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

// sceneHeader is what the scene tests read of a scene's header.json.
type sceneHeader struct {
	Format     string           `json:"format"`
	Nodes      int              `json:"nodes"`
	Meshes     int              `json:"meshes"`
	Unresolved []map[string]any `json:"unresolved"`
	Failed     []map[string]any `json:"failed"`
	LODFiles   []struct {
		Parts []struct {
			Node      string   `json:"node"`
			Path      string   `json:"path"`
			Materials []string `json:"materials"`
		} `json:"parts"`
	} `json:"lod_files"`
	Materials []headerMaterial `json:"materials"`
}

// scene is one .node or .world converted as `meshfs convert` does.
type scene struct {
	path string
	hdr  sceneHeader
	glb  []byte
	doc  *qgltf.Document
	deps []outputs.Dep
}

// convertScenes converts every .node and .world beneath data with one
// set of project indexes, as a convert run does, checking each .glb with
// the validator.
func convertScenes(t *testing.T, data string, projects *outputs.Projects) map[string]*scene {
	t.Helper()
	out := map[string]*scene{}
	err := filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ext := filepath.Ext(p); ext != ".node" && ext != ".world" {
			return nil
		}
		m, err := outputs.Open(p)
		if err != nil {
			return err
		}
		if m == nil || !m.IsModel() || m.Format.Name() != unigine.SceneName {
			t.Errorf("%s: not a scene folder (%v)", p, m)
			return nil
		}
		m.Limits.Projects = projects
		dir := filepath.Join(t.TempDir(), "out")
		if err := vfstest.Convert(t, m.Path, &m.Limits, dir); err != nil {
			t.Errorf("%s: %v", p, err)
			return nil
		}
		s := &scene{path: p}
		if err := json.Unmarshal(readFile(t, filepath.Join(dir, outputs.HeaderName)), &s.hdr); err != nil {
			t.Fatal(err)
		}
		s.glb = readFile(t, filepath.Join(dir, m.GLBName()))
		validator.Check(t, s.glb)
		s.doc = parseGLB(t, s.glb)
		if _, s.deps, err = m.ModelGLBs(context.Background()); err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(data, p)
		out[filepath.ToSlash(rel)] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// meshChildren are the nodes with a mesh among node i's children.
func meshChildren(doc *qgltf.Document, i int) []int {
	var out []int
	for _, c := range doc.Nodes[i].Children {
		if doc.Nodes[c].Mesh != nil {
			out = append(out, c)
		}
	}
	return out
}

// checkMeshNodes: every ObjectMesh* node of the .glb carries its mesh
// (a mesh child at the node's own transform: identity) when header.json
// lists its part as found, and none when its mesh is unresolved; it
// returns how many carry one.
func checkMeshNodes(t *testing.T, name string, s *scene) int {
	t.Helper()
	found := map[string]int{}
	for _, p := range s.hdr.LODFiles[0].Parts {
		if p.Path != "" {
			found[p.Node]++
		}
	}
	unresolved := map[string]int{}
	for _, u := range s.hdr.Unresolved {
		if n, ok := u["node"].(string); ok {
			unresolved[n]++
		}
	}
	placed := 0
	for i, n := range s.doc.Nodes {
		ex, _ := n.Extras.(map[string]any)
		typ, _ := ex["type"].(string)
		if !strings.HasPrefix(typ, "ObjectMesh") {
			continue
		}
		ms := meshChildren(s.doc, i)
		switch {
		case found[n.Name] > 0 && len(ms) == 0:
			t.Errorf("%s: %s %q: its mesh is found but the node carries none", name, typ, n.Name)
		case found[n.Name] == 0 && len(ms) > 0:
			t.Errorf("%s: %s %q carries a mesh header.json does not list as found", name, typ, n.Name)
		case len(ms) == 0 && unresolved[n.Name] == 0 && typ != "ObjectMeshDynamic":
			t.Errorf("%s: %s %q has no mesh and is not listed as unresolved", name, typ, n.Name)
		}
		for _, c := range ms {
			if !nearMat(worldOf(s.doc, c), worldOf(s.doc, i), 1e-5) {
				t.Errorf("%s: the mesh of %q is not at its node's transform", name, n.Name)
			}
		}
		if len(ms) > 0 {
			placed++
		}
	}
	return placed
}

// TestSkyrunnerScenes converts both worlds and every .node of the
// skyrunner project as they are: each .glb passes the validator; every
// ObjectMesh* whose mesh the project has carries it at its transform, and
// the others (files SOURCE.txt says the snapshot lacks: all 5 distinct
// meshes the worlds name) are listed as unresolved; cube.node's material
// is cube_mat.mat, found by GUID, with its normal map (a guid:// in the
// .mat) embedded; one index is built for the whole run; and a scene's
// version set holds the .mat, the .meta that names it and the texture.
func TestSkyrunnerScenes(t *testing.T) {
	data := filepath.Join(decodetest.NeedShared(t, "assets/unigine-skyrunner"), "data")
	projects := outputs.NewProjects()
	scenes := convertScenes(t, data, projects)
	if len(scenes) != 19 {
		t.Errorf("%d scenes, want the 2 worlds and 17 nodes", len(scenes))
	}
	if n := projects.Scans(unigine.SceneFormat{}, data); n != 1 {
		t.Errorf("the project was indexed %d times for one run, want once", n)
	}
	placed := 0
	for name, s := range scenes {
		if len(s.hdr.Failed) != 0 {
			t.Errorf("%s: failed %v", name, s.hdr.Failed)
		}
		placed += checkMeshNodes(t, name, s)
		if strings.HasSuffix(name, ".node") && len(s.hdr.Unresolved) != 0 {
			t.Errorf("%s: unresolved %v: every .node's mesh is in the snapshot", name, s.hdr.Unresolved)
		}
	}
	if placed != 17 {
		t.Errorf("%d meshes placed over all scenes, want one per .node", placed)
	}
	w := scenes["JumpRunTest.world"]
	if w == nil {
		t.Fatal("no JumpRunTest.world")
	}
	if w.hdr.Nodes != 126 || w.hdr.Meshes != 108 || len(w.hdr.Unresolved) != 108 {
		t.Errorf("JumpRunTest.world: %d nodes, %d meshes, %d unresolved; want 125 and the sun's light, 108, 108", w.hdr.Nodes, w.hdr.Meshes, len(w.hdr.Unresolved))
	}
	for _, u := range w.hdr.Unresolved {
		if u["why"] != "no file of the project has this GUID" {
			t.Errorf("JumpRunTest.world: unresolved %v", u)
		}
	}

	c := scenes["csharp_template/template_props/primitives/cube.node"]
	if c == nil {
		t.Fatal("no cube.node")
	}
	if len(c.hdr.Materials) != 1 || !strings.HasSuffix(c.hdr.Materials[0].Source, "primitives/materials/cube_mat.mat") {
		t.Fatalf("cube.node: materials %+v, want cube_mat.mat", c.hdr.Materials)
	}
	tex := c.hdr.Materials[0].Textures
	// Shown relative to the part's folder, .runtimes/e0.
	if len(tex) != 1 || tex[0].Name != "guid://b6674b045b8932059769ee326a8eb293037aeb19" || tex[0].Path != "../b6/b6674b045b8932059769ee326a8eb293037aeb19.dds" {
		t.Errorf("cube_mat.mat textures %+v, want its normal map by GUID, the runtime .dds", tex)
	}
	mat := glTFMaterial(t, c.doc, "cube_mat")
	if mat.NormalTexture == nil || mat.NormalTexture.Index == nil {
		t.Fatalf("cube_mat: no normal map in the .glb")
	}
	img := c.doc.Images[*c.doc.Textures[*mat.NormalTexture.Index].Source]
	if img.BufferView == nil || c.doc.BufferViews[*img.BufferView].ByteLength < 100 {
		t.Errorf("cube_mat's normal map is not embedded: %+v", img)
	}
	// albedo_color 0.113725498 0.305882365 0.529411793 1.
	if f := mat.PBRMetallicRoughness.BaseColorFactor; f == nil || math.Abs(float64(f[2])-0.529411793) > 1e-6 {
		t.Errorf("cube_mat base colour %v, want the .mat's albedo_color", f)
	}
	var deps []string
	for _, d := range c.deps {
		rel, _ := filepath.Rel(data, d.Path)
		deps = append(deps, filepath.ToSlash(rel))
	}
	for _, want := range []string{
		"csharp_template/template_props/primitives/materials/cube_mat.mat",
		"csharp_template/template_props/primitives/materials/cube_mat.mat.meta",
		".runtimes/b6/b6674b045b8932059769ee326a8eb293037aeb19.dds",
		".runtimes/e0/e0a18b04956a9a9364ca5ed63f65083d83cdac78.mesh",
	} {
		if !slices.Contains(deps, want) {
			t.Errorf("cube.node's version set %v lacks %s", deps, want)
		}
	}
}

// TestSkyrunnerWorldPlaced converts a copy of the skyrunner project
// completed with the 5 meshes the snapshot lacks (generated, as runtimes
// of their GUIDs): all 108 ObjectMeshStatic nodes of JumpRunTest.world
// carry a mesh at their transform, and four of them are where their XML
// matrices, composed by hand below, put them.
func TestSkyrunnerWorldPlaced(t *testing.T) {
	shared := filepath.Join(decodetest.NeedShared(t, "assets/unigine-skyrunner"), "data")
	data := filepath.Join(t.TempDir(), "data")
	decodetest.CopyTree(t, shared, data)
	added, err := meshgen.UnigineMissingMeshes(data, 12)
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 5 {
		// The other 2 files the snapshot lacks are baked depth textures.
		t.Errorf("%d meshes added, want the 5 meshes of the 7 files the snapshot lacks", len(added))
	}
	scenes := convertScenes(t, data, outputs.NewProjects())
	w := scenes["JumpRunTest.world"]
	if w == nil {
		t.Fatal("no JumpRunTest.world")
	}
	if len(w.hdr.Unresolved) != 0 || len(w.hdr.Failed) != 0 {
		t.Errorf("unresolved %v, failed %v", w.hdr.Unresolved, w.hdr.Failed)
	}
	if n := checkMeshNodes(t, "JumpRunTest.world", w); n != 108 {
		t.Errorf("%d ObjectMeshStatic nodes carry a mesh, want 108", n)
	}
	// World positions, UNIGINE's Z up turned to glTF's Y up as
	// (x, y, z) → (x, z, −y). Matrices are column-major, the last four
	// numbers' first three the translation.
	for _, c := range []struct {
		node, parent string
		want         [3]float64
	}{
		// platform_4, a root: translation (-5.5072999, -4.3540754,
		// 0.72356564) → (-5.5072999, 0.72356564, 4.3540754).
		{"platform_4", "JumpRunTest", [3]float64{-5.5072999, 0.72356564, 4.3540754}},
		// platform_1 under the NodeDummy mold (no rotation, at
		// (-5.3217745, 21.850395, 0.72356755)); its own translation
		// (12.757228, -16.895542, 1.9073486e-06) (its scale does not move
		// it): -5.3217745 + 12.757228 = 7.4354535, 21.850395 - 16.895542 =
		// 4.954853, 0.72356755 + 0.0000019073486 = 0.72356946.
		{"platform_1", "mold", [3]float64{7.4354535, 0.72356946, -4.954853}},
		// smallBonus_1 under smallBonus (scale 0.22218245, 0.22218245,
		// 0.22218251 at (4.3126187, 0.41676468, 1.0384705)): local
		// (0, 0, 1.8117805) → z = 1.0384705 + 0.22218251·1.8117805 =
		// 1.44101644.
		{"smallBonus_1", "smallBonus", [3]float64{4.3126187, 1.44101644, -0.41676468}},
		// PlayerStep under PlayerActor, turned +90° about z: columns
		// (0.00054646016, 0.99999982, 1.2e-8), (-0.99999994,
		// 0.00054646021, 1.5e-16), (-6.6e-12, -1.2e-8, 1), at
		// (-5.7924957, -4.2556086, 0.78402871); local (-0.16248083,
		// -0.026034944, 0.070388831):
		// x = -5.7924957 + 0.00054646016·-0.16248083 + -0.99999994·-0.026034944 = -5.76654955,
		// y = -4.2556086 + 0.99999982·-0.16248083 + 0.00054646021·-0.026034944 = -4.41810363,
		// z = 0.78402871 + 0.070388831 = 0.85441754 (the rest below 1e-8).
		{"PlayerStep", "PlayerActor", [3]float64{-5.76654955, 0.85441754, 4.41810363}},
	} {
		m, ok := meshWorld(t, w.doc, c.node, c.parent)
		if !ok {
			continue
		}
		got := [3]float64{float64(m[12]), float64(m[13]), float64(m[14])}
		for k := range 3 {
			if math.Abs(got[k]-c.want[k]) > 1e-6*math.Max(1, math.Abs(c.want[k]))*10 {
				t.Errorf("%s's mesh at %v, want %v", c.node, got, c.want)
				break
			}
		}
	}
}

// nodeUnder is the node called name whose parent is called parent.
// meshWorld is the world transform of the one mesh node under the node
// name (beneath parent); ok is false, and the test told, when there is
// not exactly one.
func meshWorld(t *testing.T, doc *qgltf.Document, name, parent string) (decode.Mat4, bool) {
	t.Helper()
	ms := meshChildren(doc, nodeUnder(t, doc, name, parent))
	if len(ms) != 1 {
		t.Errorf("%s: %d mesh nodes, want 1", name, len(ms))
		return decode.Mat4{}, false
	}
	return worldOf(doc, ms[0]), true
}

func nodeUnder(t *testing.T, doc *qgltf.Document, name, parent string) int {
	t.Helper()
	for i, n := range doc.Nodes {
		if p := parentOf(doc, i); n.Name == name && p >= 0 && doc.Nodes[p].Name == parent {
			return i
		}
	}
	t.Fatalf("no node %q under %q", name, parent)
	return -1
}
