package outputs

import (
	"sync"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/export/preview"
	"github.com/meshfs/meshfs/internal/source"
)

// Decoded parts are shared: a mesh file's scene, decoded and its
// materials resolved (with images), is kept once a conversion made it for
// a model, or for the file's own folder when a model names the file (a
// model's header found it: wanted), so that a part converted for its own
// folder is not decoded again for a model. A mount without models keeps
// nothing. An entry holds the files the
// scene was made from (the mesh, its companions, its material files and
// textures) with their identities, and is used only while every one of
// them stats the same. Kept scenes are never changed: a model scales a
// copy of a part's positions. The cache holds at most budget bytes of
// geometry (an estimate); past that it starts over.
type sceneCache struct {
	mu     sync.Mutex
	m      map[string]*sceneEntry
	bytes  int64
	budget int64
}

type sceneEntry struct {
	deps  []Dep
	set   source.Set // deps, for the staleness check
	scene *decode.Scene
	size  int64
}

// entry returns the entry kept for the mesh file at path, if every file
// it was made from is as it was. Its deps begin with the mesh file.
func (c *sceneCache) entry(path string) *sceneEntry {
	c.mu.Lock()
	e := c.m[path]
	c.mu.Unlock()
	if e == nil {
		return nil
	}
	if !e.set.Unchanged() {
		return nil
	}
	return e
}

// put keeps scene, made from the files deps, for the mesh file at path.
func (c *sceneCache) put(path string, deps []Dep, scene *decode.Scene) {
	n := sceneSize(scene)
	if n > c.budget/4 {
		return // one scene would crowd out the rest
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.bytes+n > c.budget {
		c.m, c.bytes = map[string]*sceneEntry{}, 0
	}
	if old := c.m[path]; old != nil {
		c.bytes -= old.size
	}
	set := make(source.Set, len(deps))
	for i, d := range deps {
		set[i] = source.Read(d)
	}
	c.m[path] = &sceneEntry{deps: deps, set: set, scene: scene, size: n}
	c.bytes += n
}

// sceneSize estimates the bytes of a scene's geometry.
func sceneSize(s *decode.Scene) int64 {
	c := s.Count()
	return int64(c.Vertices)*64 + int64(c.Triangles)*12 + 1024
}

// wantedSet are the mesh files that models name, as their headers found
// them (at most wantedMax; past that it starts over).
type wantedSet struct {
	sync.Mutex
	m map[string]bool
}

const wantedMax = 1 << 16

// Caches are the decodings that the conversions of one user of the
// package share (Limits.Caches): each texture version's decoded image and
// PNG, the scenes of the mesh files models place, and which files those
// are. A nil *Caches keeps nothing.
type Caches struct {
	images imageCache
	parts  sceneCache
	wanted wantedSet
	// drawn are the base-colour textures previews decoded from their
	// PNGs (the images' above: one slice per texture version).
	drawn *preview.TextureCache
}

// NewCaches returns empty caches that hold at most 512 MiB of decoded
// textures, 128 MiB of textures decoded for previews and 64 MiB of parts'
// geometry; past either, that cache starts
// over.
func NewCaches() *Caches {
	return &Caches{images: imageCache{budget: 512 << 20}, parts: sceneCache{budget: 64 << 20},
		drawn: preview.NewTextureCache(128 << 20)}
}

// previewTextures is the cache of textures previews decoded (nil: none).
func (c *Caches) previewTextures() *preview.TextureCache {
	if c == nil {
		return nil
	}
	return c.drawn
}

// image is the image kept for k, made (and kept) now if need be.
func (c *Caches) image(k imageKey, make func() (*decode.Image, error)) (*decode.Image, error) {
	if c == nil {
		return make()
	}
	return c.images.get(k, make)
}

// part is the scene kept for the mesh file at path (sceneCache.entry).
func (c *Caches) part(path string) *sceneEntry {
	if c == nil {
		return nil
	}
	return c.parts.entry(path)
}

func (c *Caches) markWanted(path string) {
	if c == nil {
		return
	}
	c.wanted.Lock()
	defer c.wanted.Unlock()
	if c.wanted.m == nil || len(c.wanted.m) >= wantedMax {
		c.wanted.m = map[string]bool{}
	}
	c.wanted.m[path] = true
}

func (c *Caches) isWanted(path string) bool {
	if c == nil {
		return false
	}
	c.wanted.Lock()
	defer c.wanted.Unlock()
	return c.wanted.m[path]
}

// ownSourceDeps is sourceDeps for a conversion of m for its own folder:
// nil (nothing to keep) unless a model names m.
func (m *Mesh) ownSourceDeps() []Dep {
	if !m.Limits.Caches.isWanted(m.Path) {
		return nil
	}
	return m.sourceDeps()
}

// sourceDeps stats m's sources before a decoding: a scene kept with them
// is never newer than they say (a change during the decoding makes the
// entry stale, not wrong). nil when one is missing or m is in memory.
func (m *Mesh) sourceDeps() []Dep {
	if m.mem != nil || m.IsModel() {
		return nil
	}
	srcs := m.Sources()
	deps := statDeps(m.Limits.view(), srcs)
	if len(deps) != len(srcs) {
		return nil
	}
	return deps
}

// keepScene keeps scene, decoded from the sources src (sourceDeps) and
// resolved reading the files tex, for the models that place m.
func (m *Mesh) keepScene(scene *decode.Scene, src, tex []Dep) {
	if src == nil || scene == nil || m.Limits.Caches == nil {
		return
	}
	m.Limits.Caches.parts.put(m.Path, append(append([]Dep(nil), src...), tex...), scene)
}
