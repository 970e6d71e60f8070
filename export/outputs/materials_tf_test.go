package outputs_test

import (
	"bytes"
	"image"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	qgltf "github.com/qmuntal/gltf"
	"github.com/woozymasta/bcn"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/texture"
	"github.com/meshfs/meshfs/export/outputs"
)

// TestTFMaterialFixture: the old Train Fever fixture names
// vehicle/train/door.mtl (and frame_old.mtl, absent); under res/ the
// door's script, requiring a module from res/scripts/, names an albedo, a
// two-channel normal map and a metal-gloss-AO map under res/textures/. The
// .glb gets MASK at the threshold, double-sided, the albedo, the normal
// map with Z rebuilt, and one image for metal-roughness and occlusion
// with AO in R, 1 − gloss in G and metal in B; the absent material is
// named, unresolved, with the path tried (the fixture's material
// configuration picks frame.mtl, not frame_old.mtl).
func TestTFMaterialFixture(t *testing.T) {
	res := filepath.Join(t.TempDir(), "mod", "res")
	for _, n := range []string{"trainfever_door.msh", "trainfever_door.msh.blob"} {
		b, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "tfever", n))
		if err != nil {
			t.Fatal(err)
		}
		put(t, filepath.Join(res, "models", "mesh", "train", n), b)
	}
	put(t, filepath.Join(res, "scripts", "paths.lua"), []byte(`return { dir = "models/train/" }`))
	put(t, filepath.Join(res, "models", "material", "vehicle", "train", "door.mtl"), []byte(`local p = require "paths"
function data() return {
	type = "PHYS_TRANSPARENT_NRML_MAP",
	params = {
		alpha_test = { alphaThreshold = 0.25 },
		map_albedo = { fileName = p.dir .. "door_alb.dds" },
		map_normal = { fileName = p.dir .. "door_nrml.dds", redGreen = true },
		map_metal_gloss_ao = { fileName = p.dir .. "door_mga.dds" },
		two_sided = { twoSided = true },
	},
} end`))
	alb := image.NewNRGBA(image.Rect(0, 0, 8, 8))
	mga := image.NewNRGBA(image.Rect(0, 0, 4, 4))
	nrm := image.NewNRGBA(image.Rect(0, 0, 4, 4))
	for i := range alb.Pix {
		alb.Pix[i] = uint8(i * 5)
	}
	for i := 0; i < len(mga.Pix); i += 4 {
		mga.Pix[i], mga.Pix[i+1], mga.Pix[i+2], mga.Pix[i+3] = 10, 200, 90, 255 // metal, gloss, AO
		nrm.Pix[i], nrm.Pix[i+1], nrm.Pix[i+2], nrm.Pix[i+3] = 128, 128, 0, 255
	}
	tex := filepath.Join(res, "textures", "models", "train")
	put(t, filepath.Join(tex, "door_alb.dds"), decodetest.DDS(t, alb, bcn.FormatBC1, false))
	put(t, filepath.Join(tex, "door_mga.dds"), decodetest.DDS(t, mga, bcn.FormatRGBA8, false))
	put(t, filepath.Join(tex, "door_nrml.dds"), decodetest.DDS(t, nrm, bcn.FormatBC5, false))

	m, err := outputs.Open(filepath.Join(res, "models", "mesh", "train", "trainfever_door.msh"))
	if err != nil || m == nil {
		t.Fatal(m, err)
	}
	h, doc, glb := convertNamed(t, m, "vehicle/train/door.mtl")
	hm := h.Materials[0]
	if hm.Source != "../../material/vehicle/train/door.mtl" || hm.AlphaMode != "MASK" || *hm.AlphaCutoff != 0.25 {
		t.Errorf("header.json material %+v", hm)
	}
	var paths []string
	for _, tx := range hm.Textures {
		paths = append(paths, tx.Path)
	}
	if want := []string{"../../../textures/models/train/door_alb.dds", "../../../textures/models/train/door_mga.dds", "../../../textures/models/train/door_nrml.dds"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("texture paths %v, want %v", paths, want)
	}
	gm := glTFMaterial(t, doc, "submesh0 (vehicle/train/door.mtl)")
	if gm.AlphaMode != qgltf.AlphaMask || !gm.DoubleSided || gm.NormalTexture == nil || gm.OcclusionTexture == nil ||
		gm.PBRMetallicRoughness.MetallicRoughnessTexture == nil || gm.PBRMetallicRoughness.BaseColorTexture == nil {
		t.Fatalf("glTF material %+v %+v", gm, gm.PBRMetallicRoughness)
	}
	mr := gm.PBRMetallicRoughness.MetallicRoughnessTexture.Index
	if *gm.OcclusionTexture.Index != mr {
		t.Errorf("occlusion and metal-roughness are two textures")
	}
	if px := embeddedPix(t, doc, glb, *doc.Textures[mr].Source); [4]byte(px[:4]) != [4]byte{90, 55, 10, 255} {
		t.Errorf("metal-roughness pixel %v, want AO 90, roughness 55, metal 10", px[:4])
	}
	if px := embeddedPix(t, doc, glb, *doc.Textures[*gm.NormalTexture.Index].Source); px[2] < 250 {
		t.Errorf("normal map pixel %v: Z not rebuilt for a flat normal", px[:4])
	}
	b, _ := os.ReadFile(filepath.Join(tex, "door_alb.dds"))
	src, err := texture.Decode("door_alb.dds", bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if px := embeddedPix(t, doc, glb, *doc.Textures[gm.PBRMetallicRoughness.BaseColorTexture.Index].Source); !bytes.Equal(px, src.Pix) {
		t.Errorf("albedo differs from the decoded texture")
	}
	var frame *headerMaterial
	for i := range h.Materials {
		if h.Materials[i].Name == "vehicle/train/frame.mtl" {
			frame = &h.Materials[i]
		}
	}
	if len(h.Materials) != 2 || frame == nil || frame.Source != "" || !reflect.DeepEqual(frame.Unresolved, []string{"../../material/vehicle/train/frame.mtl"}) {
		t.Errorf("header.json materials %+v, want door.mtl and frame.mtl unresolved", h.Materials)
	}
}
