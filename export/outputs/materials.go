package outputs

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/texture"
	"github.com/meshfs/meshfs/internal/source"
)

// Materials: a scene's materials name material files and textures; the
// material rules of the mesh's engine (its format's
// decode.MaterialResolver, in the engine's package) turn those names into
// files and the files into decode.Material's neutral fields (images, alpha
// mode), so that exporters know nothing of the source's formats. A pass
// (resolution) is the rules' decode.MaterialFiles: every file they read
// goes through it, and is a Dep of the output. A name that resolves to no
// file leaves its material named and untextured and is listed in
// header.json under "unresolved" with the paths tried: nothing fails.
//
// Every file is opened beneath a root (openBeneath): the mesh's folder for
// names given relative to it, an asset root for names given relative to
// one. The asset root is the engine's (decode.AssetRooter), found by
// walking up from the mesh's folder, never above Mesh.Tree;
// Limits.AssetPaths are searched after it, as the games search the base
// game after a mod.
//
// Paths in header.json are slash-separated and relative to the mesh's
// folder when they lie in its tree (they then work inside the mount too),
// absolute under an AssetPaths root.

// openBeneath opens the regular file rel (slash-separated, local) beneath
// the folder root through the view v (internal/source): no link out of root
// followed, no FIFO waited on, an archive's entries beneath its path.
func openBeneath(v source.View, root, rel string) (source.Handle, error) {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return nil, fmt.Errorf("%q is not a path beneath %s", rel, root)
	}
	return v.OpenBeneath(root, rel)
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && filepath.IsLocal(rel) || rel == "."
}

// Dep is one file a conversion read, with the identity it had then: a
// change of any of them makes the output stale.
type Dep struct {
	Path string
	source.Ident
}

func depOf(p string, fi os.FileInfo) Dep { return Dep{Path: p, Ident: source.Of(fi)} }

// fileDep is the dep of the open file f: the file itself, or the archive
// an entry is read from (internal/source's rule), so that the watcher and
// source.Set see the file that changes.
func fileDep(f source.Handle) Dep { return Dep(f.Version()) }

// resolution is one resolving pass over a scene's materials.
type resolution struct {
	m      *Mesh
	dir    string   // the mesh's folder
	roots  []string // asset roots: the mesh's own (if any), then AssetPaths
	own    int      // how many of roots lie in the mesh's tree (0 or 1)
	images bool     // decode images (a conversion) or only find files (header.json)
	deps   []Dep
	seen   map[string]bool // deps by path
	// idents are the identities of the files read, by path: an entry's
	// is its archive's (fileDep).
	idents  map[string]source.Ident
	decoded map[string]*decode.Image
	// orm are the images repacked (Repack), by source image and kind.
	orm map[repackKey]*decode.Image
	// versions are the texture versions the pass's decoded pixels and
	// repacks were made from (imageVersion), so that what is made of
	// them is kept once per version in Limits.Caches.
	versions map[*decode.Image]imageVersion
	// extra are asset roots besides roots (a model's: refs); packOf the
	// root each archive of the overlay belongs to (overlay.go).
	extra  map[string]bool
	packOf map[string]string
	// project is the index of the mesh's project (project.go), looked up
	// once a pass: projectDone.
	project     decode.ProjectIndex
	projectDone bool
	// meshMats are the materials the project gives the mesh's surfaces
	// (decode.MeshMaterials), asked once a pass: meshMatsDone.
	meshMats     map[string]string
	meshMatsBy   string
	meshMatsDone bool
	// ctx bounds the decoding of images (nil: none); pixels counts the
	// pixels of the images of this conversion (a model's parts share it),
	// against Limits.MaxTexturePixelsTotal.
	ctx    context.Context
	pixels *int64
}

// withImages makes r decode images within ctx, counting their pixels in
// pixels (a conversion's count).
func (r *resolution) withImages(ctx context.Context, pixels *int64) *resolution {
	r.images, r.ctx, r.pixels = true, ctx, pixels
	return r
}

// newResolution is a pass over m's materials: its asset roots are its
// engine's own above it (decode.AssetRooter), then Limits.AssetPaths.
func (m *Mesh) newResolution(images bool) *resolution {
	r := &resolution{m: m, dir: filepath.Dir(m.Path), images: images, seen: map[string]bool{}, decoded: map[string]*decode.Image{}}
	if root := m.assetRoot(); root != "" {
		r.roots, r.own = append(r.roots, root), 1
	}
	for _, p := range m.Limits.AssetPaths {
		// Resolved once: files are opened beneath it following no link.
		if abs, err := filepath.Abs(p); err == nil {
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				r.roots = append(r.roots, real)
			}
		}
	}
	return r
}

// assetRoot is the asset root of m's engine above its file (within
// Mesh.Tree), or "" when it has none.
func (m *Mesh) assetRoot() string {
	ar, ok := m.Format.(decode.AssetRooter)
	if !ok || m.mem != nil {
		return ""
	}
	root, _ := ar.AssetRoot(filepath.Dir(m.Path), m.Tree, viewFiles{m.Limits.view()})
	return root
}

// show is how header.json names the file rel under root.
func (r *resolution) show(root, rel string) string {
	p := filepath.Join(root, filepath.FromSlash(rel))
	if rp, err := filepath.Rel(r.dir, p); err == nil && (r.inTree(root)) {
		return filepath.ToSlash(rp)
	}
	return filepath.ToSlash(p)
}

func (r *resolution) inTree(root string) bool {
	if owner, ok := r.packOf[root]; ok {
		root = owner
	}
	return root == r.dir || r.own == 1 && root == r.roots[0]
}

// candidate is a file to try: rel beneath root (a decode.FileRef).
type candidate struct{ root, rel string }

func (c candidate) ref() decode.FileRef { return decode.FileRef{Root: c.root, Rel: c.rel} }

// read returns the contents of the first candidate that opens (at most
// max bytes), where it was found, and every candidate as header.json
// names them. With body false it only opens the file: b is then empty,
// not nil.
func (r *resolution) read(cands []candidate, max int64, body bool) (b []byte, found candidate, tried []string, err error) {
	err = os.ErrNotExist
	for _, c := range r.overlay(cands) {
		tried = append(tried, r.show(c.root, c.rel))
		if r.m.mem != nil {
			mb, ok := r.m.mem[path.Base(c.rel)]
			if !ok || c.root != r.dir || path.Base(c.rel) != c.rel {
				continue
			}
			return mb, c, tried, nil
		}
		var f source.Handle
		f, err = openBeneath(r.m.Limits.view(), c.root, c.rel)
		if err != nil {
			continue
		}
		p := filepath.Join(c.root, filepath.FromSlash(c.rel))
		if d := fileDep(f); !r.seen[d.Path] {
			r.seen[d.Path] = true
			r.deps = append(r.deps, d)
		}
		if r.idents == nil {
			r.idents = map[string]source.Ident{}
		}
		r.idents[p] = f.Version().Ident
		if !body {
			f.Close()
			return []byte{}, c, tried, nil
		}
		if max > 0 && f.Size() > max {
			f.Close()
			return nil, c, tried, fmt.Errorf("%s: %d bytes, more than the %d a material file or texture may have", r.show(c.root, c.rel), f.Size(), max)
		}
		b = make([]byte, f.Size())
		_, err = io.ReadFull(io.NewSectionReader(f, 0, f.Size()), b)
		f.Close()
		if err != nil {
			return nil, c, tried, fmt.Errorf("%s: %w", r.show(c.root, c.rel), err)
		}
		return b, c, tried, nil
	}
	return nil, candidate{}, tried, err
}

// texture resolves one texture name through cands; with images it decodes
// the file (once per pass) when an output embeds the slot (used): into
// pixels when the slot repacks or rebuilds them (pixels), else into the
// PNG the .glb embeds as it is. A slot no output uses is only found, as
// for header.json.
func (r *resolution) texture(slotName, stored string, cands []candidate, pixels, used bool) (decode.TextureSlot, *decode.Image, candidate) {
	s := decode.TextureSlot{Slot: slotName, Name: stored}
	images := r.images && used
	b, c, tried, err := r.read(cands, r.m.Limits.MaxSourceSize, images)
	if b == nil {
		s.Tried = tried
		if err != nil && !os.IsNotExist(err) && !strings.Contains(err.Error(), "no such file") {
			s.Err = err.Error()
		}
		return s, nil, c
	}
	s.Path = r.show(c.root, c.rel)
	full := filepath.Join(c.root, filepath.FromSlash(c.rel))
	key := full // what this pass decoded: a path's PNG, or its pixels
	if pixels {
		key += "\x00pixels"
	}
	if img, ok := r.decoded[key]; ok {
		return s, img, c
	}
	// The mount shows the texture as NAME.EXT.png beside it, and the
	// exported files one folder down (in the mesh's folder); a texture
	// outside the tree is referenced as it is.
	ref := full
	if r.inTree(c.root) {
		ref = "../" + s.Path + ".png"
	}
	img := &decode.Image{Name: filepath.Base(full) + PNGSuffix, Ref: ref}
	if !images && r.images {
		return s, img, c // not kept: a used slot of the same file decodes it
	}
	if images {
		// Files are shared by their identity (Dep); an in-memory mesh's
		// have none, so they are decoded for this pass alone.
		var dep *Dep
		if id, ok := r.idents[full]; ok {
			dep = &Dep{Path: full, Ident: id}
		}
		if err := r.chargePixels(full, b, img); err != nil {
			s.Err = err.Error()
			return s, nil, c
		}
		if pixels {
			img.Pixels, err = texturePixels(r.ctx, full, b, dep, r.m.Limits)
			if err == nil && dep != nil {
				r.version(img, imageVersion{*dep, ""})
			}
		} else {
			img.PNG, err = texturePNG(r.ctx, full, b, dep, r.m.Limits)
		}
		if err != nil {
			s.Err = err.Error()
			return s, nil, c
		}
	}
	r.decoded[key] = img
	return s, img, c
}

// chargePixels counts the pixels the texture file full (bytes b) decodes
// to in the conversion's count, failing when they are over
// Limits.MaxTexturePixels or make the count pass MaxTexturePixelsTotal,
// and notes on img a downscaled one. The count is from the file's header,
// so a texture whose PNG is kept already counts as one decoded.
func (r *resolution) chargePixels(full string, b []byte, img *decode.Image) error {
	l := r.m.Limits
	cfg, err := texture.ReadConfig(full, bytes.NewReader(b), int64(len(b)), l.textureOptions())
	if err != nil {
		return l.textureError(err)
	}
	if img.Note = cfg.Downscale(); img.Note != "" {
		img.Note += fmt.Sprintf(": its top level is over the %s limit of %d pixels", FlagMaxTexturePixels, l.MaxTexturePixels)
	}
	if r.pixels == nil {
		return nil
	}
	n := int64(cfg.Size.X) * int64(cfg.Size.Y)
	if max := l.MaxTexturePixelsTotal; max > 0 && *r.pixels+n > max {
		return limitError(full, "", "", "its %d×%d pixels would bring the conversion's textures to %d pixels, more than the %s limit of %d",
			cfg.Size.X, cfg.Size.Y, *r.pixels+n, FlagMaxTexturePixelsTotal, max)
	}
	*r.pixels += n
	return nil
}

// decodeTexture decodes the texture file full (bytes b) within limits
// until ctx ends (nil: no end).
func decodeTexture(ctx context.Context, full string, b []byte, l Limits) (*texture.Image, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	im, err := texture.DecodeContext(ctx, full, bytes.NewReader(b), int64(len(b)), l.textureOptions())
	return im, l.textureError(err)
}

// texturePixels decodes the texture file full (bytes b), shared by file
// version dep (nil: decoded for the caller alone).
func texturePixels(ctx context.Context, full string, b []byte, dep *Dep, l Limits) (*image.NRGBA, error) {
	decodeIt := func() (*decode.Image, error) {
		im, err := decodeTexture(ctx, full, b, l)
		if err != nil {
			return nil, err
		}
		return &decode.Image{Pixels: im.NRGBA}, nil
	}
	var img *decode.Image
	var err error
	if dep == nil {
		img, err = decodeIt()
	} else {
		img, err = l.Caches.image(imageKey{Dep: *dep, maxPixels: l.MaxTexturePixels}, decodeIt)
	}
	if err != nil {
		return nil, err
	}
	return img.Pixels, nil
}

// texturePNG returns the PNG of the texture file full (bytes b): kept by
// l.Textures for file version dep, made once per version (nil dep: made
// for the caller alone; nil l.Textures: kept in this process's memory).
func texturePNG(ctx context.Context, full string, b []byte, dep *Dep, l Limits) ([]byte, error) {
	mk := func() ([]byte, error) {
		im, err := decodeTexture(ctx, full, b, l)
		if err != nil {
			return nil, err
		}
		return texture.EncodePNG(im)
	}
	ts := l.Textures
	switch {
	case dep == nil:
		return mk()
	case ts == nil:
		ts = memTextures{l.MaxTexturePixels, l.Caches}
	}
	return ts.PNG(*dep, mk)
}

// imageKey is one kept image of a texture file version: its PNG, or its
// pixels, decoded within a Limits.MaxTexturePixels, as the file gives
// them or as made of them (made: imageVersion's kind).
type imageKey struct {
	Dep
	png       bool
	maxPixels int64
	made      string
}

// imageVersion is what a pass's image was made of: the texture file
// version's pixels, repacked by kind (Repack's; "" as decoded).
type imageVersion struct {
	Dep
	kind string
}

// version notes that img was made of v.
func (r *resolution) version(img *decode.Image, v imageVersion) {
	if r.versions == nil {
		r.versions = map[*decode.Image]imageVersion{}
	}
	r.versions[img] = v
}

// imageCache keeps decoded textures by file identity, so that every mesh
// using a texture shares one decoding of each of its versions. It holds at
// most budget bytes of pixels and PNG; past that it starts over.
type imageCache struct {
	mu     sync.Mutex
	m      map[imageKey]*decode.Image
	bytes  int64
	budget int64
}

func (c *imageCache) get(k imageKey, make func() (*decode.Image, error)) (*decode.Image, error) {
	c.mu.Lock()
	img, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return img, nil
	}
	img, err := make()
	if err != nil {
		return nil, err
	}
	n := int64(len(img.PNG))
	if img.Pixels != nil {
		n += int64(len(img.Pixels.Pix))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || c.bytes+n > c.budget {
		c.m, c.bytes = map[imageKey]*decode.Image{}, 0
	}
	if old, ok := c.m[k]; ok {
		return old, nil
	}
	c.m[k] = img
	c.bytes += n
	return img, nil
}

// memTextures keeps PNGs in the images cache of caches: Textures without
// a store, for limits of this MaxTexturePixels.
type memTextures struct {
	maxPixels int64
	caches    *Caches
}

func (mt memTextures) PNG(d Dep, make func() ([]byte, error)) ([]byte, error) {
	img, err := mt.caches.image(imageKey{Dep: d, png: true, maxPixels: mt.maxPixels}, func() (*decode.Image, error) {
		b, err := make()
		return &decode.Image{PNG: b}, err
	})
	if err != nil {
		return nil, err
	}
	return img.PNG, nil
}

// resolveMaterials resolves mats in place (images only when r.images) and
// returns header.json's "materials".
func (r *resolution) resolveMaterials(mats []decode.Material) []decode.Fields {
	rules, ok := r.m.Format.(decode.MaterialResolver)
	if !ok || len(mats) == 0 {
		return nil
	}
	out := make([]decode.Fields, 0, len(mats))
	for i := range mats {
		out = append(out, rules.ResolveMaterial(r, &mats[i]))
	}
	return out
}

// resolution is the files of a pass for the engine's material rules.
var _ decode.MaterialFiles = (*resolution)(nil)

func (r *resolution) Dir() string     { return r.dir }
func (r *resolution) Roots() []string { return r.roots }

func (r *resolution) Read(cands []decode.FileRef, max int64) ([]byte, decode.FileRef, []string, error) {
	b, c, tried, err := r.read(candidates(cands), max, true)
	return b, c.ref(), tried, err
}

func (r *resolution) Show(f decode.FileRef) string { return r.show(f.Root, f.Rel) }

func (r *resolution) Texture(slot, stored string, cands []decode.FileRef, pixels, used bool) (decode.TextureSlot, *decode.Image, decode.FileRef) {
	s, img, c := r.texture(slot, stored, candidates(cands), pixels, used)
	return s, img, c.ref()
}

// repackKey is one image repacked (Repack): its source and the kind.
type repackKey struct {
	img  *decode.Image
	kind string
}

// Repack repacks img once a pass, and once per texture version for all
// conversions sharing Limits.Caches: the repacked pixels of a version are
// kept by kind.
func (r *resolution) Repack(img *decode.Image, kind string, f func(r, g, b uint8) (uint8, uint8, uint8)) *decode.Image {
	k := repackKey{img, kind}
	if out, ok := r.orm[k]; ok {
		return out
	}
	var out *decode.Image
	v, known := r.versions[img]
	if known && v.kind == "" && img != nil && img.Pixels != nil {
		v.kind = kind
		kept, _ := r.m.Limits.Caches.image(imageKey{Dep: v.Dep, maxPixels: r.m.Limits.MaxTexturePixels, made: kind}, func() (*decode.Image, error) {
			return repack(img, f), nil
		})
		out = &decode.Image{Name: img.Name, Pixels: kept.Pixels, Ref: img.Ref, Note: img.Note}
		r.version(out, v)
	} else {
		out = repack(img, f)
	}
	if r.orm == nil {
		r.orm = map[repackKey]*decode.Image{}
	}
	r.orm[k] = out
	return out
}

func (r *resolution) ReadDir(dir string) ([]fs.DirEntry, error) {
	if r.m.mem != nil {
		return nil, &os.PathError{Op: "readdir", Path: dir, Err: os.ErrNotExist}
	}
	return r.m.Limits.view().ReadDir(dir)
}

func (r *resolution) Reference(ref string) (decode.FileRef, string, bool) {
	c, why, ok := r.byReference(ref)
	return c.ref(), why, ok
}

func (r *resolution) Given(surface string) (string, string) { return r.projectMaterial(surface) }

// candidates are refs as candidates.
func candidates(refs []decode.FileRef) []candidate {
	cs := make([]candidate, len(refs))
	for i, f := range refs {
		cs[i] = candidate{f.Root, f.Rel}
	}
	return cs
}

// PNGSuffix is appended to a texture file's name to name its PNG: the
// mount shows every texture meshfs decodes (ShowsPNG) as NAME.EXT.png beside
// it, and exported files reference those.
const PNGSuffix = ".png"

// ShowsPNG reports whether a file called name gets a NAME.EXT.png beside
// it: a texture that is not a PNG or JPEG already.
func ShowsPNG(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".dds", ".tga":
		return true
	}
	return false
}

// TexturePNG returns the PNG of the texture file at path (the version it
// opens, d), kept by limits.Textures for every mesh that embeds it. The
// file is opened as the sources are, within limits.MaxSourceSize and
// MaxTexturePixels, and decoded within limits.Timeout.
func TexturePNG(ctx context.Context, path string, limits Limits) (png []byte, d Dep, err error) {
	f, err := openBeneath(limits.view(), filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return nil, Dep{}, err
	}
	defer f.Close()
	if max := limits.MaxSourceSize; max > 0 && f.Size() > max {
		return nil, Dep{}, limitError(path, "", "", "the file is %d bytes, more than the %s limit of %d bytes", f.Size(), FlagMaxSourceSize, max)
	}
	d = Dep{Path: path, Ident: f.Version().Ident}
	ts := limits.Textures
	if ts == nil {
		ts = memTextures{limits.MaxTexturePixels, limits.Caches}
	}
	m := &Mesh{Path: path, Limits: limits}
	ctx, finish := m.deadline(ctx, "texture decode")
	png, err = ts.PNG(d, func() ([]byte, error) {
		b, err := io.ReadAll(io.NewSectionReader(f, 0, f.Size()))
		if err != nil {
			return nil, err
		}
		return texturePNG(ctx, path, b, nil, limits)
	})
	return png, d, finish(err)
}

// repack returns img with each opaque pixel's channels moved by f (alpha
// 255). An image without pixels (only a Ref) stays as it is.
func repack(img *decode.Image, f func(r, g, b uint8) (uint8, uint8, uint8)) *decode.Image {
	if img == nil || img.Pixels == nil {
		return img
	}
	px := image.NewNRGBA(img.Pixels.Rect)
	copy(px.Pix, img.Pixels.Pix)
	for i := 0; i+3 < len(px.Pix); i += 4 {
		px.Pix[i], px.Pix[i+1], px.Pix[i+2] = f(px.Pix[i], px.Pix[i+1], px.Pix[i+2])
		px.Pix[i+3] = 255
	}
	return &decode.Image{Name: img.Name, Pixels: px, Ref: img.Ref, Note: img.Note}
}

// projectIndex is the index of the project of r's mesh, or nil.
func (r *resolution) projectIndex() decode.ProjectIndex {
	if !r.projectDone {
		r.project, r.projectDone = r.m.project(nil), true
	}
	return r.project
}

// byReference resolves a name of the project's index (guid://<hex>) to
// the file beneath its root, having read (as the pass's deps) the files
// that say so; why says what is known of one it does not resolve.
func (r *resolution) byReference(name string) (c candidate, why string, ok bool) {
	ix := r.projectIndex()
	if ix == nil {
		return candidate{}, "the mesh is in no project whose index could resolve it (no data folder above it)", false
	}
	rel, via, why, ok := ix.Resolve(name)
	for _, v := range via {
		r.read([]candidate{{ix.Root(), v}}, 0, false)
	}
	if !ok {
		if why == "" {
			why = "not in the project's index"
		}
		return candidate{}, why, false
	}
	return candidate{ix.Root(), rel}, "", true
}

// projectMaterial is the material the mesh's project gives its surface
// (decode.MeshMaterials), and the file saying so as header.json names
// it; "" when it gives none. The files saying so are the pass's deps.
func (r *resolution) projectMaterial(surface string) (string, string) {
	if !r.meshMatsDone {
		r.meshMatsDone = true
		ix := r.projectIndex()
		mm, ok := ix.(decode.MeshMaterials)
		if !ok {
			return "", ""
		}
		rel, err := filepath.Rel(ix.Root(), r.m.Path)
		if err != nil || !filepath.IsLocal(rel) {
			return "", ""
		}
		var via []string
		r.meshMats, via = mm.MeshMaterials(filepath.ToSlash(rel))
		for _, v := range via {
			r.read([]candidate{{ix.Root(), v}}, 0, false)
		}
		if len(via) > 0 {
			r.meshMatsBy = r.show(ix.Root(), via[len(via)-1])
		}
	}
	if g := r.meshMats[surface]; g != "" {
		return g, r.meshMatsBy
	}
	return "", ""
}
