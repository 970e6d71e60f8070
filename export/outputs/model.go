package outputs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/internal/source"
)

// Models: a model file (its format a decode.ModelDecoder: GEM or Transport
// Fever .mdl) names meshes, materials and animations held in other files.
// Its folder holds NAME.glb (LOD 0), NAME.lodN.glb (LOD N, each a complete
// model), NAME.collision.glb when it has collision shapes (collision.go),
// header.json, chunks/ (the model text) and error.txt. Every .glb is made
// by one conversion (GLBFiles: the folder table's Part is the file's
// index), so the parts are decoded once for all of them.
//
// Assembly: every Ref is looked for as its Base says: RefModelDir beneath
// the model's folder, RefAssetRoot beneath the asset roots (its engine's
// above the model, decode.AssetRooter, then Limits.AssetPaths). Each distinct part file is decoded once per model by
// its own format, as a Mesh of its own folder (so its companions, materials
// and textures resolve as they do there), its materials resolved, and
// placed at its node: a rigid part's meshes as children of the node, a
// skinned part's bound to the model's nodes by joint name (a joint that
// names no node is the part's own node). ModelPart.Materials replace the
// part's materials primitive by primitive, each resolved by the part
// engine's rules (decode.MaterialResolver); a texture is embedded once per file. Animation files
// are decoded by their format and their channels moved onto the nodes by
// joint name (or onto ModelAnimation.Node for a single-track file, its
// track composed with the node's matrix); their formats give them in
// metres, as the decoder gives the nodes. A part's format keeps the
// engine's unit: each decoded part's geometry (and its own transforms) is
// scaled by Model.Scale once, so no node carries a scale the model's unit
// brought (Blender's importer builds bones from unscaled rest poses).
//
// Nothing a model names fails the model: a missing file leaves a named
// empty node (extras "unresolved") and a file that does not decode one
// with extras "error"; header.json lists the first under "unresolved" (by
// stat only) and the named files whose structure scan fails under
// "failed"; each .glb's root node extras list both as the assembly found
// them (with an animation none of whose joints is a node). Only a model
// file that does not decode fails the folder.
//
// A model's header.json "counts" are LOD 0's as assembled (NAME.glb), from
// the structure scans alone: each part's counts once per node it is placed
// at (vertices as the part files store them, bones those of the parts'
// skeletons), and the animations of the animation files LOD 0 plays (an
// inline one is one). A model one of whose LOD 0 parts or animation files
// is not found or does not scan has no "counts": a partial sum is no
// model's.

// IsModel reports whether m is a model file.
func (m *Mesh) IsModel() bool {
	_, ok := m.Format.(decode.ModelDecoder)
	return ok
}

// LODGLBName is the name of LOD n's file: NAME.glb for LOD 0.
func (m *Mesh) LODGLBName(n int) string {
	if n == 0 {
		return m.GLBName()
	}
	return m.Base + ".lod" + strconv.Itoa(n) + ".glb"
}

// modelInfo is what a model's folder listing needs of its decoded model,
// kept for one version of the file.
type modelInfo struct {
	mu        sync.Mutex
	dep       Dep
	lods      int // 0: not known yet
	colliders bool
}

// LODs returns how many LODs the model file has (1 when it cannot tell):
// the file is stat'ed, and decoded when it changed since it last was.
func (m *Mesh) LODs() int {
	n, _ := m.shape()
	return n
}

// HasColliders reports whether the model has collision shapes (its folder
// then holds NAME.collision.glb), as LODs finds it.
func (m *Mesh) HasColliders() bool {
	_, c := m.shape()
	return c
}

func (m *Mesh) shape() (lods int, colliders bool) {
	if !m.IsModel() || m.info == nil {
		return 1, false
	}
	var d Dep
	if m.mem == nil {
		_, read, err := m.Limits.view().Stat(m.Path)
		if err != nil {
			return 1, false
		}
		d = Dep(read)
	}
	m.info.mu.Lock()
	defer m.info.mu.Unlock()
	if m.info.lods > 0 && m.info.dep == d && m.mem == nil {
		return m.info.lods, m.info.colliders
	}
	n, c := 1, false
	if md, err := m.DecodeModel(context.Background()); err == nil {
		n, c = max(len(md.LODs), 1), len(md.Colliders) > 0
	}
	m.info.dep, m.info.lods, m.info.colliders = d, n, c
	return n, c
}

// CollisionGLBName is the name of the file of the model's collision shapes.
func (m *Mesh) CollisionGLBName() string { return m.Base + ".collision.glb" }

// DecodeModel reads the model file alone, within Limits.Timeout.
func (m *Mesh) DecodeModel(ctx context.Context) (*decode.Model, error) {
	md, ok := m.Format.(decode.ModelDecoder)
	if !ok {
		return nil, fmt.Errorf("%s: %s is not a model format", m.Path, m.Format.Name())
	}
	src, done, err := m.limitedSource()
	if err != nil {
		return nil, err
	}
	defer done()
	rec := readsOf(ctx)
	if ix := m.project(rec); ix != nil {
		src.Project = ix
	}
	if rec != nil && m.mem == nil {
		// The scripts the model requires are files it is made from.
		src.OpenAsset = func(rel string) (io.ReaderAt, int64, string, error) {
			r, size, opened, d, err := m.openAssetDep(rel)
			if err == nil {
				rec.add(d)
			}
			return r, size, opened, err
		}
	}
	ctx, finish := m.deadline(ctx, "model decode")
	model, err := md.DecodeModel(ctx, src)
	if err == nil && (model == nil || len(model.LODs) == 0) {
		err = decode.Errorf(m.Path, "", "lods", 0, "the model has no LOD")
	}
	return model, finish(err)
}

// assetRootsOwn are the roots RefAssetRoot paths are looked for beneath:
// the asset root of the model's engine above it (decode.AssetRooter), then
// Limits.AssetPaths, each once; and how many of them (the first) are the
// model's own, found by walking up its tree.
func (m *Mesh) assetRootsOwn() (roots []string, own int) {
	r := m.newResolution(false)
	seen := map[string]bool{}
	for _, root := range r.roots {
		if !seen[root] {
			seen[root] = true
			roots = append(roots, root)
		}
	}
	return roots, r.own
}

// openAsset is decode.Source.OpenAsset for m.
func (m *Mesh) openAsset(rel string) (io.ReaderAt, int64, string, error) {
	r, size, opened, _, err := m.openAssetDep(rel)
	return r, size, opened, err
}

// openAssetDep is openAsset, and the file it opened as a Dep (fileDep).
func (m *Mesh) openAssetDep(rel string) (io.ReaderAt, int64, string, Dep, error) {
	if m.mem != nil {
		b, ok := m.mem[path.Base(rel)]
		if !ok {
			return nil, 0, "", Dep{}, &os.PathError{Op: "open", Path: rel, Err: os.ErrNotExist}
		}
		return bytes.NewReader(b), int64(len(b)), path.Base(rel), Dep{}, nil
	}
	err := error(&os.PathError{Op: "open", Path: rel, Err: os.ErrNotExist})
	roots, own := m.assetRootsOwn()
	for i, root := range roots {
		for _, at := range overlayRoots(m.Limits.view(), []string{root}) {
			f, oerr := openBeneath(m.Limits.view(), at, rel)
			if oerr != nil {
				if !errors.Is(oerr, os.ErrNotExist) {
					err = oerr
				}
				continue
			}
			p := filepath.Join(at, filepath.FromSlash(rel))
			if serr := m.checkSource(p, f.Size()); serr != nil {
				f.Close()
				return nil, 0, "", Dep{}, serr
			}
			// Named as header.json names files: relative to the model's
			// folder beneath its own roots, absolute beneath an
			// --asset-path root.
			opened := p
			if i < own {
				if rp, rerr := filepath.Rel(filepath.Dir(m.Path), p); rerr == nil {
					opened = rp
				}
			}
			return f, f.Size(), filepath.ToSlash(opened), fileDep(f), nil
		}
	}
	return nil, 0, "", Dep{}, err
}

// readsKey is the context key of a conversion's reads.
type readsKey struct{}

// reads records files a model conversion reads outside its resolutions
// (which keep their own deps): the scripts its model file requires. With
// those, they make the one list an output's version and access come from.
type reads struct {
	mu   sync.Mutex
	deps []Dep
}

// withReads returns ctx recording into a new reads.
func withReads(ctx context.Context) (context.Context, *reads) {
	r := &reads{}
	return context.WithValue(ctx, readsKey{}, r), r
}

func readsOf(ctx context.Context) *reads {
	r, _ := ctx.Value(readsKey{}).(*reads)
	return r
}

func (r *reads) add(d Dep) {
	r.mu.Lock()
	r.deps = append(r.deps, d)
	r.mu.Unlock()
}

func (r *reads) list() []Dep {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Dep(nil), r.deps...)
}

// refs finds the files a model names by stat only.
type refs struct {
	m     *Mesh
	r     *resolution // the model's: it records the deps
	roots []string
	own   map[string]bool // the roots in the model's tree, and its folder
}

func (m *Mesh) newRefs() *refs {
	x := &refs{m: m, r: m.newResolution(false), own: map[string]bool{}}
	var n int
	x.roots, n = m.assetRootsOwn()
	for _, r := range x.roots[:n] {
		x.own[r] = true
	}
	x.own[x.r.dir] = true
	x.r.extra = map[string]bool{}
	for _, r := range x.roots {
		x.r.extra[r] = true
	}
	return x
}

// show is how header.json names the file rel beneath root: relative to
// the model's folder beneath its own roots (so it works in the mount
// too), absolute beneath an --asset-path root.
func (x *refs) show(c candidate) string {
	p := filepath.Join(c.root, filepath.FromSlash(c.rel))
	if owner, ok := x.r.packOf[c.root]; ok && x.own[owner] || x.own[c.root] {
		if rp, err := filepath.Rel(x.r.dir, p); err == nil {
			return filepath.ToSlash(rp)
		}
	}
	return filepath.ToSlash(p)
}

// found is one Ref looked for.
type found struct {
	path  string   // the file, "" when none
	shown string   // as header.json names it
	tried []string // when not found
	err   error
}

func (x *refs) find(ref decode.Ref) found {
	rel := ref.Rel
	var cands []candidate
	switch ref.Base {
	case decode.RefModelDir:
		cands = append(cands, candidate{x.r.dir, rel})
	default:
		for _, root := range x.roots {
			cands = append(cands, candidate{root, rel})
		}
	}
	if x.m.mem != nil {
		// In memory, every file is a base name beside the model.
		cands = []candidate{{x.r.dir, path.Base(rel)}}
	}
	_, c, _, err := x.r.read(cands, 0, false)
	if err != nil {
		tried := []string{}
		for _, c := range cands {
			tried = append(tried, x.show(c))
		}
		return found{tried: tried, err: err}
	}
	return found{path: filepath.Join(c.root, filepath.FromSlash(c.rel)), shown: x.show(c)}
}

// refFields is a Ref as header.json lists it.
func refFields(ref decode.Ref, f found) decode.Fields {
	var fs decode.Fields
	fs.Add("name", ref.Stored)
	if f.path != "" {
		fs.Add("path", f.shown)
	} else {
		fs.Add("unresolved", f.tried)
		if f.err != nil && !errors.Is(f.err, os.ErrNotExist) {
			fs.Add("error", f.err.Error())
		}
	}
	return fs
}

// modelHeader is HeaderDeps for a model: the scan's fields, the model's
// own, every LOD's range, and every file it names as a stat finds it; the
// named files' structure scans (parts, animations, polyhedra) add their
// materials' files and name the files that fail. It never assembles.
func (m *Mesh) modelHeader(st *decode.Structure, scanErr error) ([]byte, []Dep, error) {
	var f decode.Fields
	f.Add("file", filepath.Base(m.Path))
	f.Add("format", m.Format.Name())
	if st != nil {
		// A model's counts are its parts' (modelFields), or none.
		for _, kv := range st.Header {
			if kv.Key != "counts" {
				f = append(f, kv)
			}
		}
	}
	var deps []Dep
	ctx, rec := withReads(context.Background())
	if scanErr == nil {
		model, err := m.DecodeModel(ctx)
		if err != nil {
			scanErr = err
		} else {
			var fs decode.Fields
			fs, deps = m.modelFields(ctx, model)
			f = addAbsent(f, fs)
		}
	} else if !errors.Is(scanErr, decode.ErrLimit) && !errors.Is(scanErr, os.ErrNotExist) {
		// A scan that failed read files too (the scripts the model
		// requires, one of them perhaps the cause): header.json and
		// error.txt are made from them, and a change of one may mend it.
		m.DecodeModel(ctx)
	}
	// The scan's own list of required modules covers a script stopped by
	// a limit, which is not run again here.
	deps = dedupDeps(append(append(rec.list(), deps...), m.moduleDeps(st)...))
	if scanErr != nil {
		f.Add("error", scanErr.Error())
	}
	b, err := decode.HeaderJSON(f)
	return b, deps, err
}

// moduleDeps are the deps of the modules the model's script required, as
// its scan reports them (the "requires" field: each file opened, relative
// to the model's folder or absolute), whether the script succeeded or not:
// a change of one makes the scan, and a failure recorded of it, stale.
func (m *Mesh) moduleDeps(st *decode.Structure) []Dep {
	if st == nil {
		return nil
	}
	reqs, _ := st.Header.Get("requires").([]decode.Fields)
	var paths []string
	for _, q := range reqs {
		opened, _ := q.Get("opened").(string)
		if opened == "" {
			continue
		}
		p := filepath.FromSlash(opened)
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(m.Path), p)
		}
		paths = append(paths, p)
	}
	return statDeps(m.Limits.view(), paths)
}

func (m *Mesh) modelFields(ctx context.Context, model *decode.Model) (decode.Fields, []Dep) {
	var f decode.Fields
	unit := model.Unit
	if unit == "" {
		unit = "metre"
	}
	f.Add("unit", unit)
	f.Add("scale_to_metres", scaleOf(model))
	f = addAbsent(f, model.Header)
	x := m.newRefs()
	var unresolved, failed []decode.Fields
	scanned := map[string]bool{}
	boneNames := map[string][]string{} // an animation file's scanned bone names, by path
	var partDeps []Dep
	pathOf := map[decode.Ref]string{}       // a Ref found, by look
	scans := map[string]*decode.Structure{} // a named file's scan, nil when it failed
	look := func(kind string, ref decode.Ref) decode.Fields {
		fd := x.find(ref)
		rf := refFields(ref, fd)
		pathOf[ref] = fd.path
		if fd.path == "" {
			u := decode.Fields{{Key: "kind", Value: kind}}
			unresolved = append(unresolved, append(u, rf...))
		} else if !scanned[fd.path] {
			scanned[fd.path] = true
			if kind == "part" {
				m.Limits.Caches.markWanted(fd.path) // its own conversions keep its scene
			}
			st, ds, err := m.partDeps(fd.path)
			partDeps = append(partDeps, ds...)
			if kind == "animation" && st != nil {
				boneNames[fd.path] = scannedBones(st)
			}
			if err != nil {
				failed = append(failed, decode.Fields{{Key: "kind", Value: kind}, {Key: "name", Value: ref.Stored}, {Key: "path", Value: fd.shown}, {Key: "error", Value: err.Error()}})
			} else {
				scans[fd.path] = st
			}
		}
		return rf
	}
	// The materials a part's placement names instead of its own, found
	// as the assembly resolves them (assembly.override), without images:
	// once per name and engine for the parts of one folder, which resolve
	// names alike.
	// Within Limits.Timeout (a material runs a script): past it, the
	// header lists the failure and the rest stay unresolved, as the
	// assembly, under the same limit, would leave them.
	type overrideKey struct{ format, dir string }
	overriding := map[overrideKey]*resolution{}
	overridden := map[overrideKey]map[string]bool{}
	octx, finish := m.deadline(ctx, "resolving the parts' materials")
	var overrideErr error
	var materials []decode.Fields // each override as its resolver lists it
	overrides := func(p decode.ModelPart) []Dep {
		if len(p.Materials) == 0 || overrideErr != nil {
			return nil
		}
		fd := x.find(p.Mesh)
		if fd.path == "" {
			return nil
		}
		pm, err := m.partMesh(fd.path)
		if err != nil {
			return nil
		}
		rules, ok := pm.Format.(decode.MaterialResolver)
		if !ok {
			return nil
		}
		k := overrideKey{pm.Format.Name(), filepath.Dir(fd.path)}
		res := overriding[k]
		if res == nil {
			res = pm.newResolution(false)
			overriding[k], overridden[k] = res, map[string]bool{}
		}
		before := len(res.deps)
		for _, name := range p.Materials {
			if err := octx.Err(); err != nil {
				overrideErr = finish(err)
				break
			}
			if !overridden[k][name] {
				overridden[k][name] = true
				// Its paths are relative to the part's folder, as the
				// part's own header.json names them.
				mf := decode.Fields{{Key: "part", Value: fd.shown}}
				materials = append(materials, append(mf, rules.ResolveMaterial(res, &decode.Material{Name: name})...))
			}
		}
		return res.deps[before:]
	}
	var lods []decode.Fields
	for li, lod := range model.LODs {
		var lf decode.Fields
		lf.Add("lod", li)
		lf.Add("file", m.LODGLBName(li))
		lf.Add("visible_from", lod.VisibleFrom)
		lf.Add("visible_to", lod.VisibleTo)
		lf.Add("nodes", len(lod.Nodes))
		var parts []decode.Fields
		for _, n := range lod.Nodes {
			for _, p := range n.Parts {
				pf := decode.Fields{{Key: "node", Value: n.Name}}
				pf = append(pf, look("part", p.Mesh)...)
				partDeps = append(partDeps, overrides(p)...)
				if p.Skinned {
					pf.Add("skinned", true)
				}
				if len(p.Materials) > 0 {
					pf.Add("materials", p.Materials)
				}
				parts = append(parts, pf)
			}
		}
		lf.Add("parts", nonNilFields(parts))
		if anims := m.animationFields(lod.Animations, look, unbound(&lod, x, boneNames)); anims != nil {
			lf.Add("animations", anims)
		}
		lods = append(lods, lf)
	}
	f.Add("lod_files", lods)
	if materials != nil {
		f.Add("materials", materials)
	}
	var lod0 *decode.ModelLOD
	if len(model.LODs) > 0 {
		lod0 = &model.LODs[0]
	}
	if anims := m.animationFields(model.Animations, look, unbound(lod0, x, boneNames)); anims != nil {
		f.Add("animation_files", anims)
	}
	if len(model.Colliders) > 0 {
		var cs []decode.Fields
		for _, c := range model.Colliders {
			cf := decode.Fields{{Key: "name", Value: c.Name}, {Key: "kind", Value: c.Kind}, {Key: "node", Value: c.Node}, {Key: "size", Value: c.Size}}
			if c.Mesh != nil {
				cf = append(cf, look("collider", *c.Mesh)...)
			}
			cs = append(cs, cf)
		}
		f.Add("collider_shapes", cs)
	}
	finish(nil)
	if overrideErr != nil {
		failed = append(failed, decode.Fields{{Key: "kind", Value: "materials"}, {Key: "error", Value: overrideErr.Error()}})
	}
	if lod0 != nil {
		anims := append(append([]decode.ModelAnimation(nil), model.Animations...), lod0.Animations...)
		if c := lodCounts(lod0, anims, pathOf, scans); c != nil {
			f.Add("counts", c)
		}
	}
	f.Add("unresolved", nonNilFields(unresolved))
	f.Add("failed", nonNilFields(failed))
	return f, append(x.r.deps, partDeps...)
}

// countKeys are the keys of a "counts" object (decode.SummaryFields).
var countKeys = []string{"submeshes", "triangles", "vertices", "bones", "morph_targets", "animations"}

// lodCounts is a model's "counts" (decode.SummaryFields' keys): those of
// LOD lod as assembled, from the structure scans of the files it names
// (scans, by path; pathOf finds a Ref's): each part's counts once per
// node it is placed at, and each animation file's animations (an inline
// animation is one). Nil when a file it names was not found, did not scan
// or gives no counts: totals that leave one out would pass for the
// model's.
func lodCounts(lod *decode.ModelLOD, anims []decode.ModelAnimation, pathOf map[decode.Ref]string, scans map[string]*decode.Structure) decode.Fields {
	sum := make([]int, len(countKeys))
	add := func(ref decode.Ref, keys ...string) bool {
		st := scans[pathOf[ref]]
		if st == nil {
			return false
		}
		c, ok := st.Header.Get("counts").(decode.Fields)
		if !ok {
			return false
		}
		for i, k := range countKeys {
			if slices.Contains(keys, k) {
				n, ok := c.Get(k).(int)
				if !ok {
					return false
				}
				sum[i] += n
			}
		}
		return true
	}
	for _, n := range lod.Nodes {
		for _, p := range n.Parts {
			if !add(p.Mesh, "submeshes", "triangles", "vertices", "bones", "morph_targets") {
				return nil
			}
		}
	}
	for _, a := range anims {
		if a.File == nil {
			sum[len(sum)-1]++
		} else if !add(*a.File, "animations") {
			return nil
		}
	}
	return decode.SummaryFields(sum[0], sum[1], sum[2], sum[3], sum[4], sum[5])
}

func (m *Mesh) animationFields(anims []decode.ModelAnimation, look func(string, decode.Ref) decode.Fields, unbound func(decode.ModelAnimation) []string) []decode.Fields {
	var out []decode.Fields
	for _, a := range anims {
		af := decode.Fields{{Key: "name", Value: a.Name}}
		if a.File != nil {
			af.Add("file", look("animation", *a.File))
			if a.Node >= 0 {
				af.Add("node", a.Node)
			} else if u := unbound(a); u != nil {
				af.Add("unbound_bones", u)
			}
		} else {
			af.Add("channels", len(a.Channels))
		}
		af = append(af, a.Extras...)
		out = append(out, af)
	}
	return out
}

// unbound returns, for an animation file of LOD lod that the scan has
// read (look runs first), the bones it names that no node of lod matches
// by the assembler's rule (binder: the name, else the name ignoring case);
// the assembled .glb keys them on stand-in nodes. Nil when none, or when
// the file or its scan's bone names are unknown.
func unbound(lod *decode.ModelLOD, x *refs, boneNames map[string][]string) func(decode.ModelAnimation) []string {
	have := map[string]bool{}
	if lod != nil {
		for _, n := range lod.Nodes {
			have[strings.ToLower(n.Name)] = true
		}
	}
	return func(a decode.ModelAnimation) []string {
		var out []string
		for _, b := range boneNames[x.find(*a.File).path] {
			if !have[strings.ToLower(b)] {
				out = append(out, b)
			}
		}
		return out
	}
}

// scannedBones are the bone names a structure scan lists under "bones"
// (each an object with a "name"), as GEM's .anm scan does.
func scannedBones(st *decode.Structure) []string {
	bs, _ := st.Header.Get("bones").([]decode.Fields)
	var out []string
	for _, b := range bs {
		if n, ok := b.Get("name").(string); ok {
			out = append(out, n)
		}
	}
	return out
}

// addAbsent appends to f the fields of more whose keys f lacks: the scan's
// own fields come first and keep their values.
func addAbsent(f, more decode.Fields) decode.Fields {
	have := make(map[string]bool, len(f))
	for _, kv := range f {
		have[kv.Key] = true
	}
	for _, kv := range more {
		if !have[kv.Key] {
			have[kv.Key] = true
			f = append(f, kv)
		}
	}
	return f
}

func nonNilFields(f []decode.Fields) []decode.Fields {
	if f == nil {
		return []decode.Fields{}
	}
	return f
}

func scaleOf(model *decode.Model) float64 {
	if model.Scale > 0 {
		return model.Scale
	}
	return 1
}

// partDeps scans the part at p (no geometry built) and returns its
// structure and the files its outputs read beyond itself (its
// companions, its materials' files); err is the scan's failure, or that
// no mesh format claims the file.
func (m *Mesh) partDeps(p string) (*decode.Structure, []Dep, error) {
	pm, err := m.partMesh(p)
	if err != nil {
		return nil, nil, err
	}
	deps := statDeps(pm.Limits.view(), pm.Sources()[1:])
	st, err := pm.Scan(context.Background())
	if st != nil {
		_, ds, _ := pm.HeaderDeps(st, nil)
		deps = append(deps, ds...)
	}
	return st, deps, err
}

// partMesh describes the part file at p as a mesh of its own folder.
func (m *Mesh) partMesh(p string) (*Mesh, error) {
	var f decode.Format
	if m.mem != nil {
		b, ok := m.mem[filepath.Base(p)]
		if !ok {
			return nil, &os.PathError{Op: "open", Path: p, Err: os.ErrNotExist}
		}
		f = formats.Sniff(filepath.Base(p), b[:min(len(b), formats.HeadSize)])
	} else {
		var err error
		if f, err = sniffSource(m.Limits.view(), p); err != nil {
			return nil, err
		}
	}
	if f == nil {
		return nil, fmt.Errorf("%s: no mesh format claims the file", p)
	}
	if _, ok := f.(decode.ModelDecoder); ok {
		return nil, fmt.Errorf("%s: a model, not a mesh", p)
	}
	pm := New(p, f)
	pm.Limits, pm.Tree, pm.mem = m.Limits, m.Tree, m.mem
	return pm, nil
}

// statDeps are the deps of the files at paths that a stat finds, through
// links (the file whose bytes are read); an entry's is its archive's
// (internal/source: through the view v).
func statDeps(v source.View, paths []string) []Dep {
	var deps []Dep
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil {
			deps = append(deps, depOf(p, fi))
		} else if _, read, err := v.Stat(p); err == nil {
			deps = append(deps, Dep(read))
		}
	}
	return deps
}
