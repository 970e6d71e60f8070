package gltf

import (
	"image"
	"math"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/texture"
	qgltf "github.com/qmuntal/gltf"
)

// Images: every image a material uses is embedded once per file as PNG in
// a buffer view of its own (glTF allows PNG and JPEG only), however many
// materials use it, with one texture per image and one sampler (repeat,
// trilinear) for all. A two-channel normal map (decode.Material's
// NormalRedGreen) is embedded as the three-channel map glTF wants, Z
// rebuilt; it is then a different image from the same file used as is.

// imageKey is one embedded image: a scene image, and whether Z is rebuilt.
type imageKey struct {
	img      *decode.Image
	rebuildZ bool
}

// PNGOf is the PNG a .glb embeds for img, Z rebuilt when rebuildZ: its
// own PNG when it has one and Z is kept, else its pixels encoded; ok is
// false when it has no pixels to give. Pixels are encoded as textures are
// (texture.EncodePNG: one filter, bands deflated on all CPUs).
func PNGOf(img *decode.Image, rebuildZ bool) (data []byte, ok bool) {
	if img.PNG != nil && !rebuildZ {
		return img.PNG, true
	}
	if img.Pixels == nil {
		return nil, false
	}
	px := img.Pixels
	if rebuildZ {
		px = RebuildZ(px)
	}
	data, err := texture.EncodePNG(&texture.Image{NRGBA: px})
	if err != nil {
		return nil, false
	}
	return data, true
}

// textureOf returns the glTF texture index for img, embedding it the first
// time; ok is false when the image has no pixels to give.
func (b *builder) textureOf(img *decode.Image, rebuildZ bool) (int, bool) {
	key := imageKey{img, rebuildZ}
	if t, ok := b.textures[key]; ok {
		return t, true
	}
	data, ok := PNGOf(img, rebuildZ)
	if !ok {
		return 0, false
	}
	if b.textures == nil {
		b.textures = map[imageKey]int{}
		b.doc.Samplers = []*qgltf.Sampler{{MagFilter: qgltf.MagLinear, MinFilter: qgltf.MinLinearMipMapLinear,
			WrapS: qgltf.WrapRepeat, WrapT: qgltf.WrapRepeat}}
	}
	off := b.alloc(len(data))
	v := b.view(off, len(data), 0, qgltf.TargetNone)
	b.addJob(len(data), func(bin []byte, lo, hi int) { copy(bin[off+lo:off+hi], data[lo:hi]) })
	gi := &qgltf.Image{Name: img.Name, MimeType: "image/png", BufferView: qgltf.Index(v)}
	if img.Note != "" {
		gi.Extras = map[string]any{"note": img.Note}
	}
	b.doc.Images = append(b.doc.Images, gi)
	b.doc.Textures = append(b.doc.Textures, &qgltf.Texture{Name: img.Name, Sampler: qgltf.Index(0),
		Source: qgltf.Index(len(b.doc.Images) - 1)})
	t := len(b.doc.Textures) - 1
	b.textures[key] = t
	return t, true
}

// maps puts m's images on gm.
func (b *builder) maps(m *decode.Material, gm *qgltf.Material) {
	if m.BaseColorMap != nil {
		if t, ok := b.textureOf(m.BaseColorMap, false); ok {
			gm.PBRMetallicRoughness.BaseColorTexture = &qgltf.TextureInfo{Index: t}
		}
	}
	if m.NormalMap != nil {
		if t, ok := b.textureOf(m.NormalMap, m.NormalRedGreen); ok {
			gm.NormalTexture = &qgltf.NormalTexture{Index: qgltf.Index(t)}
		}
	}
	if m.MetallicRoughnessMap != nil {
		if t, ok := b.textureOf(m.MetallicRoughnessMap, false); ok {
			gm.PBRMetallicRoughness.MetallicRoughnessTexture = &qgltf.TextureInfo{Index: t}
			// The map's values are the material's: factors of 1.
			gm.PBRMetallicRoughness.MetallicFactor = nil
		}
	}
	if m.OcclusionMap != nil {
		if t, ok := b.textureOf(m.OcclusionMap, false); ok {
			gm.OcclusionTexture = &qgltf.OcclusionTexture{Index: qgltf.Index(t)}
		}
	}
}

// RebuildZ returns the tangent-space normal map whose X and Y are px's R
// and G, with Z = sqrt(1 − x² − y²) (0 where x² + y² > 1) in B and an
// opaque alpha.
func RebuildZ(px *image.NRGBA) *image.NRGBA {
	r := px.Rect
	out := image.NewNRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
	var zOf [256][256]uint8 // by R, G
	for x := 0; x < 256; x++ {
		fx := float64(x)/127.5 - 1
		for y := 0; y < 256; y++ {
			fy := float64(y)/127.5 - 1
			z := math.Sqrt(math.Max(0, 1-fx*fx-fy*fy))
			zOf[x][y] = uint8(math.Round((z + 1) * 127.5))
		}
	}
	for y := 0; y < r.Dy(); y++ {
		src := px.Pix[y*px.Stride : y*px.Stride+4*r.Dx()]
		dst := out.Pix[y*out.Stride : y*out.Stride+4*r.Dx()]
		for i := 0; i < len(src); i += 4 {
			dst[i], dst[i+1], dst[i+2], dst[i+3] = src[i], src[i+1], zOf[src[i]][src[i+1]], 255
		}
	}
	return out
}
