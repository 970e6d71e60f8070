package outputs

import (
	"context"
	"image"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/woozymasta/bcn"
)

// Two meshes whose material names the same texture, their previews drawn
// with one Caches (as a mount's store and convert share theirs): the
// texture is decoded for the first picture only.
func TestPreviewsShareDecodedTexture(t *testing.T) {
	root := t.TempDir()
	tex := image.NewNRGBA(image.Rect(0, 0, 64, 64))
	for i := range tex.Pix {
		tex.Pix[i] = uint8(i * 13)
	}
	writeFile(t, filepath.Join(root, "resource", "texture", "common", "hull.dds"), decodetest.DDS(t, tex, bcn.FormatBC1, false))
	writeFile(t, filepath.Join(root, "resource", "entity", "ground.mtl"), []byte(`{material simple {diffuse "$/hull"}}`))
	caches := NewCaches()
	for i, name := range []string{"a.ply", "b.ply"} {
		ply, err := meshgen.GEM(2000+1000*i, 1)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, "resource", "entity", name)
		writeFile(t, p, ply)
		m, err := Open(p)
		if err != nil || m == nil {
			t.Fatal(m, err)
		}
		m.Tree, m.Limits.Caches = root, caches
		if _, err := m.PreviewFile(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := caches.previewTextures().Decodes(); n != 1 {
		t.Fatalf("two previews of one texture decoded it %d times, want 1", n)
	}
}

// writeFile writes data at p, making its folders.
func writeFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
