package fs

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/woozymasta/bcn"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/internal/store"
)

func ddsOf(t *testing.T, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 31)
	}
	return decodetest.DDS(t, img, bcn.FormatBC1, false)
}

// glbImageSizes returns the width×height of every PNG image embedded in glb.
func glbImageSizes(t testing.TB, glb []byte) [][2]int {
	t.Helper()
	if len(glb) < 20 {
		t.Fatalf("glb of %d bytes", len(glb))
	}
	js := int(binary.LittleEndian.Uint32(glb[12:]))
	var doc struct {
		Images      []struct{ BufferView int }
		BufferViews []struct{ ByteOffset, ByteLength int }
	}
	if err := json.Unmarshal(glb[20:20+js], &doc); err != nil {
		t.Fatal(err)
	}
	bin := glb[20+js+8:]
	var out [][2]int
	for _, im := range doc.Images {
		bv := doc.BufferViews[im.BufferView]
		png := bin[bv.ByteOffset : bv.ByteOffset+bv.ByteLength]
		out = append(out, [2]int{int(binary.BigEndian.Uint32(png[16:])), int(binary.BigEndian.Uint32(png[20:]))})
	}
	return out
}

// TestTextureChangeRemakesGLB: two meshes in two folders embed one texture
// found under the asset root (texture/common/); replacing the texture
// under the mount re-makes both .glb files, with their new sizes and the
// new picture's size.
func TestTextureChangeRemakesGLB(t *testing.T) {
	ply, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "gem", "eply_tangents_textures.ply"))
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	tex := filepath.Join(src, "resource", "texture", "common", "model", "hull.dds")
	write(t, tex, ddsOf(t, 8, 8))
	for _, d := range []string{"a", "b"} {
		write(t, filepath.Join(src, "resource", "entity", d, "body.ply"), ply)
		write(t, filepath.Join(src, "resource", "entity", d, "body.mtl"), []byte(`{material simple {diffuse "$/model/hull"}}`))
	}
	_, mnt := mountT(t, src, Config{})
	glbs := []string{
		filepath.Join(mnt, "resource", "entity", "a", "body.ply", "body.glb"),
		filepath.Join(mnt, "resource", "entity", "b", "body.ply", "body.glb"),
	}
	sizes := map[string]int64{}
	for _, g := range glbs {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		if got := glbImageSizes(t, b); len(got) != 1 || got[0] != [2]int{8, 8} {
			t.Fatalf("%s embeds %v, want one 8×8 image", g, got)
		}
		sizes[g] = int64(len(b))
	}
	write(t, tex, ddsOf(t, 64, 32))
	for _, g := range glbs {
		var b []byte
		var fi os.FileInfo
		if !waitFor(10*time.Second, func() bool {
			fi, err = os.Stat(g)
			if err != nil || fi.Size() == sizes[g] {
				return false
			}
			b, err = os.ReadFile(g)
			return err == nil && int64(len(b)) == fi.Size()
		}) {
			t.Fatalf("%s: still %d bytes after the texture changed (err %v)", g, sizes[g], err)
		}
		if got := glbImageSizes(t, b); len(got) != 1 || got[0] != [2]int{64, 32} {
			t.Errorf("%s embeds %v after the change, want one 64×32 image", g, got)
		}
	}
}

// TestTextureNarrowsMeshFolder: a mesh whose material names a texture
// only its owner may read has outputs others cannot read, from the first
// stat of its .glb on.
func TestTextureNarrowsMeshFolder(t *testing.T) {
	ply, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "gem", "eply_tangents_textures.ply"))
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	tex := filepath.Join(src, "resource", "texture", "common", "hull.dds")
	write(t, tex, ddsOf(t, 8, 8))
	if err := os.Chmod(tex, 0o600); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(src, "resource", "entity", "body.ply"), ply)
	write(t, filepath.Join(src, "resource", "entity", "body.mtl"), []byte(`{material simple {diffuse "$/hull"}}`))
	_, mnt := mountT(t, src, Config{})
	dir := filepath.Join(mnt, "resource", "entity", "body.ply")
	// The first stat of the .glb, made before any scan, already shows
	// the narrowing: the kernel checks opens against it.
	if fi, err := os.Stat(filepath.Join(dir, "body.glb")); err != nil || fi.Mode().Perm()&0o044 != 0 {
		t.Errorf("first stat of body.glb: %v (err %v), made with a texture only its owner reads", fi.Mode(), err)
	}
	for _, name := range []string{"body.glb", "header.json"} {
		var fi os.FileInfo
		if !waitFor(10*time.Second, func() bool {
			fi, err = os.Stat(filepath.Join(dir, name))
			return err == nil && fi.Mode().Perm()&0o044 == 0
		}) {
			t.Errorf("%s: mode %v (err %v), made with a texture only its owner reads", name, fi.Mode(), err)
		}
	}
}

// TestTexturePNGs: a .dds and a .tga are listed with NAME.EXT.png beside
// them, which holds the picture at the texture's size, while the texture
// passes through unchanged; a real file of a PNG's name wins; a changed
// texture gives a new PNG.
func TestTexturePNGs(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		dds := ddsOf(t, 16, 8)
		write(t, filepath.Join(src, "a.dds"), dds)
		write(t, filepath.Join(src, "b.tga"), tgaOf(4, 2))
		write(t, filepath.Join(src, "c.dds"), dds)
		write(t, filepath.Join(src, "c.dds.png"), []byte("mine"))
		_, mnt := mountT(t, src, Config{})
		got := names(t, mnt)
		want := []string{"a.dds", "a.dds.png", "b.tga", "b.tga.png", "c.dds", "c.dds.png"}
		if !equalStrings(got, want) {
			t.Fatalf("listing %v, want %v", got, want)
		}
		if b, err := os.ReadFile(filepath.Join(mnt, "a.dds")); err != nil || !bytes.Equal(b, dds) {
			t.Errorf("a.dds does not pass through (err %v)", err)
		}
		if b, err := os.ReadFile(filepath.Join(mnt, "c.dds.png")); err != nil || string(b) != "mine" {
			t.Errorf("c.dds.png = %q (err %v), want the real file's bytes", b, err)
		}
		for name, size := range map[string][2]int{"a.dds.png": {16, 8}, "b.tga.png": {4, 2}} {
			p := filepath.Join(mnt, name)
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(p)
			if err != nil || int64(len(b)) != fi.Size() {
				t.Fatalf("%s: %d bytes read, stat says %d (err %v)", name, len(b), fi.Size(), err)
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(b))
			if err != nil || [2]int{cfg.Width, cfg.Height} != size {
				t.Errorf("%s: %dx%d (err %v), want %v", name, cfg.Width, cfg.Height, err, size)
			}
		}
		write(t, filepath.Join(src, "a.dds"), ddsOf(t, 32, 32))
		p := filepath.Join(mnt, "a.dds.png")
		if !waitFor(10*time.Second, func() bool {
			b, err := os.ReadFile(p)
			if err != nil {
				return false
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(b))
			return err == nil && cfg.Width == 32
		}) {
			t.Errorf("a.dds.png does not show the changed texture")
		}
	})
}

// tgaOf is a w×h uncompressed 32-bit TGA, rows top-down.
func tgaOf(w, h int) []byte {
	b := []byte{0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, byte(w), byte(w >> 8), byte(h), byte(h >> 8), 32, 0x28}
	for i := 0; i < w*h; i++ {
		b = append(b, byte(i), byte(i*3), byte(i*7), 255)
	}
	return b
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTexturePNGRemount: a texture's PNG is encoded once for its
// NAME.EXT.png and the .glb embedding it, and a remount over the same disk
// cache serves NAME.EXT.png and another mesh's new .glb with that PNG,
// encoding none (stats.json's texture_pngs).
func TestTexturePNGRemount(t *testing.T) {
	ply, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "gem", "eply_tangents_textures.ply"))
	if err != nil {
		t.Fatal(err)
	}
	src, cache := t.TempDir(), t.TempDir()
	write(t, filepath.Join(src, "resource", "texture", "common", "hull.dds"), ddsOf(t, 64, 32))
	for _, d := range []string{"a", "b"} {
		write(t, filepath.Join(src, "resource", "entity", d, "body.ply"), ply)
		write(t, filepath.Join(src, "resource", "entity", d, "body.mtl"), []byte(`{material simple {diffuse "$/hull"}}`))
	}
	read := func(mnt string, rel ...string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(append([]string{mnt}, rel...)...))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pngRel := []string{"resource", "texture", "common", "hull.dds.png"}
	_, mnt, stop := mountDisk(t, src, cache, false)
	png := read(mnt, pngRel...)
	if glb := read(mnt, "resource", "entity", "a", "body.ply", "body.glb"); !bytes.Contains(glb, png) {
		t.Fatal("a/body.glb does not embed hull.dds.png's bytes")
	}
	if s := stats(t, mnt); s.TexturePNGs != 1 {
		t.Fatalf("first mount: %d PNGs encoded, want 1", s.TexturePNGs)
	}
	stop()

	_, mnt, _ = mountDisk(t, src, cache, false)
	if glb := read(mnt, "resource", "entity", "b", "body.ply", "body.glb"); !bytes.Contains(glb, png) {
		t.Fatal("b/body.glb, made after the remount, does not embed the same PNG")
	}
	if got := read(mnt, pngRel...); !bytes.Equal(got, png) {
		t.Fatal("hull.dds.png differs after the remount")
	}
	if s := stats(t, mnt); s.TexturePNGs != 0 || s.DiskLoads[store.LabelPNG] != 1 {
		t.Fatalf("after the remount: %d PNGs encoded, disk loads %v; want 0 and one texture/png", s.TexturePNGs, s.DiskLoads)
	}
}
