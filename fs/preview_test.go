package fs

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/internal/store"
)

// previewsDrawn counts the previews drawn (loads from the disk cache are
// not drawings).
func previewsDrawn(s Stats) int64 {
	var n int64
	for label, c := range s.Conversions {
		if strings.HasSuffix(label, "/"+store.OutPreview) {
			n += c
		}
	}
	return n
}

// Listing never draws a preview: walking a tree of many mesh folders,
// listing each (READDIRPLUS) and stat'ing every folder and every file but
// NAME.preview.png, .glb included, draws none; a stat of one preview
// draws that one alone, and its size is the bytes a read gets.
func TestListingDrawsNoPreview(t *testing.T) {
	const meshes = 200
	src := fakeTree(t, meshes)
	f, mnt := mountT(t, src, Config{})
	var folders, stats, previews int
	var aPreview string
	err := filepath.WalkDir(mnt, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".preview.png") {
			previews++
			aPreview = p
			return nil
		}
		if d.IsDir() && strings.HasSuffix(p, fakeExt) {
			folders++
		}
		if _, err := os.Lstat(p); err != nil {
			return err
		}
		stats++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st := f.Stats()
	t.Logf("%d mesh folders, %d stats, %d previews listed; conversions %v", folders, stats, previews, st.Conversions)
	if folders != meshes || previews != meshes {
		t.Fatalf("%d mesh folders and %d previews listed, want %d of each", folders, previews, meshes)
	}
	if n := previewsDrawn(st); n != 0 {
		t.Fatalf("listing and stat'ing the other files drew %d previews", n)
	}
	fi, err := os.Stat(aPreview)
	if err != nil {
		t.Fatal(err)
	}
	if n := previewsDrawn(f.Stats()); n != 1 {
		t.Fatalf("a stat of one preview drew %d", n)
	}
	b, err := os.ReadFile(aPreview)
	if err != nil || int64(len(b)) != fi.Size() || fi.Size() == 0 {
		t.Fatalf("read %d bytes (%v), stat said %d", len(b), err, fi.Size())
	}
}
