package store

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/internal/archive"
	"github.com/meshfs/meshfs/internal/source"
)

// TestListingKeptOnDisk: an archive listed through a view whose keeper is
// a store lists again, after the disk cache is closed and reopened (a
// remount), from the kept listing: no central directory read.
func TestListingKeptOnDisk(t *testing.T) {
	src, disk := t.TempDir(), t.TempDir()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	f, _ := w.Create("a/b.txt")
	f.Write([]byte("packed"))
	w.Close()
	pak := filepath.Join(src, "x.pak")
	if err := os.WriteFile(pak, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		s, _ := newStore(t, src, disk)
		v := source.New(archive.Limits{})
		v.SetKeeper(s.disk.Listings())
		if ents, err := v.ReadDir(pak + "/a"); err != nil || len(ents) != 1 || ents[0].Name() != "b.txt" {
			t.Fatalf("mount %d: %v %v", i, ents, err)
		}
		if listed := v.Listed.Load(); listed != int64(1-i) {
			t.Errorf("mount %d read the central directory %d times", i, listed)
		}
		s.closeDisk()
	}
}
