package watch

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

type rec struct {
	mu    sync.Mutex
	paths []string
}

func (r *rec) Changed(p string) {
	r.mu.Lock()
	r.paths = append(r.paths, p)
	r.mu.Unlock()
}

func (r *rec) Failed(error, bool) {}

func (r *rec) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.paths...)
}

// Events of a watched folder reach the handler, only once started.
func TestWatcher(t *testing.T) {
	dir := t.TempDir()
	var r rec
	w, err := New(&r)
	if err != nil {
		t.Skip("no inotify:", err)
	}
	defer w.Close()
	if err := w.AddOnce(dir); err != nil {
		t.Fatal(err)
	}
	if err := w.AddOnce(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("watching a missing folder succeeded")
	}
	if err := w.AddOnce(filepath.Join(dir, "missing")); err != nil {
		t.Fatalf("the second AddOnce of a folder tried again: %v", err)
	}
	var failed []string
	w.AddFoldersOf([]string{filepath.Join(dir, "a.dds"), filepath.Join(dir, "gone", "b.dds"), filepath.Join(dir, "gone", "c.dds")},
		func(d string, err error) { failed = append(failed, d) })
	if len(failed) != 1 || failed[0] != filepath.Join(dir, "gone") {
		t.Fatalf("folders not watched: %v, want the missing one once", failed)
	}
	p := filepath.Join(dir, "a")
	os.WriteFile(p, []byte("x"), 0o644)
	time.Sleep(50 * time.Millisecond)
	if got := r.seen(); len(got) != 0 {
		t.Fatalf("events before Start: %v", got)
	}
	w.Start()
	deadline := time.Now().Add(5 * time.Second)
	for len(r.seen()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	got := r.seen()
	if len(got) == 0 || got[0] != p {
		t.Fatalf("events %v, want %s first", got, p)
	}
}
