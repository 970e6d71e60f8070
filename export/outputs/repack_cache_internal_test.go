package outputs

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/woozymasta/bcn"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

// TestRepackKeptPerVersion: two Transport Fever models in different
// folders place one mesh whose material has a metal-gloss-AO map; with
// shared Caches the first model's assembly keeps the map's repacked
// pixels (AO, 1 − gloss, metal) and their PNG for the texture's version,
// and the second model embeds that kept PNG (it is not repacked or
// encoded again: a marker PNG put in its place is what the second .glb
// holds). A changed texture file is a new version, repacked anew.
func TestRepackKeptPerVersion(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	res := filepath.Join(t.TempDir(), "mod", "res")
	write := func(p string, b []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"trainfever_door.msh", "trainfever_door.msh.blob"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "tfever", n))
		if err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(res, "models", "mesh", "train", n), b)
	}
	write(filepath.Join(res, "models", "material", "vehicle", "train", "door.mtl"), []byte(`function data() return {
	type = "PHYS_TRANSPARENT_NRML_MAP",
	params = { map_metal_gloss_ao = { fileName = "models/train/door_mga.dds" } },
} end`))
	mga := image.NewNRGBA(image.Rect(0, 0, 4, 4))
	for i := 0; i < len(mga.Pix); i += 4 {
		mga.Pix[i], mga.Pix[i+1], mga.Pix[i+2], mga.Pix[i+3] = 10, 200, 90, 255 // metal, gloss, AO
	}
	tex := filepath.Join(res, "textures", "models", "train", "door_mga.dds")
	write(tex, decodetest.DDS(t, mga, bcn.FormatRGBA8, false))
	mdl := []byte(`function data() return { lods = { { node = { children = { {
	materials = { "vehicle/train/door.mtl" }, mesh = "train/trainfever_door.msh",
	transf = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, },
} } }, visibleFrom = 0, visibleTo = 1000, } } } end`)
	a := filepath.Join(res, "models", "model", "vehicle", "a", "a.mdl")
	b := filepath.Join(res, "models", "model", "vehicle", "b", "b.mdl")
	write(a, mdl)
	write(b, mdl)

	caches := NewCaches()
	// ormPNG assembles the model at p with caches and returns the PNG its
	// .glb embeds for the metal-roughness map.
	ormPNG := func(p string) []byte {
		t.Helper()
		m, err := Open(p)
		if err != nil || m == nil || !m.IsModel() {
			t.Fatalf("%s: not a model: %v", p, err)
		}
		m.Limits.Caches = caches
		scenes, _, _, err := m.assemble(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range scenes {
			for _, mat := range s.Materials {
				if mat.MetallicRoughnessMap != nil && mat.MetallicRoughnessMap.PNG != nil {
					return mat.MetallicRoughnessMap.PNG
				}
			}
		}
		t.Fatalf("%s: no metal-roughness map embedded", p)
		return nil
	}
	// kept is the cache's entry made "orm" for the texture (its PNG or
	// its pixels).
	kept := func(png bool) *imageKey {
		caches.images.mu.Lock()
		defer caches.images.mu.Unlock()
		for k := range caches.images.m {
			if k.Path == tex && k.made == "orm" && k.png == png {
				return &k
			}
		}
		return nil
	}
	first := ormPNG(a)
	img, err := png.Decode(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	if r, g, bl, _ := img.At(0, 0).RGBA(); [3]uint32{r >> 8, g >> 8, bl >> 8} != [3]uint32{90, 55, 10} {
		t.Errorf("metal-roughness pixel %v, want AO 90, roughness 55, metal 10", [3]uint32{r >> 8, g >> 8, bl >> 8})
	}
	pk, xk := kept(true), kept(false)
	if pk == nil || xk == nil {
		t.Fatalf("the repacked map is not kept for its version (PNG %v, pixels %v)", pk != nil, xk != nil)
	}
	if px := caches.images.m[*xk].Pixels.Pix; [4]byte(px[:4]) != [4]byte{90, 55, 10, 255} {
		t.Errorf("kept repacked pixel %v", px[:4])
	}
	// A marker in the kept PNG's place: the second model must embed it.
	var marker bytes.Buffer
	if err := png.Encode(&marker, image.NewNRGBA(image.Rect(0, 0, 3, 5))); err != nil {
		t.Fatal(err)
	}
	caches.images.mu.Lock()
	caches.images.m[*pk].PNG = marker.Bytes()
	caches.images.mu.Unlock()
	if got := ormPNG(b); !bytes.Equal(got, marker.Bytes()) {
		t.Errorf("the second model made its own PNG of the repacked map (%d bytes, the kept one %d)", len(got), marker.Len())
	}
	// A new version of the texture: repacked and encoded anew.
	mga.Pix[0] = 20
	write(tex, decodetest.DDS(t, mga, bcn.FormatRGBA8, false))
	now := time.Now().Add(time.Minute)
	if err := os.Chtimes(tex, now, now); err != nil {
		t.Fatal(err)
	}
	img, err = png.Decode(bytes.NewReader(ormPNG(b)))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, bl, _ := img.At(0, 0).RGBA(); bl>>8 != 20 {
		t.Errorf("after the texture changed, metal %d, want 20", bl>>8)
	}
}

// TestEncodeImagesOnePerPNG: images of a model's scenes with equal PNGs
// (a texture reached through a kept part and a decoded one) become one
// image; an image whose PNG has the same length but other bytes stays
// its own.
func TestEncodeImagesOnePerPNG(t *testing.T) {
	p := []byte("\x89PNG-like bytes A")
	q := []byte("\x89PNG-like bytes B")
	imgs := []*decode.Image{{Name: "a", PNG: p}, {Name: "a again", PNG: bytes.Clone(p)}, {Name: "b", PNG: q}}
	var scenes []*decode.Scene
	for _, img := range imgs {
		scenes = append(scenes, &decode.Scene{Materials: []decode.Material{{BaseColorMap: img}}})
	}
	a := &assembly{m: &Mesh{}}
	a.encodeImages(scenes)
	got := func(i int) *decode.Image { return scenes[i].Materials[0].BaseColorMap }
	if got(0) != got(1) {
		t.Errorf("two images of equal PNGs stay two")
	}
	if got(2) == got(0) || !bytes.Equal(got(2).PNG, q) || !bytes.Equal(got(0).PNG, p) {
		t.Errorf("an image of other bytes of the same length was merged")
	}
}
