package vfs

import (
	"path/filepath"
)

// Changes is a door's side of the source changes the tree's watcher sees
// (the mount's: what the kernel holds of them must go). It is told on the
// watcher's goroutine, after the tree has done its part (the store forgot
// what the change outdates, the folder its stats).
type Changes interface {
	// Changed is told of a change, appearance or removal of a source
	// entry: meshes are the meshes whose outputs are made from it; in is
	// the watched folder holding it (nil: none), names its entries the
	// change outdates (Folder.Changed) and dep whether the entry
	// is a companion of in's meshes (their versions changed).
	Changed(meshes []string, in *Folder, names []string, dep bool)
	// Failed is told of a watcher error; lost is set when events were
	// lost (every version is made again).
	Failed(err error, lost bool)
}

// watchHandler keeps the versions right when sources change (package
// watch): a changed file's dependents get new versions, a changed
// folder's stats are not reused, a changed companion makes its folder's
// meshes new versions. The door's Changes is told after.
type watchHandler struct{ t *FS }

// Watch starts watching source folder d, once (not an archive's: it
// changes with its file, whose folder is watched; Folder.SkipWatch),
// calling added first when it does: a door keeping its own node for d
// (the mount) registers it there before any event of d can come. An error
// leaves d unwatched (Folder.Unwatched). With no watcher it does
// nothing.
func (t *FS) Watch(d *Folder, added func()) error {
	if t.watch == nil || !d.Watched.CompareAndSwap(false, true) || d.SkipWatch() {
		return nil
	}
	t.watched.Add(d, d)
	if added != nil {
		added()
	}
	if err := t.watch.Add(d.Abs); err != nil {
		d.Unwatched.Store(true)
		return err
	}
	return nil
}

// Watching reports whether the tree watches its source.
func (t *FS) Watching() bool { return t.watch != nil }

// StartWatch lets the watcher report events, when Config.Changes made it
// wait (the mount: once mounted, its nodes can be notified).
func (t *FS) StartWatch() {
	if t.watch != nil {
		t.watch.Start()
	}
}

// watchFolder watches folder d (Watch), logging a failure once.
func (t *FS) watchFolder(d *Folder) {
	if err := t.Watch(d, nil); err != nil {
		t.once.Printf("watch-error", "meshfs: watching %s: %v (changes there are not seen; raise fs.inotify.max_user_watches)", d.Abs, err)
	}
}

// watchedFolder is the watched Folder at path, or nil.
func (t *FS) watchedFolder(path string) *Folder {
	d, _ := t.watched.At(path)
	return d
}

func (h watchHandler) Changed(path string) {
	t := h.t
	meshes := t.st.Changed(path, false)
	d, ok := t.watched.Changed(path)
	var names []string
	var dep bool
	if ok {
		if names, dep = d.Changed(filepath.Base(path)); dep {
			t.st.Changed(d.Abs, true)
		}
	}
	if t.changes != nil {
		t.changes.Changed(meshes, d, names, dep)
	}
}

func (h watchHandler) Failed(err error, lost bool) {
	t := h.t
	t.log.Printf("meshfs: watcher: %v", err)
	if lost {
		// Events were lost: every version is made again.
		t.st.Changed("", true)
		for _, d := range t.watched.All() {
			d.Changes.Add(1)
		}
	}
	if t.changes != nil {
		t.changes.Failed(err, lost)
	}
}
