package vfs_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
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
