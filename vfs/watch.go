package vfs

import (
	"path/filepath"

	"github.com/meshfs/meshfs/internal/mirror"
)

// watchHandler keeps the versions right when sources change (package
// watch): a changed file's dependents get new versions, a changed
// folder's stats are not reused, a changed companion makes its folder's
// meshes new versions.
type watchHandler struct{ t *FS }

// watchFolder starts watching folder d, once (not an archive's: it
// changes with its file, whose folder is watched; mirror.Folder.SkipWatch).
func (t *FS) watchFolder(d *mirror.Folder) {
	if t.watch == nil || !d.Watched.CompareAndSwap(false, true) || d.SkipWatch() {
		return
	}
	if err := t.watch.Add(d.Abs); err != nil {
		d.Unwatched.Store(true)
		t.once.Printf("watch-error", "meshfs: watching %s: %v (changes there are not seen; raise fs.inotify.max_user_watches)", d.Abs, err)
	}
}

// watchedFolder is the Folder met at path, or nil.
func (t *FS) watchedFolder(path string) *mirror.Folder {
	t.mu.Lock()
	defer t.mu.Unlock()
	if path == t.source {
		return t.root
	}
	if f := t.folders[path]; f != nil {
		return f.f
	}
	return nil
}

func (h watchHandler) Changed(path string) {
	t := h.t
	t.st.Changed(path)
	d := t.watchedFolder(filepath.Dir(path))
	if d == nil {
		return
	}
	if _, dep := d.Changed(filepath.Base(path)); dep {
		t.st.FolderChanged(d.Abs)
	}
}

func (h watchHandler) Failed(err error, lost bool) {
	t := h.t
	t.log.Printf("meshfs: watcher: %v", err)
	if !lost {
		return
	}
	// Events were lost: every version is made again.
	t.st.FolderChanged("")
	t.mu.Lock()
	defer t.mu.Unlock()
	t.root.Changes.Add(1)
	for _, f := range t.folders {
		f.f.Changes.Add(1)
	}
}
