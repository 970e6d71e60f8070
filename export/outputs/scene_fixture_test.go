package outputs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode/unigine"
	"github.com/meshfs/meshfs/export/gltf/validator"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

// uniGUID is a GUID of 40 hex digits starting with prefix.
func uniGUID(prefix string) string { return prefix + strings.Repeat("0", 40-len(prefix)) }

func uniMeta(id string, runtimes ...string) string {
	s := "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<asset version=\"2.15.0.1\">\n\t<guid>" + id + "</guid>\n\t<runtimes>\n"
	for _, r := range runtimes {
		s += "\t\t<runtime id=\"" + r + "\" name=\"r\" link=\"1\"/>\n"
	}
	return s + "\t</runtimes>\n</asset>\n"
}

func pngOf(t *testing.T, w, h int, c color.NRGBA) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestUNIGINEMeshMaterialByProject: a mesh read alone (a runtime whose
// surface "ground" has no ground.mat beside it) takes the material the
// project gives it: the source asset's .meta lists the mesh runtime and a
// node runtime, whose ObjectMeshStatic places the mesh with surface
// ground's material by GUID. That .mat names its albedo by GUID (a .png
// beside its .meta) and inherits, through base_material (a GUID), its
// parent .mat's normal map (a path relative to the parent's folder) and
// roughness, but not its albedo, which it sets itself; the parent's own
// base material is the engine's (a .basemat runtime), listed, not read.
// The .glb embeds both images, and the version set holds every file the
// answer came from.
func TestUNIGINEMeshMaterialByProject(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	var (
		src    = uniGUID("51") // the .fbx
		mesh   = uniGUID("ab")
		node   = uniGUID("cd")
		child  = uniGUID("a1")
		parent = uniGUID("b2")
		alb    = uniGUID("c3")
		engine = uniGUID("e4")
	)
	m, err := meshgen.Unigine(12, 0)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		".runtimes/ab/" + mesh + ".mesh":      m,
		".runtimes/ab/" + mesh + ".mesh.meta": []byte(`{"asset": "` + src + `", "alias": "box.mesh", "primary": 1}`),
		".runtimes/cd/" + node + ".node":      []byte(`<?xml version="1.0"?><nodes><node type="NodeDummy" name="box"><node type="ObjectMeshStatic" name="box_mesh"><mesh_name>guid://` + mesh + `</mesh_name><surface name="ground" material="` + child + `"/></node></node></nodes>`),
		".runtimes/cd/" + node + ".node.meta": []byte(`{"asset": "` + src + `", "alias": "box.node", "primary": 0}`),
		".runtimes/e4/" + engine + ".basemat": []byte("BaseMaterial <>"),
		"models/box.fbx":                      []byte("fbx"),
		"models/box.fbx.meta":                 []byte(uniMeta(src, mesh, node)),
		"materials/child.mat":                 []byte(`<?xml version="1.0"?><material version="2.15.0.1" base_material="` + parent + `"><texture name="albedo">guid://` + alb + `</texture><parameter name="albedo_color">1 1 1 1</parameter></material>`),
		"materials/child.mat.meta":            []byte(uniMeta(child)),
		"materials/base/parent.mat":           []byte(`<?xml version="1.0"?><material version="2.15.0.1" base_material="` + engine + `"><texture name="albedo">missing.png</texture><texture name="normal">n.png</texture><parameter name="roughness">0.25</parameter></material>`),
		"materials/base/parent.mat.meta":      []byte(uniMeta(parent)),
		"materials/base/n.png":                pngOf(t, 4, 4, color.NRGBA{128, 128, 255, 255}),
		"textures/red.png":                    pngOf(t, 8, 8, color.NRGBA{255, 0, 0, 255}),
		"textures/red.png.meta":               []byte(uniMeta(alb)),
	}
	for rel, b := range files {
		p := filepath.Join(data, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mm, err := outputs.Open(filepath.Join(data, ".runtimes", "ab", mesh+".mesh"))
	if err != nil || mm == nil {
		t.Fatalf("the mesh: %v", err)
	}
	mm.Limits.Projects = outputs.NewProjects()
	st, err := mm.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hdr, deps, err := mm.HeaderDeps(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Materials []struct {
			Name, Given, Source string
			GivenBy             string `json:"given_by"`
			Textures            []struct{ Slot, Name, Path, Error string }
			BaseMaterials       []map[string]any `json:"base_materials"`
		}
	}
	if err := json.Unmarshal(hdr, &h); err != nil {
		t.Fatal(err)
	}
	glb, err := mm.GLBFile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	validator.Check(t, glb)
	doc := parseGLB(t, glb)
	if len(h.Materials) != 1 {
		t.Fatalf("materials %+v, want ground's", h.Materials)
	}
	g := h.Materials[0]
	if g.Name != "ground" || g.Given != "guid://"+child || !strings.HasSuffix(g.Source, "materials/child.mat") {
		t.Errorf("ground: %+v, want child.mat given by the project", g)
	}
	var slots []string
	for _, tx := range g.Textures {
		slots = append(slots, tx.Slot+" "+filepath.Base(tx.Path))
	}
	if !slices.Equal(slots, []string{"albedo red.png", "normal n.png"}) {
		t.Errorf("textures %v, want child's albedo by GUID and parent's normal map", g.Textures)
	}
	if len(g.BaseMaterials) != 2 || g.BaseMaterials[0]["source"] == nil || g.BaseMaterials[1]["note"] == nil {
		t.Errorf("base materials %v, want parent.mat, then the engine's .basemat not read", g.BaseMaterials)
	}
	mat := glTFMaterial(t, doc, "child")
	if mat.PBRMetallicRoughness.BaseColorTexture == nil || mat.NormalTexture == nil {
		t.Errorf("child: no albedo or normal map in the .glb")
	}
	if r := mat.PBRMetallicRoughness.RoughnessFactor; r == nil || *r != 0.25 {
		t.Logf("child roughness %v (the resolver does not map roughness)", r)
	}
	var got []string
	for _, d := range deps {
		rel, _ := filepath.Rel(data, d.Path)
		got = append(got, filepath.ToSlash(rel))
	}
	for _, want := range []string{"models/box.fbx.meta", ".runtimes/ab/" + mesh + ".mesh.meta", ".runtimes/cd/" + node + ".node",
		"materials/child.mat", "materials/child.mat.meta", "materials/base/parent.mat", "materials/base/parent.mat.meta",
		"textures/red.png.meta", "textures/red.png", "materials/base/n.png"} {
		if !slices.Contains(got, want) {
			t.Errorf("the mesh's version set %v lacks %s", got, want)
		}
	}
}

// TestProjectIndexFresh: without a watcher (convert's Projects), one
// index serves a run while nothing changes, and is built again when the
// .meta an answer came from is edited in place (same size, so only its
// stat's time tells) or when a folder gains a file: a scene's material
// follows the .meta's GUID, and a mesh added under a GUID the scene named
// is placed.
func TestProjectIndexFresh(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	var (
		mat   = uniGUID("a1")
		other = uniGUID("a2")
		mesh  = uniGUID("b1")
		late  = uniGUID("b2")
	)
	m, err := meshgen.Unigine(12, 0)
	if err != nil {
		t.Fatal(err)
	}
	put := func(rel string, b []byte) {
		t.Helper()
		p := filepath.Join(data, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(".runtimes/b1/"+mesh+".mesh", m)
	put(".runtimes/.keep", nil)
	put("m.mat", []byte(`<material version="2.15.0.1"><parameter name="albedo_color">1 0 0 1</parameter></material>`))
	put("m.mat.meta", []byte(uniMeta(mat)))
	put("s.node", []byte(`<nodes><node type="ObjectMeshStatic" name="a"><mesh_name>guid://`+mesh+`</mesh_name><surface name="ground" material="`+mat+`"/></node>`+
		`<node type="ObjectMeshStatic" name="b"><mesh_name>guid://`+late+`</mesh_name><surface name="ground" material="`+mat+`"/></node></nodes>`))
	projects := outputs.NewProjects()
	convert := func() (sceneHeader, []byte) {
		t.Helper()
		sm, err := outputs.Open(filepath.Join(data, "s.node"))
		if err != nil || sm == nil {
			t.Fatalf("s.node: %v", err)
		}
		sm.Limits.Projects = projects
		dir := filepath.Join(t.TempDir(), "out")
		if err := vfstest.Convert(t, sm.Path, &sm.Limits, dir); err != nil {
			t.Fatal(err)
		}
		var h sceneHeader
		if err := json.Unmarshal(readFile(t, filepath.Join(dir, outputs.HeaderName)), &h); err != nil {
			t.Fatal(err)
		}
		glb := readFile(t, filepath.Join(dir, "s.glb"))
		validator.Check(t, glb)
		return h, glb
	}
	scans := func() int { return projects.Scans(unigine.SceneFormat{}, data) }
	h, _ := convert()
	convert()
	if len(h.Materials) != 1 || h.Materials[0].Source != "../../m.mat" || len(h.Unresolved) != 1 || scans() != 1 {
		t.Fatalf("materials %+v, unresolved %v, %d scans; want m.mat, the late mesh, one scan", h.Materials, h.Unresolved, scans())
	}
	put("m.mat.meta", []byte(uniMeta(other))) // the same size
	if h, _ = convert(); len(h.Materials) != 1 || h.Materials[0].Source != "" || scans() != 2 {
		t.Errorf("after the .meta's GUID changed: materials %+v, %d scans; want none found, a second scan", h.Materials, scans())
	}
	put(".runtimes/b2/"+late+".mesh", m)
	if h, _ = convert(); len(h.Unresolved) != 0 || scans() != 3 {
		t.Errorf("after the late mesh came: unresolved %v, %d scans; want none, a third scan", h.Unresolved, scans())
	}
}
