package fs

import (
	"maps"
	"path/filepath"
	"slices"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/kernelview"
)

// watchHandler is the mount's side of the watcher (package watch), which
// pushes source changes to the kernel. Folders are watched as the kernel
// first looks into them: the kernel can only cache what it has seen, and a
// mount of a huge tree stays instant.
type watchHandler struct{ f *FS }

func (h watchHandler) Failed(err error, lost bool) {
	h.f.n.WatchErrors.Add(1)
	if lost {
		// Events were lost: forget everything the kernel holds.
		h.f.log.Printf("meshfs: watcher: %v: invalidating every cached entry", err)
		h.f.invalidateAll()
	} else {
		h.f.log.Printf("meshfs: watcher: %v", err)
	}
}

// watchDir starts watching d's source folder, once.
func (f *FS) watchDir(d *dirNode) {
	if f.watch == nil || !d.dir.Watched.CompareAndSwap(false, true) || d.dir.SkipWatch() {
		return // an archive's folder changes with its file; a merged one: mirror.Folder.SkipWatch
	}
	f.dirs.Add(&d.dir, d)
	if err := f.watch.Add(d.dir.Abs); err != nil {
		f.n.WatchErrors.Add(1)
		d.dir.Unwatched.Store(true)
		f.once.Printf("watch-error", "meshfs: watching %s: %v (changes there show after %v; raise fs.inotify.max_user_watches)", d.dir.Abs, err, f.ttl.UnwatchedAttr())
	}
}

// Changed handles a change, appearance or removal of the source entry at
// path: the kernel forgets the name, and whatever it cached of the node.
func (h watchHandler) Changed(path string) {
	f := h.f
	f.dependentsChanged(path)
	d, ok := f.dirs.Changed(path)
	if !ok {
		return
	}
	names, dep := d.dir.Changed(filepath.Base(path)) // before the kernel is told
	for _, n := range names {
		f.invalidateName(d, n)
	}
	if f.noOpen() {
		// Under no_opendir the kernel keeps every listing: drop the
		// folder's (NotifyEntry alone leaves it).
		f.notifyContent(&d.Inode)
	}
	if dep {
		f.st.FolderChanged(d.dir.Abs)
		for n, ch := range d.Children() {
			if _, ok := ch.Operations().(*meshDir); ok {
				f.invalidateName(d, n)
			}
		}
	}
}

// invalidateName makes the kernel forget d/name and everything under it.
func (f *FS) invalidateName(d *dirNode, name string) {
	ch := d.GetChild(name)
	if ch != nil {
		f.invalidateNode(ch)
	}
	f.n.Notifications.Add(1)
	var st syscall.Stat_t
	if ch != nil && d.dir.Lstat(name, &st, d.dir.Now()) != nil {
		d.NotifyDelete(name, ch)
		d.RmChild(name)
		return
	}
	d.NotifyEntry(name)
}

// invalidateNode drops the kernel's attributes and pages of n and of every
// node below it. The outputs of the version before stay in memory until the
// budget needs the room: a node the kernel still holds for it is served it.
func (f *FS) invalidateNode(n *gofs.Inode) {
	var table []string
	switch ops := n.Operations().(type) {
	case *meshDir:
		table = ops.src.Outputs().Names()
	case *dirNode:
		// A folder's children have watches of their own.
		f.notifyContent(n)
		return
	}
	children := n.Children()
	held, negative := kernelview.DropOrder(slices.Collect(maps.Keys(children)), table, outputs.HeaderName)
	for _, name := range append(held, negative...) {
		if ch := children[name]; ch != nil {
			f.invalidateNode(ch)
		}
		f.n.Notifications.Add(1)
		n.NotifyEntry(name)
	}
	f.notifyContent(n)
}

func (f *FS) notifyContent(n *gofs.Inode) {
	f.n.Notifications.Add(1)
	n.NotifyContent(0, 0)
}

// invalidateAll forgets everything under every watched folder.
func (f *FS) invalidateAll() {
	f.st.FolderChanged("")
	for _, d := range f.dirs.All() {
		d.dir.Changes.Add(1)
		for name := range d.Children() {
			f.invalidateName(d, name)
		}
	}
}
