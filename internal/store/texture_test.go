package store

import (
	"bytes"
	"context"
	"image"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/woozymasta/bcn"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store/stats"
)

// texturedTree writes two GEM meshes, resource/entity/{a,b}/body.ply, whose
// materials name one 64×32 BC1 texture under the asset root, and returns
// the texture's path.
func texturedTree(t *testing.T, src string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	ply, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "gem", "eply_tangents_textures.ply"))
	if err != nil {
		t.Fatal(err)
	}
	img := image.NewNRGBA(image.Rect(0, 0, 64, 32))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 31)
	}
	dds := decodetest.DDS(t, img, bcn.FormatBC1, false)
	write := func(p string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tex := filepath.Join(src, "resource", "texture", "common", "hull.dds")
	write(tex, dds)
	for _, dir := range []string{"a", "b"} {
		write(filepath.Join(src, "resource", "entity", dir, "body.ply"), ply)
		write(filepath.Join(src, "resource", "entity", dir, "body.mtl"), []byte(`{material simple {diffuse "$/hull"}}`))
	}
	return tex
}

// pngLoads are a store's texture PNGs made (decoded and encoded) and
// loaded from the disk cache.
func pngLoads(s *Store) (made, fromDisk int64) {
	l := s.cache.Stats().Loads
	return l[LabelPNG], l[LabelPNG+DiskSuffix]
}

// TestTexturePNGOnDisk: a texture's PNG is made once per version and is
// the very PNG NAME.EXT.png serves and every .glb embedding it holds; a new
// store over the same disk cache (a remount) loads it from there for a
// .glb it converts and for NAME.EXT.png, encoding it no more.
func TestTexturePNGOnDisk(t *testing.T) {
	src, disk := t.TempDir(), t.TempDir()
	tex := texturedTree(t, src)
	ctx := context.Background()
	id, _, err := source.Stat(tex)
	if err != nil {
		t.Fatal(err)
	}
	glbOf := func(s *Store, dir string) []byte {
		t.Helper()
		m, v := meshOf(t, s, filepath.Join(src, "resource", "entity", dir, "body.ply"))
		e, err := s.geometry(ctx, m, v, OutGLB)
		if err != nil || e.Err != nil {
			t.Fatalf("%s: %v, %v", dir, err, e.Err)
		}
		return e.Part(0)
	}

	s, _ := newStore(t, src, disk)
	png, _, _, err := s.TexturePNG(ctx, tex, id.File)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("hull.dds.png: %v", err)
	}
	if glb := glbOf(s, "a"); !bytes.Contains(glb, png) {
		t.Fatal("a/body.glb does not embed hull.dds.png's bytes")
	}
	if made, fromDisk := pngLoads(s); made != 1 || fromDisk != 0 {
		t.Fatalf("first store: %d PNGs made, %d loaded from disk; want 1, 0", made, fromDisk)
	}
	s.closeDisk()

	s2, _ := newStore(t, src, disk)
	if glb := glbOf(s2, "b"); !bytes.Contains(glb, png) {
		t.Fatal("b/body.glb, converted after the remount, does not embed the same PNG")
	}
	again, _, _, err := s2.TexturePNG(ctx, tex, id.File)
	if err != nil || !bytes.Equal(again, png) {
		t.Fatalf("hull.dds.png after the remount differs (err %v)", err)
	}
	if made, fromDisk := pngLoads(s2); made != 0 || fromDisk != 1 {
		t.Fatalf("after the remount: %d PNGs made, %d loaded from disk; want 0, 1", made, fromDisk)
	}
	if st := s2.Stats(stats.MountCounts{Counts: &stats.Counts{}}); st.TexturePNGs != 0 || st.DiskLoads[LabelPNG] != 1 {
		t.Fatalf("stats: texture_pngs %d, disk_loads %v", st.TexturePNGs, st.DiskLoads)
	}
	s2.closeDisk()

	// Another version of the texture is made anew.
	if err := os.WriteFile(tex, append(bytes.Clone(mustRead(t, tex)), 0), 0o644); err != nil {
		t.Fatal(err)
	}
	s3, _ := newStore(t, src, disk)
	id3, _, _ := source.Stat(tex)
	if _, _, _, err := s3.TexturePNG(ctx, tex, id3.File); err != nil {
		t.Fatal(err)
	}
	if made, fromDisk := pngLoads(s3); made != 1 || fromDisk != 0 {
		t.Fatalf("a changed texture: %d PNGs made, %d loaded from disk; want 1, 0", made, fromDisk)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
