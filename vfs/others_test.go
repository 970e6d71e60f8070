package vfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestOthers: through Others, a name is reached only through folders that
// let others search, listed only where they may read and search, and read
// only where they may read; the modes are the tree's, the tree's own view
// is untouched.
func TestOthers(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string, mode os.FileMode, dir bool) {
		p := filepath.Join(root, rel)
		if dir {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(p, []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	mk("open", 0o755, true)
	mk("open/a.txt", 0o644, false)
	mk("open/own.txt", 0o640, false)
	mk("shut", 0o750, true)
	mk("shut/b.txt", 0o644, false)
	mk("noread", 0o711, true)
	mk("noread/c.txt", 0o644, false)
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	full, err := Dir(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	o := Others(full)
	for _, tc := range []struct {
		name       string
		stat, read bool
	}{
		{"open/a.txt", true, true},
		{"open/own.txt", true, false},
		{"shut", true, false},
		{"shut/b.txt", false, false},
		{"noread/c.txt", true, true},
	} {
		_, err := o.Stat(ctx, tc.name)
		if (err == nil) != tc.stat || (err != nil && !errors.Is(err, fs.ErrPermission)) {
			t.Errorf("Stat(%q) = %v, want allowed %v (else ErrPermission)", tc.name, err, tc.stat)
		}
		if info, err := full.Stat(ctx, tc.name); err != nil || info.IsDir() {
			continue // folders are not opened
		}
		f, err := o.Open(ctx, tc.name)
		if (err == nil) != tc.read || (err != nil && !errors.Is(err, fs.ErrPermission)) {
			t.Errorf("Open(%q) = %v, want allowed %v", tc.name, err, tc.read)
		}
		if err == nil {
			f.Close()
		}
		if f, err := full.Open(ctx, tc.name); err != nil {
			t.Errorf("the tree's own Open(%q): %v", tc.name, err)
		} else {
			f.Close()
		}
	}
	for _, tc := range []struct {
		name string
		list bool
	}{{"", true}, {"open", true}, {"shut", false}, {"noread", false}} {
		_, err := o.ReadDir(ctx, tc.name)
		if (err == nil) != tc.list {
			t.Errorf("ReadDir(%q) = %v, want allowed %v", tc.name, err, tc.list)
		}
	}
	if err := os.Chmod(root, 0o750); err != nil {
		t.Fatal(err)
	}
	if _, err := Others(full).Stat(ctx, "open/a.txt"); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("a root others may not search: Stat = %v, want ErrPermission", err)
	}
}
