package fs

import (
	"path/filepath"
	"sync"

	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/fs/cache"
	"github.com/meshfs/meshfs/fs/diskcache"
	"github.com/meshfs/meshfs/internal/srcfile"
	"github.com/meshfs/meshfs/internal/version"
)

// Dependencies: a mesh's outputs are made from the mesh file, the
// companion and animation files of its folder (formats.IsDependency), and
// the files its materials name (material files and textures, anywhere
// under the asset roots: outputs.HeaderDeps). FS.versions (a
// version.Tracker) names, for each mesh, its folder and the files its last
// scan found; the watcher tells it of every changed path, and every mesh
// whose set names one gets a new Version (and its outputs are dropped).
// The disk cache's key holds the digest of the set's identities instead
// (diskKey), since the tracker's counts restart with every mount.

// trackDeps records that mesh's outputs are made from deps, watching
// their folders.
func (f *FS) trackDeps(mesh string, deps []outputs.Dep) {
	set := make(version.Set, len(deps))
	for i, d := range deps {
		set[i] = version.Read{Path: d.Path, Ident: d.Ident}
	}
	if f.versions.Track(mesh, set) {
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
	for _, d := range deps {
		dir := filepath.Dir(d.Path)
		if _, seen := f.depDirs.LoadOrStore(dir, true); seen {
			continue
		}
		if err := f.watch.w.Add(dir); err != nil {
			f.watchErrors.Add(1)
			f.logOnce("watch-deps:"+dir, "meshfs: watching %s, which holds textures or materials: %v (a change there is not seen)", dir, err)
		}
	}
}

// depPaths are the files mesh's last scan found it depends on.
func (f *FS) depPaths(mesh string) []string {
	if f == nil {
		return nil // a node made by a test without a file system
	}
	var out []string
	for _, r := range f.versions.Set(mesh) {
		out = append(out, r.Path)
	}
	return out
}

// dependentsChanged makes the kernel and the cache forget the outputs of
// every mesh whose set names path.
func (f *FS) dependentsChanged(path string) {
	for _, mesh := range f.versions.Changed(path) {
		f.dirsMu.Lock()
		d := f.dirs[filepath.Dir(mesh)]
		f.dirsMu.Unlock()
		f.cache.Invalidate(mesh)
		if d != nil {
			f.invalidateName(d, filepath.Base(mesh))
		}
	}
}

// diskKey is the disk cache key of a memory cache key: the same source
// Ident, with Deps the digest of the identities of every file the set
// names (the folder's dependency files, the files the last scan found).
func (f *FS) diskKey(k cache.Key) diskcache.Key {
	set := append(f.folderDeps.of(filepath.Dir(k.Path)), f.versions.Set(k.Path)...)
	return diskcache.Key{Path: k.Path, Version: version.Version{Ident: k.Version.Ident, Deps: set.Sum()}, Output: k.Output}
}

// folderDeps remembers the dependency files (formats.IsDependency) of each
// source folder as they are, until the watcher reports a change of one.
type folderDeps struct {
	mu  sync.Mutex
	gen map[string]uint64      // folder → changes reported
	set map[string]version.Set // folder → its dependency files, at gen
	at  map[string]uint64
}

// of returns the dependency files of the folder dir.
func (c *folderDeps) of(dir string) version.Set {
	c.mu.Lock()
	if c.gen == nil {
		c.gen, c.set, c.at = map[string]uint64{}, map[string]version.Set{}, map[string]uint64{}
	}
	gen := c.gen[dir]
	c.gen[dir] = gen
	if s, ok := c.set[dir]; ok && c.at[dir] == gen {
		c.mu.Unlock()
		return s
	}
	c.mu.Unlock()
	var s version.Set
	if ents, err := srcfile.ReadDir(dir); err == nil {
		names := make(map[string]bool, len(ents))
		for _, e := range ents {
			names[e.Name()] = true
		}
		siblings := func(n string) bool { return names[n] }
		for _, e := range ents {
			if !e.Type().IsRegular() || !formats.IsDependency(e.Name(), siblings) {
				continue
			}
			p := filepath.Join(dir, e.Name())
			if id, _, err := version.Stat(p); err == nil {
				s = append(s, version.Read{Path: p, Ident: id})
			}
		}
	}
	c.mu.Lock()
	if c.gen[dir] == gen {
		c.set[dir], c.at[dir] = s, gen
	}
	c.mu.Unlock()
	return s[:len(s):len(s)]
}

// changed forgets what of knows of dir (every folder: dir "").
func (c *folderDeps) changed(dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == nil {
		return
	}
	if dir == "" {
		for d := range c.gen {
			c.gen[d]++
		}
		clear(c.set)
		return
	}
	c.gen[dir]++
	delete(c.set, dir)
}
