package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store/record"
)

// texturedMesh writes a GEM mesh whose material file names a texture into
// a new asset tree and returns the mesh's path.
func texturedMesh(t *testing.T) string {
	t.Helper()
	ply, err := os.ReadFile(filepath.Join("..", "..", "testdata", "gem", "eply_tangents_textures.ply"))
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	dir := filepath.Join(src, "resource", "entity", "a")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "body.ply")
	if err := os.WriteFile(p, ply, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "body.mtl"), []byte(`{material simple {diffuse "$/model/hull"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// reopen is a store over the same source and disk cache as s, as a new
// mount makes it: a new memory cache and a tracker that knows nothing yet.
func reopen(t *testing.T, s *Store, disk string) *Store {
	t.Helper()
	s.closeDisk()
	dc, err := OpenDiskCache(disk, 1<<30, record.CacheVersion("", outputs.DefaultLimits))
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Open(Config{CacheSize: 64 << 20, DiskCache: dc, Concurrency: 2, Events: &recHooks{}}, s.tree, &source.Tracker{}, s.log)
	if err != nil {
		t.Fatal(err)
	}
	s2.dc = dc
	t.Cleanup(func() {
		s2.Close()
		dc.Close()
	})
	return s2
}

// A remount finds what an earlier mount saved of a mesh that reads other
// files (its material file): its scan and its .glb come from the disk
// cache, converting and scanning nothing. (When the disk key digested the
// set the tracker knew at the time of each disk access, the scan was saved
// under a key naming the files it had just found and looked up, in the next
// mount, before any scan had found them: every remount scanned such a mesh
// again.) Once a file it reads changes, nothing saved before is served.
func TestRemountFindsMeshWithDeps(t *testing.T) {
	p := texturedMesh(t)
	disk := t.TempDir()
	ctx := context.Background()
	s, _ := newStore(t, filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(p)))), disk)
	m, v := meshOf(t, s, p)
	if e, err := s.geometry(ctx, m, v, OutGLB); err != nil || e.Err != nil {
		t.Fatalf("glb: %v %v", err, e.Err)
	}
	if len(s.versions.Set(p)) == 0 {
		t.Fatal("the scan found no file the mesh reads: the test needs one")
	}
	s2 := reopen(t, s, disk)
	m2, v2 := meshOf(t, s2, p)
	if _, err := s2.Scan(ctx, m2, v2); err != nil {
		t.Fatal(err)
	}
	if e, err := s2.geometry(ctx, m2, v2, OutGLB); err != nil || e.Err != nil {
		t.Fatalf("glb after the remount: %v %v", err, e.Err)
	}
	st := s2.cache.Stats()
	if n := st.Loads[Label(m2, OutScan)]; n != 0 {
		t.Errorf("the remount scanned the mesh %d times; its scan is in the disk cache", n)
	}
	if n := st.Loads[Label(m2, OutGLB)]; n != 0 {
		t.Errorf("the remount converted the mesh %d times; its .glb is in the disk cache", n)
	}
	// Its material file changes while nothing is mounted: the next mount
	// converts again (what the disk cache holds was made from the old one).
	mtl := filepath.Join(filepath.Dir(p), "body.mtl")
	if err := os.WriteFile(mtl, []byte(`{material simple {diffuse "$/model/other"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s3 := reopen(t, s2, disk)
	m3, v3 := meshOf(t, s3, p)
	if v3.Same(v2) {
		t.Fatal("a material file changed while unmounted: the same version")
	}
	if e, err := s3.geometry(ctx, m3, v3, OutGLB); err != nil || e.Err != nil {
		t.Fatalf("glb after the material changed: %v %v", err, e.Err)
	}
	if n := s3.cache.Stats().Loads[Label(m3, OutGLB)]; n != 1 {
		t.Errorf("%d conversions after the material file changed, want 1", n)
	}
}
