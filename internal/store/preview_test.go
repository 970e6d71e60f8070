package store

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/source"
)

// NAME.preview.png is an output of its own: listing the folder and sizing
// every file, the preview included, draws nothing (its size is the fixed
// length, after a scan); reading it draws it alone (no .glb is exported
// for it), at convert's bytes padded to that length, which memory and the
// disk cache keep compact; a remount serves it from the disk cache without
// drawing.
func TestPreviewOutput(t *testing.T) {
	p := texturedMesh(t)
	ctx := context.Background()
	disk := t.TempDir()
	s, _ := newStore(t, filepath.Dir(p), disk)
	m, v := meshOf(t, s, p)
	pv, ok := m.Entry(m.PreviewName())
	if !ok || !pv.Converted() {
		t.Fatalf("no converted %s in %v", m.PreviewName(), m.Names())
	}
	label := Label(m, OutPreview)
	loads := func(s *Store, label string) int64 { return s.cache.Stats().Loads[label] }

	files, _, _, _, err := s.Listing(ctx, m, v)
	if err != nil || !names(files)[m.PreviewName()] {
		t.Fatalf("listing %v: %v", names(files), err)
	}
	for _, e := range files {
		if e.Output != outputs.OutPreview {
			if _, err := sizeOf(ctx, s, m, v, e); err != nil && !e.Dir {
				t.Fatalf("%s: %v", e.Name, err)
			}
		}
	}
	size, scanned, ok, costly := s.CheapSize(ctx, m, v, pv, "", true)
	if !ok || costly || !scanned || size != m.PreviewLen() {
		t.Fatalf("an undrawn preview's size: %d (ok %v, costly %v, scanned %v), want %d", size, ok, costly, scanned, m.PreviewLen())
	}
	if n := loads(s, label); n != 0 {
		t.Fatalf("listing and sizing every file drew %d previews", n)
	}

	s2, _ := newStore(t, filepath.Dir(p), t.TempDir())
	m2, v2 := meshOf(t, s2, p)
	if size, err := sizeOf(ctx, s2, m2, v2, pv); err != nil || size != m.PreviewLen() {
		t.Fatalf("a fresh store's preview size %d (%v), want %d", size, err, m.PreviewLen())
	}
	if n := loads(s2, label); n != 0 {
		t.Fatalf("a stat of the preview drew %d previews", n)
	}
	got, _, err := s2.Content(ctx, m2, v2, pv, "")
	if err != nil || int64(len(got)) != size {
		t.Fatalf("content %d bytes (%v), stat said %d", len(got), err, size)
	}
	if n, glbs := loads(s2, label), loads(s2, Label(m2, OutGLB)); n != 1 || glbs != 0 {
		t.Fatalf("a read of the preview drew %d previews and exported %d .glb files", n, glbs)
	}
	compact, ok := s2.cache.Peek(keyOf(m2, v2, OutPreview))
	if !ok || compact.Err != nil || int64(len(compact.Part(0))) >= size {
		t.Fatalf("memory does not keep the compact preview (%v)", ok)
	}
	img, err := png.Decode(bytes.NewReader(got))
	if err != nil || img.Bounds().Dx() != outputs.DefaultPreviewSize || img.Bounds().Dy() != outputs.DefaultPreviewSize {
		t.Fatalf("preview: %v, %v", img.Bounds(), err)
	}
	want, err := m2.PreviewFile(ctx)
	if err == nil {
		want, err = m2.PaddedPreview(want)
	}
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the store's preview is not the mesh's own (PreviewFile: %v)", err)
	}

	// Drawn in s, saved to its disk cache: a remount knows its size and
	// serves its bytes without drawing.
	if _, err := s.geometry(ctx, m, v, OutPreview); err != nil {
		t.Fatal(err)
	}
	r := reopen(t, s, disk)
	m3, v3 := meshOf(t, r, p)
	if n, _, ok, _ := r.CheapSize(ctx, m3, v3, pv, "", false); !ok || n != size {
		t.Fatalf("remount: preview size %d (%v), want %d", n, ok, size)
	}
	b, _, err := r.Content(ctx, m3, v3, pv, "")
	if err != nil || !bytes.Equal(b, got) {
		t.Fatalf("remount: preview differs (%v)", err)
	}
	if n := loads(r, label); n != 0 {
		t.Fatalf("remount drew %d previews", n)
	}
	if n := loads(r, label+DiskSuffix); n != 1 {
		t.Fatalf("remount loaded %d previews from disk", n)
	}
}

// PreviewSize 0: no folder holds a preview.
func TestNoPreview(t *testing.T) {
	src := t.TempDir()
	b, err := meshgen.GEM(50, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(src, "m.ply")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := newStore(t, src, t.TempDir())
	s.limits.PreviewSize = 0
	m, v := meshOf(t, s, p)
	files, _, _, _, err := s.Listing(context.Background(), m, v)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Entry(m.PreviewName()); ok || names(files)[m.PreviewName()] {
		t.Fatalf("a preview with PreviewSize 0: %v", names(files))
	}
}

// sizeOf is the size a mount's fresh per-handle node tells of entry e
// (outnode.Output.Size): known without converting, else by making it.
func sizeOf(ctx context.Context, s *Store, m *outputs.Mesh, v source.Version, e outputs.Entry) (int64, error) {
	if size, _, ok, _ := s.CheapSize(ctx, m, v, e, "", false); ok {
		return size, nil
	}
	data, raw, err := s.Content(ctx, m, v, e, "")
	if err != nil {
		return 0, err
	}
	if raw != nil {
		return raw.Length, nil
	}
	return int64(len(data)), nil
}
