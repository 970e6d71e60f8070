package outputs

import (
	"slices"

	"github.com/meshfs/meshfs/internal/source"
)

// The game's view (overlay): an asset root (the engine's own above the
// mesh, decode.AssetRooter; every Limits.AssetPaths root) that holds
// archives is seen as the game sees it, by source.Layers's rule: loose
// files first, then the archives from the last by name to the first. A
// file found in an archive is named by its path beneath the archive's
// (internal/source): header.json shows ROOT/ARCHIVE/REL, and its version is the
// archive file's.

// packsOf are the archives the folder root holds, in the order they are
// searched (the last by name first), in the view v; nil for a folder
// inside an archive.
func packsOf(v source.View, root string) []string { return source.Layers(v, root)[1:] }

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
		for _, p := range packsOf(r.m.Limits.view(), c.root) {
			if r.packOf == nil {
				r.packOf = map[string]string{}
			}
			r.packOf[p] = c.root
			out = append(out, candidate{p, c.rel})
		}
	}
	return out
}

// overlayRoots is roots with each one's archives in the view v after it
// (source.Layers).
func overlayRoots(v source.View, roots []string) []string {
	var out []string
	for _, r := range roots {
		out = append(out, source.Layers(v, r)...)
	}
	return out
}
