package fs

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/meshfs/meshfs/export/outputs"
)

// With handles, chunks/ and a mesh folder whose outputs are known are
// listed by the daemon once; the kernel keeps the listing until the source
// changes. (Under no_opendir the kernel keeps every listing: see
// TestNoOpenListingCached.)
func TestListingCachedUntilChange(t *testing.T) {
	src := t.TempDir()
	sp := filepath.Join(src, "m.fmesh")
	write(t, sp, fakeMesh(3, 1))
	f, mnt := mountT(t, src, Config{OpenHandles: true})
	dir := filepath.Join(mnt, "m.fmesh")
	chunks := filepath.Join(dir, outputs.ChunksDir)

	first := names(t, chunks)
	n := f.n.Listings.Load()
	if got := names(t, chunks); !slices.Equal(got, first) {
		t.Fatalf("second listing %v, first %v", got, first)
	}
	if d := f.n.Listings.Load() - n; d != 0 {
		t.Fatalf("second listing of chunks/ reached the daemon (%d listings)", d)
	}
	// The mesh folder: not final before its outputs converted...
	names(t, dir)
	n = f.n.Listings.Load()
	names(t, dir)
	if f.n.Listings.Load() == n {
		t.Fatal("a mesh folder's listing was kept before its outputs were known")
	}
	// ...and final once they did.
	if _, err := os.ReadFile(filepath.Join(dir, "m.glb")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(filepath.Join(dir, "m.obj")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(filepath.Join(dir, "m.preview.png")); err != nil {
		t.Fatal(err)
	}
	names(t, dir)
	n = f.n.Listings.Load()
	names(t, dir)
	if d := f.n.Listings.Load() - n; d != 0 {
		t.Fatalf("a converted mesh folder's listing reached the daemon again (%d)", d)
	}

	// The source becomes a mesh whose scan fails: chunks/ keeps only HEAD
	// and the folder lists error.txt, within 1 s, in place (same inode).
	fh, err := os.OpenFile(sp, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.Write(fakeScanBroken())
	fh.Close()
	if !waitFor(time.Second, func() bool {
		return slices.Equal(names(t, chunks), []string{"HEAD"}) && slices.Contains(names(t, dir), outputs.ErrorName)
	}) {
		t.Fatalf("after 1 s: chunks/ %v, folder %v", names(t, chunks), names(t, dir))
	}
}

// Closing an output sends no FLUSH round trip (under no_open, the first
// close asks once and is told ENOSYS).
func TestNoFlushOnClose(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		write(t, filepath.Join(src, "m.fmesh"), fakeMesh(3, 1))
		write(t, filepath.Join(src, "plain.txt"), []byte("plain"))
		f, mnt := mountT(t, src, Config{})
		for range 3 {
			for _, p := range []string{filepath.Join("m.fmesh", outputs.HeaderName), "plain.txt"} {
				if _, err := os.ReadFile(filepath.Join(mnt, p)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if n := f.n.Flushes.Load(); n != 0 {
			t.Fatalf("%d FLUSH requests reached outputs for 3 reads", n)
		}
		if n := f.raw.requests()["FLUSH"]; n > 1 {
			t.Fatalf("%d FLUSH requests for 6 reads", n)
		}
	})
}
