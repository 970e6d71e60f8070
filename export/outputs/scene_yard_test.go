package outputs_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/export/outputs"
)

// TestYardWorld converts testdata/unigine/yard's yard.world (the models
// sheet's UNIGINE world) as convert does: the .glb passes the validator;
// nothing is unresolved or failed; the ground (by path) and the seven
// crates (by GUID) each carry their mesh at their node, where the XML's
// matrices, composed by hand below, put them; and the crates' materials,
// found by GUID through their .meta files, embed the crate texture,
// crate_red.mat's through its base material.
func TestYardWorld(t *testing.T) {
	data := filepath.Join(repoRoot(t), "testdata", "unigine", "yard", "data")
	scenes := convertScenes(t, data, outputs.NewProjects())
	w := scenes["yard.world"]
	if len(scenes) != 1 || w == nil {
		t.Fatalf("scenes %v, want yard.world alone", scenes)
	}
	// ground, 4 crates, pallet and its 3 crates, the sun and its light.
	if w.hdr.Nodes != 11 || w.hdr.Meshes != 8 || len(w.hdr.Unresolved) != 0 || len(w.hdr.Failed) != 0 {
		t.Errorf("%d nodes, %d meshes, unresolved %v, failed %v; want 11, 8, none, none", w.hdr.Nodes, w.hdr.Meshes, w.hdr.Unresolved, w.hdr.Failed)
	}
	if n := checkMeshNodes(t, "yard.world", w); n != 8 {
		t.Errorf("%d ObjectMeshStatic nodes carry a mesh, want 8", n)
	}
	// UNIGINE's Z up becomes glTF's Y up as (x, y, z) → (x, z, −y); a
	// matrix's last column is its translation, its first the image of x.
	c20, s20 := math.Cos(20*math.Pi/180), math.Sin(20*math.Pi/180)
	c10, s10 := math.Cos(10*math.Pi/180), math.Sin(10*math.Pi/180)
	for _, c := range []struct {
		node, parent string
		at, x        [3]float64
	}{
		{"ground", "yard", [3]float64{0, 0, 0}, [3]float64{1, 0, 0}},
		// Roots: their own translation.
		{"crate_a", "yard", [3]float64{-2, 0, 1.5}, [3]float64{1, 0, 0}},
		{"crate_b", "yard", [3]float64{-0.8, 0, 1.7}, [3]float64{math.Sqrt(3) / 2, 0, -0.5}},
		{"crate_c", "yard", [3]float64{-2, 1, 1.5}, [3]float64{math.Cos(15 * math.Pi / 180), 0, -math.Sin(15 * math.Pi / 180)}},
		// Scale 1.5 turned −20°: x → 1.5·(cos 20°, −sin 20°, 0).
		{"crate_big", "yard", [3]float64{2.2, 0, 1.8}, [3]float64{1.5 * c20, 0, 1.5 * s20}},
		// Under the pallet, at (1.2, 1.4, 0) turned 90° about Z: local
		// (x, y, z) → (1.2 − y, 1.4 + x, z).
		// crate_d, scale 1.2 at the pallet's origin.
		{"crate_d", "pallet", [3]float64{1.2, 0, -1.4}, [3]float64{0, 0, -1.2}},
		// crate_e at local (1.4, 0, 0) → (1.2, 2.8, 0), turned 90° + 10°:
		// x → (−sin 10°, cos 10°, 0).
		{"crate_e", "pallet", [3]float64{1.2, 0, -2.8}, [3]float64{-s10, 0, -c10}},
		// crate_f at local (0, 0, 1.2) → (1.2, 1.4, 1.2), scale 0.8 turned
		// 90° + 45°: x → 0.8·(−√½, √½, 0).
		{"crate_f", "pallet", [3]float64{1.2, 1.2, -1.4}, [3]float64{-0.8 * math.Sqrt(0.5), 0, -0.8 * math.Sqrt(0.5)}},
	} {
		m, ok := meshWorld(t, w.doc, c.node, c.parent)
		if !ok {
			continue
		}
		got := [2][3]float64{{m[12], m[13], m[14]}, {m[0], m[1], m[2]}}
		want := [2][3]float64{c.at, c.x}
		for k := range 6 {
			if math.Abs(got[k/3][k%3]-want[k/3][k%3]) > 1e-6 {
				t.Errorf("%s's mesh at %v with x axis %v, want %v and %v", c.node, got[0], got[1], c.at, c.x)
				break
			}
		}
	}
	if len(w.hdr.Materials) != 3 {
		t.Errorf("materials %+v, want ground, crate and crate_red", w.hdr.Materials)
	}
	for _, c := range []struct {
		name   string
		factor [3]float32
	}{{"ground", [3]float32{1, 1, 1}}, {"crate", [3]float32{1, 1, 1}}, {"crate_red", [3]float32{1, 0.45, 0.35}}} {
		mat := glTFMaterial(t, w.doc, c.name)
		pbr := mat.PBRMetallicRoughness
		if pbr == nil || pbr.BaseColorTexture == nil {
			t.Errorf("%s: no base colour texture", c.name)
			continue
		}
		img := w.doc.Images[*w.doc.Textures[pbr.BaseColorTexture.Index].Source]
		if img.BufferView == nil || w.doc.BufferViews[*img.BufferView].ByteLength < 1000 {
			t.Errorf("%s's texture is not embedded: %+v", c.name, img)
		}
		f := pbr.BaseColorFactor
		if f == nil {
			f = &[4]float64{1, 1, 1, 1}
		}
		for k := range 3 {
			if math.Abs(f[k]-float64(c.factor[k])) > 1e-6 {
				t.Errorf("%s: base colour factor %v, want %v", c.name, *f, c.factor)
				break
			}
		}
	}
}
