package outputs

import (
	"context"
	"image"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/woozymasta/bcn"
)

// BenchmarkGLBTextured makes the .glb of a GEM fixture whose material
// names a 1024² BC1 texture, the texture decoded and PNG-encoded anew each
// time (a first read), against the same mesh with its material file gone
// (untextured).
func BenchmarkGLBTextured(b *testing.B) {
	_, file, _, _ := runtime.Caller(0)
	ply, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "gem", "eply_tangents_textures.ply"))
	if err != nil {
		b.Fatal(err)
	}
	dds := benchTexture(b)
	root := b.TempDir()
	write := func(p string, data []byte) { benchWrite(b, p, data) }
	mesh := filepath.Join(root, "resource", "entity", "body.ply")
	mtl := filepath.Join(root, "resource", "entity", "body.mtl")
	write(mesh, ply)
	write(filepath.Join(root, "resource", "texture", "common", "hull.dds"), dds)
	for _, textured := range []bool{false, true} {
		name := "untextured"
		if textured {
			name = "textured"
			write(mtl, []byte(`{material simple {diffuse "$/hull"}}`))
		}
		b.Run(name, func(b *testing.B) {
			m, err := Open(mesh)
			if err != nil || m == nil {
				b.Fatal(m, err)
			}
			m.Tree = root
			b.ReportAllocs()
			for b.Loop() {
				m.Limits.Caches = NewCaches()
				if _, err := m.GLBFile(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchTexture is a 1024² BC1 DDS of noisy pixels.
func benchTexture(b *testing.B) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 1024, 1024))
	for i := range img.Pix {
		img.Pix[i] = uint8(i*7 + i>>12)
	}
	return decodetest.DDS(b, img, bcn.FormatBC1, false)
}

// benchWrite writes data at p, making its folders.
func benchWrite(b *testing.B, p string, data []byte) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
}
