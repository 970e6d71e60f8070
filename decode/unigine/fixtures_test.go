package unigine

import (
	"flag"
	"math"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
)

var update = flag.Bool("update", false, "rewrite the fixtures in testdata/unigine")

const fixtureDir = "../../testdata/unigine"

// fixtures are the committed sample files, each built by the encoder.
var fixtures = []struct {
	name  string
	build func() *File
}{
	{"ms15_cube.mesh", cubeFile},
	{"ms15_multi.mesh", multiFile},
	{"sk10_character.mesh_skinned", characterFile},
	{"ms14_skinned.mesh", ms14File},
	{"ms11_quad.mesh", ms11File},
	{"ms13_static.mesh", ms13File},
	{"ms13_skinned.mesh", ms13SkinnedFile},
	{"ms12_static.mesh", ms12File},
	{"ms11_skinned.mesh", ms11SkinnedFile},
	{"ms10_box.mesh", ms10File},
	{"ms11_tail.mesh", ms11TailFile},
	{"ms11_bones.mesh", ms11BonesFile},
	{"ms13_nan_repaired.mesh", ms13NaNFile},
	{"ms11_nan_repaired.mesh", ms11NaNFile},
	{"ms12_wide.mesh", ms12WideFile},
}

// TestFixtures checks that the committed fixtures are what the encoder
// makes now; -update rewrites them.
func TestFixtures(t *testing.T) {
	for _, fx := range fixtures {
		b, err := Encode(fx.build())
		if err != nil {
			t.Fatalf("%s: %v", fx.name, err)
		}
		decodetest.Golden(t, filepath.Join(fixtureDir, fx.name), b, *update, "go test ./decode/unigine -run TestFixtures -update")
	}
}

type vec3 = [3]float32

func cross(a, b vec3) vec3 {
	return vec3{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

// cube is a closed unit cube centred on (0, 0, z0) in the file's Z-up axes:
// 8 coordinate vertices shared by the faces, 24 triangle vertices (a frame
// and UV per face corner), counter-clockwise seen from outside.
func cube(size, z0 float32) Surface {
	var s Surface
	var base Target
	coord := map[vec3]uint32{}
	axes := []struct{ n, t vec3 }{
		{vec3{1, 0, 0}, vec3{0, 1, 0}}, {vec3{-1, 0, 0}, vec3{0, -1, 0}},
		{vec3{0, 1, 0}, vec3{-1, 0, 0}}, {vec3{0, -1, 0}, vec3{1, 0, 0}},
		{vec3{0, 0, 1}, vec3{1, 0, 0}}, {vec3{0, 0, -1}, vec3{1, 0, 0}},
	}
	h := size / 2
	for _, a := range axes {
		b := cross(a.n, a.t)
		corners := [4][2]float32{{-1, -1}, {1, -1}, {1, 1}, {-1, 1}}
		var tv [4]uint32
		for k, c := range corners {
			p := vec3{}
			for i := range 3 {
				p[i] = (a.n[i] + c[0]*a.t[i] + c[1]*b[i]) * h
			}
			p[2] += z0
			ci, ok := coord[p]
			if !ok {
				ci = uint32(len(base.Positions))
				coord[p] = ci
				base.Positions = append(base.Positions, p)
			}
			tv[k] = uint32(len(base.Tangents))
			base.Tangents = append(base.Tangents, FrameQuat(a.n, a.t, 1))
			s.UV0 = append(s.UV0, [2]float32{(c[0] + 1) / 2, (1 - c[1]) / 2})
			s.CIndices = append(s.CIndices, ci)
			s.TIndices = append(s.TIndices, tv[k])
		}
		// Corners 0..3 were appended in order; make two triangles of them.
		n := len(s.CIndices)
		cs, ts := s.CIndices[n-4:], s.TIndices[n-4:]
		c4, t4 := [4]uint32(cs), [4]uint32(ts)
		s.CIndices = append(s.CIndices[:n-4], c4[0], c4[1], c4[2], c4[0], c4[2], c4[3])
		s.TIndices = append(s.TIndices[:n-4], t4[0], t4[1], t4[2], t4[0], t4[2], t4[3])
	}
	s.Targets = []Target{base}
	s.Bounds = BoundsOf(base.Positions)
	return s
}

// grid is an n×n vertex sheet in the XY plane facing +Z, with one triangle
// vertex per coordinate vertex.
func grid(n int, size float32) Surface {
	var s Surface
	var base Target
	q := FrameQuat(vec3{0, 0, 1}, vec3{1, 0, 0}, 1)
	for y := range n {
		for x := range n {
			u, v := float32(x)/float32(n-1), float32(y)/float32(n-1)
			base.Positions = append(base.Positions, vec3{(u - 0.5) * size, (v - 0.5) * size, 0.01 * float32((x*7+y*3)%5)})
			base.Tangents = append(base.Tangents, q)
			s.UV0 = append(s.UV0, [2]float32{u, 1 - v})
		}
	}
	for y := range n - 1 {
		for x := range n - 1 {
			a := uint32(y*n + x)
			b, c, d := a+1, a+uint32(n)+1, a+uint32(n)
			s.CIndices = append(s.CIndices, a, b, c, a, c, d)
		}
	}
	s.TIndices = append([]uint32(nil), s.CIndices...)
	s.Targets = []Target{base}
	s.Bounds = BoundsOf(base.Positions)
	return s
}

func withCollision(s Surface) Surface {
	s.Collision = CollisionBlock(len(s.CIndices)/3, s.Bounds)
	return s
}

func fileBounds(ss []Surface) Bounds {
	var all [][3]float32
	for _, s := range ss {
		all = append(all, s.Targets[0].Positions...)
	}
	return BoundsOf(all)
}

func cubeFile() *File {
	s := withCollision(cube(1, 0))
	s.Name = "cube"
	s.LightmapChannel, s.LightmapResolution = 1, 3
	f := &File{Magic: MagicMS15, SpatialTreeTriangles: 12, Surfaces: []Surface{s}, RAM: 4096}
	f.Bounds = fileBounds(f.Surfaces)
	return f
}

// multiFile has several surfaces: u8 indices (a cube), u16 indices (a
// 17×17 grid has 289 vertices) with UV1 and colours in a stored block.
func multiFile() *File {
	a := withCollision(cube(0.5, 1))
	a.Name = "lid"
	g := grid(17, 2)
	g.Name = "floor/tiles" // a separator that chunk names must not keep
	for i := range g.UV0 {
		g.UV1 = append(g.UV1, [2]float32{g.UV0[i][1], g.UV0[i][0]})
		g.Colors = append(g.Colors, [4]uint8{uint8(i), uint8(255 - i%256), 128, 255})
	}
	g.Stored = true
	g.LightmapChannel, g.LightmapResolution = 1, 5
	g = withCollision(g)
	f := &File{Magic: MagicMS15, SpatialTreeTriangles: 524, Surfaces: []Surface{a, g}, RAM: 65536}
	f.Bounds = fileBounds(f.Surfaces)
	return f
}

func quatZ(deg float64) [4]float32 {
	r := deg * math.Pi / 360
	return [4]float32{0, 0, float32(math.Sin(r)), float32(math.Cos(r))}
}

// characterFile is an sk10 file with two root joints, model-space bind
// transforms and matching parent-relative rest transforms, two surfaces
// with different morph targets, four weights per vertex, UV1 and colours.
func characterFile() *File {
	id := [4]float32{0, 0, 0, 1}
	one := [3]float32{1, 1, 1}
	f := &File{Magic: MagicSK10, SpatialTreeTriangles: 30,
		Joints: []Joint{{"hips", -1}, {"spine", 0}, {"head", 1}, {"prop_root", -1}, {"prop", 3}},
		Bind: []Transform{
			{[3]float32{0, 0, 1}, id, one},
			{[3]float32{0, 0, 1.5}, id, one},
			{[3]float32{0, 0, 2}, id, one},
			{[3]float32{1, 0, 0}, quatZ(90), one},
			{[3]float32{1, 0.5, 0}, quatZ(90), [3]float32{2, 2, 2}},
		},
		Rest: []Transform{
			{[3]float32{0, 0, 1}, id, one},
			{[3]float32{0, 0, 0.5}, id, one},
			{[3]float32{0, 0, 0.5}, id, one},
			{[3]float32{1, 0, 0}, quatZ(90), one},
			{[3]float32{0.5, 0, 0}, id, [3]float32{2, 2, 2}},
		},
		SkeletonGUID: "8c2f6c0e5a1d4b3f9e7a6b5c4d3e2f10",
		SkeletonPath: "characters/dummy.skeleton",
		RAM:          12345,
	}
	body := grid(4, 1)
	body.Name = "body"
	for i := range body.Targets[0].Positions {
		body.Targets[0].Positions[i][2] += 1.5
		// Four joints per vertex, weights summing to 65535.
		w0 := uint16(20000 + 1000*(i%5))
		body.Weights = append(body.Weights, []Influence{{0, w0}, {1, 30000}, {2, 10000}, {3, 65535 - 40000 - w0}})
		body.UV1 = append(body.UV1, [2]float32{float32(i) / 16, 0.5})
		body.Colors = append(body.Colors, [4]uint8{255, uint8(16 * i), 0, 200})
	}
	smile := Target{Name: "smile", Positions: append([][3]float32(nil), body.Targets[0].Positions...)}
	for i := range smile.Positions {
		smile.Positions[i][2] += 0.1 * float32(i%3)
	}
	blink := Target{Name: "blink", Positions: append([][3]float32(nil), body.Targets[0].Positions...)}
	for i := range blink.Positions {
		blink.Positions[i][0] *= 1.2
		blink.Tangents = append(blink.Tangents, FrameQuat(vec3{0, 0.6, 0.8}, vec3{1, 0, 0}, 1))
	}
	body.Targets = append(body.Targets, smile, blink)
	body.Bounds = BoundsOf(body.Targets[0].Positions)

	prop := cube(0.25, 0)
	prop.Name = "prop"
	for i := range prop.Targets[0].Positions {
		prop.Targets[0].Positions[i][0] += 1
		prop.Targets[0].Positions[i][1] += 0.5
		prop.Weights = append(prop.Weights, []Influence{{4, 65535}})
	}
	grow := Target{Name: "grow"}
	for _, p := range prop.Targets[0].Positions {
		grow.Positions = append(grow.Positions, vec3{p[0] * 1.5, p[1] * 1.5, p[2] * 1.5})
	}
	prop.Targets = append(prop.Targets, grow)
	prop.Bounds = BoundsOf(prop.Targets[0].Positions)
	prop.Stored = true
	f.Surfaces = []Surface{body, prop}
	f.Bounds = fileBounds(f.Surfaces)
	return f
}

// ms14File is an ms14 skinned mesh: bones with parent-relative transforms
// (two roots), morph targets, weights, lightmap fields, collision blocks.
func ms14File() *File {
	id := [4]float32{0, 0, 0, 1}
	one := [3]float32{1, 1, 1}
	f := &File{Magic: MagicMS14, SpatialTreeTriangles: 4,
		Joints: []Joint{{"root_a", -1}, {"child", 0}, {"root_b", -1}},
		Bind: []Transform{
			{[3]float32{0, 0, 0}, [4]float32{0.5, -0.5, 0.5, 0.5}, one},
			{[3]float32{0.5, 0, 0}, id, one},
			{[3]float32{2, 0, 0}, quatZ(45), one},
		},
		RAM: 999,
	}
	s := withCollision(cube(1, 0.5))
	s.Name = "box"
	s.LightmapChannel, s.LightmapResolution = 1, 2
	for i, p := range s.Targets[0].Positions {
		if p[2] > 0.5 {
			s.Weights = append(s.Weights, []Influence{{1, 40000}, {0, 25535}})
		} else {
			s.Weights = append(s.Weights, []Influence{{0, 65535}})
		}
		_ = i
	}
	up := Target{Name: "up"}
	for _, p := range s.Targets[0].Positions {
		up.Positions = append(up.Positions, vec3{p[0], p[1], p[2] + 0.25})
	}
	up.Tangents = s.Targets[0].Tangents
	s.Targets = append(s.Targets, up)
	f.Surfaces = []Surface{s}
	f.Bounds = fileBounds(f.Surfaces)
	return f
}

func ms11File() *File {
	s := grid(2, 0.84)
	s.Name = "plane"
	s.Targets[0].Name = ""
	f := &File{Magic: MagicMS11, Surfaces: []Surface{s}}
	f.Bounds = fileBounds(f.Surfaces)
	return f
}

// ms13File is a static ms13 mesh as the public ones are: a cube with u8
// indices and lightmap fields, and a 17×17 grid (u16 indices) with UV1
// and colours.
func ms13File() *File {
	a := cube(1, 0)
	a.Name = "box"
	a.LightmapChannel, a.LightmapResolution = 1, 3
	g := grid(17, 2)
	g.Name = "floor"
	for i := range g.UV0 {
		g.UV1 = append(g.UV1, [2]float32{g.UV0[i][1], g.UV0[i][0]})
		g.Colors = append(g.Colors, [4]uint8{uint8(i), 7, 128, 255})
	}
	g.LightmapChannel, g.LightmapResolution = 1, 4
	f := &File{Magic: MagicMS13, Surfaces: []Surface{a, g}}
	f.Bounds = fileBounds(f.Surfaces)
	return f
}

// ms12File is ms13File in ms12 (an empty name list after the bones).
func ms12File() *File {
	f := ms13File()
	f.Magic = MagicMS12
	return f
}

// ms13SkinnedFile is ms14File's skinned box as ms13 writes it: bones with
// parent-relative transforms after the second magic, weights in the
// stream, no morph targets, collision, RAM or spatial tree.
func ms13SkinnedFile() *File {
	f := ms14File()
	f.Magic = MagicMS13
	f.SpatialTreeTriangles, f.RAM = 0, 0
	s := &f.Surfaces[0]
	s.Collision = nil
	s.Targets = s.Targets[:1]
	return f
}

// ms11SkinnedFile is a skinned ms11 mesh with the name list ["scene"] and,
// as the public arm (ms11_fpsdemo1_arm_skinned) has, the one animation of
// that name after the bone transforms: one frame posing every bone, all
// flag bits set (mask 0x7f); here each bone's transform turned 30° about
// its Z, the child also moved along its X.
func ms11SkinnedFile() *File {
	f := ms13SkinnedFile()
	f.Magic = MagicMS11
	f.Names = []string{"scene"}
	f.Surfaces[0].LightmapChannel, f.Surfaces[0].LightmapResolution = 0, 0
	a := Anim{Magic: MagicMS11, Mask: 0x7f, Frames: 1}
	turn := quatZ(30)
	for j, t := range f.Bind {
		a.Animated = append(a.Animated, int16(j))
		a.Flags = append(a.Flags, 0x7f)
		p := t.Position
		if j == 1 {
			p[0] += 0.25
		}
		q := quatMul(t.Rotation, turn)
		a.Values = append(a.Values, p[:]...)
		for _, c := range q {
			a.Values = append(a.Values, float32(math.Round(float64(c)*32767)))
		}
		a.Values = append(a.Values, t.Scale[:]...)
	}
	f.Anims = []Anim{a}
	return f
}

// quatMul is the rotation b then a (x, y, z, w quaternions).
func quatMul(a, b [4]float32) [4]float32 {
	return [4]float32{
		a[3]*b[0] + a[0]*b[3] + a[1]*b[2] - a[2]*b[1],
		a[3]*b[1] - a[0]*b[2] + a[1]*b[3] + a[2]*b[0],
		a[3]*b[2] + a[0]*b[1] - a[1]*b[0] + a[2]*b[3],
		a[3]*b[3] - a[0]*b[0] - a[1]*b[1] - a[2]*b[2],
	}
}

// ms12WideFile is a static ms12 mesh with more than 65 535 triangle
// vertices, whose triangle indices a stream stores as int32s (as the public
// ms12_mao_3927a595… surface 0 does): a 4×4 grid whose corners each take a
// triangle vertex of their own, spread over 65 536 of them (the last one
// used), most of which no corner uses.
func ms12WideFile() *File {
	s := grid(5, 2)
	s.Name = "wide"
	const ntv = 65536
	base := &s.Targets[0]
	q := base.Tangents[0]
	base.Tangents = make([][4]int16, ntv)
	for i := range base.Tangents {
		base.Tangents[i] = q
	}
	s.UV0 = nil
	s.TIndices = make([]uint32, len(s.CIndices))
	for k := range s.TIndices {
		s.TIndices[k] = uint32(k * (ntv - 1) / (len(s.TIndices) - 1))
	}
	f := &File{Magic: MagicMS12, Surfaces: []Surface{s}}
	f.Bounds = fileBounds(f.Surfaces)
	return f
}

// ms10File is a cube in ms10, whose tangent frames keep x, y, z and w's
// sign: the builder makes each frame as the reader derives it, half of
// them with a negative bitangent.
func ms10File() *File {
	s := cube(1, 0)
	s.Name = "Box01"
	for i, q := range s.Targets[0].Tangents {
		if q[3] < 0 {
			q = [4]int16{-q[0], -q[1], -q[2], -q[3]}
		}
		s.Targets[0].Tangents[i] = packedFrame(q[0], q[1], q[2], i%2 == 1)
	}
	f := &File{Magic: MagicMS10, Surfaces: []Surface{s}}
	f.Bounds = fileBounds(f.Surfaces)
	return f
}

// ms11TailFile is ms11File with bytes between its last surface and the
// final magic (kept as the file's Tail).
func ms11TailFile() *File {
	f := ms11File()
	f.Tail = []byte("\x03\x00tail of unknown meaning\x00")
	return f
}

// ms11BonesFile is a skinned ms11 mesh with an empty name list after the
// bones, as the public mockup agent has.
func ms11BonesFile() *File {
	f := ms11SkinnedFile()
	f.Names, f.Anims = nil, nil
	return f
}

// nanGrid is a 5×5 grid named "floor" with +Inf in the x of coordinate
// vertex 6 and −Inf in the UV0 of triangle vertex 18 (and in UV1's when it
// has UV1), both inner vertices used by 6 triangles each, as real files of
// other engines hold: Repair drops those 12 triangles. (±Inf, not NaN:
// the round trip compares Files with reflect.DeepEqual, for which NaN is
// unequal to itself; Repair tests both alike, by the exponent bits.)
func nanGrid(uv1 bool) Surface {
	g := grid(5, 2)
	g.Name = "floor"
	g.Targets[0].Positions[6][0] = float32(math.Inf(1))
	g.UV0[18] = [2]float32{float32(math.Inf(-1)), 0.5}
	if uv1 {
		for i := range g.UV0 {
			g.UV1 = append(g.UV1, [2]float32{g.UV0[i][1], g.UV0[i][0]})
		}
		g.UV1[18][0] = float32(math.Inf(-1))
	}
	return g
}

// ms13NaNFile is a blocked file (ms13) with nanGrid beside a sound cube.
func ms13NaNFile() *File {
	a := cube(1, 3)
	a.Name = "box"
	f := &File{Magic: MagicMS13, Surfaces: []Surface{a, nanGrid(true)}}
	f.Bounds = BoundsOf(a.Targets[0].Positions)
	return f
}

// ms11NaNFile is a stream file (ms11) holding nanGrid alone.
func ms11NaNFile() *File {
	f := &File{Magic: MagicMS11, Surfaces: []Surface{nanGrid(false)}}
	f.Bounds = f.Surfaces[0].Bounds
	return f
}
