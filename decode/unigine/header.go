package unigine

import (
	"fmt"

	"github.com/meshfs/meshfs/decode"
)

// header is everything before the geometry: the file's header fields, each
// surface's header fields, and where the header ends.
type header struct {
	file File // Surfaces hold header fields only (name, lightmap, bounds, target names)
	lay  layout
	surf []surfHeader
	end  int64 // offset just past the header (the second magic, and ms14's bone transforms)
}

// surfHeader holds a surface's counts as the header gives them.
type surfHeader struct {
	cIndices, tIndices int // index counts (−1 in ms11/ms10: stored in the stream)
	targets            []targetHeader
}

// targetHeader names a morph target; vertices is −1 where the header does
// not give the count (ms11/ms10). ms15 has one unnamed target whose count
// is the surface's vertex count.
type targetHeader struct {
	name     string
	vertices int
}

// Minimum encoded sizes, used to check claimed counts against the bytes left
// before allocating for them.
const (
	transformSize = 40 // float[3] position, float[4] rotation, float[3] scale
	boundsSize    = 40
	minJointSize  = 3 // compact name length + short parent
	minTargetSize = 1 // compact name length (+ compact vertex count)
)

func minSurfaceSize(l layout) int64 {
	n := int64(1 + boundsSize + 1) // name length, bounds, a count
	if l.lightmap {
		n += 2
	}
	if !l.blockCounts {
		n += 2
	}
	return n
}

func (r *reader) bounds(field string) (b Bounds) {
	r.f32s(field, b.Min[:])
	r.f32s(field, b.Max[:])
	r.f32s(field, b.SphereCenter[:])
	b.SphereRadius = r.f32(field)
	return b
}

// transform reads a joint transform. Non-finite values and zero scales are
// rejected here, where the offset is known: they would make the skin's
// inverse bind matrices meaningless.
func (r *reader) transform(field string) (t Transform) {
	at := r.pos
	r.f32s(field, t.Position[:])
	r.f32s(field, t.Rotation[:])
	r.f32s(field, t.Scale[:])
	if r.err != nil {
		return t
	}
	if !finite(t.Position[:]...) || !finite(t.Rotation[:]...) || !finite(t.Scale[:]...) {
		r.pos = at
		r.fail(field, nil, "transform is not finite: %+v", t)
	} else if t.Scale[0] == 0 || t.Scale[1] == 0 || t.Scale[2] == 0 {
		r.pos = at
		r.fail(field, nil, "transform has a zero scale: %v", t.Scale)
	}
	return t
}

// unsupportedError is returned for magics this package does not read.
func unsupported(file string, magic []byte) error {
	e := decode.Errorf(file, "header", "magic", 0, "unsupported version %q (meshfs reads ms15, sk10, ms14, ms13, ms12, ms11, ms10)", magic)
	return e
}

// parseHeader reads the header from r (positioned at the file's start).
// On error it returns what it read so far together with the error.
func parseHeader(r *reader) (*header, error) {
	r.section = "header"
	m := r.bytes("magic", 4)
	if m == nil {
		return nil, r.err
	}
	lay, ok := layoutOf(string(m))
	if !ok {
		return nil, unsupported(r.file, m)
	}
	h := &header{lay: lay}
	f := &h.file
	f.Magic = string(m)
	if lay.spatial {
		f.SpatialTreeTriangles = r.compact("spatial_tree_triangles")
	}
	f.Bounds = r.bounds("bounds")

	switch {
	case lay.skin:
		r.readSkin(f)
	case lay.bones:
		n := r.count("bone_count", minJointSize)
		r.readJoints(f, n)
	}
	if lay.names {
		n := r.count("name_count", 1)
		for i := 0; i < n && r.err == nil; i++ {
			f.Names = append(f.Names, r.str(fmt.Sprintf("name[%d]", i), false))
		}
	}

	nsurf := r.count("surface_count", minSurfaceSize(lay))
	if r.err != nil {
		return h, r.err
	}
	f.Surfaces = make([]Surface, 0, nsurf)
	h.surf = make([]surfHeader, 0, nsurf)
	for i := 0; i < nsurf && r.err == nil; i++ {
		r.section = fmt.Sprintf("header, surface %d", i)
		var s Surface
		sh := surfHeader{cIndices: -1, tIndices: -1}
		s.Name = r.str("name", false)
		if lay.lightmap {
			s.LightmapChannel = int8(r.u8("lightmap_uv_channel"))
			s.LightmapResolution = int8(r.u8("lightmap_resolution"))
		}
		if !lay.blockCounts {
			sh.cIndices = r.blockCount("coordinate_index_count", 1)
			sh.tIndices = r.blockCount("triangle_index_count", 1)
		}
		s.Bounds = r.bounds("bounds")
		if lay.targets {
			nt := r.count("morph_target_count", minTargetSize)
			if r.err == nil && nt == 0 {
				r.fail("morph_target_count", nil, "no targets: target 0 is the base mesh and must exist")
			}
			for k := 0; k < nt && r.err == nil; k++ {
				th := targetHeader{name: r.str(fmt.Sprintf("morph_target[%d].name", k), false), vertices: -1}
				if !lay.blockCounts {
					th.vertices = r.blockCount(fmt.Sprintf("morph_target[%d].vertex_count", k), 12)
				}
				sh.targets = append(sh.targets, th)
				s.Targets = append(s.Targets, Target{Name: th.name})
			}
		} else {
			nv := r.blockCount("vertex_count", 12)
			sh.targets = []targetHeader{{vertices: nv}}
			s.Targets = []Target{{}}
		}
		f.Surfaces = append(f.Surfaces, s)
		h.surf = append(h.surf, sh)
	}
	r.section = "header"
	if lay.blocks {
		f.RAM = int64(r.u64("estimated_ram"))
	}
	r.magic("second magic", f.Magic)
	if lay.bones && len(f.Joints) > 0 && r.need("bone transforms", int64(len(f.Joints)), transformSize) {
		// ms14 and ms13 to ms10 keep one transform per bone after the
		// second magic, without a count.
		f.Bind = make([]Transform, len(f.Joints))
		for i := range f.Bind {
			f.Bind[i] = r.transform(fmt.Sprintf("bone[%d].transform", i))
		}
	}
	h.end = r.offset()
	return h, r.err
}

func (r *reader) readJoints(f *File, n int) {
	if r.err != nil || n == 0 {
		return
	}
	if n > 32768 {
		r.fail("joint_count", nil, "%d joints: joint indices are shorts, at most 32768", n)
		return
	}
	f.Joints = make([]Joint, n)
	parentAt := make([]int, n)
	for i := range f.Joints {
		f.Joints[i].Name = r.str(fmt.Sprintf("joint[%d].name", i), false)
		parentAt[i] = r.pos
		p := int16(r.u16(fmt.Sprintf("joint[%d].parent", i)))
		if r.err != nil {
			f.Joints = f.Joints[:i]
			return
		}
		f.Joints[i].Parent = p
	}
	if i, msg := jointTreeError(f.Joints); i >= 0 {
		r.pos = parentAt[i]
		r.fail(fmt.Sprintf("joint[%d].parent", i), nil, "%s", msg)
		f.Joints = nil
	}
}

// jointTreeError returns the first joint whose parent is out of range or
// part of a cycle (glTF needs a tree), or −1. It walks up from each joint,
// marking the path; meeting the path again is a cycle, meeting a checked
// joint or a root ends the walk. Each joint is walked once, so a long
// chain stays linear.
func jointTreeError(js []Joint) (int, string) {
	n := len(js)
	for i, j := range js {
		if p := int(j.Parent); p < -1 || p >= n || p == i {
			return i, fmt.Sprintf("parent %d is not −1 or another of the %d joints", p, n)
		}
	}
	const onPath, checked = 1, 2
	state := make([]uint8, n)
	var path []int
	for i := range js {
		path = path[:0]
		for j := i; j >= 0 && state[j] != checked; j = int(js[j].Parent) {
			if state[j] == onPath {
				return i, fmt.Sprintf("joint %d's parents form a cycle", i)
			}
			state[j] = onPath
			path = append(path, j)
		}
		for _, j := range path {
			state[j] = checked
		}
	}
	return -1, ""
}

// readSkin reads sk10's joints, bind and rest transforms and skeleton reference.
func (r *reader) readSkin(f *File) {
	at := r.pos
	n := int64(int32(r.u32("joint_count")))
	if r.err == nil && n < 0 {
		r.pos = at
		r.fail("joint_count", nil, "negative count %d", n)
	}
	if !r.need("joint_count", n, minJointSize) {
		return
	}
	r.readJoints(f, int(n))
	f.Bind = r.transforms("bind_transform_count", len(f.Joints))
	f.Rest = r.transforms("rest_transform_count", len(f.Joints))
	f.SkeletonGUID = r.str("skeleton_guid", true)
	f.SkeletonPath = r.str("skeleton_path", true)
}

// transforms reads an int32 count and that many transforms; the count must
// be the joint count or 0.
func (r *reader) transforms(field string, joints int) []Transform {
	at := r.pos
	n := int64(int32(r.u32(field)))
	if r.err != nil {
		return nil
	}
	if n != 0 && n != int64(joints) {
		r.pos = at
		r.fail(field, nil, "%d transforms for %d joints", n, joints)
		return nil
	}
	if !r.need(field, n, transformSize) || n == 0 {
		return nil
	}
	ts := make([]Transform, n)
	for i := range ts {
		ts[i] = r.transform(field)
	}
	return ts
}
