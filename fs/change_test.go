package fs

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshfs/meshfs/internal/meshgen"
)

// TestReadRightAfterChange: a reader that opens an output right after its
// source changed, before the kernel hears of it from the watcher, reads one
// version whole (the one the kernel holds the size of), never ESTALE.
func TestReadRightAfterChange(t *testing.T) {
	src := t.TempDir()
	data, err := meshgen.GEM(50_000, 0)
	if err != nil {
		t.Fatal(err)
	}
	sp := filepath.Join(src, "m.ply")
	if err := os.WriteFile(sp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, mnt := mountT(t, src, Config{})
	glb := filepath.Join(mnt, "m.ply", "m.glb")
	want, err := os.ReadFile(glb)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour)
	for i := range 40 {
		if err := os.Chtimes(sp, base, base.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(glb)
		if err != nil {
			t.Fatalf("read %d after a change: %v", i, err)
		}
		if string(got) != string(want) {
			t.Fatalf("read %d after a change: %d bytes, not the .glb of either version (%d)", i, len(got), len(want))
		}
	}
}
