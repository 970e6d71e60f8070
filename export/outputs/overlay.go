package outputs

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/meshfs/meshfs/internal/srcview"
	"github.com/meshfs/meshfs/internal/version"
)

// The game's view (overlay): an asset root (the mesh's own GEM root, the
// folder holding texture/ or texture.pak; the res or data folder above
// it; every Limits.AssetPaths root) that holds archives, files named
// *.pak or *.zip directly in it that are archives by their first bytes,
// is seen as the game sees it: its loose files merged with each archive's
// tree, as if unpacked into the root. A name beneath the root is looked
// for loose first, then in the archives from the last by name (byte-wise
// lexical order) to the first: loose files win over packed ones, later
// archives over earlier ones, as GEM loads its resource/*.pak in name
// order, each over the ones before. A file found in an archive is named
// by its path beneath the archive's (srcview): header.json shows
// ROOT/texture.pak/texture/..., and its version is the archive file's.
// Archives inside archives take no part.

// packs are the archives the folder root holds, in the order they are
// searched (the last by name first); nil for a folder inside an archive.
func packsOf(root string) []string {
	fi, read, err := view.Stat(root)
	if err != nil || !fi.IsDir() || read.Path != root {
		return nil
	}
	packCache.Lock()
	pl, ok := packCache.m[root]
	packCache.Unlock()
	if ok && pl.id.Same(read.Ident) {
		return pl.paths
	}
	ents, err := view.ReadDir(root)
	if err != nil {
		return nil
	}
	var paths []string
	for _, e := range ents {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if !e.Type().IsRegular() || ext != ".pak" && ext != ".zip" {
			continue
		}
		p := filepath.Join(root, e.Name())
		if f, err := view.Open(p); err == nil {
			if srcview.IsArchive(f) {
				paths = append(paths, p)
			}
			f.Close()
		}
	}
	slices.Reverse(paths)
	packCache.Lock()
	if packCache.m == nil || len(packCache.m) > 1024 {
		packCache.m = map[string]packList{}
	}
	packCache.m[root] = packList{read.Ident, paths}
	packCache.Unlock()
	return paths
}

// packCache keeps each asset root's archives for one version of the
// folder (a file added, removed or renamed in it changes its time).
var packCache struct {
	sync.Mutex
	m map[string]packList
}

type packList struct {
	id    version.Ident
	paths []string
}

// overlay is cands with, after each candidate beneath an asset root, the
// same name beneath each archive of that root (packsOf), noting which
// root each archive belongs to.
func (r *resolution) overlay(cands []candidate) []candidate {
	var out []candidate
	for _, c := range cands {
		out = append(out, c)
		if !slices.Contains(r.roots, c.root) && !r.extra[c.root] {
			continue
		}
		for _, p := range packsOf(c.root) {
			if r.packOf == nil {
				r.packOf = map[string]string{}
			}
			r.packOf[p] = c.root
			out = append(out, candidate{p, c.rel})
		}
	}
	return out
}

// overlayRoots is roots with each one's archives after it (packsOf).
func overlayRoots(roots []string) []string {
	var out []string
	for _, r := range roots {
		out = append(append(out, r), packsOf(r)...)
	}
	return out
}
