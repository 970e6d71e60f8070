package gltf

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"testing"

	"github.com/meshfs/meshfs/decode"
	qgltf "github.com/qmuntal/gltf"
)

// pattern is a w×h image whose every pixel differs from its neighbours.
func pattern(w, h int, seed uint8) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range m.Pix {
		m.Pix[i] = uint8(i*7) + seed
	}
	return m
}

// embedded returns the pixels of glTF image i, read from its buffer view.
func (r *readBack) embedded(i int) *image.NRGBA {
	r.t.Helper()
	im := r.doc.Images[i]
	if im.BufferView == nil || im.MimeType != "image/png" {
		r.t.Fatalf("image %d is not an embedded PNG: %+v", i, im)
	}
	bv := r.doc.BufferViews[*im.BufferView]
	if bv.Target != qgltf.TargetNone || bv.ByteStride != 0 {
		r.t.Errorf("image %d's buffer view has a target or stride", i)
	}
	js := int(uint32(r.glb[12]) | uint32(r.glb[13])<<8 | uint32(r.glb[14])<<16 | uint32(r.glb[15])<<24)
	bin := r.glb[20+js+8:]
	p, err := png.Decode(bytes.NewReader(bin[bv.ByteOffset : bv.ByteOffset+bv.ByteLength]))
	if err != nil {
		r.t.Fatalf("image %d: %v", i, err)
	}
	n, ok := p.(*image.NRGBA)
	if !ok {
		out := image.NewNRGBA(p.Bounds())
		for y := p.Bounds().Min.Y; y < p.Bounds().Max.Y; y++ {
			for x := p.Bounds().Min.X; x < p.Bounds().Max.X; x++ {
				out.Set(x, y, p.At(x, y))
			}
		}
		n = out
	}
	return n
}

// TestEmbeddedImages: each image is embedded once however many materials
// use it, as PNG holding exactly its pixels; the slots, alpha modes and
// double-sidedness are set; a two-channel normal map gets Z rebuilt; the
// file passes the validator without warnings.
func TestEmbeddedImages(t *testing.T) {
	albedo := &decode.Image{Name: "albedo.dds.png", Pixels: pattern(8, 4, 1)}
	rg := pattern(4, 4, 3)
	normal := &decode.Image{Name: "normal.dds.png", Pixels: rg}
	var buf bytes.Buffer
	mrPix := pattern(2, 2, 9)
	if err := png.Encode(&buf, mrPix); err != nil {
		t.Fatal(err)
	}
	mr := &decode.Image{Name: "mga.dds.png", PNG: buf.Bytes()}
	s := &decode.Scene{Materials: []decode.Material{
		{Name: "a", BaseColorMap: albedo, NormalMap: normal, NormalRedGreen: true, MetallicRoughnessMap: mr, OcclusionMap: mr,
			AlphaMask: true, AlphaCutoff: 0.25, DoubleSided: true},
		{Name: "b", BaseColorMap: albedo, AlphaBlend: true, AlphaMask: true, NormalMap: albedo},
		{Name: "c"},
	}}
	for i := range 3 {
		p := grid(3, 3, float32(i))
		addNormals(&p, 1)
		addUVs(&p, 1, 2)
		addTangents(&p, 3)
		p.Material = i
		s.Meshes = append(s.Meshes, decode.Mesh{Name: "m", Primitives: []decode.Primitive{p}})
	}
	r := encode(t, s)
	d := r.doc
	if len(d.Images) != 3 || len(d.Textures) != 3 || len(d.Samplers) != 1 {
		t.Fatalf("%d images, %d textures, %d samplers; want 3, 3, 1", len(d.Images), len(d.Textures), len(d.Samplers))
	}
	a, b, c := d.Materials[0], d.Materials[1], d.Materials[2]
	if a.AlphaMode != qgltf.AlphaMask || a.AlphaCutoffOrDefault() != 0.25 || !a.DoubleSided {
		t.Errorf("material a: alpha %v cutoff %v double %v", a.AlphaMode, a.AlphaCutoff, a.DoubleSided)
	}
	if b.AlphaMode != qgltf.AlphaBlend || c.AlphaMode != qgltf.AlphaOpaque {
		t.Errorf("material b alpha %v, c alpha %v", b.AlphaMode, c.AlphaMode)
	}
	if n := bytes.Count(r.glb, []byte(`"alphaCutoff"`)); n != 1 {
		t.Errorf("%d alphaCutoffs, want 1 (a blended material has none)", n)
	}
	if c.PBRMetallicRoughness.BaseColorTexture != nil || c.NormalTexture != nil {
		t.Errorf("material c has textures")
	}
	src := func(ti int) int { return *d.Textures[ti].Source }
	base := a.PBRMetallicRoughness.BaseColorTexture.Index
	if b.PBRMetallicRoughness.BaseColorTexture.Index != base || *b.NormalTexture.Index != base {
		t.Errorf("the albedo is embedded twice")
	}
	if got := r.embedded(src(base)); !bytes.Equal(got.Pix, albedo.Pixels.Pix) || got.Rect != albedo.Pixels.Rect {
		t.Errorf("albedo pixels differ")
	}
	if d.Images[src(base)].Name != "albedo.dds.png" {
		t.Errorf("image name %q", d.Images[src(base)].Name)
	}
	mrt := a.PBRMetallicRoughness.MetallicRoughnessTexture.Index
	if *a.OcclusionTexture.Index != mrt {
		t.Errorf("occlusion and metal-roughness from one image are two textures")
	}
	if a.PBRMetallicRoughness.MetallicFactorOrDefault() != 1 {
		t.Errorf("a metal-roughness map with metallic factor %v", a.PBRMetallicRoughness.MetallicFactorOrDefault())
	}
	if got := r.embedded(src(mrt)); !bytes.Equal(got.Pix, mrPix.Pix) {
		t.Errorf("a PNG given is not embedded as it is")
	}
	got := r.embedded(src(*a.NormalTexture.Index))
	for i := 0; i < len(rg.Pix); i += 4 {
		x, y := float64(rg.Pix[i])/127.5-1, float64(rg.Pix[i+1])/127.5-1
		z := math.Sqrt(math.Max(0, 1-x*x-y*y))
		want := [4]uint8{rg.Pix[i], rg.Pix[i+1], uint8(math.Round((z + 1) * 127.5)), 255}
		if [4]uint8(got.Pix[i:i+4]) != want {
			t.Fatalf("normal pixel %d = %v, want %v", i/4, got.Pix[i:i+4], want)
		}
	}
}
