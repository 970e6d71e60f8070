package outputs

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/gem"
	"github.com/meshfs/meshfs/decode/texture"
	"github.com/meshfs/meshfs/decode/tfever"
	"github.com/meshfs/meshfs/decode/unigine"
	"github.com/meshfs/meshfs/internal/srcview"
	"github.com/meshfs/meshfs/internal/version"
)

// Materials: a scene's materials name material files and textures; the
// resolver of the mesh's engine turns those names into files and the files
// into decode.Material's neutral fields (images, alpha mode), so that
// exporters know nothing of the source's formats. A name that resolves to
// no file leaves its material named and untextured and is listed in
// header.json under "unresolved" with the paths tried: nothing fails.
//
// Every file is opened beneath a root (openBeneath): the mesh's folder for
// names given relative to it, an asset root for names given relative to
// one. The asset root is found by walking up from the mesh's folder, never
// above Mesh.Tree; Limits.AssetPaths are searched after it, as the games
// search the base game after a mod.
//
// Paths in header.json are slash-separated and relative to the mesh's
// folder when they lie in its tree (they then work inside the mount too),
// absolute under an AssetPaths root.
//
// GEM (engine rules in package gem): a MESH chunk names a material file
// (NAME.mtl, beside the mesh) or its textures directly. A texture named
// "$/p" is texture/common/p.dds, then texture/p.dds, under each asset root
// (the nearest ancestor folder holding texture/); a plain name is beside
// the .mtl, then beside the mesh. {diffuse} is the base colour, {bump} the
// normal map; {blend test} is MASK with {alpharef}/255 as cutoff (0.5
// when not given), {blend blend} BLEND; {color "r g b a"} gives the base
// colour's RGB (0–255; its alpha is not an opacity and is not used).
// Files "NAME#VARIANT.dds" beside a base colour "NAME.dds" are its skins,
// listed in header.json.

// openBeneath opens the regular file rel (slash-separated, local) beneath
// the folder root through the view v (srcview): no link out of root
// followed, no FIFO waited on, an archive's entries beneath its path.
func openBeneath(v srcview.View, root, rel string) (srcview.File, error) {
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
	version.Ident
}

func depOf(p string, fi os.FileInfo) Dep { return Dep{Path: p, Ident: version.Of(fi)} }

// fileDep is the dep of the open file f: the file itself, or the archive
// an entry is read from (srcview's rule), so that the watcher and
// version.Set see the file that changes.
func fileDep(f srcview.File) Dep { return Dep(f.Version()) }

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
	idents  map[string]version.Ident
	decoded map[string]*decode.Image
	// rootsDone: roots are the engine's named folders (rootsNamed), found once.
	rootsDone bool
	// orm are the metal-gloss-AO images repacked (ormOf), by source image.
	orm map[*decode.Image]*decode.Image
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

// assetRoot is the nearest folder, from the mesh's own up to Mesh.Tree,
// holding a folder named texture (or a texture.pak, as an installed game
// does: overlay.go); "" when there is none.
func (m *Mesh) assetRoot() string {
	if m.mem != nil {
		return ""
	}
	for d := filepath.Dir(m.Path); ; {
		if fi, _, err := m.Limits.view().Stat(filepath.Join(d, "texture")); err == nil && fi.IsDir() {
			return d
		}
		if fi, _, err := m.Limits.view().Stat(filepath.Join(d, "texture.pak")); err == nil && fi.Mode().IsRegular() && slices.Contains(packsOf(m.Limits.view(), d), filepath.Join(d, "texture.pak")) {
			return d
		}
		up := filepath.Dir(d)
		if up == d || m.Tree != "" && !within(m.Tree, up) {
			return ""
		}
		d = up
	}
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

// candidate is a file to try: rel beneath root.
type candidate struct{ root, rel string }

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
		var f srcview.File
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
			r.idents = map[string]version.Ident{}
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

// slot is one texture slot as header.json shows it.
type slot struct {
	name, stored string
	path         string   // resolved, as shown
	tried        []string // when unresolved
	err          string   // found but not decodable
}

func (s slot) fields() decode.Fields {
	var f decode.Fields
	f.Add("slot", s.name)
	f.Add("name", s.stored)
	if s.path != "" {
		f.Add("path", s.path)
	} else {
		f.Add("unresolved", s.tried)
	}
	if s.err != "" {
		f.Add("error", s.err)
	}
	return f
}

// texture resolves one texture name through cands; with images it decodes
// the file (once per pass) when an output embeds the slot (used): into
// pixels when the slot repacks or rebuilds them (pixels), else into the
// PNG the .glb embeds as it is. A slot no output uses is only found, as
// for header.json.
func (r *resolution) texture(slotName, stored string, cands []candidate, pixels, used bool) (slot, *decode.Image, candidate) {
	s := slot{name: slotName, stored: stored}
	images := r.images && used
	b, c, tried, err := r.read(cands, r.m.Limits.MaxSourceSize, images)
	if b == nil {
		s.tried = tried
		if err != nil && !os.IsNotExist(err) && !strings.Contains(err.Error(), "no such file") {
			s.err = err.Error()
		}
		return s, nil, c
	}
	s.path = r.show(c.root, c.rel)
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
		ref = "../" + s.path + ".png"
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
			s.err = err.Error()
			return s, nil, c
		}
		if pixels {
			img.Pixels, err = texturePixels(r.ctx, full, b, dep, r.m.Limits)
		} else {
			img.PNG, err = texturePNG(r.ctx, full, b, dep, r.m.Limits)
		}
		if err != nil {
			s.err = err.Error()
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
		img, err = l.Caches.image(imageKey{*dep, false, l.MaxTexturePixels}, decodeIt)
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
// pixels, decoded within a Limits.MaxTexturePixels.
type imageKey struct {
	Dep
	png       bool
	maxPixels int64
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
	img, err := mt.caches.image(imageKey{d, true, mt.maxPixels}, func() (*decode.Image, error) {
		b, err := make()
		return &decode.Image{PNG: b}, err
	})
	if err != nil {
		return nil, err
	}
	return img.PNG, nil
}

// maxMaterialFile bounds a material file's size.
const maxMaterialFile = 1 << 20

// resolveMaterials resolves mats in place (images only when r.images) and
// returns header.json's "materials".
func (r *resolution) resolveMaterials(mats []decode.Material) []decode.Fields {
	resolve := resolvers[r.m.Format.Name()]
	if resolve == nil || len(mats) == 0 {
		return nil
	}
	out := make([]decode.Fields, 0, len(mats))
	for i := range mats {
		out = append(out, resolve(r, &mats[i]))
	}
	return out
}

// resolvers are the engines' material rules, by format name.
var resolvers = map[string]func(r *resolution, m *decode.Material) decode.Fields{
	gem.Format{}.Name(): resolveGEM,
	tfever.Msh{}.Name(): resolveTF,
	unigine.Name:        resolveUNIGINE,
}

// alphaFields adds the material's alpha mode to f.
func alphaFields(f *decode.Fields, m *decode.Material) {
	switch {
	case m.AlphaBlend:
		f.Add("alpha_mode", "BLEND")
	case m.AlphaMask:
		f.Add("alpha_mode", "MASK")
		f.Add("alpha_cutoff", m.AlphaCutoff)
	default:
		f.Add("alpha_mode", "OPAQUE")
	}
	if m.DoubleSided {
		f.Add("double_sided", true)
	}
}

// gemCandidates are the files a GEM texture name may be, in order.
func (r *resolution) gemCandidates(name, mtlDir string) []candidate {
	rootRel, local := gem.TexturePaths(name)
	var cs []candidate
	for _, rel := range rootRel {
		for _, root := range r.roots {
			cs = append(cs, candidate{root, rel})
		}
	}
	if local != "" {
		cs = append(cs, candidate{mtlDir, local})
		if mtlDir != r.dir {
			cs = append(cs, candidate{r.dir, local})
		}
	}
	return cs
}

func resolveGEM(r *resolution, m *decode.Material) decode.Fields {
	var f decode.Fields
	f.Add("name", m.Name)
	type named struct{ slot, name string }
	var refs []named
	mtlDir := r.dir
	if strings.HasSuffix(strings.ToLower(m.Name), ".mtl") {
		rel := strings.ReplaceAll(m.Name, "\\", "/")
		b, c, tried, err := r.read([]candidate{{r.dir, rel}}, maxMaterialFile, true)
		if b == nil {
			f.Add("source", rel)
			f.Add("unresolved", tried)
			if err != nil && !os.IsNotExist(err) {
				f.Add("error", err.Error())
			}
			alphaFields(&f, m)
			return f
		}
		f.Add("source", r.show(c.root, c.rel))
		mtl, err := gem.ParseMTL(r.show(c.root, c.rel), b)
		if err != nil {
			f.Add("error", err.Error())
			alphaFields(&f, m)
			return f
		}
		mtlDir = filepath.Dir(filepath.Join(c.root, filepath.FromSlash(c.rel)))
		for _, s := range mtl.Slots {
			refs = append(refs, named{s, mtl.Textures[s]})
		}
		switch strings.ToLower(mtl.Blend) {
		case "test":
			m.AlphaMask, m.AlphaCutoff = true, 0.5
			if mtl.AlphaRef >= 0 {
				m.AlphaCutoff = float32(mtl.AlphaRef) / 255
			}
		case "blend":
			m.AlphaBlend = true
		}
		if len(mtl.Color) >= 3 {
			m.BaseColor = [4]float32{float32(mtl.Color[0] / 255), float32(mtl.Color[1] / 255), float32(mtl.Color[2] / 255), 1}
		}
		mf := decode.Fields{{Key: "kind", Value: mtl.Kind}}
		if mtl.Blend != "" {
			mf.Add("blend", mtl.Blend)
		}
		if mtl.AlphaRef >= 0 {
			mf.Add("alpharef", mtl.AlphaRef)
		}
		if mtl.Color != nil {
			cs := make([]string, len(mtl.Color))
			for i, v := range mtl.Color {
				cs[i] = fmt.Sprint(v)
			}
			mf.Add("color", strings.Join(cs, " "))
		}
		keys := make([]string, 0, len(mtl.Fields))
		for k := range mtl.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			mf.Add(k, mtl.Fields[k])
		}
		f.Add("fields", mf)
	} else {
		for _, t := range m.Textures {
			refs = append(refs, named{t.Role, t.Path})
		}
	}
	var slots []decode.Fields
	var skins []string
	for _, ref := range refs {
		s, img, c := r.texture(ref.slot, ref.name, r.gemCandidates(ref.name, mtlDir), false, ref.slot == "diffuse" || ref.slot == "bump")
		switch ref.slot {
		case "diffuse":
			m.BaseColorMap = img
			if s.path != "" {
				skins = r.skins(c)
			}
		case "bump":
			m.NormalMap = img
		}
		slots = append(slots, s.fields())
	}
	if slots != nil {
		f.Add("textures", slots)
	}
	if skins != nil {
		f.Add("skins", skins)
	}
	alphaFields(&f, m)
	return f
}

// skins lists the files NAME#VARIANT.EXT beside the texture NAME.EXT.
func (r *resolution) skins(c candidate) []string {
	if r.m.mem != nil {
		return nil
	}
	full := filepath.Join(c.root, filepath.FromSlash(c.rel))
	ext := filepath.Ext(full)
	stem := strings.TrimSuffix(filepath.Base(full), ext)
	ents, err := r.m.Limits.view().ReadDir(filepath.Dir(full))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.EqualFold(filepath.Ext(n), ext) &&
			len(n) > len(stem)+1 && strings.EqualFold(n[:len(stem)+1], stem+"#") {
			out = append(out, r.show(c.root, path.Join(path.Dir(c.rel), n)))
		}
	}
	return out
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

// Transport Fever (engine rules in package tfever): a mesh of the old Train
// Fever style names its materials, files under the res folder (the nearest
// ancestor of the mesh called res, then Limits.AssetPaths) at
// models/material/NAME, Lua scripts run in the sandbox with their requires
// served from res/scripts/. Their texture file names are under
// res/textures/. map_albedo (or map_albedo_opacity) is the base colour,
// map_normal the normal map (two-channel when its redGreen flag says so),
// map_metal_gloss_ao (R metal, G gloss, B ambient occlusion) becomes one
// image with glTF's occlusion in R, roughness = 1 − gloss in G and metal in
// B, used as both the metallic-roughness and the occlusion map;
// alpha_test is MASK at its threshold, two_sided double-sided. A mesh of
// the later style names no material (its .mdl does).

// tfRoots are the res folders: the mesh's own, then the asset paths.
func (r *resolution) tfRoots() []string { return r.rootsNamed("res") }

// rootsNamed makes the asset roots the nearest folder called base, from
// the mesh's own up to Mesh.Tree (when there is one), then the asset
// paths, and returns them.
func (r *resolution) rootsNamed(base string) []string {
	var roots []string
	if r.m.mem == nil {
		for d := r.dir; ; {
			if filepath.Base(d) == base {
				roots = append(roots, d)
				break
			}
			up := filepath.Dir(d)
			if up == d || r.m.Tree != "" && !within(r.m.Tree, up) && d != r.m.Tree {
				break
			}
			d = up
		}
	}
	if len(roots) == 1 {
		r.roots, r.own = append(roots, r.roots[r.own:]...), 1
	} else {
		r.roots, r.own = r.roots[r.own:], 0
	}
	return r.roots
}

func resolveTF(r *resolution, m *decode.Material) decode.Fields {
	var f decode.Fields
	f.Add("name", m.Name)
	if !r.rootsDone {
		r.tfRoots()
		r.rootsDone = true
	}
	rel := "models/material/" + strings.TrimPrefix(strings.ReplaceAll(m.Name, "\\", "/"), "/")
	var cands []candidate
	for _, root := range r.roots {
		cands = append(cands, candidate{root, rel})
	}
	b, c, tried, err := r.read(cands, maxMaterialFile, true)
	if b == nil {
		f.Add("unresolved", nonNilStrings(tried))
		if err != nil && !os.IsNotExist(err) {
			f.Add("error", err.Error())
		}
		alphaFields(&f, m)
		return f
	}
	f.Add("source", r.show(c.root, c.rel))
	load := func(module string) (string, []byte, error) {
		p, err := tfever.ScriptModule(module)
		if err != nil {
			return "", nil, err
		}
		var sc []candidate
		for _, root := range r.roots {
			sc = append(sc, candidate{root, p})
		}
		b, c, _, err := r.read(sc, maxMaterialFile, true)
		if b == nil {
			return "", nil, fmt.Errorf("module %q: %w", module, err)
		}
		return r.show(c.root, c.rel), b, nil
	}
	mat, err := tfever.ParseMaterial(context.Background(), r.show(c.root, c.rel), b, load)
	if err != nil {
		f.Add("error", err.Error())
		alphaFields(&f, m)
		return f
	}
	if mat.AlphaThreshold >= 0 {
		m.AlphaMask, m.AlphaCutoff = true, float32(mat.AlphaThreshold)
	}
	m.DoubleSided = m.DoubleSided || mat.TwoSided
	var slots []decode.Fields
	for _, tm := range mat.Maps {
		var tc []candidate
		for _, root := range r.roots {
			tc = append(tc, candidate{root, "textures/" + strings.TrimPrefix(tm.FileName, "/")})
		}
		used := tm.Slot == "map_normal" || tm.Slot == "map_metal_gloss_ao" ||
			(tm.Slot == "map_albedo" || tm.Slot == "map_albedo_opacity") && m.BaseColorMap == nil
		s, img, _ := r.texture(tm.Slot, tm.FileName, tc, tm.Slot == "map_metal_gloss_ao" || tm.Slot == "map_normal" && tm.RedGreen, used)
		switch tm.Slot {
		case "map_albedo", "map_albedo_opacity":
			if m.BaseColorMap == nil {
				m.BaseColorMap = img
			}
		case "map_normal":
			m.NormalMap, m.NormalRedGreen = img, tm.RedGreen
		case "map_metal_gloss_ao":
			orm, ok := r.orm[img]
			if !ok {
				orm = ormOf(img)
				if r.orm == nil {
					r.orm = map[*decode.Image]*decode.Image{}
				}
				r.orm[img] = orm
			}
			m.MetallicRoughnessMap, m.OcclusionMap = orm, orm
		}
		slots = append(slots, s.fields())
	}
	if slots != nil {
		f.Add("textures", slots)
	}
	mf := decode.Fields{{Key: "type", Value: mat.Type}}
	f.Add("fields", mf)
	alphaFields(&f, m)
	return f
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ormOf turns a Transport Fever metal-gloss-AO image (R metal, G gloss, B
// occlusion) into glTF's packing: R occlusion, G roughness = 1 − gloss, B
// metal.
func ormOf(img *decode.Image) *decode.Image {
	return repack(img, func(metal, gloss, ao uint8) (r, g, b uint8) { return ao, 255 - gloss, metal })
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

// UNIGINE (engine rules in package unigine): a mesh names no material
// file; each surface's material is the one of the surface's name. It is
// the file NAME.mat found beside the mesh (in its folder, then in a
// materials folder in it); when there is none, the material is only named
// (header.json lists the files looked for). A material named guid://<hex>
// (a scene's surface) is the file the project's index resolves it to
// (decode.ProjectIndexer; its .meta is then a file the output is made
// from). A .mat's <texture> paths are relative to the .mat's folder (when
// that stays beneath the mesh's), then to the project's data folder (the
// project's root, else the nearest ancestor of the mesh called data),
// then to each asset path; a guid:// texture is the file the index
// resolves it to: a source image beside its .meta, or a runtime .dds. A
// .mat whose base_material resolves to another .mat of the project
// inherits the parameters and texture slots it does not set itself, its
// parent's parent too (at most maxMatParents; a base material that is
// not a .mat, the engine's .basemat, is listed and not read). albedo is the base colour (its alpha the opacity; the
// albedo_color parameter multiplies it), normal the normal map (X and Y
// as stored, Z rebuilt), shading (R metalness, G roughness) becomes
// glTF's metallic-roughness image (G roughness, B metal), and
// ambient_occlusion (R) the occlusion map. The .mat's attributes and
// parameters are listed under "fields".

// uniMatCandidates are the files surface material name may be, in order.
// They are beneath the mesh's folder, so that header.json names them alike
// in the mount, in convert's folders and for in-memory meshes.
func (r *resolution) uniMatCandidates(name string) []candidate {
	rel := strings.TrimPrefix(strings.ReplaceAll(name, "\\", "/"), "/") + ".mat"
	return []candidate{{r.dir, rel}, {r.dir, "materials/" + rel}}
}

// maxMatParents bounds a .mat's chain of base materials followed.
const maxMatParents = 8

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

func resolveUNIGINE(r *resolution, m *decode.Material) decode.Fields {
	var f decode.Fields
	f.Add("name", m.Name)
	if !r.rootsDone {
		if root := r.m.projectRoot(); root != "" {
			r.roots, r.own = append([]string{root}, r.roots[r.own:]...), 1
		} else {
			r.rootsNamed("data")
		}
		r.rootsDone = true
	}
	name := m.Name
	var (
		b     []byte
		c     candidate
		tried []string
		err   error
		why   string
	)
	if !strings.HasPrefix(name, "guid://") {
		b, c, tried, err = r.read(r.uniMatCandidates(name), maxMaterialFile, true)
		if given, by := r.projectMaterial(name); b == nil && given != "" {
			f.Add("given", given)
			f.Add("given_by", by)
			name = given
		}
	}
	if strings.HasPrefix(name, "guid://") {
		if rc, w, ok := r.byReference(name); ok {
			var more []string
			b, c, more, err = r.read([]candidate{rc}, maxMaterialFile, true)
			tried = append(tried, more...)
		} else {
			why = w
		}
	}
	if b == nil {
		f.Add("source", nil)
		f.Add("looked_for", nonNilStrings(tried))
		if why != "" {
			f.Add("why", why)
		}
		if err != nil && !os.IsNotExist(err) && !strings.Contains(err.Error(), "no such file") {
			f.Add("error", err.Error())
		}
		alphaFields(&f, m)
		return f
	}
	shown := r.show(c.root, c.rel)
	f.Add("source", shown)
	if strings.HasPrefix(name, "guid://") {
		// Named as the file the editor shows.
		m.Name = strings.TrimSuffix(path.Base(c.rel), path.Ext(c.rel))
	}
	mat, err := unigine.ParseMat(shown, b)
	if err != nil {
		f.Add("error", err.Error())
		alphaFields(&f, m)
		return f
	}
	texs, bases := r.inherit(mat, c)
	if bases != nil {
		f.Add("base_materials", bases)
	}
	if col := mat.Param("albedo_color"); len(col) >= 3 {
		m.BaseColor = [4]float32{float32(col[0]), float32(col[1]), float32(col[2]), 1}
		if len(col) >= 4 {
			m.BaseColor[3] = float32(col[3])
		}
	}
	var slots []decode.Fields
	for _, t := range texs {
		p := strings.TrimPrefix(strings.ReplaceAll(t.Path, "\\", "/"), "/")
		if p == "" {
			continue
		}
		var cands []candidate
		if strings.HasPrefix(p, "guid://") {
			tc, why, ok := r.byReference(p)
			if !ok {
				s := slot{name: t.Slot, stored: t.Path, tried: []string{}, err: why}
				slots = append(slots, s.fields())
				continue
			}
			cands = append(cands, tc)
		} else {
			if rel := path.Join(path.Dir(t.mat.rel), p); filepath.IsLocal(filepath.FromSlash(rel)) {
				cands = append(cands, candidate{t.mat.root, rel})
			}
			for _, root := range r.roots {
				cands = append(cands, candidate{root, p})
			}
		}
		used := t.Slot == "albedo" || t.Slot == "normal" || t.Slot == "shading" || t.Slot == "ambient_occlusion"
		s, img, _ := r.texture(t.Slot, t.Path, cands, t.Slot == "normal" || t.Slot == "shading", used)
		switch t.Slot {
		case "albedo":
			m.BaseColorMap = img
		case "normal":
			m.NormalMap, m.NormalRedGreen = img, true
		case "shading":
			mr, ok := r.orm[img]
			if !ok {
				mr = shadingOf(img)
				if r.orm == nil {
					r.orm = map[*decode.Image]*decode.Image{}
				}
				r.orm[img] = mr
			}
			m.MetallicRoughnessMap = mr
		case "ambient_occlusion":
			m.OcclusionMap = img
		}
		slots = append(slots, s.fields())
	}
	if slots != nil {
		f.Add("textures", slots)
	}
	var mf decode.Fields
	for _, kv := range [][2]string{{"version", mat.Version}, {"guid", mat.GUID}, {"base_material", mat.BaseMaterial}, {"material_name", mat.Name}} {
		if kv[1] != "" {
			mf.Add(kv[0], kv[1])
		}
	}
	var params decode.Fields
	for _, p := range mat.Params {
		if p.Values != nil {
			params.Add(p.Name, p.Values)
		} else {
			params.Add(p.Name, p.Text)
		}
	}
	if params != nil {
		mf.Add("parameters", params)
	}
	if mf != nil {
		f.Add("fields", mf)
	}
	alphaFields(&f, m)
	return f
}

// uniTexture is a texture slot of a .mat, or of a base material it
// inherits, whose paths are relative to the folder of mat.
type uniTexture struct {
	unigine.MatTexture
	mat candidate
}

// inherit follows mat's (found at c) chain of base materials that are
// .mat files of the project, adding to mat the parameters it lacks, and
// returns its texture slots with those it inherits, and the chain as
// header.json lists it (nil when mat names no base material).
func (r *resolution) inherit(mat *unigine.Mat, c candidate) ([]uniTexture, []decode.Fields) {
	var texs []uniTexture
	have := map[string]bool{}
	addTextures := func(m *unigine.Mat, at candidate) {
		for _, t := range m.Textures {
			if !have[t.Slot] {
				have[t.Slot] = true
				texs = append(texs, uniTexture{t, at})
			}
		}
	}
	addTextures(mat, c)
	params := map[string]bool{}
	for _, p := range mat.Params {
		params[p.Name] = true
	}
	var chain []decode.Fields
	seen := map[string]bool{path.Join(c.root, c.rel): true}
	for base := mat.BaseMaterial; base != ""; {
		bf := decode.Fields{{Key: "name", Value: base}}
		chain = append(chain, bf)
		if len(chain) > maxMatParents {
			chain[len(chain)-1].Add("error", fmt.Sprintf("more than %d base materials deep: not followed", maxMatParents))
			break
		}
		name := base
		if !strings.HasPrefix(name, "guid://") {
			name = "guid://" + name
		}
		bc, why, ok := r.byReference(name)
		if !ok {
			chain[len(chain)-1].Add("why", why)
			break
		}
		chain[len(chain)-1].Add("source", r.show(bc.root, bc.rel))
		if !strings.HasSuffix(strings.ToLower(bc.rel), ".mat") {
			chain[len(chain)-1].Add("note", "not a .mat: the engine's own, not read")
			break
		}
		if k := path.Join(bc.root, bc.rel); seen[k] {
			chain[len(chain)-1].Add("error", "a cycle: not followed")
			break
		} else {
			seen[k] = true
		}
		b, _, _, err := r.read([]candidate{bc}, maxMaterialFile, true)
		var parent *unigine.Mat
		if err == nil {
			parent, err = unigine.ParseMat(r.show(bc.root, bc.rel), b)
		}
		if err != nil {
			chain[len(chain)-1].Add("error", err.Error())
			break
		}
		for _, p := range parent.Params {
			if !params[p.Name] {
				params[p.Name] = true
				mat.Params = append(mat.Params, p)
			}
		}
		addTextures(parent, bc)
		base = parent.BaseMaterial
	}
	return texs, chain
}

// shadingOf turns a UNIGINE shading image (R metalness, G roughness) into
// glTF's metallic-roughness packing: G roughness, B metal (R, unused by
// glTF there, 255).
func shadingOf(img *decode.Image) *decode.Image {
	return repack(img, func(metal, rough, _ uint8) (r, g, b uint8) { return 255, rough, metal })
}
