package vfs

import (
	"path/filepath"
	"sync"
	"syscall"
)

// Watched is the source folders the watcher watches, by path, each with
// what the mount keeps of it (its node). The zero Watched is empty.
type Watched[T any] struct {
	mu sync.Mutex
	m  map[string]watched[T]
}

type watched[T any] struct {
	f *Folder
	v T
}

// Add records folder f, kept as v, as watched.
func (w *Watched[T]) Add(f *Folder, v T) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]watched[T]{}
	}
	w.m[f.Abs] = watched[T]{f, v}
}

// At returns what is kept of the watched folder at path.
func (w *Watched[T]) At(path string) (T, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.m[path]
	return e.v, ok
}

// Changed returns what is kept of the watched folder holding path, where
// the watcher saw a change; path itself, when a watched folder gone now,
// is no longer watched (Folder.Watched cleared: a folder made there is
// watched when the kernel first looks into it).
func (w *Watched[T]) Changed(path string) (T, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if gone, ok := w.m[path]; ok {
		var st syscall.Stat_t
		if syscall.Stat(path, &st) != nil {
			delete(w.m, path)
			gone.f.Watched.Store(false)
		}
	}
	e, ok := w.m[filepath.Dir(path)]
	return e.v, ok
}

// All returns what is kept of every watched folder.
func (w *Watched[T]) All() []T {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]T, 0, len(w.m))
	for _, e := range w.m {
		out = append(out, e.v)
	}
	return out
}
