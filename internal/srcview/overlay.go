package srcview

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/meshfs/meshfs/internal/version"
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
// (internal/mirror).

// Layers are the folders whose trees the game's view of the folder root
// merges, in the order a name is looked for: root itself, then its
// archives (above). Just root for a folder inside an archive, one holding
// no archive, or no folder at all. Kept per version of the folder (a file
// added, removed or renamed in it changes its time).
func Layers(v View, root string) []string {
	fi, read, err := v.Stat(root)
	if err != nil || !fi.IsDir() || read.Path != root {
		return []string{root}
	}
	k := layerKey{v, root}
	layerCache.Lock()
	pl, ok := layerCache.m[k]
	layerCache.Unlock()
	if ok && pl.id.Same(read.Ident) {
		return pl.paths
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
	layerCache.Lock()
	if layerCache.m == nil || len(layerCache.m) > 1024 {
		layerCache.m = map[layerKey]layerList{}
	}
	layerCache.m[k] = layerList{read.Ident, paths}
	layerCache.Unlock()
	return paths
}

type layerKey struct {
	v    View
	root string
}

type layerList struct {
	id    version.Ident
	paths []string
}

var layerCache struct {
	sync.Mutex
	m map[layerKey]layerList
}
