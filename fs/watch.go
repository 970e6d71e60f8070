package fs

import (
	"maps"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/vfs"
)

// watchHandler is the mount's side of the tree's watcher (vfs.Changes):
// it makes the kernel forget what a change outdates, after the tree did
// its part. Folders are watched as the kernel first looks into them.
type watchHandler struct{ f *FS }

// Failed: when events were lost, the kernel forgets everything it holds.
func (h watchHandler) Failed(err error, lost bool) {
	h.f.n.WatchErrors.Add(1)
	if lost && h.f.mounted.Load() {
		h.f.invalidateAll()
	}
}

// watchDir starts watching d's source folder, once, d known to the
// handler first.
func (f *FS) watchDir(d *dirNode) {
	if err := f.tree.Watch(d.dir, func() { f.dirs.Add(d.dir, d) }); err != nil {
		f.n.WatchErrors.Add(1)
		f.once.Printf("watch-error", "meshfs: watching %s: %v (changes there show after %v; raise fs.inotify.max_user_watches)", d.dir.Abs, err, f.ttl.UnwatchedAttr())
	}
}

// Changed makes the kernel forget meshes (those made from the changed
// entry), names of folder in, and under dep every mesh of in.
func (h watchHandler) Changed(meshes []string, in *vfs.Folder, names []string, dep bool) {
	f := h.f
	if !f.mounted.Load() {
		return // a mount that failed, closing
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
		// Under no_opendir the kernel keeps every listing until told.
		f.notifyContent(&d.Inode)
	}
	if !dep {
		return
	}
	for n, ch := range d.Children() {
		if _, mesh := ch.Operations().(*meshDir); mesh {
			f.invalidateName(d, n)
		}
	}
}

// invalidateName makes the kernel forget d/name and everything under it,
// and the node itself when the name is gone.
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
// node below it (a source folder's children have watches of their own),
// in dropOrder. A version's outputs stay in memory until the budget needs
// the room, for the nodes the kernel still holds of it.
func (f *FS) invalidateNode(n *gofs.Inode) {
	var table []string
	switch ops := n.Operations().(type) {
	case *meshDir:
		if !ops.chunks {
			table = ops.src.Outputs().Names()
		}
	case *dirNode:
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

// dropOrder is the order in which the kernel is told to drop a folder's
// names: held, the names it holds nodes of, with last (header.json, what
// a walker greps) after the others, so a reader who sees the new one finds
// the rest dropped already; then negative, the names of the folder's
// table it holds no node of but may hold a negative entry of.
func dropOrder(children, table []string, last string) (held, negative []string) {
	held = slices.DeleteFunc(slices.Clone(children), func(n string) bool { return n == last })
	if len(held) < len(children) {
		held = append(held, last)
	}
	negative = slices.DeleteFunc(slices.Clone(table), func(n string) bool { return slices.Contains(children, n) })
	return held, negative
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

// notifyWait bounds how long a request waits for a notification it sent.
const notifyWait = 100 * time.Millisecond

// beside runs first, then rest, on a goroutine of their own, and returns
// once first has run or notifyWait has passed: a notification sent from
// within a request may wait for a lock that request holds.
func beside(first, rest func()) {
	done := make(chan struct{})
	go func() {
		first()
		close(done)
		rest()
	}()
	select {
	case <-done:
	case <-time.After(notifyWait):
	}
}
