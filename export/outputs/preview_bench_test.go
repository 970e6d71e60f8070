package outputs

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/internal/meshgen"
)

// BenchmarkPreview draws the 256² NAME.preview.png of a generated GEM
// mesh of 100 k triangles whose material names a 1024² BC1 texture, and
// of one of 1 M triangles (untextured), each beside the .glb of the same
// mesh: "draw" and "glb" from the same decoded, resolved scene (the
// preview's and the export's own work), "preview-file" and "glb-file"
// from the source (PreviewFile, GLBFile: decoding included, the
// texture's PNG kept as a mount keeps it, in one Caches).
func BenchmarkPreview(b *testing.B) {
	dds := benchTexture(b)
	for _, c := range []struct {
		name      string
		triangles int
		textured  bool
	}{{"100k-textured", 100_000, true}, {"1M", 1_000_000, false}} {
		root := b.TempDir()
		write := func(p string, data []byte) { benchWrite(b, p, data) }
		ply, err := meshgen.GEM(c.triangles, 1)
		if err != nil {
			b.Fatal(err)
		}
		mesh := filepath.Join(root, "resource", "entity", "body.ply")
		write(mesh, ply)
		if c.textured {
			write(filepath.Join(root, "resource", "entity", "ground.mtl"), []byte(`{material simple {diffuse "$/hull"}}`))
			write(filepath.Join(root, "resource", "texture", "common", "hull.dds"), dds)
		}
		m, err := Open(mesh)
		if err != nil || m == nil {
			b.Fatal(m, err)
		}
		m.Tree = root
		m.Limits.Caches = NewCaches() // as the mount's store and convert share theirs
		ctx := context.Background()
		scene, err := m.Decode(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Textures(ctx, scene); err != nil {
			b.Fatal(err)
		}
		images := 0
		for _, mat := range scene.Materials {
			if mat.BaseColorMap != nil && (mat.BaseColorMap.Pixels != nil || mat.BaseColorMap.PNG != nil) {
				images++
			}
		}
		if c.textured != (images > 0) {
			b.Fatalf("%s: %d base colour images", c.name, images)
		}
		b.Logf("%s: %d triangles, %d textured materials", c.name, scene.Count().Triangles, images)
		for _, r := range []struct {
			name string
			run  func() error
		}{
			{"draw", func() error { _, err := m.PreviewOf(ctx, scene); return err }},
			{"glb", func() error { _, err := m.exportGLB(scene); return err }},
			{"preview-file", func() error { _, err := m.PreviewFile(ctx); return err }},
			{"glb-file", func() error { _, err := m.GLBFile(ctx); return err }},
		} {
			b.Run(c.name+"/"+r.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := r.run(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/op")
			})
		}
	}
}
