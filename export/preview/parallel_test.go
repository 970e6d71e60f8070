package preview

import (
	"bytes"
	"context"
	"image"
	"math/rand/v2"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// overlapping is a scene of n triangles, many lying in the same few
// planes (equal depths: ties the merge must break as one pass does), in
// random vertex colours, some back-facing, some cut out by alpha.
func overlapping(r *rand.Rand, n int) *decode.Scene {
	p := decode.Primitive{Colors: [][][4]float32{nil}}
	for range n {
		depth := float32(r.IntN(4)) * 0.25
		for range 3 {
			p.Positions = append(p.Positions, [3]float32{r.Float32()*2 - 1, r.Float32()*2 - 1, depth})
			p.Colors[0] = append(p.Colors[0], [4]float32{r.Float32(), r.Float32(), r.Float32(), r.Float32()})
			p.Indices = append(p.Indices, uint32(len(p.Indices)))
		}
	}
	q := p
	q.Material = 1
	return &decode.Scene{
		Meshes:    []decode.Mesh{{Name: "a", Primitives: []decode.Primitive{p, q}}},
		Materials: []decode.Material{{DoubleSided: true}, {AlphaMask: true, AlphaCutoff: 0.5}},
	}
}

// The picture is the same whatever the number of triangle partitions:
// random overlapping scenes, and a textured 100 k-triangle mesh.
func TestPartitionsDrawTheSame(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	scenes := []*decode.Scene{texturedGrid(t, 100_000)}
	for range 20 {
		scenes = append(scenes, overlapping(r, 1+r.IntN(300)))
	}
	ctx := context.Background()
	for i, s := range scenes {
		size := 256
		if i > 0 {
			size = 8 + r.IntN(100)
		}
		one, err := RenderWith(ctx, s, size, Config{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		if covered(one) == 0 {
			t.Fatalf("scene %d: nothing drawn", i)
		}
		for _, w := range []int{2, 3, 7, 64} {
			got, err := RenderWith(ctx, s, size, Config{Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Pix, one.Pix) {
				t.Fatalf("scene %d, %d²: %d partitions draw %d pixels otherwise than one", i, size, w, differing(got, one))
			}
		}
	}
}

func differing(a, b *image.NRGBA) int {
	n := 0
	for i := 0; i < len(a.Pix); i += 4 {
		if !bytes.Equal(a.Pix[i:i+4], b.Pix[i:i+4]) {
			n++
		}
	}
	return n
}

// A TextureCache decodes a texture once for every picture that draws the
// same PNG, and the pictures are those drawn without it.
func TestTextureCacheDecodesOnce(t *testing.T) {
	s := texturedGrid(t, 2000)
	other := texturedGrid(t, 3000)
	other.Materials[0].BaseColorMap = &decode.Image{PNG: s.Materials[0].BaseColorMap.PNG} // another image, the same bytes
	c := NewTextureCache(64 << 20)
	ctx := context.Background()
	for _, sc := range []*decode.Scene{s, other, s} {
		want, err := RenderWith(ctx, sc, 64, Config{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := RenderWith(ctx, sc, 64, Config{Textures: c})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Pix, want.Pix) {
			t.Fatalf("with the cache %d pixels differ", differing(got, want))
		}
	}
	if n := c.Decodes(); n != 1 {
		t.Fatalf("%d decodes for three pictures of one texture, want 1", n)
	}
	// Over budget: nothing kept, every picture decodes.
	small := NewTextureCache(1)
	for range 2 {
		if _, err := RenderWith(ctx, s, 64, Config{Textures: small}); err != nil {
			t.Fatal(err)
		}
	}
	if n := small.Decodes(); n != 2 {
		t.Fatalf("a 1-byte cache: %d decodes for two pictures, want 2", n)
	}
}
