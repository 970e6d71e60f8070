package fs

import (
	"bytes"
	"image/png"
	"os"
	"os/exec"
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

// Listing never draws a preview: a real `ls -lR` of a tree of many mesh
// folders (READDIRPLUS without handles; READDIR and a LOOKUP per name
// with them) draws none, though it lists and stats every preview; a stat
// of one preview alone (no listing of its folder) draws that one alone,
// with its exact size; and reading a preview the listing left undrawn
// (told a bound of its size) with cat gives a whole PNG, of the size a
// stat tells after.
func TestListingDrawsNoPreview(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		const meshes = 200
		src := fakeTree(t, meshes)
		f, mnt := mountT(t, src, Config{})

		alone := filepath.Join(mnt, "d19", "m199"+fakeExt, "m199.preview.png")
		fi, err := os.Stat(alone)
		if err != nil {
			t.Fatal(err)
		}
		if n := previewsDrawn(f.Stats()); n != 1 {
			t.Fatalf("a stat of one preview drew %d, want 1", n)
		}
		if b, err := os.ReadFile(alone); err != nil || int64(len(b)) != fi.Size() {
			t.Fatalf("%s: read %d bytes (%v), its stat said %d", alone, len(b), err, fi.Size())
		}

		out, err := exec.Command("ls", "-lR", mnt).Output()
		if err != nil {
			t.Fatalf("ls -lR: %v", err)
		}
		listed := strings.Count(string(out), ".preview.png")
		st := f.Stats()
		t.Logf("ls -lR: %d bytes, %d previews listed; conversions %v", len(out), listed, st.Conversions)
		if listed != meshes {
			t.Fatalf("ls -lR listed %d previews, want %d", listed, meshes)
		}
		if n := previewsDrawn(st); n != 1 {
			t.Fatalf("ls -lR drew %d previews (1 was drawn before it)", n-1)
		}

		p := filepath.Join(mnt, "d00", "m000"+fakeExt, "m000.preview.png")
		b, err := exec.Command("cat", p).Output()
		if err != nil {
			t.Fatalf("cat %s: %v", p, err)
		}
		if _, err := png.Decode(bytes.NewReader(b)); err != nil {
			t.Fatalf("cat %s: %d bytes, not a PNG: %v", p, len(b), err)
		}
		if n := previewsDrawn(f.Stats()); n != 2 {
			t.Fatalf("cat of an undrawn preview: %d drawn in all, want 2", n)
		}
		fi, err = os.Stat(p)
		if err != nil || fi.Size() != int64(len(b)) {
			t.Fatalf("%s: stat after cat said %d (%v), cat read %d", p, fi.Size(), err, len(b))
		}
	})
}
