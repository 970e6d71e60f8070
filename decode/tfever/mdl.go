package tfever

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"path/filepath"
	"strings"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/tfever/luasandbox"
)

// Mdl is the Transport Fever 2 .mdl model: a Lua script whose data()
// returns
//
//	{ boundingInfo = {bbMin = {3}, bbMax = {3}},
//	  collider = {type = "BOX" | "CYLINDER" | "MESH" | …, params = {halfExtents = {3}, …}, transf = {16}},
//	  lods = {{node = NODE, visibleFrom = m, visibleTo = m, static = b}, …},
//	  metadata = {…}, version = 1 }
//
// where a NODE is {name, transf = {16 numbers, column-major, translation at
// 13–15; identity when missing}, children = {NODE, …}, mesh = "rel.msh",
// materials = {"rel.mtl", …} (one per sub-mesh), skin = "rel.msh",
// skinMaterials = {…} (a skinned mesh), meshes = {{mesh, materials,
// transf}, …}, animations = {set = {type = "KEYFRAME", params = {keyframes =
// {{time (ms), rot (degrees about Z, Y, X), transl}}, origin}, forward} |
// {type = "FILE_REF", params = {id = "rel.ani"}}}} (FORMATS.md §4.2). Mesh,
// material and animation paths are relative to res/models/mesh/,
// res/models/material/ and res/models/animation/; required modules are
// res/scripts/ files (ScriptModule), read through Source.OpenAsset.
//
// A node's animation is relative to its transf (the game plays it in the
// node's frame: a mirrored door's track opens it outwards on both sides),
// so the node's transform at time t is transf·A(t). KEYFRAME tracks become
// channels holding that product; a FILE_REF track stays a file for the
// assembler, which composes it the same way (decode.ModelAnimation).
//
// A LOD without node but with children is the Train Fever (1) layout:
// children = {{id = "rel.msh", type = "MESH", transf}, {id = "rel.grp",
// type = "GROUP", transf}, …} (a group is a res/models/group/ script
// returning {children, matConfigs} of the same shape), matConfigs = {{c,
// …}, …} (row 1, what the game shows first, picks per child the
// configuration of its mesh's own materials: ModelPart.MaterialConfig;
// real rows are shorter or longer than the children, a missing entry is
// 0), events = {name = {[child] = {name = "take", forward = b}}} (each
// plays one of the child mesh's own KEYFRAME animations on its node,
// backwards when not forward: animations name/child), an empty
// animations table (kept in header.json), visibleFrom and visibleTo.
// mdl_tf1.go names the public files this was fitted to. A group that is
// missing or fails is listed, its node left empty.
//
// The model is read alone: its parts are references (decode.Model). A
// module the script requires but that is not found (the base game's vec3
// and transf, which mods require without using in data()) is a stub that
// fails when the script uses one of its fields; header.json lists every
// module and what it resolved to.
type Mdl struct {
	Limits luasandbox.Limits
}

func (Mdl) Name() string { return "transport-fever-mdl" }

// Extensions implements decode.Extensions.
func (Mdl) Extensions() []string { return []string{".mdl"} }

// Sniff takes a .mdl whose head is text and does not start (after a BOM
// and white space) the way a GEM .mdl does, with a ';' comment or a '{'
// (neither starts a Lua chunk). A head of white space alone is taken: Scan
// then tells a GEM file by its first character and fails clearly.
func (Mdl) Sniff(name string, head []byte) bool {
	if !hasExt(name, ".mdl") || !looksLikeText(head) {
		return false
	}
	c := firstChar(head)
	return c != ';' && c != '{'
}

func (Mdl) StripExt(name string) string { return stripExt(name, ".mdl") }

// chunkName is the name the script runs under, which debug.getinfo gives
// scripts as their source: the path from the folder holding res/ (a mod's
// folder, whose name mods read), else the file's base name.
func chunkName(name string) string {
	s := filepath.ToSlash(name)
	i := strings.LastIndex(s, "/res/")
	if i < 0 {
		if strings.HasPrefix(s, "res/") {
			return s
		}
		return path.Base(s)
	}
	return s[strings.LastIndex(s[:i], "/")+1:]
}

// firstChar is the first byte of b after a UTF-8 BOM and ASCII white space,
// or 0.
func firstChar(b []byte) byte {
	s := strings.TrimPrefix(string(b), "\ufeff")
	s = strings.TrimLeft(s, " \t\r\n\f\v")
	if s == "" {
		return 0
	}
	return s[0]
}

// Limits of one model, beyond the sandbox's: each node, part and
// animation costs a few hundred bytes of the Model and of header.json,
// and real models have tens (the inova: 85 nodes, 48 animations).
const (
	MaxModelNodes      = 10_000
	MaxModelParts      = 10_000
	MaxModelAnimations = 10_000
	// MaxPartMaterials caps one part's materials (one per sub-mesh: real
	// parts have one to three).
	MaxPartMaterials = 1_000
)

// maxModuleFile bounds a required module's size before reading it, as the
// sandbox would refuse a larger one anyway.
func (f Mdl) maxScript() int64 {
	if f.Limits.MaxScript > 0 {
		return int64(f.Limits.MaxScript)
	}
	return luasandbox.DefaultMaxScript
}

// required is one module the script required.
type required struct {
	Module, Opened, Unresolved string
}

// mdlFile is what the script gives: the model and the header fields.
type mdlFile struct {
	model    *decode.Model
	requires []required
	lods     []decode.Fields // per LOD, for header.json
	anims    []decode.Fields
	meshes   []string
	mats     []string
}

// load reads and runs the script and reads its result.
func (f Mdl) load(ctx context.Context, src *decode.Source) (*mdlFile, error) {
	script, err := readScript(src, f.Limits)
	if err != nil {
		return nil, err
	}
	if c := firstChar(script); c == ';' || c == '{' {
		return nil, decode.Errorf(src.Name, "data.lua", "", 0,
			"the file starts with %q: a GEM model (text S-expression), not a Transport Fever Lua script", c)
	}
	out := &mdlFile{}
	load := func(module string) (string, []byte, error) {
		rel, err := ScriptModule(module)
		if err != nil {
			return "", nil, err
		}
		if src.OpenAsset == nil {
			out.requires = append(out.requires, required{Module: module, Unresolved: "no asset roots to look in"})
			return rel, stubModule(module, rel+": no asset roots to look in"), nil
		}
		b, opened, err := f.readModule(src, rel)
		if err != nil {
			reason := err.Error()
			if errors.Is(err, decode.ErrLimit) {
				return "", nil, err
			}
			out.requires = append(out.requires, required{Module: module, Unresolved: reason})
			return rel, stubModule(module, reason), nil
		}
		out.requires = append(out.requires, required{Module: module, Opened: opened})
		return opened, b, nil
	}
	v, err := luasandbox.RunRequire(ctx, chunkName(src.Name), script, f.Limits, load)
	if err != nil {
		fe := &decode.FormatError{File: src.Name, Section: "data.lua", Field: "data()", Msg: "running the script", Err: err}
		if errors.Is(err, luasandbox.ErrLimit) || errors.Is(err, luasandbox.ErrTimeout) {
			fe.Err = limitErr{err}
		}
		return out, fe
	}
	r := &mdlReader{reader: reader{file: src.Name}, out: out, seenMesh: map[string]bool{}, seenMat: map[string]bool{},
		openGroup: f.groupScripts(ctx, src, load)}
	if err := r.model(v); err != nil {
		return out, err
	}
	return out, nil
}

// readModule reads rel beneath the asset roots, refusing one larger than
// a script may be before reading it.
func (f Mdl) readModule(src *decode.Source, rel string) ([]byte, string, error) {
	r, size, opened, err := src.OpenAsset(rel)
	if err != nil {
		return nil, "", err
	}
	if c, ok := r.(io.Closer); ok {
		defer c.Close()
	}
	if size > f.maxScript() || size < 0 {
		return nil, "", fmt.Errorf("%s is %d bytes, more than the limit of %d: %w", opened, size, f.maxScript(), decode.ErrLimit)
	}
	b := make([]byte, size)
	if _, err := r.ReadAt(b, 0); err != nil && !(errors.Is(err, io.EOF) && size == 0) {
		return nil, "", fmt.Errorf("reading %s: %w", opened, err)
	}
	return b, opened, nil
}

// stubModule is the Lua source of a module that was not found: a table
// whose every field fails, naming the module and why it is missing.
func stubModule(module, reason string) []byte {
	msg := luaText(fmt.Sprintf("require %q: the module was not found (%s), and the script uses its field ", module, reason))
	return []byte(`return setmetatable({}, { __index = function(_, k) error("` + msg + `" .. tostring(k), 2) end })`)
}

// luaText keeps printable ASCII but quotes and backslashes, so the text
// is safe inside a Lua string literal.
func luaText(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			c = '\''
		}
		b.WriteByte(c)
	}
	return b.String()
}

// mdlReader turns the script's result into a decode.Model.
type mdlReader struct {
	reader
	out                  *mdlFile
	nodes, parts, nanims int
	seenMesh, seenMat    map[string]bool
	// animHdr is, per animation of the LOD being read, its entry in
	// out.anims.
	animHdr []int
	// openGroup reads a Train Fever group (nil: no roots to look in).
	openGroup groupOpener
}

func (r *mdlReader) limit(field, what string, n, max int) error {
	e := r.errf(field, "brings the model's %s to %d, more than the limit of %d", what, n, max)
	e.(*decode.FormatError).Err = decode.ErrLimit
	return e
}

func (r *mdlReader) model(v any) error {
	t, ok := v.(*luasandbox.Table)
	if !ok {
		return r.errf("", "data() returned a %s, want a table", typeName(v))
	}
	m := &decode.Model{Unit: "metre", Scale: 1}
	r.out.model = m
	lods, err := r.table(t.Get("lods"), "lods")
	if err != nil {
		return err
	}
	if len(lods.Seq) == 0 {
		return r.errf("lods", "has no LOD, want at least one")
	}
	for i, lv := range lods.Seq {
		if err := r.lod(lv, fmt.Sprintf("lods[%d]", i+1), i); err != nil {
			return err
		}
	}
	if bi := t.Get("boundingInfo"); bi != nil {
		m.Header.Add("boundingInfo", jsonValue(bi))
	}
	if cv := t.Get("collider"); cv != nil {
		m.Header.Add("collider", jsonValue(cv))
		c, ok, err := r.collider(cv)
		if err != nil {
			return err
		}
		if ok {
			m.Colliders = append(m.Colliders, c)
		}
	}
	if md := t.Get("metadata"); md != nil {
		m.Header.Add("metadata", jsonValue(md))
	}
	if ver := t.Get("version"); ver != nil {
		m.Header.Add("version", jsonValue(ver))
	}
	m.Header.Add("otherKeys", nonNilFields(extra(t, "lods", "boundingInfo", "collider", "metadata", "version")))
	return nil
}

func (r *mdlReader) lod(v any, field string, index int) error {
	t, err := r.table(v, field)
	if err != nil {
		return err
	}
	lod := decode.ModelLOD{}
	if x := t.Get("visibleFrom"); x != nil {
		if lod.VisibleFrom, err = r.number(x, field+".visibleFrom"); err != nil {
			return err
		}
	}
	if x := t.Get("visibleTo"); x != nil {
		if lod.VisibleTo, err = r.number(x, field+".visibleTo"); err != nil {
			return err
		}
	}
	nv := t.Get("node")
	tf1 := nv == nil && t.Get("children") != nil
	var tf1h decode.Fields
	r.animHdr = r.animHdr[:0]
	switch {
	case tf1:
		if err := r.tf1Lod(&lod, t, field, &tf1h); err != nil {
			return err
		}
	case nv == nil:
		return r.errf(field+".node", "is missing, want the LOD's root node (or the Train Fever layout's children)")
	default:
		if err := r.node(&lod, nv, -1, field+".node", index); err != nil {
			return err
		}
	}
	uniqueNames(lod.Animations)
	for i, a := range lod.Animations {
		r.out.anims[r.animHdr[i]][0].Value = a.Name
	}
	r.out.model.LODs = append(r.out.model.LODs, lod)

	var h decode.Fields
	h.Add("visibleFrom", lod.VisibleFrom)
	h.Add("visibleTo", lod.VisibleTo)
	h.Add("static", jsonValue(t.Get("static")))
	nodes := make([]decode.Fields, 0, len(lod.Nodes))
	for _, n := range lod.Nodes {
		var nf decode.Fields
		nf.Add("name", n.Name)
		nf.Add("parent", n.Parent)
		meshes := make([]string, 0, len(n.Parts))
		for _, p := range n.Parts {
			meshes = append(meshes, p.Mesh.Stored)
		}
		nf.Add("meshes", meshes)
		nodes = append(nodes, nf)
	}
	h.Add("nodes", nodes)
	h.Add("animations", len(lod.Animations))
	h = append(h, tf1h...)
	known := []string{"node", "visibleFrom", "visibleTo", "static"}
	if tf1 {
		known = append(known, "children", "matConfigs", "events", "animations")
	}
	h.Add("otherKeys", nonNilFields(extra(t, known...)))
	r.out.lods = append(r.out.lods, h)
	return nil
}

// nodeKeys are the keys of a node that the reader turns into the Model.
var nodeKeys = []string{"name", "transf", "children", "mesh", "materials", "skin", "skinMaterials", "meshes", "animations"}

func (r *mdlReader) node(lod *decode.ModelLOD, v any, parent int, field string, lodIndex int) error {
	t, err := r.table(v, field)
	if err != nil {
		return err
	}
	if r.nodes++; r.nodes > MaxModelNodes {
		return r.limit(field, "nodes", r.nodes, MaxModelNodes)
	}
	n := decode.ModelNode{Parent: parent}
	if nv := t.Get("name"); nv != nil {
		s, ok := nv.(string)
		if !ok {
			return r.errf(field+".name", "is a %s, want a string", typeName(nv))
		}
		n.Name = s
	}
	if n.Matrix, err = r.transf(t.Get("transf"), field+".transf"); err != nil {
		return err
	}
	if mv := t.Get("mesh"); mv != nil {
		p, err := r.part(mv, t.Get("materials"), field+".mesh", field+".materials", false)
		if err != nil {
			return err
		}
		n.Parts = append(n.Parts, p)
	}
	if sv := t.Get("skin"); sv != nil {
		p, err := r.part(sv, t.Get("skinMaterials"), field+".skin", field+".skinMaterials", true)
		if err != nil {
			return err
		}
		n.Parts = append(n.Parts, p)
	}
	n.Extras = extra(t, nodeKeys...)
	idx := len(lod.Nodes)
	lod.Nodes = append(lod.Nodes, n)

	// A meshes entry with a transform of its own is a child node, so that
	// every part sits at its node's transform.
	ms, err := r.table(t.Get("meshes"), field+".meshes")
	if err != nil {
		return err
	}
	for i, ev := range ms.Seq {
		ef := fmt.Sprintf("%s.meshes[%d]", field, i+1)
		et, err := r.table(ev, ef)
		if err != nil {
			return err
		}
		p, err := r.part(et.Get("mesh"), et.Get("materials"), ef+".mesh", ef+".materials", false)
		if err != nil {
			return err
		}
		if et.Get("transf") == nil {
			lod.Nodes[idx].Parts = append(lod.Nodes[idx].Parts, p)
			continue
		}
		if r.nodes++; r.nodes > MaxModelNodes {
			return r.limit(ef, "nodes", r.nodes, MaxModelNodes)
		}
		c := decode.ModelNode{Parent: idx, Parts: []decode.ModelPart{p}}
		c.Name, _ = et.Get("name").(string)
		if c.Name == "" {
			c.Name = strings.TrimSuffix(lastElem(p.Mesh.Stored), ".msh")
		}
		if c.Matrix, err = r.transf(et.Get("transf"), ef+".transf"); err != nil {
			return err
		}
		c.Extras = extra(et, "name", "mesh", "materials", "transf")
		lod.Nodes = append(lod.Nodes, c)
	}

	if err := r.animations(lod, t.Get("animations"), idx, field+".animations", lodIndex); err != nil {
		return err
	}
	ch, err := r.table(t.Get("children"), field+".children")
	if err != nil {
		return err
	}
	for i, cv := range ch.Seq {
		if err := r.node(lod, cv, idx, fmt.Sprintf("%s.children[%d]", field, i+1), lodIndex); err != nil {
			return err
		}
	}
	return nil
}

// uniqueNames gives the animations of nodes that share a name (and so
// a set/node name) the node's index too: set/node#index.
func uniqueNames(as []decode.ModelAnimation) {
	n := map[string]int{}
	for _, a := range as {
		n[a.Name]++
	}
	for i, a := range as {
		if n[a.Name] > 1 {
			as[i].Name = fmt.Sprintf("%s#%d", a.Name, a.Node)
		}
	}
}

func lastElem(p string) string {
	if i := strings.LastIndexAny(p, "/\\"); i >= 0 {
		return p[i+1:]
	}
	return p
}

var identity = decode.Mat4{0: 1, 5: 1, 10: 1, 15: 1}

// transf reads a node's 16 numbers (identity when missing) and returns
// them in the scene's Y-up basis, C·M·C⁻¹ (decode.ZUpToYUpMatrix). The last row must
// be (0, 0, 0, 1): a projective matrix places nothing.
func (r *mdlReader) transf(v any, field string) (decode.Mat4, error) {
	if v == nil {
		return identity, nil
	}
	t, err := r.table(v, field)
	if err != nil {
		return identity, err
	}
	if len(t.Seq) != 16 {
		return identity, r.errf(field, "has %d numbers, want 16", len(t.Seq))
	}
	var m [16]float64
	for i, e := range t.Seq {
		if m[i], err = r.number(e, fmt.Sprintf("%s[%d]", field, i+1)); err != nil {
			return identity, err
		}
		if math.Abs(m[i]) > 1e30 {
			return identity, r.errf(fmt.Sprintf("%s[%d]", field, i+1), "is %v, beyond what a float32 transform can hold", m[i])
		}
	}
	if math.Abs(m[3]) > 1e-6 || math.Abs(m[7]) > 1e-6 || math.Abs(m[11]) > 1e-6 || math.Abs(m[15]-1) > 1e-6 {
		return identity, r.errf(field, "has the last row (%v, %v, %v, %v), want (0, 0, 0, 1)", m[3], m[7], m[11], m[15])
	}
	return decode.ZUpToYUpMatrix(m), nil
}

// part reads a mesh name and its materials.
func (r *mdlReader) part(mv, matv any, field, matField string, skinned bool) (decode.ModelPart, error) {
	var p decode.ModelPart
	name, ok := mv.(string)
	if !ok {
		return p, r.errf(field, "is a %s, want a mesh file name", typeName(mv))
	}
	if r.parts++; r.parts > MaxModelParts {
		return p, r.limit(field, "parts", r.parts, MaxModelParts)
	}
	rel := strings.TrimPrefix(strings.ReplaceAll(name, "\\", "/"), "/")
	p.Mesh = decode.Ref{Stored: name, Base: decode.RefAssetRoot, Rel: "models/mesh/" + rel}
	p.Skinned = skinned
	if mt, ok := matv.(*luasandbox.Table); ok && len(mt.Seq) > MaxPartMaterials {
		e := r.errf(matField, "has %d materials, more than the limit of %d", len(mt.Seq), MaxPartMaterials)
		e.(*decode.FormatError).Err = decode.ErrLimit
		return p, e
	}
	mats, err := r.strings(matv, matField)
	if err != nil {
		return p, err
	}
	if len(mats) > 0 {
		p.Materials = mats
	}
	if !r.seenMesh[name] {
		r.seenMesh[name] = true
		r.out.meshes = append(r.out.meshes, name)
	}
	for _, m := range mats {
		if !r.seenMat[m] {
			r.seenMat[m] = true
			r.out.mats = append(r.out.mats, m)
		}
	}
	return p, nil
}

// animations reads a node's animation sets, each named set/node in the
// Model (a set plays on every node that has it; the name says both).
func (r *mdlReader) animations(lod *decode.ModelLOD, v any, node int, field string, lodIndex int) error {
	t, err := r.table(v, field)
	if err != nil {
		return err
	}
	if len(t.Seq) > 0 {
		return r.errf(field, "has %d unnamed entries, want animation names as keys", len(t.Seq))
	}
	nodeName := lod.Nodes[node].Name
	for _, set := range t.Keys() {
		af := field + "." + fieldKey(set)
		if r.nanims++; r.nanims > MaxModelAnimations {
			return r.limit(af, "animations", r.nanims, MaxModelAnimations)
		}
		at, err := r.table(t.Fields[set], af)
		if err != nil {
			return err
		}
		typ, _ := at.Get("type").(string)
		ma := decode.ModelAnimation{Name: set + "/" + nodeName, Node: node}
		ma.Extras.Add("set", set)
		ma.Extras.Add("node", nodeName)
		ma.Extras.Add("type", typ)
		var h decode.Fields
		h.Add("name", ma.Name)
		h.Add("lod", lodIndex)
		h.Add("node", node)
		h.Add("type", typ)
		switch typ {
		case "KEYFRAME":
			a, err := r.anim(at, set)
			if err != nil {
				if fe, ok := err.(*decode.FormatError); ok {
					fe.Field = field + strings.TrimPrefix(fe.Field, "animations")
				}
				return err
			}
			for _, kv := range a.Extra {
				ma.Extras.Add(kv.Key, kv.Value)
			}
			h.Add("keyframes", len(a.Keyframes))
			ch, err := r.keyframeChannels(a, node, lod.Nodes[node].Matrix, af)
			if err != nil {
				return err
			}
			if ch == nil {
				// An empty track moves nothing: header.json alone lists it.
				r.out.anims = append(r.out.anims, h)
				continue
			}
			ma.Channels = ch
		case "FILE_REF":
			p, err := r.table(at.Get("params"), af+".params")
			if err != nil {
				return err
			}
			id, ok := p.Get("id").(string)
			if !ok || id == "" {
				return r.errf(af+".params.id", "is a %s, want an animation file name", typeName(p.Get("id")))
			}
			rel := strings.TrimPrefix(strings.ReplaceAll(id, "\\", "/"), "/")
			ma.File = &decode.Ref{Stored: id, Base: decode.RefAssetRoot, Rel: "models/animation/" + rel}
			for _, kv := range extra(at, "type", "params") {
				ma.Extras.Add(kv.Key, kv.Value)
			}
			for _, kv := range extra(p, "id") {
				ma.Extras.Add("params."+kv.Key, kv.Value)
			}
			h.Add("file", id)
		default:
			// Other types are kept in header.json only.
			h.Add("fields", nonNilFields(extra(at, "type")))
			r.out.anims = append(r.out.anims, h)
			continue
		}
		r.animHdr = append(r.animHdr, len(r.out.anims))
		r.out.anims = append(r.out.anims, h)
		lod.Animations = append(lod.Animations, ma)
	}
	return nil
}

// keyframeChannels are a KEYFRAME track's channels on node: at each key
// the node's transform is its matrix times the key's (keyframeTRS, in the
// Y-up basis), split into translation, rotation and scale. All three are
// written, so the channels replace the node's transform whatever the
// assembler's split of its matrix. Interpolating them matches
// interpolating the key's own translation and rotation: the node's matrix
// is constant, and multiplying by it is linear in the translation and
// keeps spherical interpolation of the rotation.
func (r *mdlReader) keyframeChannels(a keyAnim, node int, m decode.Mat4, field string) ([]decode.Channel, error) {
	if len(a.Keyframes) == 0 {
		return nil, nil
	}
	tr := decode.Channel{Kind: decode.TargetJoint, Index: node, Path: decode.PathTranslation}
	rc := decode.Channel{Kind: decode.TargetJoint, Index: node, Path: decode.PathRotation}
	sc := decode.Channel{Kind: decode.TargetJoint, Index: node, Path: decode.PathScale}
	var prev quat
	for i, k := range a.Keyframes {
		t, q := keyframeTRS(a.Origin, k)
		key := trsMatrix(zUpToYUp64(t), q.zUpToYUp())
		tt, qq, ss, err := decompose([16]float64(m.Mul(key)))
		if err != nil {
			return nil, r.errf(fmt.Sprintf("%s.params.keyframes[%d]", field, i+1), "the node's transform at this key: %v", err)
		}
		qq = continuous(prev, qq, i)
		prev = qq
		sec := float32(k.Time / 1000)
		tr.Times = append(tr.Times, sec)
		rc.Times = append(rc.Times, sec)
		sc.Times = append(sc.Times, sec)
		tr.Values = append(tr.Values, float32(tt[0]), float32(tt[1]), float32(tt[2]))
		rc.Values = append(rc.Values, float32(qq[0]), float32(qq[1]), float32(qq[2]), float32(qq[3]))
		sc.Values = append(sc.Values, float32(ss[0]), float32(ss[1]), float32(ss[2]))
	}
	if !increasing(tr.Times) {
		return nil, r.errf(field+".params.keyframes", "times do not increase strictly as float32 seconds")
	}
	return []decode.Channel{tr, rc, sc}, nil
}

// trsMatrix is translation t · rotation q as a column-major matrix.
func trsMatrix(t [3]float64, q quat) decode.Mat4 {
	x, y, z, w := q[0], q[1], q[2], q[3]
	return decode.Mat4{
		1 - 2*(y*y+z*z), 2 * (x*y + w*z), 2 * (x*z - w*y), 0,
		2 * (x*y - w*z), 1 - 2*(x*x+z*z), 2 * (y*z + w*x), 0,
		2 * (x*z + w*y), 2 * (y*z - w*x), 1 - 2*(x*x+y*y), 0,
		t[0], t[1], t[2], 1,
	}
}

// collider reads a BOX or CYLINDER collider as a shape at the model's
// root: its transf in the Y-up basis, a box's full extents or a
// cylinder's radius and height from params.halfExtents (the cylinder's
// axis taken as the game's Z, the scene's Y; no real file here has a
// cylinder to confirm it). Other types (MESH: the model's own meshes;
// POINT_CLOUD, NONE) are in header.json only.
func (r *mdlReader) collider(v any) (decode.Collider, bool, error) {
	c := decode.Collider{Name: "collider", Node: -1}
	t, err := r.table(v, "collider")
	if err != nil {
		return c, false, err
	}
	typ, _ := t.Get("type").(string)
	switch typ {
	case "BOX":
		c.Kind = "box"
	case "CYLINDER":
		c.Kind = "cylinder"
	default:
		return c, false, nil
	}
	if c.Matrix, err = r.transf(t.Get("transf"), "collider.transf"); err != nil {
		return c, false, err
	}
	p, err := r.table(t.Get("params"), "collider.params")
	if err != nil {
		return c, false, err
	}
	he, err := r.vec3(p.Get("halfExtents"), "collider.params.halfExtents")
	if err != nil {
		return c, false, err
	}
	for i := range he {
		he[i] = math.Abs(he[i])
	}
	if c.Kind == "box" {
		c.Size = [3]float64{2 * he[0], 2 * he[2], 2 * he[1]}
	} else {
		c.Size = [3]float64{max(he[0], he[1]), 2 * he[2], 0}
	}
	return c, true, nil
}

func scanRequires(rs []required) []decode.Fields {
	out := make([]decode.Fields, 0, len(rs))
	for _, q := range rs {
		var f decode.Fields
		f.Add("module", q.Module)
		if q.Unresolved != "" {
			f.Add("unresolved", q.Unresolved)
		} else {
			f.Add("opened", q.Opened)
		}
		out = append(out, f)
	}
	return out
}

// Scan runs the script and reports the model's structure: its LODs with
// their ranges and node trees, the meshes, materials and animations it
// names, its bounding box, collider and metadata, and the modules it
// required. The script is the one chunk.
func (f Mdl) Scan(ctx context.Context, src *decode.Source) (*decode.Structure, error) {
	st := &decode.Structure{Format: f.Name()}
	st.Header.Add("scriptBytes", src.Size)
	st.Chunks = append(st.Chunks, scriptChunk(src.Size))
	mf, err := f.load(ctx, src)
	if mf != nil {
		st.Header.Add("requires", scanRequires(mf.requires))
	}
	if err != nil {
		return st, err
	}
	m := mf.model
	st.Header.Add("unit", m.Unit)
	st.Header.Add("lodCount", len(m.LODs))
	st.Header.Add("lods", mf.lods)
	st.Header.Add("meshes", nonNilStrings(mf.meshes))
	st.Header.Add("materials", nonNilStrings(mf.mats))
	st.Header.Add("animations", nonNilList(mf.anims))
	colliders := make([]decode.Fields, 0, len(m.Colliders))
	for _, c := range m.Colliders {
		var cf decode.Fields
		cf.Add("kind", c.Kind)
		cf.Add("size", c.Size)
		colliders = append(colliders, cf)
	}
	st.Header.Add("colliders", colliders)
	st.Header = append(st.Header, m.Header...)
	return st, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilList(s []decode.Fields) []decode.Fields {
	if s == nil {
		return []decode.Fields{}
	}
	return s
}

// DecodeModel runs the script and returns the model it describes.
func (f Mdl) DecodeModel(ctx context.Context, src *decode.Source) (*decode.Model, error) {
	mf, err := f.load(ctx, src)
	if err != nil {
		return nil, err
	}
	m := mf.model
	m.Header = append(decode.Fields{{Key: "requires", Value: scanRequires(mf.requires)}}, m.Header...)
	return m, nil
}

// Decode is not how a model is read: export/outputs assembles it from
// DecodeModel's references.
func (f Mdl) Decode(ctx context.Context, src *decode.Source) (*decode.Scene, error) {
	return nil, decode.Errorf(src.Name, "", "", 0, "a Transport Fever model is assembled from the files it names (DecodeModel), not decoded alone")
}

var _ decode.ModelDecoder = Mdl{}
