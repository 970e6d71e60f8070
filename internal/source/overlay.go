package source

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// The game's view (overlay) of a folder holding archives: its loose files
// merged with each archive's tree, as if unpacked into the folder. A name
// beneath the folder is looked for loose first, then in the archives (the
// folder's files named *.pak or *.zip that are archives by their first
// bytes) from the last by name (byte-wise lexical order) to the first:
// loose files win over packed ones, later archives over earlier ones, as
// GEM loads its resource/*.pak in name order, each over the ones before.
// A file found in an archive is the file beneath the archive's path, so
// it is versioned by the archive file. Archives inside archives take no
// part. export/outputs resolves references beneath asset roots this way,
// and the mount's --overlay shows a resource/ or res/ folder so
// (vfs.Folder).

// Layers are the folders whose trees the game's view of the folder root
// merges, in the order a name is looked for: root itself, then its
// archives (above). Just root for a folder inside an archive, one holding
// no archive, or no folder at all. A *Packed view keeps them per version
// of the folder (a file added, removed or renamed in it changes its time).
func Layers(v View, root string) []string {
	fi, read, err := v.Stat(root)
	if err != nil || !fi.IsDir() || read.Path != root {
		return []string{root}
	}
	var kept *layerCache
	if p, ok := v.(*Packed); ok {
		kept = &p.layers
	}
	if paths, ok := kept.get(root, read.Ident); ok {
		return paths
	}
	ents, err := v.ReadDir(root)
	if err != nil {
		return []string{root}
	}
	var paths []string
	for _, e := range ents {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if !e.Type().IsRegular() || ext != ".pak" && ext != ".zip" {
			continue
		}
		p := filepath.Join(root, e.Name())
		if f, err := v.Open(p); err == nil {
			if IsArchive(f) {
				paths = append(paths, p)
			}
			f.Close()
		}
	}
	slices.Reverse(paths)
	paths = append([]string{root}, paths...)
	kept.put(root, read.Ident, paths)
	return paths
}

type layerList struct {
	id    Ident
	paths []string
}

// layerCache keeps the layers of up to 1024 folders, by path; past that it
// starts over. A nil *layerCache keeps nothing.
type layerCache struct {
	sync.Mutex
	m map[string]layerList
}

func (c *layerCache) get(root string, id Ident) ([]string, bool) {
	if c == nil {
		return nil, false
	}
	c.Lock()
	defer c.Unlock()
	pl, ok := c.m[root]
	return pl.paths, ok && pl.id.Same(id)
}

func (c *layerCache) put(root string, id Ident, paths []string) {
	if c == nil {
		return
	}
	c.Lock()
	defer c.Unlock()
	if c.m == nil || len(c.m) > 1024 {
		c.m = map[string]layerList{}
	}
	c.m[root] = layerList{id, paths}
}
