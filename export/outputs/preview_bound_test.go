package outputs

import (
	"image"
	"math/rand/v2"
	"testing"

	"github.com/meshfs/meshfs/decode/texture"
)

// PreviewBound holds for the picture deflate shrinks least: noise, with
// an alpha channel, at a few sizes.
func TestPreviewBoundHoldsForNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 7, 64, 256, 512} {
		img := image.NewNRGBA(image.Rect(0, 0, n, n))
		for i := range img.Pix {
			img.Pix[i] = byte(rng.Uint32())
		}
		b, err := texture.EncodePNG(&texture.Image{NRGBA: img})
		if err != nil {
			t.Fatal(err)
		}
		m := &Mesh{Limits: Limits{PreviewSize: n}}
		if bound := m.PreviewBound(); int64(len(b)) > bound {
			t.Errorf("%d²: a noise PNG of %d bytes, above the bound %d", n, len(b), bound)
		} else {
			t.Logf("%d²: %d bytes, bound %d", n, len(b), bound)
		}
	}
}
