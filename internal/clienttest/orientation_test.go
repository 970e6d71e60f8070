package clienttest

import (
	"flag"
	"math"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/gem"
	"github.com/meshfs/meshfs/decode/tfever"
	"github.com/meshfs/meshfs/decode/unigine"
)

var update = flag.Bool("update", false, "rewrite testdata/orientation from the encoders")

// orientationDir holds one orientation fixture per format.
const orientationDir = repoRoot + "/testdata/orientation"

// oVert is a vertex of the orientation model, in a right-handed Z-up frame.
type oVert struct {
	pos, normal [3]float32
	uv          [2]float32 // top-left origin, as all three formats store UVs
}

// oPart is one surface: triangles counter-clockwise seen from the front.
type oPart struct {
	name  string
	verts []oVert
	tris  [][3]uint32
}

var (
	rampNormal = normalize([3]float32{-1, 0, 2}) // the ramp rises by 1 over 2 along +X
	up         = [3]float32{0, 0, 1}
)

// orientationModel is the model every format's fixture holds, in the
// source's own up axis (Z for all three formats):
//   - "ramp": a 2 × 1 quad rising along +X from z = 0 to z = 1, facing up;
//   - "up": a flat triangle at z = 0 facing +Z;
//   - "uvquad": a flat 2 × 1 quad at z = 0.25 whose UVs are a 1 × 0.5
//     rectangle with (0, 0) at its corner (5, 0): no rotation or mirror of
//     the UVs maps it onto itself.
func orientationModel() []oPart {
	quad := func(name string, p [4][3]float32, n [3]float32, uv [4][2]float32) oPart {
		var part oPart
		part.name = name
		for k := range p {
			part.verts = append(part.verts, oVert{pos: p[k], normal: n, uv: uv[k]})
		}
		part.tris = [][3]uint32{{0, 1, 2}, {0, 2, 3}}
		return part
	}
	ramp := quad("ramp", [4][3]float32{{0, 0, 0}, {2, 0, 1}, {2, 1, 1}, {0, 1, 0}}, rampNormal,
		[4][2]float32{{0, 1}, {1, 1}, {1, 0}, {0, 0}})
	tri := oPart{name: "up", verts: []oVert{
		{pos: [3]float32{3, 0, 0}, normal: up, uv: [2]float32{0, 1}},
		{pos: [3]float32{4, 0, 0}, normal: up, uv: [2]float32{1, 1}},
		{pos: [3]float32{3.5, 1, 0}, normal: up, uv: [2]float32{0.5, 0}},
	}, tris: [][3]uint32{{0, 1, 2}}}
	uvq := quad("uvquad", [4][3]float32{{5, 0, 0.25}, {7, 0, 0.25}, {7, 1, 0.25}, {5, 1, 0.25}}, up,
		[4][2]float32{{0, 0}, {1, 0}, {1, 0.5}, {0, 0.5}})
	return []oPart{ramp, tri, uvq}
}

func normalize(v [3]float32) [3]float32 {
	l := float32(math.Sqrt(float64(v[0]*v[0] + v[1]*v[1] + v[2]*v[2])))
	return [3]float32{v[0] / l, v[1] / l, v[2] / l}
}

// tangentOf is a unit tangent of a part's plane: along +X, lifted onto the
// ramp's slope.
func tangentOf(n [3]float32) [3]float32 {
	if n == up {
		return [3]float32{1, 0, 0}
	}
	return normalize([3]float32{2, 0, 1})
}

// orientationFixture is one format's fixture: its files and the rule that
// maps a source position to where Blender must show it.
type orientationFixture struct {
	format string
	main   string // the mesh file, relative to orientationDir
	files  func(t *testing.T) map[string][]byte
	// toBlender maps a source position to Blender's world space.
	toBlender func(p [3]float32) [3]float32
}

func orientationFixtures() []orientationFixture {
	same := func(p [3]float32) [3]float32 { return p }
	return []orientationFixture{
		// GEM data is left-handed (Direct3D, clockwise fronts) and the games
		// show it mirrored in Y (the .mdl basis); decode/gem mirrors Y, so
		// Blender shows (x, −y, z). Up stays up, +X stays +X.
		{"gem", "gem/orient.ply", gemOrientation, func(p [3]float32) [3]float32 { return [3]float32{p[0], -p[1], p[2]} }},
		// UNIGINE and Transport Fever are right-handed and Z up like
		// Blender: (x, y, z) → glTF (x, z, −y) → Blender (x, y, z).
		{"unigine", "unigine/orient.mesh", unigineOrientation, same},
		{"tfever", "tfever/orient.msh", tfeverOrientation, same},
	}
}

// gemOrientation writes an EPLY with one MESH (fvf 0x112: position, normal,
// one UV set) per part. Direct3D fronts are clockwise: each triangle is
// written reversed.
func gemOrientation(t *testing.T) map[string][]byte {
	f := &gem.File{Magic: gem.MagicEPLY}
	const size = 32
	vert := &gem.Vert{Size: size, Flags: gem.VertFullColor}
	idx := &gem.Indices{}
	for _, p := range orientationModel() {
		s := &gem.Submesh{Kind: gem.KindMESH, FVF: 0x112, Flags: gem.FlagMaterial, Material: p.name + ".mtl"}
		var vs []gem.Vertex
		for _, v := range p.verts {
			vs = append(vs, gem.Vertex{Position: v.pos, Normal: v.normal, UVs: [][2]float32{v.uv}})
		}
		data, err := gem.PackVertices(s, size, vs)
		if err != nil {
			t.Fatal(err)
		}
		base := uint32(len(vert.Data) / size)
		vert.Data = append(vert.Data, data...)
		s.FaceStart, s.FaceCount = uint32(len(idx.Values)/3), uint32(len(p.tris))
		for _, tr := range p.tris {
			idx.Values = append(idx.Values, base+tr[0], base+tr[2], base+tr[1])
		}
		f.Chunks = append(f.Chunks, s)
	}
	f.Chunks = append(f.Chunks, vert, idx)
	b, err := gem.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"gem/orient.ply": b}
}

// unigineOrientation writes an ms15 with one surface per part.
func unigineOrientation(t *testing.T) map[string][]byte {
	f := &unigine.File{Magic: unigine.MagicMS15}
	var all [][3]float32
	for _, p := range orientationModel() {
		s := unigine.Surface{Name: p.name}
		var base unigine.Target
		for _, v := range p.verts {
			base.Positions = append(base.Positions, v.pos)
			base.Tangents = append(base.Tangents, unigine.FrameQuat(v.normal, tangentOf(v.normal), 1))
			s.UV0 = append(s.UV0, v.uv)
			all = append(all, v.pos)
		}
		for _, tr := range p.tris {
			s.CIndices = append(s.CIndices, tr[0], tr[1], tr[2])
			s.TIndices = append(s.TIndices, tr[0], tr[1], tr[2])
		}
		s.Targets = []unigine.Target{base}
		s.Bounds = boundsOf(base.Positions)
		f.SpatialTreeTriangles += int32(len(p.tris))
		f.Surfaces = append(f.Surfaces, s)
	}
	f.Bounds = boundsOf(all)
	b, err := unigine.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"unigine/orient.mesh": b}
}

func boundsOf(ps [][3]float32) unigine.Bounds {
	b := unigine.Bounds{Min: ps[0], Max: ps[0]}
	for _, p := range ps {
		for k := range 3 {
			b.Min[k], b.Max[k] = min(b.Min[k], p[k]), max(b.Max[k], p[k])
		}
	}
	var r2 float32
	for k := range 3 {
		b.SphereCenter[k] = (b.Min[k] + b.Max[k]) / 2
		d := (b.Max[k] - b.Min[k]) / 2
		r2 += d * d
	}
	b.SphereRadius = float32(math.Sqrt(float64(r2)))
	return b
}

// tfeverOrientation writes a Transport Fever 2 style .msh + .msh.blob: one
// submesh per part, each attribute indexed by its own list.
func tfeverOrientation(t *testing.T) map[string][]byte {
	m := &tfever.EncMesh{}
	var pos, nrm, uv, tan []float32
	for _, p := range orientationModel() {
		base := uint32(len(pos) / 3)
		for _, v := range p.verts {
			tg := tangentOf(v.normal)
			pos = append(pos, v.pos[:]...)
			nrm = append(nrm, v.normal[:]...)
			uv = append(uv, v.uv[:]...)
			tan = append(tan, tg[0], tg[1], tg[2], 1)
		}
		var ix []uint32
		for _, tr := range p.tris {
			ix = append(ix, base+tr[0], base+tr[1], base+tr[2])
		}
		m.SubMeshes = append(m.SubMeshes, tfever.EncSubMesh{
			Indices:   map[string][]uint32{"position": ix, "normal": ix, "uv0": ix, "tangent": ix},
			Materials: []string{"orient/" + p.name + ".mtl"},
		})
	}
	m.Attrs = []tfever.EncAttr{
		{Name: "position", NumComp: 3, Data: pos},
		{Name: "normal", NumComp: 3, Data: nrm},
		{Name: "uv0", NumComp: 2, Data: uv},
		{Name: "tangent", NumComp: 4, Data: tan},
	}
	script, blob, err := tfever.EncodeMsh(m)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"tfever/orient.msh": script, "tfever/orient.msh.blob": blob}
}

// TestOrientationFixtures checks that testdata/orientation holds what the
// encoders write now; -update rewrites it. Each fixture must also decode to
// the model: three parts, every source vertex present.
func TestOrientationFixtures(t *testing.T) {
	for _, fx := range orientationFixtures() {
		for name, b := range fx.files(t) {
			decodetest.Golden(t, filepath.Join(orientationDir, name), b, *update,
				"go test ./internal/clienttest -run TestOrientationFixtures -update")
		}
		s, err := decodeSource(filepath.Join(orientationDir, fx.main), orientationDir)
		if err != nil {
			t.Errorf("%s: %v", fx.format, err)
			continue
		}
		if c := s.Count(); c.Triangles != 5 || c.Primitives != 3 {
			t.Errorf("%s: decoded %+v, want 3 primitives of 5 triangles", fx.format, c)
		}
	}
}
