package fs

import (
	"path/filepath"

	"github.com/meshfs/meshfs/internal/source"
)

// Dependencies: the files besides its own a mesh's outputs read, which
// the tree keeps (source.Tracker); the kernel forgets what it holds of
// every mesh whose set names a changed path.

// DepsFound records that mesh's outputs are made from deps (which the
// tracker was told; changed: not the last scan's), watching their folders.
func (h hooks) DepsFound(mesh string, deps source.Set, changed bool) {
	f := h.f
	f.tree.DepsFound(mesh, deps, changed, func() { f.n.WatchErrors.Add(1) })
	if !changed {
		return
	}
	// Its permissions are narrowed by other files now: the kernel may hold
	// attributes of the folder's files from before: drop them (from
	// another goroutine: this runs within a request, which the kernel's
	// notification may wait for).
	if d, ok := f.dirs.At(filepath.Dir(mesh)); ok {
		if n := d.GetChild(filepath.Base(mesh)); n != nil {
			go func() {
				f.notifyContent(n)
				for _, ch := range n.Children() {
					f.notifyContent(ch)
				}
			}()
		}
	}
}
