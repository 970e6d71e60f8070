package outputs_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode/texture"
	"github.com/meshfs/meshfs/export/outputs"
)

// TestTexturePixelLimits: with hull.dds (16×8, with mips) over
// --max-texture-pixels, the .glb embeds its mip level 1, pixel for pixel,
// and its image's extras say so naming the flag; with the conversion's
// textures over --max-texture-pixels-total, the texture past the count
// (the base game's normal map, after the base colour) goes without, the
// base colour stays; NAME.EXT.png keeps the per-texture cap; a
// conversion whose context ended decodes no texture and fails.
func TestTexturePixelLimits(t *testing.T) {
	mod, mesh, base := gemTree(t)
	m, err := outputs.Open(mesh)
	if err != nil || m == nil {
		t.Fatal(m, err)
	}
	m.Tree = filepath.Dir(mod)
	m.Limits.AssetPaths = []string{base}
	hull := filepath.Join(mod, "texture", "common", "model", "tank", "hull.dds")
	dds, err := os.ReadFile(hull)
	if err != nil {
		t.Fatal(err)
	}

	m.Limits.MaxTexturePixels = 16*8 - 1
	_, doc, glb := convertFixture(t, m)
	gm := glTFMaterial(t, doc, "body.mtl")
	if gm.PBRMetallicRoughness.BaseColorTexture == nil || gm.NormalTexture == nil {
		t.Fatalf("glTF material %+v: textures left out", gm)
	}
	src := *doc.Textures[gm.PBRMetallicRoughness.BaseColorTexture.Index].Source
	want, err := texture.DecodeContext(context.Background(), "hull.dds", bytes.NewReader(dds), int64(len(dds)), texture.Options{MaxPixels: 16*8 - 1})
	if err != nil || want.Level != 1 || want.Rect.Dx() != 8 {
		t.Fatalf("level %v %v", want, err)
	}
	if got := embeddedPix(t, doc, glb, src); !bytes.Equal(got, want.Pix) {
		t.Errorf("the embedded base colour is not hull.dds's mip level 1")
	}
	extras, _ := doc.Images[src].Extras.(map[string]any)
	note, _ := extras["note"].(string)
	if !strings.Contains(note, "mip level 1 (8×4) of a 16×8 texture") || !strings.Contains(note, outputs.FlagMaxTexturePixels) {
		t.Errorf("image extras %v: no note of the downscale", doc.Images[src].Extras)
	}
	if nm := *doc.Textures[*gm.NormalTexture.Index].Source; doc.Images[nm].Extras != nil {
		t.Errorf("the normal map (8×8, within the cap) has extras %v", doc.Images[nm].Extras)
	}
	png, _, err := outputs.TexturePNG(context.Background(), hull, m.Limits)
	if err != nil || !bytes.Contains(png[:24], []byte{0, 0, 0, 8, 0, 0, 0, 4}) {
		t.Errorf("hull.dds.png under the cap: %v, header % x", err, png[:min(len(png), 24)])
	}

	m.Limits.MaxTexturePixels, m.Limits.MaxTexturePixelsTotal = 0, 16*8
	_, doc, _ = convertFixture(t, m)
	gm = glTFMaterial(t, doc, "body.mtl")
	if gm.PBRMetallicRoughness.BaseColorTexture == nil || gm.NormalTexture != nil {
		t.Errorf("over the conversion's total: base colour %v, normal map %v; want the first alone",
			gm.PBRMetallicRoughness.BaseColorTexture, gm.NormalTexture)
	}

	m.Limits.MaxTexturePixelsTotal = 0
	_, doc, _ = convertFixture(t, m)
	if gm = glTFMaterial(t, doc, "body.mtl"); gm.NormalTexture == nil {
		t.Errorf("no limits: the normal map is left out")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// A fresh tree: no texture of it is kept decoded already.
	mod, mesh, _ = gemTree(t)
	if m, err = outputs.Open(mesh); err != nil || m == nil {
		t.Fatal(m, err)
	}
	m.Tree = filepath.Dir(mod)
	scene, err := m.Decode(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Textures(ctx, scene); !errors.Is(err, context.Canceled) {
		t.Errorf("Textures with its context ended: %v", err)
	}
	if scene.Materials[0].BaseColorMap != nil {
		t.Errorf("a texture decoded after the context ended")
	}
}
