package vfs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWatched(t *testing.T) {
	src := t.TempDir()
	sub := filepath.Join(src, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	var w Watched[string]
	if _, ok := w.At(src); ok || len(w.All()) != 0 {
		t.Fatal("an empty Watched holds a folder")
	}
	root, child := &Folder{Abs: src}, &Folder{Abs: sub}
	child.Watched.Store(true)
	w.Add(root, "root")
	w.Add(child, "sub")
	if v, ok := w.At(sub); !ok || v != "sub" || len(w.All()) != 2 {
		t.Fatalf("At(sub) = %q, %v", v, ok)
	}
	// A change of a file in sub: sub's; of sub itself, still there: root's.
	if v, ok := w.Changed(filepath.Join(sub, "m.ply")); !ok || v != "sub" {
		t.Fatalf("change in sub: %q, %v", v, ok)
	}
	if v, ok := w.Changed(sub); !ok || v != "root" || !child.Watched.Load() {
		t.Fatalf("change of sub: %q, %v", v, ok)
	}
	os.Remove(sub)
	if v, ok := w.Changed(sub); !ok || v != "root" {
		t.Fatalf("sub removed: %q, %v", v, ok)
	}
	if _, ok := w.At(sub); ok || child.Watched.Load() {
		t.Fatal("a folder gone is still watched")
	}
	if _, ok := w.Changed(filepath.Join(src, "..", "elsewhere")); ok {
		t.Fatal("a change outside every watched folder found one")
	}
}
