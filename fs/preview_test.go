package fs

import (
	"bytes"
	"errors"
	"image/png"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/export/preview"
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

// Listing and stat'ing never draw a preview, cold and after a remount:
// walking a tree of many mesh folders, listing each (READDIRPLUS), running
// `ls -lR` and stat'ing every file, NAME.preview.png included, draws none;
// every preview's size is its fixed length. Reading a preview draws it
// alone: the bytes are that size (fstat of the open file says it too), a
// PNG image/png decodes. A remount on the same disk cache lists and stats
// the tree drawing none, and serves the same bytes from the disk cache.
func TestListingDrawsNoPreview(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		const meshes = 200
		src := fakeTree(t, meshes)
		dir := t.TempDir()
		want := preview.FixedLen(outputs.DefaultPreviewSize)
		f, mnt, stop := mountDisk(t, src, dir, false)
		previews := statAll(t, mnt)
		if len(previews) != meshes {
			t.Fatalf("%d previews listed, want %d", len(previews), meshes)
		}
		for p, size := range previews {
			if size != want {
				t.Fatalf("%s: %d bytes, want the fixed %d", p, size, want)
			}
		}
		if n := previewsDrawn(f.Stats()); n != 0 {
			t.Fatalf("listing and stat'ing every file drew %d previews", n)
		}
		first := map[string][]byte{}
		for p, size := range previews {
			b := readPreview(t, p, size)
			first[strings.TrimPrefix(p, mnt)] = b
			if n := previewsDrawn(f.Stats()); n != int64(len(first)) {
				t.Fatalf("%d previews read, %d drawn", len(first), n)
			}
		}
		stop()

		f, mnt, _ = mountDisk(t, src, dir, false)
		again := statAll(t, mnt)
		for p, size := range again {
			b := readPreview(t, p, size)
			if !bytes.Equal(b, first[strings.TrimPrefix(p, mnt)]) {
				t.Fatalf("%s: other bytes after a remount", p)
			}
		}
		if n := previewsDrawn(f.Stats()); n != 0 || len(again) != meshes {
			t.Fatalf("after a remount, listing, stat'ing and reading %d previews drew %d", len(again), n)
		}
	})
}

// statAll lists and stats every file under mnt (a walk, then `ls -lR` when
// there is one) and returns the previews' sizes by path.
func statAll(t *testing.T, mnt string) map[string]int64 {
	t.Helper()
	previews := map[string]int64{}
	err := filepath.WalkDir(mnt, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".preview.png") {
			previews[p] = fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if ls, err := exec.LookPath("ls"); err == nil {
		if out, err := exec.Command(ls, "-lR", mnt).CombinedOutput(); err != nil {
			t.Fatalf("ls -lR: %v\n%s", err, out)
		}
	}
	return previews
}

// readPreview reads the preview at p, stat'd at size, checking that the
// open file's fstat and the bytes read are that size and decode as a PNG.
func readPreview(t *testing.T, p string, size int64) []byte {
	t.Helper()
	fd, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	fi, err := fd.Stat()
	if err != nil || fi.Size() != size {
		t.Fatalf("%s: fstat of the open file %v (%v), stat said %d", p, fi.Size(), err, size)
	}
	b, err := io.ReadAll(fd)
	if err != nil || int64(len(b)) != size {
		t.Fatalf("%s: read %d bytes (%v), stat said %d", p, len(b), err, size)
	}
	if _, err := png.Decode(bytes.NewReader(b)); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return b
}

// A mesh that scans but does not decode: its folder lists the preview at
// its fixed length until a conversion fails (nothing is known before); the
// reader who draws it gets EIO, and from then on the folder is broken as
// when its .glb failed first: error.txt in, the preview out (not found).
func TestUndrawablePreview(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		write(t, filepath.Join(src, "bad"+fakeExt), fakeDecodeBroken())
		f, mnt := mountT(t, src, Config{})
		dir := filepath.Join(mnt, "bad"+fakeExt)
		p := filepath.Join(dir, "bad.preview.png")
		fi, err := os.Stat(p)
		if err != nil || fi.Size() != preview.FixedLen(outputs.DefaultPreviewSize) {
			t.Fatalf("stat of the undrawn preview: %v, %v", fi, err)
		}
		if n := previewsDrawn(f.Stats()); n != 0 {
			t.Fatalf("a stat drew %d previews", n)
		}
		b, err := os.ReadFile(p)
		if err != nil || int64(len(b)) != fi.Size() {
			t.Fatalf("read of an undrawable preview: %d bytes, %v; stat said %d", len(b), err, fi.Size())
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("the undrawable preview is no PNG: %v", err)
		}
		for y := range img.Bounds().Dy() {
			for x := range img.Bounds().Dx() {
				if _, _, _, a := img.At(x, y).RGBA(); a != 0 {
					t.Fatalf("the undrawable preview is not blank: alpha %d at %d,%d", a, x, y)
				}
			}
		}
		brokenShape(t, dir, "bad")
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("stat of the preview of a broken folder: %v, want ENOENT", err)
		}
		if ls := names(t, dir); slices.Contains(ls, "bad.preview.png") {
			t.Fatalf("a broken folder lists its preview: %v", ls)
		}
	})
}
