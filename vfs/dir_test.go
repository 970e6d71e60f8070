package vfs_test

import (
	"context"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/meshfs/meshfs/vfs"
)

// TestDir: the plain folder's tree lists sorted, with exact sizes, modes
// without write bits and links as links; follows no link (a name through
// one does not exist, a link cannot be opened); refuses invalid names;
// reads a file's bytes, and ErrStale once the file was rewritten.
func TestDir(t *testing.T) {
	root := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(s), 0o664); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o775); err != nil {
		t.Fatal(err)
	}
	write("b.txt", "bee")
	write("sub/a.txt", "hello")
	if err := os.Symlink("sub", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	d, err := vfs.Dir(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	infos, err := d.ReadDir(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range infos {
		names = append(names, i.Name)
	}
	if !slices.Equal(names, []string{"b.txt", "link", "sub"}) {
		t.Fatalf("ReadDir: %v", names)
	}
	if i := infos[0]; i.Size != 3 || i.Mode != 0o444 || i.Version == "" {
		t.Errorf("b.txt: size %d, mode %v, version %q", i.Size, i.Mode, i.Version)
	}
	if i := infos[1]; i.Mode.Type() != iofs.ModeSymlink {
		t.Errorf("link: mode %v", i.Mode)
	}
	if i := infos[2]; !i.IsDir() || i.Mode.Perm() != 0o555 {
		t.Errorf("sub: mode %v", i.Mode)
	}
	if i, err := d.Stat(ctx, "sub/a.txt"); err != nil || i.Size != 5 || i.Name != "a.txt" {
		t.Errorf("Stat sub/a.txt: %+v, %v", i, err)
	}
	if i, err := d.Stat(ctx, ""); err != nil || !i.IsDir() || i.Name != "" {
		t.Errorf("Stat of the root: %+v, %v", i, err)
	}
	for _, name := range []string{"link/a.txt", "b.txt/x", "nothing"} {
		if _, err := d.Stat(ctx, name); !errors.Is(err, iofs.ErrNotExist) {
			t.Errorf("Stat %s: %v, want ErrNotExist", name, err)
		}
		if _, err := d.Open(ctx, name); !errors.Is(err, iofs.ErrNotExist) {
			t.Errorf("Open %s: %v, want ErrNotExist", name, err)
		}
	}
	if _, err := d.Open(ctx, "link"); !errors.Is(err, iofs.ErrInvalid) {
		t.Errorf("Open of a link: %v, want ErrInvalid", err)
	}
	for _, name := range []string{"..", "../x", "sub/../b.txt", "./b.txt", "/b.txt", "sub/", "a\\b", "b.txt\x00"} {
		if _, err := d.Stat(ctx, name); !errors.Is(err, iofs.ErrInvalid) {
			t.Errorf("Stat %q: %v, want ErrInvalid", name, err)
		}
		if _, err := d.ReadDir(ctx, name); !errors.Is(err, iofs.ErrInvalid) {
			t.Errorf("ReadDir %q: %v, want ErrInvalid", name, err)
		}
	}
	f, err := d.Open(ctx, "sub/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 10)
	if n, _ := f.ReadAt(buf, 1); string(buf[:n]) != "ello" || f.Info().Size != 5 {
		t.Errorf("ReadAt: %q, size %d", buf[:n], f.Info().Size)
	}
	write("sub/a.txt", "HELLO, again")
	if _, err := f.ReadAt(buf, 0); !errors.Is(err, vfs.ErrStale) {
		t.Errorf("ReadAt after a rewrite: %v, want ErrStale", err)
	}
	if i, _ := d.Stat(ctx, "sub/a.txt"); i.Version == f.Info().Version {
		t.Errorf("the Version did not change with the bytes")
	}
}
