package fs

import (
	"maps"
	"path/filepath"
	"slices"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/vfs"
)

// watchHandler is the mount's side of the tree's watcher (vfs.Changes),
// which pushes source changes to the kernel. Folders are watched as the
// kernel first looks into them: the kernel can only cache what it has
// seen, and a mount of a huge tree stays instant.
type watchHandler struct{ f *FS }

// Failed: when events were lost, the kernel forgets everything it holds.
func (h watchHandler) Failed(err error, lost bool) {
	h.f.n.WatchErrors.Add(1)
	if lost && h.f.mounted.Load() {
		h.f.invalidateAll()
	}
}

// watchDir starts watching d's source folder, once (vfs.FS.Watch), d
// known to the watcher's handler first.
func (f *FS) watchDir(d *dirNode) {
	if err := f.tree.Watch(d.dir, func() { f.dirs.Add(d.dir, d) }); err != nil {
		f.n.WatchErrors.Add(1)
		f.once.Printf("watch-error", "meshfs: watching %s: %v (changes there show after %v; raise fs.inotify.max_user_watches)", d.dir.Abs, err, f.ttl.UnwatchedAttr())
	}
}

// Changed makes the kernel forget what a change outdates (the tree has
// done its part): the outputs of the meshes made from the entry, the names
// of its folder in that names, with whatever it cached of their nodes, and
// under dep the folder's meshes.
func (h watchHandler) Changed(meshes []string, in *vfs.Folder, names []string, dep bool) {
	f := h.f
	if !f.mounted.Load() {
		return // a mount that failed, closing: nothing to notify
	}
	for _, mesh := range meshes {
		if d, ok := f.dirs.At(filepath.Dir(mesh)); ok {
			f.invalidateName(d, filepath.Base(mesh))
		}
	}
	if in == nil {
		return
	}
	d, ok := f.dirs.At(in.Abs)
	if !ok || d.dir != in {
		return
	}
	for _, n := range names {
		f.invalidateName(d, n)
	}
	if f.noOpen() {
		// Under no_opendir the kernel keeps every listing: drop the
		// folder's (NotifyEntry alone leaves it).
		f.notifyContent(&d.Inode)
	}
	if dep {
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
		if !ops.chunks {
			table = ops.src.Outputs().Names()
		}
	case *dirNode:
		// A folder's children have watches of their own.
		f.notifyContent(n)
		return
	}
	children := n.Children()
	held, negative := dropOrder(slices.Collect(maps.Keys(children)), table, outputs.HeaderName)
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

// invalidateAll makes the kernel forget everything under every watched
// folder.
func (f *FS) invalidateAll() {
	for _, d := range f.dirs.All() {
		for name := range d.Children() {
			f.invalidateName(d, name)
		}
	}
}
