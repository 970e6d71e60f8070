// Package gltf exports a decode.Scene as binary glTF 2.0 (.glb).
//
// The document is described with github.com/qmuntal/gltf's types, but the
// binary chunk is laid out and written here: every accessor's place in the
// buffer is reserved first, the JSON is marshalled, and only then is the
// output allocated once, at its final size and without zeroing (every byte
// is written), and the vertex data written straight into it (in parallel for
// large scenes), each attribute range checked and then copied when it needs
// no repair (unit normals, finite numbers, colours in [0, 1]). The modeler helpers would
// copy the whole buffer on every append and encode element by element via
// reflection.
//
// Whatever the scene holds, the output keeps the glTF rules the Khronos
// validator checks: non-finite floats become 0, normals and tangents are
// made unit length, tangent w is ±1, skin weights are renormalised so their
// float32 sum is 1, colours are clamped to [0, 1], quaternions are made unit,
// animation times are made strictly increasing. Contract violations that
// cannot be repaired without guessing (an index past the vertex count, an
// attribute of the wrong length) are errors.
//
// Names: each scene mesh is one node and one glTF mesh named after it, and
// each of its primitives (a GEM section, a Transport Fever submesh) one
// glTF primitive. glTF primitives have no names that importers show, so a
// primitive's name travels in its material's name, which they do (Blender
// lists it in the object's material slots, and selecting a slot selects
// the part's faces): see MaterialName. A node per primitive would name the
// parts too, but would break a skinned or animated mesh into several
// objects; a decoder that wants separate objects makes separate meshes
// (UNIGINE: one mesh per surface, named after it, whose material is then
// named after it as well). The name is also kept in the primitive's extras.
package gltf

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/meshfs/meshfs/decode"
	qgltf "github.com/qmuntal/gltf"
)

// Generator is the asset.generator of every exported file.
const Generator = "meshfs"

// Encode returns the scene as a .glb. The same scene always gives the same
// bytes.
func Encode(s *decode.Scene) ([]byte, error) { return encodeWith(s, newOutput) }

// encodeWith is Encode with the output allocated by newOut (whatever bytes it
// holds: every one is written).
func encodeWith(s *decode.Scene, newOut func(n int) []byte) ([]byte, error) {
	b := &builder{doc: &qgltf.Document{Asset: qgltf.Asset{Version: "2.0", Generator: Generator}}, newOut: newOut}
	if err := b.scene(s); err != nil {
		// An index out of range in this or an earlier primitive comes
		// first, as when indices were checked before anything else.
		if ierr := b.checkIndices(true); ierr != nil {
			return nil, ierr
		}
		return nil, err
	}
	out, err := b.glb()
	if err != nil {
		if ierr := b.checkIndices(true); ierr != nil {
			return nil, ierr
		}
		return nil, err
	}
	if err := b.checkIndices(false); err != nil {
		return nil, err
	}
	return out, nil
}

// job writes elements [lo, hi) of one piece of buffer data into bin.
// Jobs write disjoint bytes, so they may run in any order or in parallel.
type job struct {
	n  int
	fn func(bin []byte, lo, hi int)
}

type builder struct {
	doc    *qgltf.Document
	newOut func(n int) []byte // allocates the output (newOutput)
	binLen int
	jobs   []job
	// indices are the primitives' index lists, in scene order, checked
	// against their vertex counts by the jobs that write them (one pass
	// over the data instead of two) or, when the scene is refused for
	// another reason, by checkIndices' own scan.
	indices []*indexCheck
	// pads are the offsets of the alignment padding after each
	// reservation whose length is not a multiple of 4 (it runs to the
	// next multiple of 4).
	pads []int
	// materials are the scene's; named holds the materials made for
	// named primitives (see MaterialName), by name and scene material.
	sceneMaterials []decode.Material
	named          map[namedMaterial]int
	// textures are the embedded images' texture indices (images.go).
	textures map[imageKey]int
	// treeNodes is how many nodes a scene's node tree has (nodes.go):
	// glTF nodes 0 to treeNodes−1 are its nodes.
	treeNodes int
}

// namedMaterial is a material made for primitives called name whose scene
// material is mat (−1 for none).
type namedMaterial struct {
	name string
	mat  int
}

// indexCheck is one primitive's index list and the largest value its
// write jobs have seen.
type indexCheck struct {
	idx      []uint32
	n        int
	mi, pi   int
	mesh, pr string
	max      atomic.Uint32
}

// see records the largest index of one written range.
func (c *indexCheck) see(m uint32) {
	for {
		cur := c.max.Load()
		if m <= cur || c.max.CompareAndSwap(cur, m) {
			return
		}
	}
}

// checkIndices returns the error for the first primitive with an index
// past its vertex count: from the maxima the write jobs recorded, or with
// scan from the lists themselves.
func (b *builder) checkIndices(scan bool) error {
	for _, c := range b.indices {
		m := c.max.Load()
		if scan {
			m = maxIndex(c.idx)
		}
		if int64(m) >= int64(c.n) {
			return fmt.Errorf("mesh %d (%q) primitive %d (%q): index %d out of range for %d vertices", c.mi, c.mesh, c.pi, c.pr, m, c.n)
		}
	}
	return nil
}

// alloc reserves n bytes of the binary chunk, 4-byte aligned, and returns
// their offset.
func (b *builder) alloc(n int) int {
	off := b.binLen
	b.binLen += (n + 3) &^ 3
	if n&3 != 0 {
		// The output is not zeroed (see newOutput): glb clears the
		// padding itself.
		b.pads = append(b.pads, off+n)
	}
	return off
}

func (b *builder) addJob(n int, fn func(bin []byte, lo, hi int)) {
	if n > 0 {
		b.jobs = append(b.jobs, job{n, fn})
	}
}

// view adds a buffer view over [off, off+n). Vertex attributes get their
// element size as byteStride and the ARRAY_BUFFER target; indices the
// ELEMENT_ARRAY_BUFFER target and no stride; animation data and inverse bind
// matrices neither (the validator rejects a target or stride on those).
func (b *builder) view(off, n, stride int, target qgltf.Target) int {
	b.doc.BufferViews = append(b.doc.BufferViews, &qgltf.BufferView{
		Buffer: 0, ByteOffset: off, ByteLength: n, ByteStride: stride, Target: target,
	})
	return len(b.doc.BufferViews) - 1
}

func (b *builder) accessor(a *qgltf.Accessor) int {
	b.doc.Accessors = append(b.doc.Accessors, a)
	return len(b.doc.Accessors) - 1
}

// vertexAccessor reserves count elements of size bytes as a vertex
// attribute, schedules fn to fill them and returns the accessor index. fn
// receives the element range [lo, hi) and the bytes of exactly that range.
func (b *builder) vertexAccessor(count, size int, ct qgltf.ComponentType, typ qgltf.AccessorType, normalized bool,
	min, max []float64, fn func(dst []byte, lo, hi int)) int {
	off := b.alloc(count * size)
	v := b.view(off, count*size, size, qgltf.TargetArrayBuffer)
	b.addJob(count, func(bin []byte, lo, hi int) { fn(bin[off+lo*size:off+hi*size], lo, hi) })
	return b.accessor(&qgltf.Accessor{BufferView: qgltf.Index(v), ComponentType: ct, Type: typ,
		Count: count, Normalized: normalized, Min: min, Max: max})
}

// plainAccessor is vertexAccessor for data that is not a vertex attribute
// (animation samplers, inverse bind matrices): no target, no stride.
func (b *builder) plainAccessor(count, size int, typ qgltf.AccessorType, min, max []float64,
	fn func(dst []byte, lo, hi int)) int {
	off := b.alloc(count * size)
	v := b.view(off, count*size, 0, qgltf.TargetNone)
	b.addJob(count, func(bin []byte, lo, hi int) { fn(bin[off+lo*size:off+hi*size], lo, hi) })
	return b.accessor(&qgltf.Accessor{BufferView: qgltf.Index(v), ComponentType: qgltf.ComponentFloat, Type: typ,
		Count: count, Min: min, Max: max})
}

// glb marshals the JSON, allocates the whole file once and runs the jobs
// into its binary chunk.
func (b *builder) glb() ([]byte, error) {
	if b.binLen > math.MaxUint32-1<<20 {
		return nil, fmt.Errorf("binary data of %d bytes exceeds the GLB limit of 4 GiB", b.binLen)
	}
	if b.binLen > 0 {
		b.doc.Buffers = []*qgltf.Buffer{{ByteLength: b.binLen}}
	}
	js, err := json.Marshal(b.doc)
	if err != nil {
		return nil, fmt.Errorf("glTF JSON: %w", err)
	}
	jsonLen := (len(js) + 3) &^ 3
	total := 12 + 8 + jsonLen
	if b.binLen > 0 {
		total += 8 + b.binLen
	}
	if total > math.MaxUint32 {
		return nil, fmt.Errorf("GLB of %d bytes exceeds the 4 GiB limit", total)
	}
	// Every byte of out is written below: header, JSON and its padding,
	// the jobs' data and the alignment padding, so it need not be zeroed
	// first (36 MB for a million triangles: 3–4 ms of CPU).
	out := b.newOut(total)
	le := binary.LittleEndian
	le.PutUint32(out[0:], 0x46546C67) // "glTF"
	le.PutUint32(out[4:], 2)
	le.PutUint32(out[8:], uint32(total))
	le.PutUint32(out[12:], uint32(jsonLen))
	le.PutUint32(out[16:], 0x4E4F534A) // "JSON"
	copy(out[20:], js)
	for i := 20 + len(js); i < 20+jsonLen; i++ {
		out[i] = ' '
	}
	if b.binLen > 0 {
		p := 20 + jsonLen
		le.PutUint32(out[p:], uint32(b.binLen))
		le.PutUint32(out[p+4:], 0x004E4942) // "BIN\0"
		bin := out[p+8:]
		for _, at := range b.pads {
			clear(bin[at : (at+3)&^3])
		}
		runJobs(bin, b.jobs, b.binLen)
	}
	return out, nil
}

// chunkElems is the number of elements one parallel task writes.
const chunkElems = 1 << 15

// runJobs runs the jobs, splitting large ones into ranges and spreading them
// over the CPUs when there is enough data to pay for the goroutines.
func runJobs(bin []byte, jobs []job, size int) {
	workers := runtime.GOMAXPROCS(0)
	if size < 4<<20 || workers < 2 {
		for _, j := range jobs {
			j.fn(bin, 0, j.n)
		}
		return
	}
	type task struct {
		j      *job
		lo, hi int
	}
	var tasks []task
	for i := range jobs {
		j := &jobs[i]
		for lo := 0; lo < j.n; lo += chunkElems {
			tasks = append(tasks, task{j, lo, min(lo+chunkElems, j.n)})
		}
	}
	decode.ParallelEach(len(tasks), func(i int) error {
		tasks[i].j.fn(bin, tasks[i].lo, tasks[i].hi)
		return nil
	})
}

// scene describes the whole document and schedules its data.
func (b *builder) scene(s *decode.Scene) error {
	doc := b.doc
	b.materials(s.Materials)
	if len(s.Nodes) > 0 {
		return b.nodeTree(s)
	}

	nJoints := 0
	if s.Skeleton != nil {
		nJoints = len(s.Skeleton.Joints)
	}
	if nJoints > math.MaxUint16+1 {
		return fmt.Errorf("skeleton has %d joints; glTF JOINTS_0 holds at most 65536", nJoints)
	}

	// Nodes: one per mesh first (so Scene.Meshes[i] is node i), then one per
	// joint, then the common skeleton root when there are several roots.
	meshNode := make([]int, len(s.Meshes))
	var roots []int
	for i := range s.Meshes {
		m := &s.Meshes[i]
		n := &qgltf.Node{Name: m.Name}
		setTRS(n, m.Transform)
		gm, err := b.mesh(s, i, nJoints)
		if err != nil {
			return err
		}
		if gm != nil {
			doc.Meshes = append(doc.Meshes, gm)
			n.Mesh = qgltf.Index(len(doc.Meshes) - 1)
			if m.Skinned && nJoints > 0 {
				n.Skin = qgltf.Index(0)
			}
		}
		doc.Nodes = append(doc.Nodes, n)
		meshNode[i] = len(doc.Nodes) - 1
		// A skinned mesh's node stays a scene root: parent transforms
		// would not affect it (validator NODE_SKINNED_MESH_NON_ROOT).
		roots = append(roots, meshNode[i])
	}

	var jointNode []int
	if nJoints > 0 {
		var skelRoots []int
		jointNode, skelRoots = b.skeleton(s.Skeleton)
		skin := &qgltf.Skin{Name: "skin", Joints: jointNode}
		if len(skelRoots) == 1 {
			skin.Skeleton = qgltf.Index(skelRoots[0])
			roots = append(roots, skelRoots[0])
		} else {
			// Several root joints: one common parent keeps SKIN_NO_COMMON_ROOT
			// away and gives Blender a single armature.
			doc.Nodes = append(doc.Nodes, &qgltf.Node{Name: "Armature", Children: skelRoots})
			root := len(doc.Nodes) - 1
			skin.Skeleton = qgltf.Index(root)
			roots = append(roots, root)
		}
		skin.InverseBindMatrices = qgltf.Index(b.inverseBinds(s.Skeleton))
		doc.Skins = []*qgltf.Skin{skin}
	}

	for i := range s.Animations {
		b.animation(&s.Animations[i], meshNode, jointNode)
	}

	doc.Scenes = []*qgltf.Scene{{Nodes: roots}}
	doc.Scene = qgltf.Index(0)
	return nil
}

func (b *builder) materials(ms []decode.Material) {
	b.sceneMaterials = ms
	for i := range ms {
		b.doc.Materials = append(b.doc.Materials, b.material(&ms[i], ms[i].Name))
	}
}

// MaterialName is the name of the glTF material of a primitive called
// prim whose scene material is called mat (has false: it has none), or ""
// for none. Importers show material names, not primitive names, so a
// named primitive's material carries its name: the scene material's name
// when it is the same (GEM sections are named after their materials), the
// primitive's alone when it has no material (UNIGINE surfaces), else
// "prim (mat)" (Transport Fever submeshes). An unnamed primitive uses its
// scene material as it is, and so does every primitive of a scene with a
// node tree (an assembled model): its materials are the model's, each
// once and named after its file, and the primitive's name is in its
// extras only.
func MaterialName(prim, mat string, has bool) string {
	switch {
	case prim == "" || has && prim == mat:
		return mat
	case !has:
		return prim
	}
	return prim + " (" + mat + ")"
}

// materialOf returns the glTF material of p: the scene's, or one made for
// its name (MaterialName) after the scene's, once per name and material.
func (b *builder) materialOf(p *decode.Primitive) *int {
	has := p.Material >= 0 && p.Material < len(b.sceneMaterials)
	mat := ""
	if has {
		mat = b.sceneMaterials[p.Material].Name
	}
	name := MaterialName(p.Name, mat, has)
	switch {
	case has && b.treeNodes > 0:
		return qgltf.Index(p.Material)
	case name == "" && !has:
		return nil
	case has && name == mat:
		return qgltf.Index(p.Material)
	}
	key := namedMaterial{p.Name, -1}
	base := decode.Material{}
	if has {
		key.mat, base = p.Material, b.sceneMaterials[p.Material]
	}
	if i, ok := b.named[key]; ok {
		return qgltf.Index(i)
	}
	if b.named == nil {
		b.named = map[namedMaterial]int{}
	}
	b.doc.Materials = append(b.doc.Materials, b.material(&base, name))
	b.named[key] = len(b.doc.Materials) - 1
	return qgltf.Index(len(b.doc.Materials) - 1)
}

// material describes scene material m as a glTF material called name.
func (b *builder) material(m *decode.Material, name string) *qgltf.Material {
	pbr := &qgltf.PBRMetallicRoughness{
		// Game assets are dielectrics; glTF's default metallic 1 would
		// import as dark metal in Blender.
		MetallicFactor: qgltf.Float(0),
	}
	if m.BaseColor != ([4]float32{}) {
		var c [4]float64
		for k, v := range m.BaseColor {
			c[k] = float64(clamp01(v))
		}
		pbr.BaseColorFactor = &c
	}
	gm := &qgltf.Material{Name: name, PBRMetallicRoughness: pbr, DoubleSided: m.DoubleSided}
	switch {
	case m.AlphaBlend:
		gm.AlphaMode = qgltf.AlphaBlend
	case m.AlphaMask:
		gm.AlphaMode = qgltf.AlphaMask
		gm.AlphaCutoff = qgltf.Float(float64(clamp01(m.AlphaCutoff)))
	}
	b.maps(m, gm)
	if len(m.Textures) > 0 {
		// The references as stored travel too,
		// as extras (Blender keeps them as custom properties).
		tex := make(map[string]string, len(m.Textures))
		for _, t := range m.Textures {
			role := t.Role
			if role == "" {
				role = "texture"
			}
			key := role
			for n := 2; ; n++ {
				if _, dup := tex[key]; !dup {
					break
				}
				key = role + "_" + strconv.Itoa(n)
			}
			tex[key] = t.Path
		}
		gm.Extras = map[string]any{"textures": tex}
	}
	return gm
}

// setTRS puts a transform on a node unless it is the identity.
func setTRS(n *qgltf.Node, t decode.TRS) {
	if t.IsIdentity() {
		return
	}
	t = cleanTRS(t)
	n.Translation = [3]float64{float64(t.Translation[0]), float64(t.Translation[1]), float64(t.Translation[2])}
	n.Rotation = [4]float64{float64(t.Rotation[0]), float64(t.Rotation[1]), float64(t.Rotation[2]), float64(t.Rotation[3])}
	n.Scale = [3]float64{float64(t.Scale[0]), float64(t.Scale[1]), float64(t.Scale[2])}
}

// cleanTRS makes a transform valid: finite numbers, a unit quaternion. A
// zero quaternion or a zero scale means the decoder did not fill it in.
func cleanTRS(t decode.TRS) decode.TRS {
	for k := range t.Translation {
		t.Translation[k] = fin(t.Translation[k])
	}
	t.Rotation = unitQuat(t.Rotation)
	for k := range t.Scale {
		t.Scale[k] = fin(t.Scale[k])
	}
	if t.Scale == ([3]float32{}) {
		t.Scale = [3]float32{1, 1, 1}
	}
	return t
}

// skeleton adds a node per joint, parented as the skeleton says, and
// returns the joint nodes and the root joints' nodes. A parent index out of
// range or one that would close a loop makes the joint a root instead.
func (b *builder) skeleton(sk *decode.Skeleton) (jointNode, roots []int) {
	js := sk.Joints
	base := len(b.doc.Nodes)
	parent := sk.Parents()
	jointNode = make([]int, len(js))
	for i, j := range js {
		n := &qgltf.Node{Name: j.Name}
		setTRS(n, j.Rest)
		b.doc.Nodes = append(b.doc.Nodes, n)
		jointNode[i] = base + i
	}
	for i := range js {
		if p := parent[i]; p >= 0 {
			pn := b.doc.Nodes[base+p]
			pn.Children = append(pn.Children, base+i)
		} else {
			roots = append(roots, base+i)
		}
	}
	return jointNode, roots
}

func (b *builder) inverseBinds(sk *decode.Skeleton) int {
	js := sk.Joints
	return b.plainAccessor(len(js), 64, qgltf.AccessorMat4, nil, nil, func(dst []byte, lo, hi int) {
		for i := lo; i < hi; i++ {
			m := identity16
			if ib := js[i].InverseBind; ib != nil {
				m = *ib
				for k := range m {
					m[k] = fin(m[k])
				}
				// An affine matrix's last row is (0, 0, 0, 1); the validator
				// rejects anything else (ACCESSOR_INVALID_IBM).
				m[3], m[7], m[11], m[15] = 0, 0, 0, 1
			}
			e := dst[64*(i-lo):]
			for k, v := range m {
				putF(e[4*k:], v)
			}
		}
	})
}

var identity16 = [16]float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}

// mesh describes scene mesh mi, or returns nil when it has no primitive
// with triangles.
func (b *builder) mesh(s *decode.Scene, mi, nJoints int) (*qgltf.Mesh, error) {
	m := &s.Meshes[mi]
	nTargets := len(m.TargetNames)
	for _, p := range m.Primitives {
		nTargets = max(nTargets, len(p.Targets))
	}
	skin := m.Skinned && nJoints > 0
	gm := &qgltf.Mesh{Name: m.Name}
	for pi := range m.Primitives {
		p := &m.Primitives[pi]
		gp, err := b.primitive(p, nTargets, skin, nJoints, mi, m.Name, pi)
		if err != nil {
			return nil, fmt.Errorf("mesh %d (%q) primitive %d (%q): %w", mi, m.Name, pi, p.Name, err)
		}
		if gp != nil {
			gm.Primitives = append(gm.Primitives, gp)
		}
	}
	if len(gm.Primitives) == 0 {
		return nil, nil
	}
	if nTargets > 0 {
		names := make([]string, nTargets)
		for i := range names {
			if i < len(m.TargetNames) && m.TargetNames[i] != "" {
				names[i] = m.TargetNames[i]
			} else {
				names[i] = "target_" + strconv.Itoa(i)
			}
		}
		gm.Extras = map[string]any{"targetNames": names}
		gm.Weights = make([]float64, nTargets)
	}
	return gm, nil
}

// primitive describes one primitive, or returns nil for one without
// triangles (glTF has no valid empty primitive).
func (b *builder) primitive(p *decode.Primitive, nTargets int, skin bool, nJoints int, mi int, mesh string, pi int) (*qgltf.Primitive, error) {
	n := len(p.Positions)
	idx := p.Indices[:len(p.Indices)/3*3]
	if len(idx) == 0 || n == 0 {
		if len(idx) > 0 {
			return nil, fmt.Errorf("%d indices but no vertices", len(idx))
		}
		return nil, nil
	}
	// The indices are checked against n as they are written (see
	// checkIndices). 16 bits hold them when every one is below 65535 (the
	// primitive restart value): certainly so when n is at most 65535 and
	// the check passes; above that only a search can tell, and it stops at
	// the first larger index.
	check := &indexCheck{idx: idx, n: n, mi: mi, mesh: mesh, pi: pi, pr: p.Name}
	b.indices = append(b.indices, check)
	short := n <= math.MaxUint16 || !anyAtLeast(idx, math.MaxUint16)
	if err := checkLen("normals", len(p.Normals), n); err != nil {
		return nil, err
	}
	if err := checkLen("tangents", len(p.Tangents), n); err != nil {
		return nil, err
	}
	for k, uv := range p.UVs {
		if err := checkLen("UV set "+strconv.Itoa(k), len(uv), n); err != nil {
			return nil, err
		}
	}
	for k, c := range p.Colors {
		if err := checkLen("colour set "+strconv.Itoa(k), len(c), n); err != nil {
			return nil, err
		}
	}
	if err := checkLen("joints", len(p.Joints), n); err != nil {
		return nil, err
	}
	if err := checkLen("weights", len(p.Weights), n); err != nil {
		return nil, err
	}
	for k, t := range p.Targets {
		if err := checkLen("target "+strconv.Itoa(k)+" positions", len(t.Positions), n); err != nil {
			return nil, err
		}
		if err := checkLen("target "+strconv.Itoa(k)+" normals", len(t.Normals), n); err != nil {
			return nil, err
		}
		if err := checkLen("target "+strconv.Itoa(k)+" tangents", len(t.Tangents), n); err != nil {
			return nil, err
		}
	}

	gp := &qgltf.Primitive{Attributes: qgltf.PrimitiveAttributes{}, Mode: qgltf.PrimitiveTriangles}
	gp.Material = b.materialOf(p)
	if p.Name != "" {
		gp.Extras = map[string]any{"name": p.Name}
	}

	// Indices.
	if short {
		off := b.alloc(2 * len(idx))
		v := b.view(off, 2*len(idx), 0, qgltf.TargetElementArrayBuffer)
		b.addJob(len(idx), func(bin []byte, lo, hi int) {
			check.see(writeIndices16(bin[off+2*lo:off+2*hi], idx[lo:hi]))
		})
		gp.Indices = qgltf.Index(b.accessor(&qgltf.Accessor{BufferView: qgltf.Index(v),
			ComponentType: qgltf.ComponentUshort, Type: qgltf.AccessorScalar, Count: len(idx)}))
	} else {
		off := b.alloc(4 * len(idx))
		v := b.view(off, 4*len(idx), 0, qgltf.TargetElementArrayBuffer)
		b.addJob(len(idx), func(bin []byte, lo, hi int) {
			check.see(writeIndices32(bin[off+4*lo:off+4*hi], idx[lo:hi]))
		})
		gp.Indices = qgltf.Index(b.accessor(&qgltf.Accessor{BufferView: qgltf.Index(v),
			ComponentType: qgltf.ComponentUint, Type: qgltf.AccessorScalar, Count: len(idx)}))
	}

	// POSITION, with the bounds the spec requires.
	pos := p.Positions
	mn, mx, finite := bounds3(pos)
	gp.Attributes[qgltf.POSITION] = b.vertexAccessor(n, 12, qgltf.ComponentFloat, qgltf.AccessorVec3, false, mn, mx,
		func(d []byte, lo, hi int) { writeFinite3Known(d, pos[lo:hi], finite) })

	if nr := p.Normals; nr != nil {
		gp.Attributes[qgltf.NORMAL] = b.vertexAccessor(n, 12, qgltf.ComponentFloat, qgltf.AccessorVec3, false, nil, nil,
			func(d []byte, lo, hi int) { writeUnit3(d, nr[lo:hi]) })
	}
	// Tangents without normals are meaningless to glTF clients (validator
	// MESH_PRIMITIVE_TANGENT_WITHOUT_NORMAL): they are left out.
	if tg := p.Tangents; tg != nil && p.Normals != nil {
		gp.Attributes[qgltf.TANGENT] = b.vertexAccessor(n, 16, qgltf.ComponentFloat, qgltf.AccessorVec4, false, nil, nil,
			func(d []byte, lo, hi int) { writeTangents(d, tg[lo:hi]) })
	}
	for k, uv := range p.UVs {
		name := "TEXCOORD_" + strconv.Itoa(k)
		gp.Attributes[name] = b.vertexAccessor(n, 8, qgltf.ComponentFloat, qgltf.AccessorVec2, false, nil, nil,
			func(d []byte, lo, hi int) {
				if uv == nil { // a set left empty keeps the numbering; zeros
					clear(d)
					return
				}
				writeFinite2(d, uv[lo:hi])
			})
	}
	for k, col := range p.Colors {
		// Float RGBA: exact, and Blender 3.4 imports float and normalised
		// integer colours alike (into byte colour attributes either way).
		name := "COLOR_" + strconv.Itoa(k)
		gp.Attributes[name] = b.vertexAccessor(n, 16, qgltf.ComponentFloat, qgltf.AccessorVec4, false, nil, nil,
			func(d []byte, lo, hi int) {
				if col == nil {
					for i := range hi - lo { // opaque white
						for c := range 4 {
							putF(d[16*i+4*c:], 1)
						}
					}
					return
				}
				writeClamped4(d, col[lo:hi])
			})
	}
	if skin {
		b.skinAttributes(gp, p, n, nJoints)
	}

	for t := range nTargets {
		gp.Targets = append(gp.Targets, b.target(p, t, n))
	}
	return gp, nil
}

func checkLen(what string, got, want int) error {
	if got != 0 && got != want {
		return fmt.Errorf("%s: %d elements for %d vertices", what, got, want)
	}
	return nil
}

// skinAttributes adds JOINTS_0 (u8 when every joint index fits, else u16)
// and WEIGHTS_0. A primitive of a skinned mesh without influences is bound
// wholly to joint 0, so that every primitive of the skinned node has them.
func (b *builder) skinAttributes(gp *qgltf.Primitive, p *decode.Primitive, n, nJoints int) {
	js, ws := p.Joints, p.Weights
	if len(js) == 0 || len(ws) == 0 {
		js, ws = nil, nil
	}
	u8 := nJoints <= 256
	jsize := 8
	jct := qgltf.ComponentUshort
	if u8 {
		jsize, jct = 4, qgltf.ComponentUbyte
	}
	joff := b.alloc(n * jsize)
	jv := b.view(joff, n*jsize, jsize, qgltf.TargetArrayBuffer)
	woff := b.alloc(n * 16)
	wv := b.view(woff, n*16, 16, qgltf.TargetArrayBuffer)
	b.addJob(n, func(bin []byte, lo, hi int) {
		jd := bin[joff+lo*jsize : joff+hi*jsize]
		wd := bin[woff+lo*16 : woff+hi*16]
		for i := range hi - lo {
			var j [4]uint16
			w := [4]float32{1, 0, 0, 0}
			if js != nil {
				j, w = influence(js[lo+i], ws[lo+i], nJoints)
			}
			if u8 {
				e := jd[4*i : 4*i+4]
				e[0], e[1], e[2], e[3] = byte(j[0]), byte(j[1]), byte(j[2]), byte(j[3])
			} else {
				e := jd[8*i : 8*i+8]
				for c := range 4 {
					binary.LittleEndian.PutUint16(e[2*c:], j[c])
				}
			}
			e := wd[16*i : 16*i+16]
			for c := range 4 {
				putF(e[4*c:], w[c])
			}
		}
	})
	gp.Attributes[qgltf.JOINTS_0] = b.accessor(&qgltf.Accessor{BufferView: qgltf.Index(jv), ComponentType: jct,
		Type: qgltf.AccessorVec4, Count: n})
	gp.Attributes[qgltf.WEIGHTS_0] = b.accessor(&qgltf.Accessor{BufferView: qgltf.Index(wv), ComponentType: qgltf.ComponentFloat,
		Type: qgltf.AccessorVec4, Count: n})
}

// influence returns a vertex's joints and weights as glTF wants them: no
// negative or non-finite weight, float32 sum 1, no joint twice, every joint
// in range, and joint 0 wherever the weight is 0. Valid input passes
// through unchanged; anything else is renormalised.
func influence(j [4]uint16, w [4]float32, nJoints int) ([4]uint16, [4]float32) {
	ok := true
	var sum float32
	for k := range 4 {
		x := w[k]
		if !(x >= 0 && x <= 1) {
			ok = false
			break
		}
		if x == 0 {
			j[k] = 0
			continue
		}
		if int(j[k]) >= nJoints {
			ok = false
			break
		}
		for m := range k {
			if w[m] != 0 && j[m] == j[k] {
				ok = false
			}
		}
		sum += x
	}
	if ok && sum >= 1-2e-7 && sum <= 1+2e-7 {
		return j, w
	}
	var jj [4]uint16
	var ww [4]float32
	for k := range 4 {
		jj[k] = j[k]
		if int(j[k]) < nJoints && !math.IsNaN(float64(w[k])) {
			ww[k] = w[k]
		}
	}
	return decode.NormalizeWeights(jj[:], ww[:])
}

// target describes morph target t of p: POSITION deltas always (zeros when
// the primitive lacks this target), NORMAL and TANGENT (xyz) deltas when
// the target has them and the base primitive has that attribute.
func (b *builder) target(p *decode.Primitive, t, n int) qgltf.PrimitiveAttributes {
	var mt decode.MorphTarget
	if t < len(p.Targets) {
		mt = p.Targets[t]
	}
	attrs := qgltf.PrimitiveAttributes{}
	pos := mt.Positions
	var mn, mx []float64
	finite := false
	if pos != nil {
		mn, mx, finite = bounds3(pos)
	} else {
		mn, mx = []float64{0, 0, 0}, []float64{0, 0, 0}
	}
	attrs[qgltf.POSITION] = b.vertexAccessor(n, 12, qgltf.ComponentFloat, qgltf.AccessorVec3, false, mn, mx,
		func(d []byte, lo, hi int) {
			if pos == nil {
				clear(d)
				return
			}
			writeFinite3Known(d, pos[lo:hi], finite)
		})
	if nr := mt.Normals; nr != nil && p.Normals != nil {
		attrs[qgltf.NORMAL] = b.vertexAccessor(n, 12, qgltf.ComponentFloat, qgltf.AccessorVec3, false, nil, nil,
			func(d []byte, lo, hi int) { writeFinite3(d, nr[lo:hi]) })
	}
	if tg := mt.Tangents; tg != nil && p.Tangents != nil && p.Normals != nil {
		attrs[qgltf.TANGENT] = b.vertexAccessor(n, 12, qgltf.ComponentFloat, qgltf.AccessorVec3, false, nil, nil,
			func(d []byte, lo, hi int) { writeFinite3(d, tg[lo:hi]) })
	}
	return attrs
}

// animation adds one glTF animation; channels that cannot be valid (no
// target, no usable key, a second channel for the same property) are left
// out, and an animation left without channels is not written.
func (b *builder) animation(a *decode.Animation, meshNode, jointNode []int) {
	ga := &qgltf.Animation{Name: a.Name}
	type key struct {
		node int
		path decode.Path
	}
	seen := map[key]bool{}
	for ci := range a.Channels {
		c := &a.Channels[ci]
		node := -1
		switch c.Kind {
		case decode.TargetMesh:
			if c.Index >= 0 && c.Index < len(meshNode) {
				node = meshNode[c.Index]
			}
		case decode.TargetJoint:
			if c.Index >= 0 && c.Index < len(jointNode) {
				node = jointNode[c.Index]
			}
		case decode.TargetNode:
			if c.Index >= 0 && c.Index < b.treeNodes {
				node = c.Index
			}
		}
		var comps int
		var path qgltf.TRSProperty
		switch c.Path {
		case decode.PathTranslation:
			comps, path = 3, qgltf.TRSTranslation
		case decode.PathRotation:
			comps, path = 4, qgltf.TRSRotation
		case decode.PathScale:
			comps, path = 3, qgltf.TRSScale
		}
		if node < 0 || comps == 0 || seen[key{node, c.Path}] {
			continue
		}
		keys := usableKeys(c.Times, len(c.Values)/comps)
		if len(keys) == 0 {
			continue
		}
		seen[key{node, c.Path}] = true

		times, values := c.Times, c.Values
		tmin, tmax := float64(times[keys[0]]), float64(times[keys[len(keys)-1]])
		in := b.plainAccessor(len(keys), 4, qgltf.AccessorScalar, []float64{tmin}, []float64{tmax},
			func(d []byte, lo, hi int) {
				for i, k := range keys[lo:hi] {
					putF(d[4*i:], times[k])
				}
			})
		typ := qgltf.AccessorVec3
		if comps == 4 {
			typ = qgltf.AccessorVec4
		}
		rot := c.Path == decode.PathRotation
		out := b.plainAccessor(len(keys), 4*comps, typ, nil, nil, func(d []byte, lo, hi int) {
			for i, k := range keys[lo:hi] {
				e := d[4*comps*i:]
				if rot {
					q := unitQuat([4]float32(values[4*k : 4*k+4]))
					for c := range 4 {
						putF(e[4*c:], q[c])
					}
					continue
				}
				for c := range comps {
					putF(e[4*c:], fin(values[comps*k+c]))
				}
			}
		})
		interp := qgltf.InterpolationLinear
		if c.Step {
			interp = qgltf.InterpolationStep
		}
		ga.Samplers = append(ga.Samplers, &qgltf.AnimationSampler{Input: in, Output: out, Interpolation: interp})
		ga.Channels = append(ga.Channels, &qgltf.AnimationChannel{Sampler: len(ga.Samplers) - 1,
			Target: qgltf.AnimationChannelTarget{Node: qgltf.Index(node), Path: path}})
	}
	if len(ga.Channels) > 0 {
		b.doc.Animations = append(b.doc.Animations, ga)
	}
}

// usableKeys returns the indices of the keys to keep: finite, not
// negative, each later than the one before (the validator's rules for
// sampler input), and with a value present.
func usableKeys(times []float32, nValues int) []int {
	n := min(len(times), nValues)
	keys := make([]int, 0, n)
	last := float32(-1)
	for i, t := range times[:n] {
		if !(t >= 0) || math.IsInf(float64(t), 0) || (len(keys) > 0 && !(t > last)) {
			continue
		}
		keys = append(keys, i)
		last = t
	}
	return keys
}

// fin maps NaN and ±Inf to 0 (the validator's ACCESSOR_INVALID_FLOAT).
func fin(f float32) float32 {
	if math.Float32bits(f)&0x7f800000 == 0x7f800000 {
		return 0
	}
	return f
}

func clamp01(f float32) float32 {
	if !(f > 0) { // also NaN
		return 0
	}
	if f > 1 {
		return 1
	}
	return f
}

// unit3 returns v when it is unit length within float32 precision, else v
// normalised ((0, 1, 0) for a zero or non-finite vector).
func unit3(v [3]float32) [3]float32 {
	l2 := float64(v[0])*float64(v[0]) + float64(v[1])*float64(v[1]) + float64(v[2])*float64(v[2])
	if unitWindow(l2) {
		return v
	}
	return decode.Normalize3(v)
}

// unitQuat normalises q; a zero or non-finite quaternion becomes identity.
func unitQuat(q [4]float32) [4]float32 {
	l2 := 0.0
	for _, c := range q {
		l2 += float64(c) * float64(c)
	}
	if l2 >= 1-4e-6 && l2 <= 1+4e-6 {
		return q
	}
	l := math.Sqrt(l2)
	if !(l > 1e-12) || math.IsInf(l, 0) {
		return [4]float32{0, 0, 0, 1}
	}
	for k := range q {
		q[k] = float32(float64(q[k]) / l)
	}
	return q
}

// maxIndexSerial is the largest index of a list. Four running maxima
// instead of one: each max waits for the previous one in its chain, so one
// chain would run at the latency of a compare and move, not its throughput.
func maxIndexSerial(idx []uint32) uint32 {
	var m0, m1, m2, m3 uint32
	i := 0
	for ; i+4 <= len(idx); i += 4 {
		q := idx[i : i+4 : i+4]
		m0, m1, m2, m3 = max(m0, q[0]), max(m1, q[1]), max(m2, q[2]), max(m3, q[3])
	}
	for _, v := range idx[i:] {
		m0 = max(m0, v)
	}
	return max(m0, m1, m2, m3)
}

// errFound stops anyAtLeast's ranges once one has found an index.
var errFound = errors.New("found")

// anyAtLeast reports whether some index is lim or more, over the CPUs for
// long lists; ranges after one that found it are not searched.
func anyAtLeast(idx []uint32, lim uint32) bool {
	return decode.Parallel(len(idx), func(lo, hi int) error {
		for _, v := range idx[lo:hi] {
			if v >= lim {
				return errFound
			}
		}
		return nil
	}) != nil
}

// maxIndex is the largest index, over the CPUs for long lists.
func maxIndex(idx []uint32) uint32 {
	var mu sync.Mutex
	var m uint32
	decode.Parallel(len(idx), func(lo, hi int) error {
		var x uint32
		for _, v := range idx[lo:hi] {
			x = max(x, v)
		}
		mu.Lock()
		m = max(m, x)
		mu.Unlock()
		return nil
	})
	return m
}

// bounds3 returns the per-component min and max of vs after fin, exactly
// as written (the validator compares declared and actual bounds), and
// whether every component is finite (then the positions are written with
// a plain copy). Long lists are split over the CPUs; the ranges' results
// are merged in order with the same strict comparisons, so that of equal
// values (0 and −0) the first is kept, as in one pass.
func bounds3(vs [][3]float32) (mn, mx []float64, finite bool) {
	type part struct {
		at     int
		lo, hi [3]float32
		finite bool
	}
	var (
		mu    sync.Mutex
		parts []part
	)
	decode.Parallel(len(vs), func(a, b int) error {
		lo, hi, ok := boundsRange(vs[a:b])
		mu.Lock()
		parts = append(parts, part{a, lo, hi, ok})
		mu.Unlock()
		return nil
	})
	slices.SortFunc(parts, func(p, q part) int { return p.at - q.at })
	lo, hi, finite := parts[0].lo, parts[0].hi, parts[0].finite
	for _, p := range parts[1:] {
		finite = finite && p.finite
		for c := range 3 {
			if p.lo[c] < lo[c] {
				lo[c] = p.lo[c]
			}
			if p.hi[c] > hi[c] {
				hi[c] = p.hi[c]
			}
		}
	}
	return []float64{float64(lo[0]), float64(lo[1]), float64(lo[2])},
		[]float64{float64(hi[0]), float64(hi[1]), float64(hi[2])}, finite
}

// boundsRange is one range of bounds3 (vs not empty). It first assumes
// every number is finite, as decoded positions are: no fin per component,
// only an OR of the exponent bits that are all ones somewhere. If one is,
// the range is done again with fin, since a NaN or ±Inf would have
// skewed or been skipped by the comparisons.
func boundsRange(vs [][3]float32) (lo, hi [3]float32, finite bool) {
	lo, hi = vs[0], vs[0]
	var bad uint32
	for _, v := range vs {
		x, y, z := v[0], v[1], v[2]
		bad |= ((math.Float32bits(x) & 0x7f800000) + 0x00800000) | ((math.Float32bits(y) & 0x7f800000) + 0x00800000) | ((math.Float32bits(z) & 0x7f800000) + 0x00800000)
		if x < lo[0] {
			lo[0] = x
		}
		if x > hi[0] {
			hi[0] = x
		}
		if y < lo[1] {
			lo[1] = y
		}
		if y > hi[1] {
			hi[1] = y
		}
		if z < lo[2] {
			lo[2] = z
		}
		if z > hi[2] {
			hi[2] = z
		}
	}
	if bad&0x80000000 == 0 {
		return lo, hi, true
	}
	lo = [3]float32{fin(vs[0][0]), fin(vs[0][1]), fin(vs[0][2])}
	hi = lo
	for _, v := range vs[1:] {
		for c := range 3 {
			x := fin(v[c])
			if x < lo[c] {
				lo[c] = x
			}
			if x > hi[c] {
				hi[c] = x
			}
		}
	}
	return lo, hi, false
}
