package fs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

// The first read of a .glb whose format scans and decodes in one pass
// (UNIGINE's blocked versions, GEM's .ply) makes that one pass, and everything the folder shows is what
// `convert` writes: header.json from the pass's scan, the .glb from its
// scene. UNIGINE and GEM fixtures, and the real UNIGINE files when ../shared/realdata is there.
func TestOnePassFirstRead(t *testing.T) {
	src := t.TempDir()
	var meshes []string
	add := func(dir string) {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			m, err := outputs.Open(p)
			if err != nil || m == nil || !m.CanScanDecode() {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(src, e.Name()), b)
			meshes = append(meshes, e.Name())
		}
	}
	add(filepath.Join(repoRoot(t), "testdata", "unigine"))
	add(filepath.Join(repoRoot(t), "testdata", "gem"))
	if dir, ok := decodetest.RealData(t, "unigine"); ok {
		add(dir)
	}
	if len(meshes) < 4 {
		t.Fatalf("%d one-pass meshes found", len(meshes))
	}
	f, mnt := mountT(t, src, Config{})
	onePass := 0
	for _, name := range meshes {
		m, _ := outputs.Open(filepath.Join(src, name))
		want := t.TempDir()
		convErr := vfstest.Convert(t, m.Path, &m.Limits, want)
		mdir := filepath.Join(mnt, name)
		glb := filepath.Join(mdir, m.GLBName())
		got, err := os.ReadFile(glb) // first: the glb, before anything scans
		if convErr != nil {
			if err == nil {
				t.Errorf("%s: convert fails (%v), the mount's glb reads", name, convErr)
			}
			continue
		}
		if _, _, ok := m.ScanDecode(context.Background()); ok {
			onePass++
		}
		if w, _ := os.ReadFile(filepath.Join(want, m.GLBName())); err != nil || !bytes.Equal(got, w) {
			t.Errorf("%s: glb %d bytes (%v), convert's %d", name, len(got), err, len(w))
		}
		for _, rel := range []string{outputs.HeaderName, m.OBJName()} {
			w, _ := os.ReadFile(filepath.Join(want, rel))
			if g, err := os.ReadFile(filepath.Join(mdir, rel)); err != nil || !bytes.Equal(g, w) {
				t.Errorf("%s: %s differs from convert's (%v)", name, rel, err)
			}
		}
		if n := len(names(t, filepath.Join(mdir, outputs.ChunksDir))); n == 0 {
			t.Errorf("%s: no chunks listed", name)
		}
	}
	if onePass == 0 {
		t.Fatal("no mesh is made in one pass outside the mount either: nothing tested")
	}
	s := f.Stats()
	if s.OnePass != int64(onePass) || totalScans(s) != int64(len(meshes)) {
		t.Fatalf("%d one-pass scans and %d scans for %d meshes (%d in one pass outside the mount): want one scan each, in one pass where the format makes one",
			s.OnePass, totalScans(s), len(meshes), onePass)
	}
}
