package outputs

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/export/gltf"
)

// assembly is one pass over a model's parts: every file it names is
// found, decoded and resolved once, whatever the number of LODs and
// placements using it.
type assembly struct {
	m     *Mesh
	model *decode.Model
	x     *refs
	scale float32
	parts map[string]*partOut
	anims map[string]*animOut
	// decoded and orm are shared by every part's resolution: a texture
	// file is decoded, and embedded, once per model.
	decoded  map[string]*decode.Image
	orm      map[repackKey]*decode.Image
	versions map[*decode.Image]imageVersion
	deps     []Dep
	// pixels counts the pixels of the model's textures
	// (Limits.MaxTexturePixelsTotal).
	pixels int64
}

// partOut is one part file, decoded.
type partOut struct {
	mesh  *Mesh
	res   *resolution
	scene *decode.Scene
	err   error
	// overrides are the materials made for ModelPart.Materials, by name.
	overrides map[string]*decode.Material
}

// animOut is one animation file, decoded.
type animOut struct {
	scene *decode.Scene
	err   error
}

func (m *Mesh) newAssembly(model *decode.Model) *assembly {
	return &assembly{m: m, model: model, x: m.newRefs(), scale: float32(scaleOf(model)),
		parts: map[string]*partOut{}, anims: map[string]*animOut{},
		decoded: map[string]*decode.Image{}, orm: map[repackKey]*decode.Image{}, versions: map[*decode.Image]imageVersion{}}
}

// part decodes the part at p (once).
func (a *assembly) part(ctx context.Context, p string) *partOut {
	if po, ok := a.parts[p]; ok {
		return po
	}
	po := &partOut{}
	a.parts[p] = po
	pm, err := a.m.partMesh(p)
	if err != nil {
		po.err = err
		return po
	}
	po.mesh = pm
	po.res = pm.newResolution(true).withImages(ctx, &a.pixels)
	po.res.decoded, po.res.orm, po.res.versions = a.decoded, a.orm, a.versions
	if e := a.m.Limits.Caches.part(p); e != nil {
		// Decoded already (for its own folder, or another model).
		a.deps = append(a.deps, e.deps[1:]...)
		po.scene = scaledCopy(e.scene, a.scale)
		return po
	}
	src := pm.sourceDeps()
	a.deps = append(a.deps, statDeps(pm.Limits.view(), pm.Sources()[1:])...)
	scene, err := pm.decode(ctx)
	if err != nil {
		po.err = err
		return po
	}
	po.res.resolveMaterials(scene.Materials)
	a.deps = append(a.deps, po.res.deps...)
	pm.keepScene(scene, src, po.res.deps)
	po.scene = scaledCopy(scene, a.scale)
	return po
}

// override returns the material called name as the part's engine
// resolves it (once per part and name).
func (a *assembly) override(po *partOut, name string) *decode.Material {
	if mat, ok := po.overrides[name]; ok {
		return mat
	}
	mat := &decode.Material{Name: name}
	if rules, ok := po.mesh.Format.(decode.MaterialResolver); ok {
		before := len(po.res.deps)
		rules.ResolveMaterial(po.res, mat)
		a.deps = append(a.deps, po.res.deps[before:]...)
	}
	if po.overrides == nil {
		po.overrides = map[string]*decode.Material{}
	}
	po.overrides[name] = mat
	return mat
}

// anim decodes the animation file at p (once).
func (a *assembly) anim(ctx context.Context, p string) *animOut {
	if ao, ok := a.anims[p]; ok {
		return ao
	}
	ao := &animOut{}
	a.anims[p] = ao
	am, err := a.m.partMesh(p)
	if err == nil {
		ao.scene, err = am.decode(ctx)
	}
	if err == nil && len(ao.scene.Animations) == 0 {
		err = fmt.Errorf("%s: the file holds no animation", p)
	}
	ao.err = err
	return ao
}

// scaledCopy is s with every length multiplied by k: positions, morph
// target positions, translations of transforms and inverse bind
// matrices, in new slices (s, perhaps a kept scene, is not changed); s
// itself when k is 1.
func scaledCopy(s *decode.Scene, k float32) *decode.Scene {
	if k == 1 || k <= 0 {
		return s
	}
	c := *s
	c.Meshes = append([]decode.Mesh(nil), s.Meshes...)
	for mi := range c.Meshes {
		mesh := &c.Meshes[mi]
		mesh.Transform.Translation = mul3(mesh.Transform.Translation, k)
		mesh.Primitives = append([]decode.Primitive(nil), mesh.Primitives...)
		for pi := range mesh.Primitives {
			p := &mesh.Primitives[pi]
			p.Positions = scaled3(p.Positions, k)
			p.Targets = append([]decode.MorphTarget(nil), p.Targets...)
			for ti := range p.Targets {
				p.Targets[ti].Positions = scaled3(p.Targets[ti].Positions, k)
			}
		}
	}
	if s.Skeleton != nil {
		sk := &decode.Skeleton{Joints: append([]decode.Joint(nil), s.Skeleton.Joints...)}
		for i := range sk.Joints {
			j := &sk.Joints[i]
			j.Rest.Translation = mul3(j.Rest.Translation, k)
			if j.InverseBind != nil {
				ib := *j.InverseBind
				ib[12], ib[13], ib[14] = ib[12]*k, ib[13]*k, ib[14]*k
				j.InverseBind = &ib
			}
		}
		c.Skeleton = sk
	}
	c.Animations = append([]decode.Animation(nil), s.Animations...)
	for ai := range c.Animations {
		cs := append([]decode.Channel(nil), c.Animations[ai].Channels...)
		scaleTranslations(cs, k)
		c.Animations[ai].Channels = cs
	}
	return &c
}

func scaled3(vs [][3]float32, k float32) [][3]float32 {
	if vs == nil {
		return nil
	}
	out := make([][3]float32, len(vs))
	for i, v := range vs {
		out[i] = mul3(v, k)
	}
	return out
}

// scaleTranslations multiplies the values of translation channels by k,
// in new slices (decoded animations are shared).
func scaleTranslations(cs []decode.Channel, k float32) {
	if k == 1 || k <= 0 {
		return
	}
	for i := range cs {
		if cs[i].Path != decode.PathTranslation {
			continue
		}
		v := make([]float32, len(cs[i].Values))
		for j, x := range cs[i].Values {
			v[j] = x * k
		}
		cs[i].Values = v
	}
}

func mul3(v [3]float32, k float32) [3]float32 { return [3]float32{v[0] * k, v[1] * k, v[2] * k} }

// treeScene is the node tree of LOD li: node 0 is the model's root
// (named after the model), LOD node i is scene node i+1; byName finds a
// node by name (the first of a name).
func (a *assembly) treeScene(li int) (s *decode.Scene, byName map[string]int) {
	lod := &a.model.LODs[li]
	s = &decode.Scene{}
	root := decode.Fields{{Key: "unit", Value: a.model.Unit}, {Key: "scale_to_metres", Value: float64(a.scale)}}
	s.Nodes = append(s.Nodes, decode.Node{Name: a.m.Base, Parent: -1, Matrix: decode.Identity4(), Extras: root})
	byName = map[string]int{}
	for i, n := range lod.Nodes {
		p := n.Parent + 1
		if n.Parent < 0 || n.Parent >= i {
			p = 0
		}
		mat := n.Matrix
		if mat == (decode.Mat4{}) {
			mat = decode.Identity4()
		}
		s.Nodes = append(s.Nodes, decode.Node{Name: n.Name, Parent: p, Matrix: mat, Extras: n.Extras, Light: n.Light})
		if _, dup := byName[n.Name]; !dup && n.Name != "" {
			byName[n.Name] = i + 1
		}
	}
	return s, byName
}

// lodScene assembles LOD li on its tree (treeScene).
func (a *assembly) lodScene(ctx context.Context, li int) (*decode.Scene, error) {
	lod := &a.model.LODs[li]
	s, byName := a.treeScene(li)
	world := make([]decode.Mat4, len(s.Nodes))
	for i, n := range s.Nodes {
		world[i] = n.Matrix
		if i > 0 {
			world[i] = world[n.Parent].Mul(n.Matrix)
		}
	}
	var unresolved, failed []decode.Fields
	matIndex := map[*decode.Material]int{}
	addMat := func(mat *decode.Material) int {
		if i, ok := matIndex[mat]; ok {
			return i
		}
		s.Materials = append(s.Materials, *mat)
		matIndex[mat] = len(s.Materials) - 1
		return len(s.Materials) - 1
	}
	empty := func(at int, name string, extras decode.Fields) {
		s.Nodes = append(s.Nodes, decode.Node{Name: name, Parent: at, Matrix: decode.Identity4(), Extras: extras})
	}
	for i, n := range lod.Nodes {
		at := i + 1
		for _, part := range n.Parts {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			name := path.Base(strings.ReplaceAll(part.Mesh.Stored, "\\", "/"))
			fd := a.x.find(part.Mesh)
			if fd.path == "" {
				rf := refFields(part.Mesh, fd)
				unresolved = append(unresolved, append(decode.Fields{{Key: "node", Value: n.Name}}, rf...))
				empty(at, name, decode.Fields{{Key: "unresolved", Value: fd.tried}})
				continue
			}
			po := a.part(ctx, fd.path)
			if po.err != nil {
				failed = append(failed, decode.Fields{{Key: "node", Value: n.Name}, {Key: "name", Value: part.Mesh.Stored}, {Key: "path", Value: fd.shown}, {Key: "error", Value: po.err.Error()}})
				empty(at, name, decode.Fields{{Key: "error", Value: po.err.Error()}})
				continue
			}
			a.place(s, po, part, at, world, byName, addMat)
		}
	}
	// Animations: the model's, then the LOD's.
	all := append(append([]decode.ModelAnimation(nil), a.model.Animations...), lod.Animations...)
	bind := a.binder(s, lod, byName)
	for _, ma := range all {
		an, reason := a.animation(ctx, ma, bind, s.Nodes[:len(lod.Nodes)+1])
		if reason != nil {
			failed = append(failed, reason)
			continue
		}
		s.Animations = append(s.Animations, an...)
	}
	if len(unresolved) > 0 || len(failed) > 0 {
		var ex decode.Fields
		ex = append(ex, s.Nodes[0].Extras...)
		ex.Add("unresolved", nonNilFields(unresolved))
		ex.Add("failed", nonNilFields(failed))
		s.Nodes[0].Extras = ex
	}
	return s, nil
}

// place hangs the meshes of a decoded part on scene node at.
func (a *assembly) place(s *decode.Scene, po *partOut, part decode.ModelPart, at int, world []decode.Mat4, byName map[string]int, addMat func(*decode.Material) int) {
	ps := po.scene
	flat := 0 // primitive index over the part's meshes, for overrides
	for _, pm := range ps.Meshes {
		mesh := pm
		mesh.Node = at
		mesh.Skin = nil
		mesh.Primitives = make([]decode.Primitive, len(pm.Primitives))
		copy(mesh.Primitives, pm.Primitives)
		skinned := part.Skinned && pm.Skinned && ps.Skeleton != nil && len(ps.Skeleton.Joints) > 0
		var slotOf []uint16
		if skinned {
			mesh.Skin, slotOf = a.skin(ps.Skeleton, at, world, byName)
		} else {
			mesh.Skinned = false
		}
		for k := range mesh.Primitives {
			p := &mesh.Primitives[k]
			switch {
			case flat < len(part.Materials):
				p.Material = addMat(a.override(po, part.Materials[flat]))
			case part.MaterialConfig > 0 && part.MaterialConfig < len(p.MaterialConfigs):
				p.Material = addMat(a.override(po, p.MaterialConfigs[part.MaterialConfig]))
			case p.Material >= 0 && p.Material < len(ps.Materials):
				p.Material = addMat(&ps.Materials[p.Material])
			default:
				p.Material = -1
			}
			flat++
			if !skinned {
				p.Joints, p.Weights = nil, nil
				continue
			}
			js := make([][4]uint16, len(p.Joints))
			for v, j := range p.Joints {
				for c := range 4 {
					if int(j[c]) < len(slotOf) {
						js[v][c] = slotOf[j[c]]
					}
				}
			}
			p.Joints = js
		}
		s.Meshes = append(s.Meshes, mesh)
	}
}

// skin binds a part skinned to its skeleton sk, placed at node at with
// its vertices in at's frame, to the scene's nodes by joint name: a joint
// naming no node is node at. The inverse bind matrix of a node n standing
// for joint j is inverse(world n)·(world at)·(rest j)·(inverse bind j), so
// that at rest every vertex is where node at puts it; slotOf maps the
// part's joints to the skin's.
func (a *assembly) skin(sk *decode.Skeleton, at int, world []decode.Mat4, byName map[string]int) (*decode.Skin, []uint16) {
	placed := world[at]
	js := sk.Joints
	rest := make([]decode.Mat4, len(js))
	for i, j := range js {
		rest[i] = j.Rest.Matrix()
		if j.Rest == (decode.TRS{}) {
			rest[i] = decode.Identity4()
		}
		if p := j.Parent; p >= 0 && p < i {
			rest[i] = rest[p].Mul(rest[i])
		}
	}
	skin := &decode.Skin{}
	slotOf := make([]uint16, len(js))
	slot := map[int]int{}
	for i, j := range js {
		n, ok := byName[j.Name]
		if !ok {
			n = at
		}
		if k, ok := slot[n]; ok {
			slotOf[i] = uint16(k)
			continue
		}
		inv, ok := world[n].InverseAffine()
		if !ok {
			inv = decode.Identity4()
		}
		m := inv.Mul(placed).Mul(rest[i])
		if j.InverseBind != nil {
			var ib decode.Mat4
			for k, v := range j.InverseBind {
				ib[k] = float64(v)
			}
			m = m.Mul(ib)
		}
		var f [16]float32
		for k, v := range m {
			f[k] = float32(v)
		}
		slot[n] = len(skin.Joints)
		slotOf[i] = uint16(len(skin.Joints))
		skin.Joints = append(skin.Joints, n)
		skin.InverseBinds = append(skin.InverseBinds, f)
	}
	return skin, slotOf
}

// boneBinder finds the scene node an animation's joint drives (binder).
type boneBinder func(joint decode.Joint, animation string) int

// binder binds animation joints to the nodes of LOD lod's scene s by
// name: the node of that name, else the one node whose name equals it
// ignoring case (as the modders' GEM importers match .anm bones). A joint
// no node matches drives a stand-in: an empty node named after it under
// the model's root, at the joint's first key (its rest), its extras
// "unbound_bone" and the animations keying it; one stand-in per name
// (ignoring case) and scene, whatever the number of animations keying it.
func (a *assembly) binder(s *decode.Scene, lod *decode.ModelLOD, byName map[string]int) boneBinder {
	folded := map[string]int{} // lower-case name → node, -1 when two nodes share it
	for i, n := range lod.Nodes {
		k := strings.ToLower(n.Name)
		if j, dup := folded[k]; dup && j != i+1 {
			folded[k] = -1
		} else if !dup {
			folded[k] = i + 1
		}
	}
	stand := map[string]int{}
	return func(j decode.Joint, animation string) int {
		if n, ok := byName[j.Name]; ok {
			return n
		}
		k := strings.ToLower(j.Name)
		if n := folded[k]; n > 0 {
			return n
		}
		n, ok := stand[k]
		if !ok {
			n = len(s.Nodes)
			stand[k] = n
			s.Nodes = append(s.Nodes, decode.Node{Name: j.Name, Parent: 0, Matrix: j.Rest.Matrix(),
				Extras: decode.Fields{{Key: "unbound_bone", Value: "no bone of the model has this name (ignoring case): its keys drive this empty node under the model's root"}, {Key: "animations", Value: []string{}}}})
		}
		ex := s.Nodes[n].Extras
		if names := ex[1].Value.([]string); !slices.Contains(names, animation) {
			ex[1].Value = append(names, animation)
		}
		return n
	}
}

// animation turns one of the model's animations into scene animations on
// its nodes (joints bound by bind), or returns why it cannot (for the
// "failed" list).
func (a *assembly) animation(ctx context.Context, ma decode.ModelAnimation, bind boneBinder, tree []decode.Node) ([]decode.Animation, decode.Fields) {
	nodes := len(tree) - 1
	fail := func(stored, why string) decode.Fields {
		return decode.Fields{{Key: "kind", Value: "animation"}, {Key: "name", Value: ma.Name}, {Key: "file", Value: stored}, {Key: "error", Value: why}}
	}
	if ma.File == nil {
		an := decode.Animation{Name: ma.Name}
		for _, c := range ma.Channels {
			if c.Index < 0 || c.Index >= nodes {
				continue
			}
			c.Kind, c.Index = decode.TargetNode, c.Index+1
			an.Channels = append(an.Channels, c)
		}
		if len(an.Channels) == 0 {
			return nil, fail("", "no channel drives a node of the LOD")
		}
		return []decode.Animation{an}, nil
	}
	fd := a.x.find(*ma.File)
	if fd.path == "" {
		f := fail(ma.File.Stored, "not found")
		f.Add("unresolved", fd.tried)
		return nil, f
	}
	ao := a.anim(ctx, fd.path)
	if ao.err != nil {
		return nil, fail(ma.File.Stored, ao.err.Error())
	}
	sk := ao.scene.Skeleton
	var out []decode.Animation
	for _, src := range ao.scene.Animations {
		if ma.Take != "" && src.Name != ma.Take {
			continue
		}
		an := decode.Animation{Name: ma.Name}
		if ma.Take == "" && len(ao.scene.Animations) > 1 && src.Name != "" {
			an.Name = ma.Name + "/" + src.Name
		}
		if ma.Reverse {
			src.Channels = reversed(src.Channels)
		}
		for _, c := range src.Channels {
			to := -1
			switch {
			case ma.Node >= 0 && ma.Node < nodes:
				to = ma.Node + 1
			case c.Kind == decode.TargetJoint && sk != nil && c.Index >= 0 && c.Index < len(sk.Joints):
				to = bind(sk.Joints[c.Index], an.Name)
			}
			if to < 0 {
				continue
			}
			c.Kind, c.Index = decode.TargetNode, to
			an.Channels = append(an.Channels, c)
		}
		if ma.Node >= 0 && ma.Node < nodes {
			an.Channels = relative(tree[ma.Node+1].Matrix, an.Channels)
		}
		if len(an.Channels) > 0 {
			out = append(out, an)
		}
	}
	if len(out) == 0 {
		if ma.Take != "" {
			return nil, fail(ma.File.Stored, fmt.Sprintf("the file has no animation %q that moves a node", ma.Take))
		}
		return nil, fail(ma.File.Stored, "no joint it animates is a node of the model")
	}
	return out, nil
}

// reversed plays channels backwards over their common span: a key at t
// moves to end−t, so the last pose comes first (new slices; the decoded
// file's are shared).
func reversed(cs []decode.Channel) []decode.Channel {
	var end float32
	for _, c := range cs {
		if n := len(c.Times); n > 0 {
			end = max(end, c.Times[n-1])
		}
	}
	out := make([]decode.Channel, len(cs))
	for i, c := range cs {
		n := len(c.Times)
		w := 0
		if n > 0 {
			w = len(c.Values) / n
		}
		r := c
		r.Times = make([]float32, n)
		r.Values = make([]float32, len(c.Values))
		for k := range n {
			j := n - 1 - k
			r.Times[k] = end - c.Times[j]
			copy(r.Values[k*w:(k+1)*w], c.Values[j*w:(j+1)*w])
		}
		out[i] = r
	}
	return out
}

// ModelGLBs assembles every LOD of the model and exports each, LOD 0
// first (NAME.glb, NAME.lod1.glb …), then its collision shapes when it
// has any (NAME.collision.glb, collision.go), with the files the assembly
// read.
func (m *Mesh) ModelGLBs(ctx context.Context) (glbs [][]byte, deps []Dep, err error) {
	ctx, finish := m.deadline(ctx, "model assembly and glb export")
	defer func() { err = finish(err) }()
	glbs, _, deps, err = m.modelGLBs(ctx)
	return glbs, deps, err
}

// modelGLBs is ModelGLBs without a deadline of its own, and the scenes
// the files were exported from (LOD 0's first).
func (m *Mesh) modelGLBs(ctx context.Context) (glbs [][]byte, scenes []*decode.Scene, deps []Dep, err error) {
	scenes, lods, deps, err := m.assemble(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	for li, s := range scenes {
		name := m.LODGLBName(li)
		if li >= lods {
			name = m.CollisionGLBName()
		}
		b, err := GLB(s)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %s: glb export: %w", m.Path, name, err)
		}
		if err := m.checkOutput(name, int64(len(b))); err != nil {
			return nil, nil, nil, err
		}
		glbs = append(glbs, b)
	}
	return glbs, scenes, deps, nil
}

// assemble decodes the model and builds one scene per LOD (lods of
// them), then one of its collision shapes when it has any.
func (m *Mesh) assemble(ctx context.Context) (scenes []*decode.Scene, lods int, deps []Dep, err error) {
	return m.assembleLODs(ctx, -1)
}

// assembleLODs is assemble of the first n LODs alone (n < 0: all of them,
// and the collision shapes).
func (m *Mesh) assembleLODs(ctx context.Context, n int) (scenes []*decode.Scene, lods int, deps []Dep, err error) {
	ctx, rec := withReads(ctx)
	model, err := m.DecodeModel(ctx)
	if err != nil {
		return nil, 0, nil, err
	}
	a := m.newAssembly(model)
	a.deps = rec.list()
	for li := range model.LODs {
		if li == n {
			break
		}
		s, err := a.lodScene(ctx, li)
		if err != nil {
			return nil, 0, nil, err
		}
		scenes = append(scenes, s)
	}
	if len(model.Colliders) > 0 && n < 0 {
		scenes = append(scenes, a.collisionScene(ctx))
	}
	// A texture cut short by ctx's end was left out: the model is not
	// made without it.
	if err := ctx.Err(); err != nil {
		return nil, 0, nil, err
	}
	a.encodeImages(scenes)
	for _, s := range scenes {
		mergeMaterials(s)
	}
	return scenes, len(model.LODs), dedupDeps(append(a.x.r.deps, a.deps...)), nil
}

// encodeImages gives every image the scenes' materials embed its PNG,
// encoded once (gltf.PNGOf; a two-channel normal map as the
// three-channel image it is embedded as), and makes the materials of
// every scene use one image per PNG: the LOD files share one encoding,
// and a texture reached through several parts (decoded for the model or
// kept from their own folders) is embedded once per file. Images are
// replaced, never changed: a kept part's scene shares them. The PNG of
// an image made of a texture version (the assembly's versions: its
// pixels, repacked or with Z rebuilt) is kept per version in
// Limits.Caches, for every model using it.
func (a *assembly) encodeImages(scenes []*decode.Scene) {
	type key struct {
		img      *decode.Image
		rebuildZ bool
	}
	// The images to encode, each once, encoded on all CPUs; the PNGs are
	// then matched in the order the materials name them.
	var keys []key
	index := map[key]int{}
	for _, s := range scenes {
		for i := range s.Materials {
			mat := &s.Materials[i]
			for _, k := range []key{{mat.BaseColorMap, false}, {mat.MetallicRoughnessMap, false}, {mat.OcclusionMap, false}, {mat.NormalMap, mat.NormalRedGreen}} {
				if _, ok := index[k]; !ok && k.img != nil {
					index[k] = len(keys)
					keys = append(keys, k)
				}
			}
		}
	}
	pngs := make([][]byte, len(keys))
	oks := make([]bool, len(keys))
	_ = decode.ParallelEach(len(keys), func(i int) error {
		pngs[i], oks[i] = a.pngOf(keys[i].img, keys[i].rebuildZ)
		return nil
	})
	pngOf := func(k key) ([]byte, bool) {
		if i, ok := index[k]; ok {
			return pngs[i], oks[i]
		}
		return gltf.PNGOf(k.img, k.rebuildZ) // a material shared by two scenes, seen canonical
	}
	done := map[key]*decode.Image{}
	// Equal PNGs are found by length, then bytes: no hash of every PNG.
	byLen := map[int][]*decode.Image{}
	canon := func(img *decode.Image, rebuildZ bool) *decode.Image {
		if img == nil {
			return nil
		}
		k := key{img, rebuildZ}
		if c, ok := done[k]; ok {
			return c
		}
		c := img
		if png, ok := pngOf(k); ok {
			c = nil
			for _, o := range byLen[len(png)] {
				if bytes.Equal(o.PNG, png) {
					c = o
					break
				}
			}
			if c == nil {
				c = &decode.Image{Name: img.Name, Ref: img.Ref, PNG: png}
				if !rebuildZ {
					c.Pixels = img.Pixels
				}
				byLen[len(png)] = append(byLen[len(png)], c)
			}
		}
		done[k] = c
		return c
	}
	for _, s := range scenes {
		for i := range s.Materials {
			mat := &s.Materials[i]
			mat.BaseColorMap = canon(mat.BaseColorMap, false)
			mat.MetallicRoughnessMap = canon(mat.MetallicRoughnessMap, false)
			mat.OcclusionMap = canon(mat.OcclusionMap, false)
			if n := canon(mat.NormalMap, mat.NormalRedGreen); n != nil && n.PNG != nil {
				mat.NormalMap, mat.NormalRedGreen = n, false
			}
		}
	}
}

// pngOf is gltf.PNGOf, kept per texture version when img is made of one.
func (a *assembly) pngOf(img *decode.Image, rebuildZ bool) ([]byte, bool) {
	v, ok := a.versions[img]
	if !ok || img.PNG != nil || img.Pixels == nil {
		return gltf.PNGOf(img, rebuildZ)
	}
	made := v.kind
	if rebuildZ {
		made += "+z"
	}
	kept, err := a.m.Limits.Caches.image(imageKey{Dep: v.Dep, png: true, maxPixels: a.m.Limits.MaxTexturePixels, made: made}, func() (*decode.Image, error) {
		png, ok := gltf.PNGOf(img, rebuildZ)
		if !ok {
			return nil, fmt.Errorf("%s: no pixels to encode", v.Path)
		}
		return &decode.Image{PNG: png}, nil
	})
	if err != nil {
		return nil, false
	}
	return kept.PNG, true
}

func dedupDeps(ds []Dep) []Dep {
	seen := map[string]bool{}
	out := ds[:0]
	for _, d := range ds {
		if !seen[d.Path] {
			seen[d.Path] = true
			out = append(out, d)
		}
	}
	return out
}

// relative turns the channels of a single-node track, which the game
// plays in the node's frame (the node's transform is m · track), into
// channels of the node's whole transform: the track is sampled at every
// time any of its channels has a key (linear, rotations spherical; step
// when any channel steps), each sample composed with m and split into
// translation, rotation and scale (a mirroring m as a negative x scale, as
// the node's own rest transform is).
func relative(m decode.Mat4, cs []decode.Channel) []decode.Channel {
	if len(cs) == 0 {
		return cs
	}
	var tc, rc, sc *decode.Channel
	var times []float32
	step := false
	for i := range cs {
		c := &cs[i]
		switch c.Path {
		case decode.PathTranslation:
			tc = c
		case decode.PathRotation:
			rc = c
		case decode.PathScale:
			sc = c
		}
		times = append(times, c.Times...)
		step = step || c.Step
	}
	slices.Sort(times)
	times = slices.Compact(times)
	node := cs[0].Index
	out := []decode.Channel{
		{Kind: decode.TargetNode, Index: node, Path: decode.PathTranslation, Times: times, Step: step},
		{Kind: decode.TargetNode, Index: node, Path: decode.PathRotation, Times: times, Step: step},
		{Kind: decode.TargetNode, Index: node, Path: decode.PathScale, Times: times, Step: step},
	}
	for _, t := range times {
		trs := decode.Identity()
		if tc != nil {
			trs.Translation = [3]float32(sample(tc, t, 3))
		}
		if rc != nil {
			trs.Rotation = [4]float32(sample(rc, t, 4))
		}
		if sc != nil {
			trs.Scale = [3]float32(sample(sc, t, 3))
		}
		w := m.Mul(trs.Matrix()).TRS()
		out[0].Values = append(out[0].Values, w.Translation[:]...)
		out[1].Values = append(out[1].Values, w.Rotation[:]...)
		out[2].Values = append(out[2].Values, w.Scale[:]...)
	}
	return out
}

// sample is channel c's value at time t (n floats): held before the
// first key and after the last, interpolated between (step: the earlier
// key), rotations by spherical interpolation.
func sample(c *decode.Channel, t float32, n int) []float32 {
	keys := min(len(c.Times), len(c.Values)/n)
	if keys == 0 {
		if n == 4 {
			return []float32{0, 0, 0, 1}
		}
		if c.Path == decode.PathScale {
			return []float32{1, 1, 1}
		}
		return make([]float32, n)
	}
	at := func(k int) []float32 { return c.Values[k*n : k*n+n] }
	k := sort.Search(keys, func(i int) bool { return c.Times[i] > t }) // first key after t
	switch {
	case k == 0:
		return at(0)
	case k == keys:
		return at(keys - 1)
	case c.Step:
		return at(k - 1)
	}
	a, b := at(k-1), at(k)
	u := (t - c.Times[k-1]) / (c.Times[k] - c.Times[k-1])
	if n == 4 {
		return slerp(a, b, u)
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = a[i] + (b[i]-a[i])*u
	}
	return v
}

func slerp(a, b []float32, u float32) []float32 {
	dot := float64(a[0]*b[0] + a[1]*b[1] + a[2]*b[2] + a[3]*b[3])
	sign := 1.0
	if dot < 0 {
		dot, sign = -dot, -1
	}
	wa, wb := 1-float64(u), float64(u)
	if dot < 0.9995 {
		th := math.Acos(dot)
		wa, wb = math.Sin((1-float64(u))*th)/math.Sin(th), math.Sin(float64(u)*th)/math.Sin(th)
	}
	v := make([]float32, 4)
	var l float64
	for i := range v {
		x := wa*float64(a[i]) + sign*wb*float64(b[i])
		v[i] = float32(x)
		l += x * x
	}
	if l = math.Sqrt(l); l > 0 {
		for i := range v {
			v[i] = float32(float64(v[i]) / l)
		}
	}
	return v
}

// mergeMaterials makes s hold each distinct material once: materials with
// the same name (the material file, or the model's name for it), texture
// references, factors, flags and images (encodeImages made equal PNGs one
// image) become the first of them, and the primitives using them use it.
// Parts sharing a material file thus share one glTF material.
func mergeMaterials(s *decode.Scene) {
	if len(s.Materials) < 2 {
		return
	}
	first := map[string]int{}
	remap := make([]int, len(s.Materials))
	var kept []decode.Material
	for i := range s.Materials {
		k := materialKey(&s.Materials[i])
		j, ok := first[k]
		if !ok {
			j = len(kept)
			first[k] = j
			kept = append(kept, s.Materials[i])
		}
		remap[i] = j
	}
	if len(kept) == len(s.Materials) {
		return
	}
	s.Materials = kept
	for mi := range s.Meshes {
		for pi := range s.Meshes[mi].Primitives {
			if p := &s.Meshes[mi].Primitives[pi]; p.Material >= 0 && p.Material < len(remap) {
				p.Material = remap[p.Material]
			}
		}
	}
}

// materialKey is what makes two materials one (mergeMaterials); images
// by identity.
func materialKey(m *decode.Material) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q %v %v %v %v %v %v %p %p %p %p", m.Name, m.DoubleSided, m.AlphaBlend, m.AlphaMask, m.AlphaCutoff,
		m.BaseColor, m.NormalRedGreen, m.BaseColorMap, m.NormalMap, m.MetallicRoughnessMap, m.OcclusionMap)
	for _, t := range m.Textures {
		fmt.Fprintf(&b, " %q=%q", t.Role, t.Path)
	}
	return b.String()
}
