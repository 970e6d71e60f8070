package vfs_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/meshfs/meshfs/vfs"
)

// newTree is the tree of folder src, with caches of its own and no disk
// cache, closed at the end of the test.
func newTree(t testing.TB, src string) *vfs.FS {
	t.Helper()
	tr, err := vfs.New(vfs.Config{Source: src})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	return tr
}

// TestNames: invalid names never reach the source, missing ones and names
// below a file are not there, a folder is not opened.
func TestNames(t *testing.T) {
	tr := newTree(t, filepath.Join("..", "testdata", "orientation"))
	ctx := context.Background()
	for _, name := range []string{"..", "gem/../gem", "./gem", "/gem", "gem/", "gem//orient.ply", "gem\\orient.ply", "gem\x00"} {
		if _, err := tr.Stat(ctx, name); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Stat(%q) = %v, want ErrInvalid", name, err)
		}
	}
	for _, name := range []string{"nope", "gem/nope.ply", "gem/orient.ply/nope.glb", "gem/orient.ply/header.json/x", "gem/orient.ply/chunks/99_NOPE.bin", ".meshfs"} {
		if _, err := tr.Stat(ctx, name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat(%q) = %v, want ErrNotExist", name, err)
		}
		if _, err := tr.Open(ctx, name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open(%q) = %v, want ErrNotExist", name, err)
		}
	}
	if _, err := tr.Open(ctx, "gem/orient.ply"); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Open of a mesh folder = %v, want ErrInvalid", err)
	}
}

// TestSizes: every file's Stat size is the number of bytes Open reads, and
// a listing's size, when it tells one, is that size too.
func TestSizes(t *testing.T) {
	tr := newTree(t, filepath.Join("..", "testdata", "orientation"))
	ctx := context.Background()
	files := 0
	var walk func(dir string)
	walk = func(dir string) {
		list, err := tr.ReadDir(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list {
			p := join(dir, e.Name)
			if e.IsDir() {
				walk(p)
				continue
			}
			info, err := tr.Stat(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if e.Size != -1 && e.Size != info.Size {
				t.Errorf("%s: listed size %d, Stat %d", p, e.Size, info.Size)
			}
			f, err := tr.Open(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<40))
			f.Close()
			if err != nil || int64(len(b)) != info.Size || f.Info().Size != info.Size {
				t.Errorf("%s: read %d bytes (%v), Stat says %d, Open %d", p, len(b), err, info.Size, f.Info().Size)
			}
			if f.Info().Version != info.Version || info.Version == "" {
				t.Errorf("%s: Version %q at Stat, %q at Open", p, info.Version, f.Info().Version)
			}
			files++
		}
	}
	walk("")
	if files < 30 {
		t.Errorf("%d files in the tree, want the outputs of three meshes", files)
	}
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// TestOpenedVersion: an output opened keeps reading the version it was
// opened as after its source changes; a source file passed through and
// rewritten in place reads ErrStale; opened again, the new bytes.
func TestOpenedVersion(t *testing.T) {
	src := t.TempDir()
	ply, err := os.ReadFile(filepath.Join("..", "testdata", "orientation", "gem", "orient.ply"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile(filepath.Join("..", "testdata", "gem", "pm01_gem3.ply"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"m.ply": ply, "notes.txt": []byte("first\n")} {
		if err := os.WriteFile(filepath.Join(src, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tr := newTree(t, src)
	ctx := context.Background()
	glb, err := tr.Open(ctx, "m.ply/m.glb")
	if err != nil {
		t.Fatal(err)
	}
	defer glb.Close()
	notes, err := tr.Open(ctx, "notes.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer notes.Close()
	before := readAllOf(t, glb)

	if err := os.WriteFile(filepath.Join(src, "m.ply"), other, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "notes.txt"), []byte("second, longer\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if again := readAllOf(t, glb); !bytes.Equal(again, before) {
		t.Errorf("the opened .glb reads %d bytes after the change, %d before", len(again), len(before))
	}
	if _, err := notes.ReadAt(make([]byte, 4), 0); !errors.Is(err, vfs.ErrStale) {
		t.Errorf("a rewritten source file reads %v, want ErrStale", err)
	}
	info, err := tr.Stat(ctx, "m.ply/m.glb")
	if err != nil {
		t.Fatal(err)
	}
	if info.Version == glb.Info().Version {
		t.Errorf("Version %q unchanged by the source's change", info.Version)
	}
	fresh, err := tr.Open(ctx, "m.ply/m.glb")
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if b := readAllOf(t, fresh); bytes.Equal(b, before) || int64(len(b)) != info.Size {
		t.Errorf("opened again: %d bytes (Stat %d), the same as before: %v", len(b), info.Size, bytes.Equal(b, before))
	}
}

// TestConcurrentOpens: readers opening one output at once all read the
// same bytes (one conversion, shared).
func TestConcurrentOpens(t *testing.T) {
	tr := newTree(t, filepath.Join("..", "testdata", "orientation"))
	var wg sync.WaitGroup
	got := make([][]byte, 8)
	for i := range got {
		wg.Go(func() {
			f, err := tr.Open(context.Background(), "tfever/orient.msh/orient.glb")
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			got[i], _ = io.ReadAll(io.NewSectionReader(f, 0, f.Info().Size))
		})
	}
	wg.Wait()
	for i := range got {
		if len(got[i]) == 0 || !bytes.Equal(got[i], got[0]) {
			t.Fatalf("reader %d read %d bytes, reader 0 %d", i, len(got[i]), len(got[0]))
		}
	}
}

func readAllOf(t *testing.T, f vfs.File) []byte {
	t.Helper()
	b, err := io.ReadAll(io.NewSectionReader(f, 0, f.Info().Size))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTreesOwnArchives: two trees in one process over one source folder
// holding an archive keep their archive state apart: a listing read
// through one is charged to that tree's budget alone, and closing one
// leaves the other's listings, their charge and its reads in place.
func TestTreesOwnArchives(t *testing.T) {
	src := t.TempDir()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for i := range 50 {
		f, err := w.Create(fmt.Sprintf("dir/f%02d.txt", i))
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("packed"))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "pack.zip"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := vfs.New(vfs.Config{Source: src, NoWatch: true})
	if err != nil {
		t.Fatal(err)
	}
	b := newTree(t, src)
	ctx := context.Background()
	list := func(tr *vfs.FS, which string) {
		t.Helper()
		if ents, err := tr.ReadDir(ctx, "pack.zip/dir"); err != nil || len(ents) != 50 {
			t.Fatalf("tree %s lists %d entries of pack.zip/dir, %v", which, len(ents), err)
		}
	}
	list(a, "a")
	if a.View().Budget().Used() <= 0 {
		t.Fatal("a listing charged nothing to its tree's archive budget")
	}
	if n := b.View().Budget().Used(); n != 0 {
		t.Fatalf("a listing read through one tree is charged %d bytes in the other", n)
	}
	list(b, "b")
	charged, listed := b.View().Budget().Used(), b.View().Listed.Load()
	a.Close()
	if n := b.View().Budget().Used(); n != charged {
		t.Errorf("closing one tree changed the other's archive charge from %d to %d bytes", charged, n)
	}
	list(b, "b")
	if n := b.View().Listed.Load(); n != listed || n != 1 {
		t.Errorf("after the other tree closed, b listed the archive %d times (%d before)", n, listed)
	}
	if got := readAll(t, b, "pack.zip/dir/f07.txt"); string(got) != "packed" {
		t.Errorf("b reads %q after the other tree closed", got)
	}
}
