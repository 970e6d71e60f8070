package fs

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/meshfs/meshfs/export/outputs"
)

// Dependencies: a mesh's outputs are made from the mesh file, its
// companions beside it, and the files its materials name (material files
// and textures, anywhere under the asset roots: outputs.HeaderDeps). The
// version of an output is the fingerprint of the mesh file with Gen, which
// counts changes of the others: the folder's companionGen plus the mesh's
// own dependency generation, bumped when the watcher sees a change of a
// file the mesh's last scan found it depends on. The disk cache's key
// hashes the identities of those files (depHash), since generations
// restart with every mount.
type depTracker struct {
	mu     sync.Mutex
	byFile map[string]map[string]bool // file → meshes depending on it
	deps   map[string][]outputs.Dep   // mesh → its files, as its last scan found them
	gen    map[string]uint64          // mesh → dependency generation
	dirs   map[string]bool            // folders watched for dependencies
}

// trackDeps records that mesh's outputs are made from deps, watching
// their folders.
func (f *FS) trackDeps(mesh string, deps []outputs.Dep) {
	t := &f.deps
	var watch []string
	t.mu.Lock()
	if t.byFile == nil {
		t.byFile, t.deps, t.gen, t.dirs = map[string]map[string]bool{}, map[string][]outputs.Dep{}, map[string]uint64{}, map[string]bool{}
	}
	for _, d := range t.deps[mesh] {
		delete(t.byFile[d.Path], mesh)
		if len(t.byFile[d.Path]) == 0 {
			delete(t.byFile, d.Path)
		}
	}
	changed := !sameFiles(t.deps[mesh], deps)
	if len(deps) == 0 {
		delete(t.deps, mesh)
	} else {
		t.deps[mesh] = deps
	}
	for _, d := range deps {
		if t.byFile[d.Path] == nil {
			t.byFile[d.Path] = map[string]bool{}
		}
		t.byFile[d.Path][mesh] = true
		if dir := filepath.Dir(d.Path); !t.dirs[dir] {
			t.dirs[dir] = true
			watch = append(watch, dir)
		}
	}
	t.mu.Unlock()
	if changed {
		// Its permissions are narrowed by other files now: no stat of
		// the folder taken before may be reused (sourceStat).
		f.dirsMu.Lock()
		d := f.dirs[filepath.Dir(mesh)]
		f.dirsMu.Unlock()
		if d != nil {
			d.changes.Add(1)
			// The kernel may hold attributes of the folder's files from
			// before: drop them (from another goroutine: this runs within
			// a request, which the kernel's notification may wait for).
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
	if f.watch == nil {
		return
	}
	for _, dir := range watch {
		if err := f.watch.w.Add(dir); err != nil {
			f.watchErrors.Add(1)
			f.logOnce("watch-deps:"+dir, "meshfs: watching %s, which holds textures or materials: %v (a change there is not seen)", dir, err)
		}
	}
}

// depGen is mesh's dependency generation.
func (f *FS) depGen(mesh string) uint64 {
	if f == nil {
		return 0
	}
	f.deps.mu.Lock()
	defer f.deps.mu.Unlock()
	return f.deps.gen[mesh]
}

// depHash hashes the identities of the files mesh's last scan found it
// depends on (0 for none).
func (f *FS) depHash(mesh string) uint64 {
	f.deps.mu.Lock()
	deps := f.deps.deps[mesh]
	f.deps.mu.Unlock()
	if len(deps) == 0 {
		return 0
	}
	h := sha256.New()
	for _, d := range deps {
		fmt.Fprintf(h, "%s\x00%d %d %d\n", d.Path, d.Ino, d.Size, d.ModTime.UnixNano())
	}
	b := h.Sum(nil)
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// depChanged bumps the generation of every mesh depending on the file at
// path and returns them.
func (f *FS) depChanged(path string) []string {
	t := &f.deps
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for mesh := range t.byFile[path] {
		t.gen[mesh]++
		out = append(out, mesh)
	}
	return out
}

// dependentsChanged makes the kernel and the cache forget the outputs of
// every mesh made from the file at path.
func (f *FS) dependentsChanged(path string) {
	for _, mesh := range f.depChanged(path) {
		f.dirsMu.Lock()
		d := f.dirs[filepath.Dir(mesh)]
		f.dirsMu.Unlock()
		f.cache.Invalidate(mesh)
		if d != nil {
			f.invalidateName(d, filepath.Base(mesh))
		}
	}
}

func sameFiles(a, b []outputs.Dep) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Path != b[i].Path {
			return false
		}
	}
	return true
}

// depPaths are the files mesh's last scan found it depends on.
func (f *FS) depPaths(mesh string) []string {
	if f == nil {
		return nil // a node made by a test without a file system
	}
	f.deps.mu.Lock()
	defer f.deps.mu.Unlock()
	var out []string
	for _, d := range f.deps.deps[mesh] {
		out = append(out, d.Path)
	}
	return out
}
