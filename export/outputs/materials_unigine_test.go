package outputs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	qgltf "github.com/qmuntal/gltf"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/texture"
	"github.com/meshfs/meshfs/export/gltf/validator"
	"github.com/meshfs/meshfs/export/outputs"
)

// unigineTree puts the fixture ms13_static.mesh (surfaces "box" and
// "floor") in a UNIGINE project's data folder, with box.mat in a
// materials folder in the mesh's: albedo relative to the data folder,
// normal beside the .mat, shading by guid://. It returns the data folder
// and the mesh's path.
func unigineTree(t *testing.T) (data, mesh string) {
	data = filepath.Join(t.TempDir(), "project", "data")
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "unigine", "ms13_static.mesh"))
	if err != nil {
		t.Fatal(err)
	}
	mesh = filepath.Join(data, "props", "crate.mesh")
	put(t, mesh, b)
	put(t, filepath.Join(data, "props", "materials", "box.mat"), []byte(`<?xml version="1.0" encoding="utf-8"?>
<material version="2.15.0.1" guid="842f" base_material="mesh_base">
	<parameter name="albedo_color" expression="0">1 0.5 0.25 1</parameter>
	<parameter name="roughness" expression="0">0.25</parameter>
	<texture name="albedo">props/textures/box_alb.dds</texture>
	<texture name="normal">box_n.dds</texture>
	<texture name="shading">guid://9a220d661b20d0a9fbc094263305fc7da2c72918</texture>
</material>`))
	put(t, filepath.Join(data, "props", "textures", "box_alb.dds"), bc1(t, 16, 8, 5))
	put(t, filepath.Join(data, "props", "materials", "box_n.dds"), bc1(t, 8, 8, 6))
	return data, mesh
}

type uniHeaderMaterial struct {
	headerMaterial
	LookedFor []string `json:"looked_for"`
	Fields    struct {
		GUID       string         `json:"guid"`
		Parameters map[string]any `json:"parameters"`
	} `json:"fields"`
	Textures []struct {
		Slot       string   `json:"slot"`
		Path       string   `json:"path"`
		Unresolved []string `json:"unresolved"`
		Error      string   `json:"error"`
	} `json:"textures"`
}

func uniHeader(t *testing.T, m *outputs.Mesh) map[string]uniHeaderMaterial {
	t.Helper()
	st, err := m.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hdr, err := m.Header(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var h struct{ Materials []uniHeaderMaterial }
	if err := json.Unmarshal(hdr, &h); err != nil {
		t.Fatal(err)
	}
	out := map[string]uniHeaderMaterial{}
	for _, hm := range h.Materials {
		out[hm.Name] = hm
	}
	return out
}

// TestUNIGINEMaterialFixture: surface "box" takes materials/box.mat in the
// mesh's folder: its albedo resolves under the data folder and is
// embedded with exactly the decoded pixels, times albedo_color; its normal
// resolves beside the .mat; the guid:// shading stays unresolved with a
// reason. Surface "floor", with no .mat, is a material of its name alone,
// the files looked for listed. Without the .mat, box is named only too.
func TestUNIGINEMaterialFixture(t *testing.T) {
	data, mesh := unigineTree(t)
	m, err := outputs.Open(mesh)
	if err != nil || m == nil {
		t.Fatal(m, err)
	}
	m.Tree = filepath.Dir(data)
	h := uniHeader(t, m)
	box, floor := h["box"], h["floor"]
	if box.Source != "materials/box.mat" || box.Fields.GUID != "842f" || box.Fields.Parameters["roughness"] == nil {
		t.Errorf("box: %+v", box)
	}
	type res struct{ slot, path, err string }
	var got []res
	for _, tx := range box.Textures {
		got = append(got, res{tx.Slot, tx.Path, tx.Error})
		if tx.Path == "" && tx.Unresolved == nil {
			t.Errorf("slot %s: neither a path nor unresolved", tx.Slot)
		}
	}
	want := []res{{"albedo", "textures/box_alb.dds", ""}, {"normal", "materials/box_n.dds", ""},
		{"shading", "", "no file of the project has this GUID"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("box textures %+v, want %+v", got, want)
	}
	// The .mat and the textures it names are the header's (and the
	// .glb's) dependencies: a change of one renews them.
	got2 := headerDepPaths(t, m)
	for _, rel := range []string{"props/materials/box.mat", "props/textures/box_alb.dds", "props/materials/box_n.dds"} {
		if !got2[filepath.Join(data, filepath.FromSlash(rel))] {
			t.Errorf("%s is not a dependency: %v", rel, got2)
		}
	}
	if floor.Name != "floor" || !reflect.DeepEqual(floor.LookedFor, []string{"floor.mat", "materials/floor.mat"}) || floor.Textures != nil {
		t.Errorf("floor: %+v", floor)
	}

	glb, err := m.GLBFile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	doc := new(qgltf.Document)
	if err := qgltf.NewDecoder(bytes.NewReader(glb)).Decode(doc); err != nil {
		t.Fatal(err)
	}
	gm := glTFMaterial(t, doc, "box")
	if gm.NormalTexture == nil || gm.PBRMetallicRoughness.BaseColorTexture == nil || gm.PBRMetallicRoughness.MetallicRoughnessTexture != nil {
		t.Fatalf("glTF material box %+v", gm)
	}
	if c := *gm.PBRMetallicRoughness.BaseColorFactor; c != [4]float64{1, 0.5, 0.25, 1} {
		t.Errorf("base colour factor %v", c)
	}
	dds, _ := os.ReadFile(filepath.Join(data, "props", "textures", "box_alb.dds"))
	src, err := texture.Decode("box_alb.dds", bytes.NewReader(dds), int64(len(dds)))
	if err != nil {
		t.Fatal(err)
	}
	if got := embeddedPix(t, doc, glb, *doc.Textures[gm.PBRMetallicRoughness.BaseColorTexture.Index].Source); !bytes.Equal(got, src.Pix) {
		t.Errorf("embedded albedo differs from the decoded texture")
	}
	if fm := glTFMaterial(t, doc, "floor"); fm.PBRMetallicRoughness.BaseColorTexture != nil || fm.NormalTexture != nil {
		t.Errorf("floor has textures: %+v", fm)
	}
	if rep := validator.Check(t, glb); rep != nil && rep.Issues.NumErrors > 0 {
		t.Errorf("validator errors %v", rep.Codes(validator.SeverityError))
	}

	if err := os.Remove(filepath.Join(data, "props", "materials", "box.mat")); err != nil {
		t.Fatal(err)
	}
	if box := uniHeader(t, m)["box"]; box.Source != "" || len(box.LookedFor) != 2 || box.Textures != nil {
		t.Errorf("box without its .mat: %+v", box)
	}
}

// TestUNIGINERealMat: each real .mat of ../shared/assets/unigine, put
// beside a mesh as the material of its surface, is read: its parameters
// listed, albedo_color the glTF base colour factor, its guid:// textures
// unresolved with the reason; the .glb passes the validator.
func TestUNIGINERealMat(t *testing.T) {
	dir := decodetest.NeedShared(t, "assets/unigine")
	mats, err := filepath.Glob(filepath.Join(dir, "*.mat"))
	if err != nil || len(mats) == 0 {
		t.Fatalf("no .mat in %s: %v", dir, err)
	}
	fixture, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "unigine", "ms13_static.mesh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range mats {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			tree := t.TempDir()
			mesh := filepath.Join(tree, "crate.mesh")
			put(t, mesh, fixture)
			put(t, filepath.Join(tree, "box.mat"), b)
			m, err := outputs.Open(mesh)
			if err != nil || m == nil {
				t.Fatal(m, err)
			}
			m.Tree = tree
			box := uniHeader(t, m)["box"]
			if box.Source != "box.mat" || box.Fields.GUID == "" {
				t.Fatalf("box: %+v", box)
			}
			for _, tx := range box.Textures {
				if tx.Path != "" || tx.Error == "" {
					t.Errorf("guid texture %+v", tx)
				}
			}
			glb, err := m.GLBFile(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if rep := validator.Check(t, glb); rep != nil && rep.Issues.NumErrors > 0 {
				t.Errorf("validator errors %v", rep.Codes(validator.SeverityError))
			}
			doc := new(qgltf.Document)
			if err := qgltf.NewDecoder(bytes.NewReader(glb)).Decode(doc); err != nil {
				t.Fatal(err)
			}
			gm := glTFMaterial(t, doc, "box")
			col, _ := box.Fields.Parameters["albedo_color"].([]any)
			if len(col) == 4 {
				c := gm.PBRMetallicRoughness.BaseColorFactor
				if c == nil || float32(c[1]) != float32(col[1].(float64)) {
					t.Errorf("base colour factor %v, albedo_color %v", c, col)
				}
			}
		})
	}
}
