package store

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store/failures"
)

func names(files []outputs.Entry) map[string]bool {
	m := map[string]bool{}
	for _, e := range files {
		m[e.Name] = true
	}
	return m
}

// A mesh folder's view: what it lists, when the listing is final, which
// sizes are known without converting, and what may be pushed or served
// from memory.
func TestFolderView(t *testing.T) {
	src, disk := t.TempDir(), t.TempDir()
	p := filepath.Join(src, "m.ply")
	writeGen(t, p, meshgen.GEM, 200, 1)
	ctx := context.Background()
	s, _ := newStore(t, src, disk)
	m, v := meshOf(t, s, p)
	glb, _ := m.Entry(m.GLBName())
	hdr, _ := m.Entry(outputs.HeaderName)

	files, r, warm, final, err := s.Listing(ctx, m, v)
	if err != nil || warm || final {
		t.Fatalf("first listing: warm %v final %v, %v", warm, final, err)
	}
	if got := names(files); !got[m.GLBName()] || !got[m.OBJName()] || !got[outputs.HeaderName] || got[outputs.ErrorName] {
		t.Fatalf("healthy mesh lists %v", got)
	}
	if _, _, warm, _, _ := s.Listing(ctx, m, v); !warm {
		t.Fatal("second listing: the scan is not warm")
	}
	if s.geometryGone(ctx, m, v) {
		t.Fatal("a healthy mesh's geometry is gone")
	}
	if _, _, ok, costly := s.CheapSize(ctx, m, v, glb, "", true); ok || !costly {
		t.Fatalf("size of an unconverted .glb: ok %v, costly %v", ok, costly)
	}
	if _, _, ok, costly := s.CheapSize(ctx, m, v, glb, "", false); ok || costly {
		t.Fatalf("size of an unconverted .glb (any tier): ok %v, costly %v", ok, costly)
	}
	header, _, err := s.Content(ctx, m, v, hdr, "")
	if err != nil {
		t.Fatal(err)
	}
	if size, scanned, ok, _ := s.CheapSize(ctx, m, v, outputs.Entry{}, "", false); !ok || !scanned || size != int64(len(header)) {
		t.Fatalf("header.json: size %d (%v, scanned %v), want %d", size, ok, scanned, len(header))
	}
	if data, ok := s.Pushable(m, v, r); !ok || !bytes.Equal(data, header) {
		t.Fatalf("pushable header %v: %q", ok, data)
	}
	if _, ok := s.InMemory(m, v, glb); ok {
		t.Fatal("an unconverted .glb in memory")
	}
	for _, out := range []string{OutGLB, OutOBJ} {
		if e, err := s.geometry(ctx, m, v, out); err != nil || e.Err != nil {
			t.Fatalf("%s: %v", out, err)
		}
	}
	data, ok := s.InMemory(m, v, glb)
	want, _, _ := s.Content(ctx, m, v, glb, "")
	if !ok || !bytes.Equal(data, want) {
		t.Fatal("the converted .glb is not served from memory")
	}
	if size, _, ok, _ := s.CheapSize(ctx, m, v, glb, "", true); !ok || size != int64(len(want)) {
		t.Fatalf("size of the converted .glb %d (%v), want %d", size, ok, len(want))
	}
	if _, _, _, final, _ := s.Listing(ctx, m, v); final {
		t.Fatal("the listing is final before the preview is drawn")
	}
	if e, err := s.geometry(ctx, m, v, OutPreview); err != nil || e.Err != nil {
		t.Fatalf("preview: %v", err)
	}
	if _, _, _, final, _ := s.Listing(ctx, m, v); !final {
		t.Fatal("the listing after every conversion is not final")
	}
	if _, _, ok := s.PassFile(ctx, m, v); ok {
		t.Fatal("a .glb below PassMin offered for passthrough")
	}
	for _, c := range r.Chunks {
		if err := s.ChunkCheap(ctx, m, v, c); errors.Is(err, os.ErrNotExist) {
			t.Fatalf("chunk %s not found", c)
		}
	}
	if err := s.ChunkCheap(ctx, m, v, "no such chunk"); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a missing chunk found")
	}
}

// A broken mesh lists error.txt and no geometry, finally, and its geometry
// is gone once the failure is known.
func TestFolderViewBroken(t *testing.T) {
	src, disk := t.TempDir(), t.TempDir()
	p := filepath.Join(src, "broken.ply")
	b, err := meshgen.GEM(500, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b[:len(b)*3/4], 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, _ := newStore(t, src, disk)
	m, v := meshOf(t, s, p)
	if s.geometryGone(ctx, m, v) {
		t.Fatal("geometry gone before anything is known")
	}
	e, err := s.geometry(ctx, m, v, OutGLB)
	if err != nil {
		t.Fatal(err)
	}
	files, r, _, final, err := s.Listing(ctx, m, v)
	if err != nil {
		t.Fatal(err)
	}
	if e.Err == nil && r.ScanErr == nil {
		t.Fatal("the cut GEM file converts: this test needs one that fails")
	}
	if got := names(files); got[m.GLBName()] || !got[outputs.ErrorName] || !final {
		t.Fatalf("broken mesh lists %v (final %v)", got, final)
	}
	if !s.geometryGone(ctx, m, v) {
		t.Fatal("a broken mesh's geometry is not gone")
	}
	if _, ok := s.Pushable(m, v, r); ok && r.ScanErr == nil {
		t.Fatal("a header carrying a conversion's error is pushable")
	}
}

// A texture's PNG is made from the texture as it is now; a replaced
// texture is ESTALE and one that does not decode a conversion's failure.
func TestTexturePNG(t *testing.T) {
	src := t.TempDir()
	s, _ := newStore(t, src, t.TempDir())
	p, id, tga := writeTGA(t, src)
	ctx := context.Background()
	b, st, v, err := s.TexturePNG(ctx, p, id.File)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) || st == nil || !v.Same(source.Version{Ident: id}) {
		t.Fatalf("PNG of a texture: %q…, %v", b[:min(8, len(b))], err)
	}
	if _, _, _, err := s.TexturePNG(ctx, p, source.File{}); !errors.Is(err, syscall.ESTALE) {
		t.Fatalf("another file's PNG: %v, want ESTALE", err)
	}
	// Packed: the entry's stat versions it, its archive file its bytes.
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	if f, err := zw.Create("t/wood.tga"); err == nil {
		f.Write(tga)
	}
	zw.Close()
	if err := os.WriteFile(filepath.Join(src, "game.pak"), zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var est syscall.Stat_t
	pp := filepath.Join(src, "game.pak", "t", "wood.tga")
	if err := s.view.SysStat(pp, &est); err != nil {
		t.Fatal(err)
	}
	if pb, _, _, err := s.TexturePNG(ctx, pp, source.FromStat(&est).File); err != nil || !bytes.Equal(pb, b) {
		t.Fatalf("PNG of a packed texture: %d bytes, %v; loose %d", len(pb), err, len(b))
	}
	if err := os.WriteFile(p, []byte("not a texture"), 0o644); err != nil {
		t.Fatal(err)
	}
	id, _, _ = source.Stat(p)
	var ce *failures.ConvError
	if _, _, _, err := s.TexturePNG(ctx, p, id.File); !errors.As(err, &ce) {
		t.Fatalf("PNG of a broken texture: %v, want a ConvError", err)
	}
}

// A scan ahead scans a mesh once: memory holds it for the walker.
func TestScanAhead(t *testing.T) {
	src := t.TempDir()
	p := filepath.Join(src, "m.ply")
	writeGen(t, p, meshgen.GEM, 20, 1)
	s, _ := newStore(t, src, t.TempDir())
	m, v := meshOf(t, s, p)
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if !s.ScanAhead(ctx, p, &st, m.Format) {
		t.Fatal("a cold mesh was not scanned ahead")
	}
	if _, ok := s.cache.Peek(keyOf(m, v, OutScan)); !ok {
		t.Fatal("the scan ahead is not in memory")
	}
	if s.ScanAhead(ctx, p, &st, m.Format) {
		t.Fatal("a mesh scanned twice ahead")
	}
}

// writeTGA writes a 2×2 TGA, wood.tga, into dir: its path, identity and bytes.
func writeTGA(t *testing.T, dir string) (string, source.Ident, []byte) {
	t.Helper()
	p := filepath.Join(dir, "wood.tga")
	tga := []byte{0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0, 24, 0}
	tga = append(tga, bytes.Repeat([]byte{0x10, 0x80, 0xff}, 4)...)
	if err := os.WriteFile(p, tga, 0o644); err != nil {
		t.Fatal(err)
	}
	id, _, err := source.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, id, tga
}
