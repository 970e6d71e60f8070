package gem

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

var update = flag.Bool("update", false, "rewrite testdata/gem fixtures from the encoder")

// fixtureDir is testdata/gem at the repository root.
const fixtureDir = "../../testdata/gem"

// testSub is one submesh of a fixture together with the vertices it was
// built from (in the file's own space) and what the decoder must make of
// each vertex's skin influences.
type testSub struct {
	s     *Submesh
	verts []Vertex
	tris  [][3]uint32 // into verts
	// infl returns the expected joint → weight of vertex v (nil: unskinned).
	infl func(v *Vertex) map[int]float32
	// intUV marks integer UVs (SHORT2 elements hold integers).
	intUV bool
}

// fixture is one generated file.
type fixture struct {
	name       string
	magic      string
	vertexSize int
	vertFlags  uint16
	wide       bool
	subs       []testSub
	before     []Chunk // chunks before the submeshes (BNDS, SKIN, ...)
	after      []Chunk // chunks after INDX/IND4 (ADJA, SHDW, MROR, ...)
	padding    int     // garbage vertices inserted before each submesh's vertices
	// repairs, when set, are what decode.Scene.Repair must report: the
	// fixture holds non-finite values, so its corners are not compared
	// with its vertices (TestNaNFixture checks it instead).
	repairs []decode.Repair
}

// grid makes an n×n patch of quads in the XY plane, bent a little in Z,
// with +Z normals. Direct3D stores clockwise fronts: non-mirrored meshes
// get triangles whose (b−a)×(c−a) points against the normal, mirrored ones
// (flag 0x40 / MROR) with it, as the real files do.
func grid(n int, x0, y0 float32, mirrored bool) ([]Vertex, [][3]uint32) {
	var vs []Vertex
	for j := 0; j <= n; j++ {
		for i := 0; i <= n; i++ {
			x, y := x0+float32(i), y0+float32(j)
			vs = append(vs, Vertex{
				Position: [3]float32{x, y, float32((i*j)%3) / 8},
				Normal:   [3]float32{0, 0, 1},
				Tangent:  [4]float32{1, 0, 0, float32(1 - 2*((i+j)%2))},
			})
		}
	}
	var tris [][3]uint32
	at := func(i, j int) uint32 { return uint32(j*(n+1) + i) }
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			a, b, c, d := at(i, j), at(i+1, j), at(i+1, j+1), at(i, j+1)
			if mirrored { // counter-clockwise seen from +Z
				tris = append(tris, [3]uint32{a, b, c}, [3]uint32{a, c, d})
			} else {
				tris = append(tris, [3]uint32{a, c, b}, [3]uint32{a, d, c})
			}
		}
	}
	return vs, tris
}

// decorate fills the optional attributes of vs with distinct values.
func decorate(vs []Vertex, uvSets, colorSets int, intUV bool) {
	for k := range vs {
		v := &vs[k]
		v.UVs = make([][2]float32, uvSets)
		for s := range v.UVs {
			if intUV {
				v.UVs[s] = [2]float32{float32(k + s), float32(-k)}
			} else {
				v.UVs[s] = [2]float32{float32(k)/16 + float32(s), 1 - float32(k)/32}
			}
		}
		v.Colors = make([][4]float32, colorSets)
		for s := range v.Colors {
			v.Colors[s] = [4]float32{float32(k%5) / 10, 0.2 + float32(s)/10, float32(k%3) / 4, float32(200-k) / 255}
		}
		v.Wind = float32(k) / 4
	}
}

// skinWith sets the stored weights and bone indices of each vertex.
func skinWith(vs []Vertex, nWeights, nBones int) {
	for k := range vs {
		v := &vs[k]
		v.Weights = nil
		rest := float32(1)
		for q := 0; q < nWeights; q++ {
			w := float32((k+q)%4+1) / 20 // 0.05 .. 0.2, exact enough in UNORM8 (×255 = 12.75..51)
			w = float32(math.Round(float64(w)*255)) / 255
			v.Weights = append(v.Weights, w)
			rest -= w
		}
		for q := range 4 {
			v.Bones[q] = byte((k + 2*q) % nBones)
		}
	}
}

// implicitLast is the Direct3D rule the decoder must apply: n stored
// weights for indices 0..n−1, the last index gets 1 − their sum.
func implicitLast(m []byte, n int) func(v *Vertex) map[int]float32 {
	return func(v *Vertex) map[int]float32 {
		out := map[int]float32{}
		rest := float32(1)
		for q := 0; q < n; q++ {
			out[int(m[v.Bones[q]])] += v.Weights[q]
			rest -= v.Weights[q]
		}
		out[int(m[v.Bones[n]])] += rest
		return out
	}
}

// The fixtures: every magic, chunk type, submesh kind and branch.
func fixtures() []fixture {
	var fx []fixture

	{ // EPLY, fvf 0x152, one texture, halved colours, ADJA + SHDW (helmet-like).
		vs, tris := grid(2, 0, 0, false)
		decorate(vs, 1, 1, false)
		s := &Submesh{Kind: KindMESH, FVF: 0x152, Flags: FlagRealtime, Diffuse: "hat.tif.tex"}
		adj := &Adjacency{Faces: make([][3]uint16, len(tris))}
		for k := range adj.Faces {
			adj.Faces[k] = [3]uint16{uint16(k + 1), 0xFFFF, uint16(k)}
		}
		sh := &Shadow{Casts: make([]byte, len(tris))}
		for k := range sh.Casts {
			sh.Casts[k] = byte(k % 2)
		}
		fx = append(fx, fixture{name: "eply_texture_halved_colors", magic: MagicEPLY, vertexSize: 36,
			subs:    []testSub{{s: s, verts: vs, tris: tris}},
			before:  []Chunk{&Bounds{Min: [3]float32{0, 0, 0}, Max: [3]float32{2, 2, 0.5}}},
			after:   []Chunk{adj, sh},
			padding: 2})
	}
	{ // EPLY, two mirrored MESH (flags 0x444, material) + MROR.
		a, ta := grid(2, 0, 0, true)
		b, tb := grid(1, 5, 0, true)
		decorate(a, 1, 0, false)
		decorate(b, 1, 0, false)
		fx = append(fx, fixture{name: "eply_mirrored_mror", magic: MagicEPLY, vertexSize: 32, vertFlags: 7,
			subs: []testSub{
				{s: &Submesh{Kind: KindMESH, FVF: 0x112, Flags: 0x444, Material: "970d72f9.dds.mtl"}, verts: a, tris: ta},
				{s: &Submesh{Kind: KindMESH, FVF: 0x112, Flags: 0x444 | FlagTwoSided | FlagAlpha, Material: "e72f7275.dds.mtl"}, verts: b, tris: tb},
			},
			after: []Chunk{&Mirror{}}})
	}
	{ // EPLY skinned: SKIN + MESH fvf 0x1118, flags 0xc14, non-identity bone map (horse-like).
		vs, tris := grid(2, 0, 0, false)
		decorate(vs, 1, 0, false)
		skinWith(vs, 1, 3)
		for k := range vs {
			vs[k].Bones[2], vs[k].Bones[3] = 0, 0
		}
		m := []byte{0, 4, 2}
		fx = append(fx, fixture{name: "eply_skinned_0x800", magic: MagicEPLY, vertexSize: 40, vertFlags: 7,
			before: []Chunk{&Bounds{Max: [3]float32{2, 2, 1}}, &Skin{Bones: []string{"pelvis", "spine", "neck", "head"}}},
			subs: []testSub{{s: &Submesh{Kind: KindMESH, FVF: 0x1118, Flags: 0xc14, Material: "body.mtl", BoneMap: m, HasBoneMap: true},
				verts: vs, tris: tris, infl: implicitLast(m, 1)}}})
	}
	{ // EPLY skinned by the original text's 0x10 reading; texture branch; XYZB3 without
		// indices (non-indexed blending) in a second submesh, plus PSIZE and specular colour.
		a, ta := grid(1, 0, 0, false)
		decorate(a, 1, 0, false)
		skinWith(a, 1, 2)
		ma := []byte{3, 1}
		b, tb := grid(1, 3, 0, false)
		decorate(b, 1, 2, false)
		skinWith(b, 3, 4)
		for k := range b {
			b[k].Bones = [4]byte{0, 1, 2, 3} // implicit: matrices 0..3
		}
		mb := []byte{0, 1, 2, 3}
		fx = append(fx, fixture{name: "eply_skinned_0x10_nonindexed", magic: MagicEPLY, vertexSize: 64, vertFlags: 1,
			before: []Chunk{&Skin{Bones: []string{"a", "b", "c"}}},
			subs: []testSub{
				{s: &Submesh{Kind: KindMESH, FVF: 0x1118, Flags: FlagSkinned, Diffuse: "skin.dds", BoneMap: ma, HasBoneMap: true},
					verts: a, tris: ta, infl: implicitLast(ma, 1)},
				{s: &Submesh{Kind: KindMESH, FVF: 0x1FA, Flags: FlagSubSkin | FlagSkinned | FlagMaterial, Material: "nb.mtl", BoneMap: mb, HasBoneMap: true},
					verts: b, tris: tb, infl: implicitLast(mb, 3)},
			}})
	}
	{ // EPLY tangents in vertex_size + 16, specular colour + material (antenna-like),
		// specular + bump textures, bump only, two diffuse (2 UV sets, and flag 0x1000).
		a, ta := grid(1, 0, 0, false)
		decorate(a, 1, 0, false)
		b, tb := grid(1, 2, 0, false)
		decorate(b, 1, 0, false)
		c, tc := grid(1, 4, 0, false)
		decorate(c, 1, 0, false)
		d, td := grid(1, 6, 0, false)
		decorate(d, 1, 0, false)
		fx = append(fx, fixture{name: "eply_tangents_textures", magic: MagicEPLY, vertexSize: 48, vertFlags: 7,
			subs: []testSub{
				{s: &Submesh{Kind: KindMESH, FVF: 0x112, Flags: 0x704, SpecularColor: [4]byte{0xe5, 0xe5, 0xe5, 0x19}, Material: "body.mtl"}, verts: a, tris: ta},
				{s: &Submesh{Kind: KindMESH, FVF: 0x112, Flags: FlagSpecular | FlagBump, SpecularColor: [4]byte{1, 2, 3, 4},
					Diffuse: "d.dds", Specular: "s.dds", Bump: "n.dds"}, verts: b, tris: tb},
				{s: &Submesh{Kind: KindMESH, FVF: 0x112, Flags: FlagBump, Diffuse: "d2.dds", Bump: "n2.dds"}, verts: c, tris: tc},
				{s: &Submesh{Kind: KindMESH, FVF: 0x112, Flags: FlagTwoTextures | FlagBlend2nd, Diffuse: "d3.dds", Diffuse1: "d4.dds"}, verts: d, tris: td},
			}})
	}
	{ // EPLY multi-UV: fvf 0x252 (two UV sets → two diffuse names), colours full.
		vs, tris := grid(2, 0, 0, false)
		decorate(vs, 2, 1, false)
		fx = append(fx, fixture{name: "eply_multi_uv", magic: MagicEPLY, vertexSize: 44, vertFlags: 1,
			subs: []testSub{{s: &Submesh{Kind: KindMESH, FVF: 0x252, Flags: FlagLightmap, Diffuse: "base.dds", Diffuse1: "light.dds"}, verts: vs, tris: tris}}})
	}
	{ // BPLY map: AS2 SUBM × 2 (pos, normal, colour, UV: 36 bytes in 44), BAS2, IND4,
		// halved colours, InfG, MARK.
		a, ta := grid(2, 0, 0, false)
		b, tb := grid(2, 0, 3, false)
		decorate(a, 1, 1, false)
		decorate(b, 1, 1, false)
		els := []Element{{0x02, 0, 0}, {0x12, 0, 0}, {0x26, 0, 0}, {0x31, 0, 0}}
		g := &InfoGrid{Start: [2]int32{-2, -3}, End: [2]int32{4, 5}, Faces: []uint16{0, 1, 0x8000, 1}}
		fx = append(fx, fixture{name: "bply_map_as2", magic: MagicBPLY, vertexSize: 44, wide: true,
			before: []Chunk{&Bounds{Max: [3]float32{2, 5, 1}}},
			subs: []testSub{
				{s: &Submesh{Kind: KindSUBMAS2, Elements: els, Flags: 0x1404, Material: "mtl0.mtl", Unknown: [2]uint32{0, 0x1914}}, verts: a, tris: ta},
				{s: &Submesh{Kind: KindSUBMAS2, Elements: els, Flags: 0x1404, Material: "mtl1.mtl", Unknown: [2]uint32{0, 0x384}}, verts: b, tris: tb},
			},
			after: []Chunk{&Basis{Poly: [3][2]float32{{1, 2}, {4, 0}, {0, -4}}, Tex: [3][2]float32{{0.5, 0.25}, {0.25, 0}, {0, 0.25}}},
				g, &Markup{Data: []byte("markup bytes")}},
			padding: 1})
	}
	{ // SBM1: HALF4 position, BYTE4N normal, COLOR colour, SHORT2 UV, tags; and a
		// skinned SBM1 with FLOAT3 weights (4th implicit), BYTE4 indices, FLOAT4 tangent,
		// BYTE4N second colour set.
		a, ta := grid(1, 0, 0, false)
		decorate(a, 1, 1, true)
		b, tb := grid(1, 2, 0, false)
		decorate(b, 1, 2, false)
		skinWith(b, 3, 3)
		fx = append(fx, fixture{name: "eply_sbm1_elements", magic: MagicEPLY, vertexSize: 72, vertFlags: 1,
			before: []Chunk{&Skin{Bones: []string{"left", "right"}}},
			subs: []testSub{
				{s: &Submesh{Kind: KindSBM1, Elements: []Element{{0x07, 0, 0}, {0x18, 0, 0}, {0x26, 0, 0}, {0x34, 0, 0}},
					Tags: []Tag{{0, 0x47414754}, {3, 7}}, Flags: FlagTwoSided, Material: "half.mtl"}, verts: a, tris: ta, intUV: true},
				{s: &Submesh{Kind: KindSBM1, Elements: []Element{{0x02, 0, 0}, {0x12, 0, 0}, {0x42, 0, 0}, {0x55, 0, 0}, {0x63, 0, 0}, {0x31, 0, 0}, {0x26, 0, 0}, {0x28, 1, 0}},
					Flags: FlagSkinned, Material: "skinned.mtl", BoneMap: nil}, verts: b, tris: tb, infl: implicitLast([]byte{0, 1, 2}, 3)},
			}})
	}
	{ // PM01 GEM3: every vertex_format bit (0xFFF: 4-bone skin, wind), 2- and 3-bone skin.
		a, ta := grid(1, 0, 0, false)
		decorate(a, 4, 2, false)
		skinWith(a, 3, 3)
		b, tb := grid(1, 2, 0, false)
		decorate(b, 1, 0, false)
		skinWith(b, 1, 2)
		c, tc := grid(1, 4, 0, false)
		decorate(c, 2, 1, false)
		skinWith(c, 2, 3)
		ma, mb, mc := []byte{2, 0, 1}, []byte{1, 2}, []byte{0, 2, 1}
		fx = append(fx, fixture{name: "pm01_gem3", magic: MagicPM01, vertexSize: 108, vertFlags: 1,
			before: []Chunk{&Bounds{Max: [3]float32{5, 1, 1}}, &Skin{Bones: []string{"b1", "b2"}}},
			subs: []testSub{
				{s: &Submesh{Kind: KindSUBMGEM3, VertexFormat: 0xFFF, Flags: GEM3Skin | GEM3TwoSided, Material: "all.mtl", BoneMap: ma, HasBoneMap: true, VertexCount: 4},
					verts: a, tris: ta, infl: implicitLast(ma, 3)},
				{s: &Submesh{Kind: KindSUBMGEM3, VertexFormat: 0x213, Flags: GEM3Skin, Material: "two.mtl", BoneMap: mb, HasBoneMap: true, VertexStart: 4, VertexCount: 4},
					verts: b, tris: tb, infl: implicitLast(mb, 1)},
				{s: &Submesh{Kind: KindSUBMGEM3, VertexFormat: 0x437, Flags: GEM3Skin, Material: "three.mtl", BoneMap: mc, HasBoneMap: true, VertexStart: 8, VertexCount: 4},
					verts: c, tris: tc, infl: implicitLast(mc, 2)},
			}})
	}
	{ // EPLY with NaN in a normal, a tangent (vertex_size + 16), +Inf in a
		// position and −Inf in a UV, as real files of other games have.
		vs, tris := grid(3, 0, 0, false)
		decorate(vs, 1, 0, false)
		for k := range vs {
			vs[k].UVs[0] = [2]float32{vs[k].Position[0] / 3, 1 - vs[k].Position[1]/3}
		}
		nan := float32(math.NaN())
		vs[5].Normal = [3]float32{nan, nan, nan}
		vs[10].Tangent = [4]float32{nan, 0, nan, 1}
		vs[0].Position[0] = float32(math.Inf(1))
		vs[6].UVs[0][1] = float32(math.Inf(-1))
		fx = append(fx, fixture{name: "eply_nan_repaired", magic: MagicEPLY, vertexSize: 48, vertFlags: 7,
			subs: []testSub{{s: &Submesh{Kind: KindMESH, FVF: 0x112, Flags: 0x704, Material: "hull.mtl"}, verts: vs, tris: tris}},
			repairs: []decode.Repair{
				// Vertex 0 is used by the first quad's two triangles.
				{Mesh: "eply_nan_repaired", Primitive: "hull.mtl", Attribute: "position", Vertices: 1, Action: decode.RepairDropTriangles, Triangles: 2},
				// Vertex 6, inner, is used by 6 triangles.
				{Mesh: "eply_nan_repaired", Primitive: "hull.mtl", Attribute: "uv0", Vertices: 1, Action: decode.RepairDropTriangles, Triangles: 6},
				{Mesh: "eply_nan_repaired", Primitive: "hull.mtl", Attribute: "normal", Vertices: 1, Action: decode.RepairRecompute},
				{Mesh: "eply_nan_repaired", Primitive: "hull.mtl", Attribute: "tangent", Vertices: 1, Action: decode.RepairRecompute},
			}})
	}
	return fx
}

// garbage is a padding vertex: real files hold such unreferenced records.
func garbage(size int) []byte {
	b := make([]byte, size)
	for k := range b {
		b[k] = 0xFF // NaN floats everywhere
	}
	return b
}

// build encodes a fixture into a File.
func (fx *fixture) build(t testing.TB) *File {
	f := &File{Magic: fx.magic}
	f.Chunks = append(f.Chunks, fx.before...)
	vert := &Vert{Size: uint16(fx.vertexSize), Flags: fx.vertFlags}
	idx := &Indices{Wide: fx.wide}
	for _, ts := range fx.subs {
		for range fx.padding {
			vert.Data = append(vert.Data, garbage(fx.vertexSize)...)
		}
		base := uint32(len(vert.Data) / fx.vertexSize)
		data, err := PackVertices(ts.s, fx.vertexSize, ts.verts)
		if err != nil {
			t.Fatalf("%s: %v", fx.name, err)
		}
		vert.Data = append(vert.Data, data...)
		ts.s.FaceStart = uint32(len(idx.Values) / 3)
		ts.s.FaceCount = uint32(len(ts.tris))
		for _, tr := range ts.tris {
			idx.Values = append(idx.Values, base+tr[0], base+tr[1], base+tr[2])
		}
		f.Chunks = append(f.Chunks, ts.s)
	}
	f.Chunks = append(f.Chunks, vert, idx)
	f.Chunks = append(f.Chunks, fx.after...)
	return f
}

func fixturePath(name string) string { return filepath.Join(fixtureDir, name+".ply") }

// TestFixtures checks that the committed fixtures are what the encoder
// writes now; with -update it rewrites them.
func TestFixtures(t *testing.T) {
	for _, fx := range fixtures() {
		b, err := Encode(fx.build(t))
		if err != nil {
			t.Fatalf("%s: %v", fx.name, err)
		}
		if len(b) > 8<<10 {
			t.Errorf("%s: %d bytes; keep fixtures small", fx.name, len(b))
		}
		decodetest.Golden(t, fixturePath(fx.name), b, *update, "go test ./decode/gem -run TestFixtures -update")
	}
}

// TestFixturesCoverEveryChunk makes sure the fixture set keeps exercising
// all 14 chunk types, all magics and all submesh kinds.
func TestFixturesCoverEveryChunk(t *testing.T) {
	seen := map[string]bool{}
	for _, fx := range fixtures() {
		f := fx.build(t)
		seen[f.Magic] = true
		for _, c := range f.Chunks {
			seen[c.FourCC()] = true
			if s, ok := c.(*Submesh); ok {
				seen[s.Kind.String()] = true
			}
		}
	}
	for _, want := range []string{"EPLY", "BPLY", "PM01", "INDX", "IND4", "VERT", "BAS2", "InfG", "BNDS", "ADJA",
		"SHDW", "MROR", "MARK", "SKIN", "MESH", "SBM1", "SUBM", "SUBM-AS2", "SUBM-GEM3"} {
		if !seen[want] {
			t.Errorf("no fixture has %s", want)
		}
	}
}

func near(a, b, tol float32) bool { return math.Abs(float64(a-b)) <= float64(tol) }

// TestRoundTrip decodes each fixture and compares every triangle corner
// with the vertex it was built from, converted by the rule in FORMATS.md:
// Y mirrored, then Z up → Y up, i.e. (x, y, z) → (x, z, y); tangent sign
// flipped; halved colours doubled; winding reversed for mirrored meshes.
func TestRoundTrip(t *testing.T) {
	for _, fx := range fixtures() {
		t.Run(fx.name, func(t *testing.T) {
			f := fx.build(t)
			b, err := Encode(f)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Parse(context.Background(), fx.name, b)
			if err != nil {
				t.Fatal(err)
			}
			if len(back.Chunks) != len(f.Chunks) {
				t.Fatalf("parsed %d chunks, wrote %d", len(back.Chunks), len(f.Chunks))
			}
			for k := range f.Chunks {
				if back.Chunks[k].FourCC() != f.Chunks[k].FourCC() {
					t.Errorf("chunk %d: parsed %s, wrote %s", k, back.Chunks[k].FourCC(), f.Chunks[k].FourCC())
				}
			}
			again, err := Encode(back)
			if err != nil || !bytes.Equal(again, b) {
				t.Fatalf("re-encoding the parsed file differs (err %v)", err)
			}
			sc, err := BuildScene(context.Background(), back, fx.name+".ply")
			if err != nil {
				t.Fatal(err)
			}
			if fx.repairs == nil {
				checkScene(t, &fx, sc)
			}
		})
	}
}

func checkScene(t *testing.T, fx *fixture, sc *decode.Scene) {
	t.Helper()
	if len(sc.Meshes) != 1 || len(sc.Meshes[0].Primitives) != len(fx.subs) {
		t.Fatalf("want 1 mesh of %d primitives, got %+v", len(fx.subs), sc.Count())
	}
	if sc.Meshes[0].Name != fx.name {
		t.Errorf("mesh name %q, want %q", sc.Meshes[0].Name, fx.name)
	}
	mirror := false
	for _, c := range fx.after {
		if _, ok := c.(*Mirror); ok {
			mirror = true
		}
	}
	var basis *Basis
	for _, c := range fx.after {
		if bs, ok := c.(*Basis); ok {
			basis = bs
		}
	}
	for si, ts := range fx.subs {
		p := sc.Meshes[0].Primitives[si]
		used := map[uint32]bool{}
		for _, tr := range ts.tris {
			for _, v := range tr {
				used[v] = true
			}
		}
		if len(p.Positions) != len(used) {
			t.Errorf("sub %d: %d vertices, want the %d referenced ones", si, len(p.Positions), len(used))
		}
		if len(p.Indices) != 3*len(ts.tris) {
			t.Fatalf("sub %d: %d indices, want %d", si, len(p.Indices), 3*len(ts.tris))
		}
		mirrored := mirror || (ts.s.Kind != KindSUBMGEM3 && ts.s.Flags&FlagMirrored != 0)
		l, _ := layoutOf(ts.s, fx.vertexSize)
		for fi, tr := range ts.tris {
			want := tr
			if mirrored {
				want[1], want[2] = want[2], want[1]
			}
			for c := range 3 {
				v := &ts.verts[want[c]]
				got := p.Indices[3*fi+c]
				checkVertex(t, fmt.Sprintf("sub %d face %d corner %d", si, fi, c), fx, &ts, l, v, &p, int(got), basis)
			}
			// Face winding agrees with the vertex normals after conversion.
			a, b, c := p.Positions[p.Indices[3*fi]], p.Positions[p.Indices[3*fi+1]], p.Positions[p.Indices[3*fi+2]]
			if dot3(cross3(sub3(b, a), sub3(c, a)), p.Normals[p.Indices[3*fi]]) <= 0 {
				t.Errorf("sub %d face %d: winding disagrees with its normal", si, fi)
			}
		}
		mat := sc.Materials[p.Material]
		if ts.s.Kind == KindSUBMGEM3 {
			if mat.DoubleSided != (ts.s.Flags&GEM3TwoSided != 0) {
				t.Errorf("sub %d: DoubleSided %v for GEM3 flags 0x%x", si, mat.DoubleSided, ts.s.Flags)
			}
		} else if mat.DoubleSided != (ts.s.Flags&FlagTwoSided != 0) || mat.AlphaBlend != (ts.s.Flags&FlagAlpha != 0) {
			t.Errorf("sub %d: material flags %+v for 0x%x", si, mat, ts.s.Flags)
		}
		wantName := ts.s.Material
		if ts.s.Kind == KindMESH && ts.s.Flags&FlagMaterial == 0 {
			wantName = ts.s.Diffuse
			roles := map[string]string{}
			for _, tx := range mat.Textures {
				roles[tx.Role] = tx.Path
			}
			for role, path := range map[string]string{"diffuse": ts.s.Diffuse, "diffuse1": ts.s.Diffuse1, "specular": ts.s.Specular, "bump": ts.s.Bump} {
				if roles[role] != path {
					t.Errorf("sub %d: texture %s = %q, want %q", si, role, roles[role], path)
				}
			}
		}
		if mat.Name != wantName || p.Name != wantName {
			t.Errorf("sub %d: material %q, primitive %q, want %q", si, mat.Name, p.Name, wantName)
		}
	}
}

func checkVertex(t *testing.T, where string, fx *fixture, ts *testSub, l layout, v *Vertex, p *decode.Primitive, k int, basis *Basis) {
	t.Helper()
	want := [3]float32{v.Position[0], v.Position[2], v.Position[1]}
	for q := range 3 {
		if !near(p.Positions[k][q], want[q], 1e-3) {
			t.Errorf("%s: position %v, want %v", where, p.Positions[k], want)
			break
		}
	}
	if l.has(UsageNormal) {
		n := decode.Normalize3([3]float32{v.Normal[0], v.Normal[2], v.Normal[1]})
		for q := range 3 {
			if !near(p.Normals[k][q], n[q], 0.01) {
				t.Errorf("%s: normal %v, want %v", where, p.Normals[k], n)
				break
			}
		}
	}
	if l.has(UsageTangent) {
		tg := decode.Normalize3([3]float32{v.Tangent[0], v.Tangent[2], v.Tangent[1]})
		w := float32(-1)
		if v.Tangent[3] < 0 {
			w = 1
		}
		if !near(p.Tangents[k][0], tg[0], 1e-3) || !near(p.Tangents[k][1], tg[1], 1e-3) || p.Tangents[k][3] != w {
			t.Errorf("%s: tangent %v, want %v w %v", where, p.Tangents[k], tg, w)
		}
	}
	nuv := l.uvCount()
	extra := 0
	if basis != nil {
		extra = 1
	}
	if len(p.UVs) != nuv+extra {
		t.Fatalf("%s: %d UV sets, want %d", where, len(p.UVs), nuv+extra)
	}
	for s := range nuv {
		if !near(p.UVs[s][k][0], v.UVs[s][0], 1e-4) || !near(p.UVs[s][k][1], v.UVs[s][1], 1e-4) {
			t.Errorf("%s: uv%d %v, want %v", where, s, p.UVs[s][k], v.UVs[s])
		}
	}
	if basis != nil {
		// Independent restatement of FORMATS.md's BAS2 rule.
		dx, dy := v.Position[0]-basis.Poly[0][0], v.Position[1]-basis.Poly[0][1]
		ax, ay := basis.Poly[1], basis.Poly[2]
		gx := (dx*ax[0] + dy*ax[1]) / (ax[0]*ax[0] + ax[1]*ax[1])
		gy := (dx*ay[0] + dy*ay[1]) / (ay[0]*ay[0] + ay[1]*ay[1])
		u := basis.Tex[0][0] + gx*basis.Tex[1][0] + gy*basis.Tex[2][0]
		w := basis.Tex[0][1] + gx*basis.Tex[1][1] + gy*basis.Tex[2][1]
		if got := p.UVs[nuv][k]; !near(got[0], u, 1e-4) || !near(got[1], w, 1e-4) {
			t.Errorf("%s: BAS2 uv %v, want %v", where, got, [2]float32{u, w})
		}
	}
	ncol := l.colorCount()
	if len(p.Colors) != ncol {
		t.Fatalf("%s: %d colour sets, want %d", where, len(p.Colors), ncol)
	}
	for s := range ncol {
		c := v.Colors[s]
		if fx.vertFlags&VertFullColor == 0 {
			c = [4]float32{min(1, 2*c[0]), min(1, 2*c[1]), min(1, 2*c[2]), c[3]}
		}
		for q := range 4 {
			if !near(p.Colors[s][k][q], c[q], 2.5/255) {
				t.Errorf("%s: colour%d %v, want %v", where, s, p.Colors[s][k], c)
				break
			}
		}
	}
	if ts.infl == nil {
		return
	}
	want2 := ts.infl(v)
	got := map[int]float32{}
	for q := range 4 {
		if p.Weights[k][q] > 0 {
			got[int(p.Joints[k][q])] += p.Weights[k][q]
		}
	}
	var sum float32
	for q := range 4 {
		sum += p.Weights[k][q]
	}
	if sum != 1 {
		t.Errorf("%s: weights %v sum to %v", where, p.Weights[k], sum)
	}
	keys := func(m map[int]float32) []int {
		var ks []int
		for j, w := range m {
			if w > 1e-6 {
				ks = append(ks, j)
			}
		}
		sort.Ints(ks)
		return ks
	}
	if fmt.Sprint(keys(got)) != fmt.Sprint(keys(want2)) {
		t.Errorf("%s: joints %v (weights %v), want influences %v", where, p.Joints[k], p.Weights[k], want2)
		return
	}
	for j, w := range want2 {
		if !near(got[j], w, 0.005) {
			t.Errorf("%s: joint %d weight %v, want %v", where, j, got[j], w)
		}
	}
}

func sub3(a, b [3]float32) [3]float32 { return [3]float32{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func cross3(a, b [3]float32) [3]float32 {
	return [3]float32{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}
func dot3(a, b [3]float32) float32 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

// TestNaNFixture: eply_nan_repaired decodes with its repairs reported, in
// the scene and in Scan's header.json (every other fixture's lists none),
// the non-finite position's and UV's triangles gone, every tangent unit
// length and orthogonal to its normal, and the recomputed normal and
// tangent (of a vertex of the flat part of the grid) those of its
// neighbours, converted to the scene's frame: normal +Z → +Y, tangent +X
// with the Y mirror's sign.
func TestNaNFixture(t *testing.T) {
	for _, fx := range fixtures() {
		b, err := os.ReadFile(fixturePath(fx.name))
		if err != nil {
			t.Fatal(err)
		}
		src := func() *decode.Source {
			return &decode.Source{Name: fx.name + ".ply", R: bytes.NewReader(b), Size: int64(len(b))}
		}
		st, err := Format{}.Scan(context.Background(), src())
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Header.Get("repairs"); !reflect.DeepEqual(got, decode.RepairFields(fx.repairs)) {
			t.Errorf("%s: header.json repairs %v, want %v", fx.name, got, decode.RepairFields(fx.repairs))
		}
		if fx.repairs == nil {
			continue
		}
		sc, err := Format{}.Decode(context.Background(), src())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(sc.Repairs, fx.repairs) {
			t.Fatalf("%s: repairs %+v, want %+v", fx.name, sc.Repairs, fx.repairs)
		}
		p := sc.Meshes[0].Primitives[0]
		if len(p.Indices)/3 != len(fx.subs[0].tris)-8 {
			t.Errorf("%d triangles, want %d", len(p.Indices)/3, len(fx.subs[0].tris)-8)
		}
		for v := range p.Positions {
			if !decode.Finite(p.Positions[v][:]...) || !decode.Finite(p.Normals[v][:]...) || !decode.Finite(p.Tangents[v][:]...) || !decode.Finite(p.UVs[0][v][:]...) {
				t.Fatalf("vertex %d: position %v, normal %v, tangent %v, uv %v", v, p.Positions[v], p.Normals[v], p.Tangents[v], p.UVs[0][v])
			}
			n, tg := p.Normals[v], p.Tangents[v]
			l := math.Sqrt(float64(tg[0]*tg[0] + tg[1]*tg[1] + tg[2]*tg[2]))
			if math.Abs(l-1) > 1e-5 || math.Abs(float64(n[0]*tg[0]+n[1]*tg[1]+n[2]*tg[2])) > 1e-5 || (tg[3] != 1 && tg[3] != -1) {
				t.Errorf("vertex %d: tangent %v (length %v) against normal %v: not a unit tangent orthogonal to it", v, tg, l, n)
			}
		}
		for _, sv := range []int{5, 10} {
			src := fx.subs[0].verts[sv].Position
			var v = -1
			for k, q := range p.Positions {
				if q == convert(src[0], src[1], src[2]) {
					v = k
				}
			}
			if v < 0 {
				t.Fatalf("vertex %d not found", sv)
			}
			n, tg := p.Normals[v], p.Tangents[v]
			if n[1] < 0.99 || math.Abs(float64(tg[0])) < 0.99 || math.Abs(float64(n[0]*tg[0]+n[1]*tg[1]+n[2]*tg[2])) > 1e-5 {
				t.Errorf("vertex %d: normal %v, tangent %v; want about (0, 1, 0) and (±1, 0, 0), orthogonal", sv, n, tg)
			}
		}
	}
}
