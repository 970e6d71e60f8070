package preview

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/gem"
	"github.com/meshfs/meshfs/internal/meshgen"
)

// texturedGrid is meshgen's GEM mesh of about n triangles with UVs from
// its positions (where it has none) and a 512² base-colour texture given
// as a PNG, as outputs resolves one.
func texturedGrid(tb testing.TB, n int) *decode.Scene {
	tb.Helper()
	s := gridScene(tb, n)
	tex := image.NewNRGBA(image.Rect(0, 0, 512, 512))
	for i := range tex.Pix {
		tex.Pix[i] = byte(i*7 + i/2048)
		if i%4 == 3 {
			tex.Pix[i] = 255
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, tex); err != nil {
		tb.Fatal(err)
	}
	s.Materials = []decode.Material{{BaseColor: [4]float32{1, 1, 1, 1}, BaseColorMap: &decode.Image{PNG: b.Bytes()}}}
	for mi := range s.Meshes {
		for pi := range s.Meshes[mi].Primitives {
			p := &s.Meshes[mi].Primitives[pi]
			p.Material = 0
			if len(p.UVs) == 0 {
				uv := make([][2]float32, len(p.Positions))
				for k, v := range p.Positions {
					uv[k] = [2]float32{v[0] * 0.37, v[2] * 0.41}
				}
				p.UVs = [][][2]float32{uv}
			}
		}
	}
	return s
}

func benchRender(b *testing.B, n int) { benchScene(b, texturedGrid(b, n)) }

// benchScene draws s at 256², reporting ms/op.
func benchScene(b *testing.B, s *decode.Scene) {
	b.Logf("%d triangles", s.Count().Triangles)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(s, 256); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/op")
}

// BenchmarkRenderTextured100k and BenchmarkRenderTextured1M draw a 256²
// preview of a textured mesh of 100 k and 1 M triangles (issue 30's
// targets), decoding its texture each time.
func BenchmarkRenderTextured100k(b *testing.B) { benchRender(b, 100_000) }
func BenchmarkRenderTextured1M(b *testing.B)   { benchRender(b, 1_000_000) }

// gridScene is meshgen's GEM mesh of about n triangles, decoded.
func gridScene(tb testing.TB, n int) *decode.Scene {
	tb.Helper()
	data, err := meshgen.GEM(n, 1)
	if err != nil {
		tb.Fatal(err)
	}
	f, err := gem.Parse(context.Background(), "grid.ply", data)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := gem.BuildScene(context.Background(), f, "grid.ply")
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
