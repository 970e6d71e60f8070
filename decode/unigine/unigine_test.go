package unigine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

func TestCompact(t *testing.T) {
	good := []struct {
		in   []byte
		want int32
	}{
		{[]byte{0x04}, 4},
		{[]byte{0x41}, -1},
		{[]byte{0xb6, 0x95, 0x01}, 9590},
		{[]byte{0xb8, 0xf0, 0x06}, 56376},
		{[]byte{0x00}, 0},
		{[]byte{0x3f}, 63},
		{[]byte{0x80, 0x01}, 64},
		{[]byte{0x7f}, -63},
		{[]byte{0xbf, 0xff, 0xff, 0xff, 0x0f}, math.MaxInt32},
		{[]byte{0xc0, 0x80, 0x80, 0x80, 0x10}, math.MinInt32},
		{[]byte{0x88, 0x25}, 2376}, // ms14_capsule_skinned's index count
	}
	for _, g := range good {
		v, n, err := parseCompact(g.in)
		if err != nil || v != g.want || n != len(g.in) {
			t.Errorf("parseCompact(% x) = %d, %d, %v; want %d, %d", g.in, v, n, err, g.want, len(g.in))
		}
		if g.want != 0 || g.in[0] == 0 {
			if enc := appendCompact(nil, g.want); !bytes.Equal(enc, g.in) {
				t.Errorf("appendCompact(%d) = % x, want % x", g.want, enc, g.in)
			}
		}
	}
	bad := []struct {
		in   []byte
		want error
	}{
		{nil, errCompactShort},
		{[]byte{0x80}, errCompactShort},
		{[]byte{0xb6, 0x95}, errCompactShort},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, errCompactOverlong}, // six bytes
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x10}, errCompactOverflow},       // 2³¹
		{[]byte{0xc1, 0x80, 0x80, 0x80, 0x10}, errCompactOverflow},       // −2³¹−1
	}
	for _, b := range bad {
		if _, _, err := parseCompact(b.in); err != b.want {
			t.Errorf("parseCompact(% x) error %v, want %v", b.in, err, b.want)
		}
	}
	// Longer than needed but within five bytes: accepted, as UNIGINE's own
	// writer makes them (ms14_capsule_skinned.mesh's collision block stores
	// 63 as bf 00).
	for _, g := range []struct {
		in   []byte
		want int32
	}{{[]byte{0xbf, 0x00}, 63}, {[]byte{0x84, 0x00}, 4}, {[]byte{0xc1, 0x80, 0x00}, -1}} {
		if v, n, err := parseCompact(g.in); err != nil || v != g.want || n != len(g.in) {
			t.Errorf("parseCompact(% x) = %d, %d, %v; want %d", g.in, v, n, err, g.want)
		}
	}
	// Every value round-trips, across the byte-length boundaries.
	for _, v := range []int32{1, 63, 64, 8191, 8192, 1<<20 - 1, 1 << 20, 1<<27 - 1, 1 << 27, -64, -65, -1 << 27} {
		enc := appendCompact(nil, v)
		got, n, err := parseCompact(enc)
		if err != nil || got != v || n != len(enc) {
			t.Errorf("round trip %d: % x → %d, %d, %v", v, enc, got, n, err)
		}
	}
}

func readBytes(t testing.TB, name string, b []byte) (*File, error) {
	t.Helper()
	return Read(context.Background(), memSource(name, b))
}

func TestRoundTrip(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			want := fx.build()
			b, err := Encode(want)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readBytes(t, fx.name, b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip differs: %s", diff(got, want))
			}
			// And the committed fixture decodes to the same.
			old, err := os.ReadFile(filepath.Join(fixtureDir, fx.name))
			if err != nil {
				t.Fatal(err)
			}
			if got2, err := readBytes(t, fx.name, old); err != nil || !reflect.DeepEqual(got2, want) {
				t.Errorf("committed fixture: %v", err)
			}
		})
	}
}

// diff names the first field where two files differ.
func diff(a, b *File) string {
	va, vb := reflect.ValueOf(*a), reflect.ValueOf(*b)
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			name := va.Type().Field(i).Name
			if name != "Surfaces" || len(a.Surfaces) != len(b.Surfaces) {
				return name
			}
			for k := range a.Surfaces {
				sa, sb := reflect.ValueOf(a.Surfaces[k]), reflect.ValueOf(b.Surfaces[k])
				for j := range sa.NumField() {
					if !reflect.DeepEqual(sa.Field(j).Interface(), sb.Field(j).Interface()) {
						return fmt.Sprintf("surface %d field %s: %v vs %v", k, sa.Type().Field(j).Name, sa.Field(j).Len(), sb.Field(j).Len())
					}
				}
			}
		}
	}
	return "?"
}

// bigGrid is a surface of more than 65 536 coordinate and triangle
// vertices, whose indices are compact ints.
func bigGridFile(magic string, n int) *File {
	g := grid(n, 10)
	g.Name = "terrain"
	f := &File{Magic: magic, Surfaces: []Surface{g}}
	if magic == MagicSK10 {
		f.Joints = []Joint{{"root", -1}}
	}
	if magic == MagicMS15 || magic == MagicMS14 {
		f.Surfaces[0] = withCollision(g)
	}
	f.Bounds = fileBounds(f.Surfaces)
	return f
}

// TestWideIndices: above 65 535 vertices a block (ms15, sk10, ms14) stores
// its indices as compact ints and a stream (ms13 to ms10) as int32s (the
// real ms12_mao file's surface 0, 82 271 triangle vertices); both round
// trip, and a stream's triangle indices are its last bytes before the
// final magic, 4 each.
func TestWideIndices(t *testing.T) {
	for _, magic := range []string{MagicMS15, MagicSK10, MagicMS14, MagicMS13, MagicMS12, MagicMS11} {
		want := bigGridFile(magic, 257) // 66 049 vertices
		lay, _ := layoutOf(magic)
		wantWidth := 0
		if !lay.blocks {
			wantWidth = 4
		}
		if w := lay.indexWidth(len(want.Surfaces[0].Targets[0].Positions)); w != wantWidth {
			t.Fatalf("%s: index width %d, want %d", magic, w, wantWidth)
		}
		b, err := Encode(want)
		if err != nil {
			t.Fatal(err)
		}
		if !lay.blocks {
			ti := want.Surfaces[0].TIndices
			raw := b[len(b)-4-4*len(ti) : len(b)-4]
			for k, v := range ti {
				if got := binary.LittleEndian.Uint32(raw[4*k:]); got != v {
					t.Fatalf("%s: triangle index %d stored as %d, want the int32 %d", magic, k, got, v)
				}
			}
		}
		got, err := readBytes(t, "big."+magic, b)
		if err != nil {
			t.Fatalf("%s: %v", magic, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: round trip differs: %s", magic, diff(got, want))
		}
		sc, err := Scene(got, "big", "big")
		if err != nil {
			t.Fatal(err)
		}
		if c := sc.Count(); c.Triangles != 2*256*256 || c.Vertices != 257*257 {
			t.Errorf("%s: counts %+v", magic, c)
		}
	}
}

func decodeFixture(t testing.TB, name string) *decode.Scene {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Format{}.Decode(context.Background(), memSource(name, b))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func sub(a, b [3]float32) [3]float32 { return [3]float32{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func dot(a, b [3]float32) float32    { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

// faceAgreement counts triangles whose counter-clockwise face normal
// agrees with the mean of their vertex normals.
func faceAgreement(p *decode.Primitive) (agree, total int) {
	for k := 0; k+2 < len(p.Indices); k += 3 {
		a, b, c := p.Indices[k], p.Indices[k+1], p.Indices[k+2]
		fn := cross(sub(p.Positions[b], p.Positions[a]), sub(p.Positions[c], p.Positions[a]))
		if dot(fn, fn) < 1e-20 {
			continue
		}
		var vn [3]float32
		for _, i := range []uint32{a, b, c} {
			for j := range 3 {
				vn[j] += p.Normals[i][j]
			}
		}
		total++
		if dot(fn, vn) > 0 {
			agree++
		}
	}
	return agree, total
}

// TestCubeNormalsOutward: in the closed cube every face's winding and every
// decoded normal point away from the centre, after the Z-up → Y-up turn.
func TestCubeNormalsOutward(t *testing.T) {
	sc := decodeFixture(t, "ms15_cube.mesh")
	p := &sc.Meshes[0].Primitives[0]
	if len(p.Indices) != 36 || len(p.Positions) != 24 {
		t.Fatalf("%d indices, %d vertices", len(p.Indices), len(p.Positions))
	}
	for k := 0; k < 36; k += 3 {
		a, b, c := p.Positions[p.Indices[k]], p.Positions[p.Indices[k+1]], p.Positions[p.Indices[k+2]]
		fn := decode.Normalize3(cross(sub(b, a), sub(c, a)))
		centroid := [3]float32{(a[0] + b[0] + c[0]) / 3, (a[1] + b[1] + c[1]) / 3, (a[2] + b[2] + c[2]) / 3}
		if dot(fn, centroid) <= 0 {
			t.Errorf("triangle %d faces inwards", k/3)
		}
		for _, i := range p.Indices[k : k+3] {
			if d := dot(fn, p.Normals[i]); d < 0.999 {
				t.Errorf("triangle %d vertex %d normal %v vs face %v", k/3, i, p.Normals[i], fn)
			}
			tg := p.Tangents[i]
			if math.Abs(float64(dot([3]float32{tg[0], tg[1], tg[2]}, p.Normals[i]))) > 1e-3 || tg[3] != 1 {
				t.Errorf("tangent %v not orthogonal to normal %v", tg, p.Normals[i])
			}
		}
	}
	// Y up: the cube's +Z face in the file is the +Y face here.
	var top int
	for _, n := range p.Normals {
		if n[1] > 0.999 {
			top++
		}
	}
	if top != 4 {
		t.Errorf("%d vertices with normal +Y, want 4", top)
	}
}

func TestFrameQuat(t *testing.T) {
	frames := []struct {
		n, t vec3
		sign float32
	}{
		{vec3{0, 0, 1}, vec3{1, 0, 0}, 1}, {vec3{0, 0, -1}, vec3{1, 0, 0}, -1},
		{vec3{0, 0, -1}, vec3{1, 0, 0}, 1}, {vec3{1, 0, 0}, vec3{0, 1, 0}, -1},
		{vec3{0, 0.6, 0.8}, vec3{1, 0, 0}, 1}, {vec3{0.48, 0.6, 0.64}, vec3{0.8, 0, -0.6}, -1},
	}
	for _, f := range frames {
		q := FrameQuat(f.n, f.t, f.sign)
		n, tg, sign := frame(q)
		for i := range 3 {
			if math.Abs(n[i]-float64(f.n[i])) > 1e-3 || math.Abs(tg[i]-float64(f.t[i])) > 1e-3 {
				t.Errorf("frame %+v → %v → n %v t %v", f, q, n, tg)
				break
			}
		}
		if sign != f.sign {
			t.Errorf("frame %+v → %v: sign %v", f, q, sign)
		}
	}
}

func mulIB(ib *[16]float32, m decode.Mat4) decode.Mat4 {
	var a decode.Mat4
	for i := range ib {
		a[i] = float64(ib[i])
	}
	return m.Mul(a)
}

// checkBindMatchesRest: with bind pose = rest pose, each joint's model
// transform from the rest chain times its inverse bind matrix is identity.
func checkBindMatchesRest(t *testing.T, sk *decode.Skeleton) {
	t.Helper()
	// Parents may come after their children (the real ms13 and ms11
	// skeletons): each global is made once its parent's is.
	global := make([]decode.Mat4, len(sk.Joints))
	done := make([]bool, len(sk.Joints))
	var globalOf func(i, depth int) decode.Mat4
	globalOf = func(i, depth int) decode.Mat4 {
		if depth > len(sk.Joints) {
			t.Fatalf("joint %d's parents form a cycle", i)
		}
		if !done[i] {
			j := sk.Joints[i]
			global[i] = j.Rest.Matrix()
			if j.Parent >= 0 {
				global[i] = globalOf(j.Parent, depth+1).Mul(global[i])
			}
			done[i] = true
		}
		return global[i]
	}
	for i, j := range sk.Joints {
		globalOf(i, 0)
		if j.InverseBind == nil {
			continue
		}
		m := mulIB(j.InverseBind, global[i])
		for k := range m {
			want := 0.0
			if k%5 == 0 {
				want = 1
			}
			if math.Abs(m[k]-want) > 1e-4 {
				t.Errorf("joint %d %q: global × inverse bind = %v", i, j.Name, m)
				break
			}
		}
	}
}

func TestSkinnedSK10(t *testing.T) {
	sc := decodeFixture(t, "sk10_character.mesh_skinned")
	f := characterFile()
	sk := sc.Skeleton
	if sk == nil || len(sk.Joints) != len(f.Joints)+1 {
		t.Fatalf("skeleton %+v", sk)
	}
	if sk.Joints[0].Name != "root" || sk.Joints[0].Parent != -1 {
		t.Errorf("synthetic root %+v", sk.Joints[0])
	}
	for i, j := range f.Joints {
		g := sk.Joints[i+1]
		wantParent := int(j.Parent) + 1
		if j.Parent < 0 {
			wantParent = 0
		}
		if g.Name != j.Name || g.Parent != wantParent {
			t.Errorf("joint %d: %q parent %d, want %q parent %d", i+1, g.Name, g.Parent, j.Name, wantParent)
		}
	}
	checkBindMatchesRest(t, sk)
	var prims []decode.Primitive
	wantTargets := [][]string{{"smile", "blink"}, {"grow"}}
	for i, m := range sc.Meshes {
		if !m.Skinned || i >= len(wantTargets) || !reflect.DeepEqual(m.TargetNames, wantTargets[i]) {
			t.Fatalf("mesh %d: skinned %v, targets %q", i, m.Skinned, m.TargetNames)
		}
		if len(m.Primitives) != 1 || m.Name != m.Primitives[0].Name {
			t.Fatalf("mesh %q: %d primitives", m.Name, len(m.Primitives))
		}
		prims = append(prims, m.Primitives...)
	}
	if len(prims) != 2 {
		t.Fatalf("%d surfaces", len(prims))
	}
	body, prop := prims[0], prims[1]
	if body.Name != "body" || prop.Name != "prop" {
		t.Fatalf("primitives %q %q", body.Name, prop.Name)
	}
	for i, p := range prims {
		if len(p.Targets) != len(wantTargets[i]) {
			t.Fatalf("%s: %d targets", p.Name, len(p.Targets))
		}
		for v := range p.Weights {
			var s float32
			for _, w := range p.Weights[v] {
				s += w
			}
			if math.Abs(float64(s)-1) > 1e-6 {
				t.Fatalf("%s vertex %d weights sum %v", p.Name, v, s)
			}
		}
	}
	// body vertex 0: file joints 0..3 → scene joints 1..4, largest first.
	fw := f.Surfaces[0].Weights[0]
	got := map[uint16]float32{}
	for k, j := range body.Joints[0] {
		got[j] = body.Weights[0][k]
	}
	for _, in := range fw {
		if w := got[uint16(in.Joint+1)]; math.Abs(float64(w)-float64(in.Weight)/65535) > 1e-4 {
			t.Errorf("joint %d weight %v, want %v", in.Joint+1, w, float64(in.Weight)/65535)
		}
	}
	if prop.Joints[0][0] != 5 || prop.Weights[0][0] != 1 {
		t.Errorf("prop bound to %v %v", prop.Joints[0], prop.Weights[0])
	}
	// smile moves positions only; blink also turns normals.
	if body.Targets[0].Normals != nil || body.Targets[1].Normals == nil || body.Targets[1].Tangents != nil {
		t.Errorf("body normal deltas: smile %v, blink %v / tangents %v", body.Targets[0].Normals != nil, body.Targets[1].Normals != nil, body.Targets[1].Tangents != nil)
	}
	// The smile delta of a vertex is the file's z offset, now on +Y.
	base, smile := f.Surfaces[0].Targets[0].Positions, f.Surfaces[0].Targets[1].Positions
	for v := range body.Positions {
		d := body.Targets[0].Positions[v]
		c := -1
		for i, p := range base {
			if decode.ZUpToYUp(p) == body.Positions[v] {
				c = i
			}
		}
		if c < 0 {
			t.Fatalf("vertex %d at %v is no coordinate vertex", v, body.Positions[v])
		}
		want := smile[c][2] - base[c][2]
		if math.Abs(float64(d[1]-want)) > 1e-6 || d[0] != 0 || d[2] != 0 {
			t.Fatalf("vertex %d smile delta %v, want (0, %v, 0)", v, d, want)
		}
	}
	// prop's one target is its own grow.
	for _, d := range prop.Targets[0].Positions {
		if d == ([3]float32{}) {
			t.Fatal("prop's grow target does not move a vertex")
		}
	}
	if len(body.UVs) != 2 || len(body.Colors) != 1 {
		t.Errorf("body has %d UV sets, %d colour sets", len(body.UVs), len(body.Colors))
	}
}

func TestSkinnedMS14(t *testing.T) {
	sc := decodeFixture(t, "ms14_skinned.mesh")
	sk := sc.Skeleton
	if sk == nil || len(sk.Joints) != 4 || sk.Joints[0].Name != "root" {
		t.Fatalf("skeleton %+v", sk)
	}
	checkBindMatchesRest(t, sk)
	if n := sc.Meshes[0].TargetNames; !reflect.DeepEqual(n, []string{"up"}) {
		t.Errorf("targets %q", n)
	}
}

// TestRealFiles: every real file decodes; triangles are a third of the
// header's coordinate indices; normals agree with counter-clockwise faces.
func TestRealFiles(t *testing.T) {
	for _, p := range realFiles(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		src := memSource(p, b)
		st, err := Format{}.Scan(context.Background(), src)
		if err != nil {
			t.Errorf("scan %s: %v", p, err)
			continue
		}
		sc, err := Format{}.Decode(context.Background(), src)
		if err != nil {
			t.Errorf("decode %s: %v", p, err)
			continue
		}
		f, _ := Read(context.Background(), src)
		var indices int
		for _, s := range f.Surfaces {
			indices += len(s.CIndices)
		}
		if tri := sc.Count().Triangles; tri != indices/3 || tri == 0 {
			t.Errorf("%s: %d triangles for %d coordinate indices", p, tri, indices)
		}
		if h, ok := st.Header.Get("triangles").(int64); ok && h != int64(indices/3) {
			t.Errorf("%s: header.json says %d triangles", p, h)
		}
		for _, m := range sc.Meshes {
			for _, prim := range m.Primitives {
				agree, total := faceAgreement(&prim)
				if total == 0 || agree < total*95/100 {
					t.Errorf("%s %s: %d of %d faces agree with their normals", p, prim.Name, agree, total)
				}
			}
		}
		if strings.Contains(p, "skinned") {
			if sc.Skeleton == nil || len(sc.Skeleton.Joints) != 4 {
				t.Errorf("%s: skeleton %+v", p, sc.Skeleton)
			} else {
				checkBindMatchesRest(t, sc.Skeleton)
			}
		}
	}
}

func TestSniff(t *testing.T) {
	cases := []struct {
		name string
		head string
		want bool
	}{
		{"a.mesh", "ms15....", true}, {"a.MESH", "ms14", true}, {"a.mesh_skinned", "sk10", true},
		{"a.mesh", "ms11", true}, {"a.mesh", "ms10", true}, {"a.mesh", "ms99", true}, {"a.mesh", "sk", true},
		{"a.mesh", "OGRE", false}, {"a.obj", "ms15", false}, {"a.mesh", "m", false}, {"a.mesh", "", false},
	}
	for _, c := range cases {
		if got := (Format{}).Sniff(c.name, []byte(c.head)); got != c.want {
			t.Errorf("Sniff(%q, %q) = %v", c.name, c.head, got)
		}
	}
	for in, want := range map[string]string{"a.b.mesh": "a.b", "x.mesh_skinned": "x", "Y.Mesh": "Y", "z.ply": "z.ply"} {
		if got := (Format{}).StripExt(in); got != want {
			t.Errorf("StripExt(%q) = %q", in, got)
		}
	}
	_, err := readBytes(t, "v.mesh", []byte("ms99 and more"))
	var fe *decode.FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "unsupported version") {
		t.Errorf("unknown version: %v", err)
	}
}

// countingReader records which byte ranges were read.
type countingReader struct {
	r     *bytes.Reader
	reads [][2]int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads = append(c.reads, [2]int64{off, off + int64(len(p))})
	return c.r.ReadAt(p, off)
}

// TestScanChunks: chunk names and exact sizes, and that neither the scan
// nor one surface's chunk reads another surface's block data.
func TestScanChunks(t *testing.T) {
	f := multiFile()
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	cr := &countingReader{r: bytes.NewReader(b)}
	src := &decode.Source{Name: "multi.mesh", R: cr, Size: int64(len(b))}
	st, err := Format{}.Scan(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range st.Chunks {
		names = append(names, c.Name)
	}
	want := []string{"00_header.bin", "01_lid.geometry.bin", "01_lid.collision.bin", "02_floor_tiles.geometry.bin", "02_floor_tiles.collision.bin", "03_offsets.bin"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("chunks %q", names)
	}
	var scanned int64
	for _, r := range cr.reads {
		scanned += r[1] - r[0]
	}
	// The header (with read-ahead), the table and block headers, and each
	// block's data once (for the counts inside): nothing twice.
	var blocks int64
	for _, c := range st.Chunks[1 : len(st.Chunks)-1] {
		blocks += c.Length - blockHeaderSize
	}
	if scanned > int64(st.Chunks[0].Length)+4096+200+blocks {
		t.Errorf("scan read %d of %d bytes (%d in blocks)", scanned, len(b), blocks)
	}
	for i, c := range st.Chunks {
		cr.reads = nil
		data, err := c.Bytes(cr)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if int64(len(data)) != c.Size {
			t.Errorf("%s: %d bytes, Size %d", c.Name, len(data), c.Size)
		}
		for _, r := range cr.reads {
			if r[0] < c.Offset || r[1] > c.Offset+c.Length {
				t.Errorf("%s [%d, %d) read [%d, %d)", c.Name, c.Offset, c.Offset+c.Length, r[0], r[1])
			}
		}
		if strings.HasSuffix(c.Name, ".collision.bin") {
			s := f.Surfaces[(i-1)/2]
			if !bytes.Equal(data, s.Collision) {
				t.Errorf("%s differs from the collision block written", c.Name)
			}
		}
	}
	hdr, err := decode.HeaderJSON(st.Header)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"magic": "ms15"`, `"spatial_tree_triangles": 524`, `"lightmap_resolution": 5`, `"coordinate_indices": 1536`, `"coordinate_vertices": 289`, `"triangles": 524`, `"lz4": false`, `"estimated_ram": 65536`} {
		if !strings.Contains(string(hdr), key) {
			t.Errorf("header.json lacks %s:\n%s", key, hdr)
		}
	}
}

func TestHeaderSK10(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join(fixtureDir, "sk10_character.mesh_skinned"))
	st, err := Format{}.Scan(context.Background(), memSource("c.mesh_skinned", b))
	if err != nil {
		t.Fatal(err)
	}
	hdr, _ := decode.HeaderJSON(st.Header)
	for _, key := range []string{`"joint_count": 5`, `"skeleton_guid": "8c2f6c0e5a1d4b3f9e7a6b5c4d3e2f10"`, `"skeleton_path": "characters/dummy.skeleton"`, `"name": "blink"`, `"name": "prop_root"`, `"rest"`} {
		if !strings.Contains(string(hdr), key) {
			t.Errorf("header.json lacks %s", key)
		}
	}
	if len(st.Chunks) != 4 { // header, two geometry blocks, offsets: sk10 has no collision
		t.Errorf("%d chunks", len(st.Chunks))
	}
}

// checkErr asserts err is nil or a positioned FormatError.
func checkErr(t *testing.T, what string, err error) {
	t.Helper()
	var fe *decode.FormatError
	if err != nil && !errors.As(err, &fe) {
		t.Fatalf("%s: %T %v is not a FormatError", what, err, err)
	}
}

// TestCorruption truncates every fixture at every length and flips bytes
// everywhere: never a panic, every error a FormatError.
func TestCorruption(t *testing.T) {
	for _, fx := range fixtures {
		b, err := Encode(fx.build())
		if err != nil {
			t.Fatal(err)
		}
		step := max(1, len(b)/600)
		for n := 0; n < len(b); n += step {
			_, err := readBytes(t, fx.name, b[:n])
			if err == nil {
				t.Fatalf("%s truncated to %d bytes decodes", fx.name, n)
			}
			checkErr(t, fx.name, err)
			_, err = Format{}.Scan(context.Background(), memSource(fx.name, b[:n]))
			checkErr(t, fx.name, err)
		}
		c := make([]byte, len(b))
		for i := 0; i < len(b); i += step {
			for _, x := range []byte{0xff, 0x80, 0x01} {
				copy(c, b)
				c[i] ^= x
				src := memSource(fx.name, c)
				_, err := Format{}.Decode(context.Background(), src)
				checkErr(t, fx.name, err)
				st, err := Format{}.Scan(context.Background(), src)
				checkErr(t, fx.name, err)
				if st != nil {
					for _, ch := range st.Chunks {
						_, err := ch.Bytes(src.R)
						checkErr(t, ch.Name, err)
					}
				}
			}
		}
	}
}

// TestLyingSizes: huge counts and block sizes fail at once with positioned
// errors, before allocating for them.
func TestLyingSizes(t *testing.T) {
	cubeBytes, _ := Encode(cubeFile())
	hugeCompact := appendCompact(nil, math.MaxInt32)

	// Surface count: replace the 01 after the bounds.
	at := 4 + 1 + 40
	if cubeBytes[at] != 1 {
		t.Fatalf("surface count byte %x", cubeBytes[at])
	}
	mod := append(append(append([]byte(nil), cubeBytes[:at]...), hugeCompact...), cubeBytes[at+1:]...)
	expectFail(t, "surface count", mod, "surface_count")

	// Vertex count (the last compact int before the RAM field).
	h, err := parseHeader(newMemReader("x", "", cubeBytes, 0))
	if err != nil {
		t.Fatal(err)
	}
	vc := int(h.end) - 4 - 8 - 1
	mod = append(append(append([]byte(nil), cubeBytes[:vc]...), hugeCompact...), cubeBytes[vc+1:]...)
	expectFail(t, "vertex count", mod, "vertex_count")

	// A geometry block claiming 1 TB from a few bytes.
	mod = append([]byte(nil), cubeBytes...)
	binary.LittleEndian.PutUint64(mod[h.end:], 1<<40)
	expectFail(t, "uncompressed size", mod, "uncompressed_size")
	// A compressed size past the end of the file.
	mod = append([]byte(nil), cubeBytes...)
	binary.LittleEndian.PutUint64(mod[h.end+8:], 1<<40)
	expectFail(t, "compressed size", mod, "compressed_size")
	// An uncompressed size LZ4 allows but the data does not give.
	mod = append([]byte(nil), cubeBytes...)
	binary.LittleEndian.PutUint64(mod[h.end:], binary.LittleEndian.Uint64(mod[h.end:])+1)
	expectFail(t, "wrong uncompressed size", mod, "")

	// sk10: a joint count of two billion.
	sk, _ := Encode(characterFile())
	at = 4 + 1 + 40
	mod = append([]byte(nil), sk...)
	binary.LittleEndian.PutUint32(mod[at:], math.MaxInt32)
	expectFail(t, "joint count", mod, "joint_count")
}

func expectFail(t *testing.T, what string, b []byte, field string) {
	t.Helper()
	var ms runtimeMem
	ms.start()
	_, err := readBytes(t, "lie.mesh", b)
	if alloc := ms.stop(); alloc > 16<<20 {
		t.Errorf("%s: allocated %d bytes", what, alloc)
	}
	var fe *decode.FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("%s: %v is not a FormatError", what, err)
	}
	if field != "" && fe.Field != field {
		t.Errorf("%s: error names field %q: %v", what, fe.Field, err)
	}
}

func TestUnsupportedVersionHeader(t *testing.T) {
	st, err := Format{}.Scan(context.Background(), memSource("v.mesh", []byte("ms16\x00\x00")))
	if err == nil || st == nil || st.Header.Get("magic") != "ms16" {
		t.Fatalf("scan: %+v, %v", st, err)
	}
	var fe *decode.FormatError
	if !errors.As(err, &fe) || fe.Field != "magic" || fe.Offset != 0 {
		t.Errorf("error %v", err)
	}
}

// TestChunkAfterClose: chunks/ loads blocks after Scan's file was closed,
// as the mount and `convert` do.
func TestChunkAfterClose(t *testing.T) {
	b, err := Encode(characterFile())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.mesh_skinned")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	reopen := func() (io.ReaderAt, func(), error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, err
		}
		return f, func() { f.Close() }, nil
	}
	st, err := Format{}.Scan(context.Background(), &decode.Source{Name: path, R: fh, Size: int64(len(b)), Reopen: reopen})
	fh.Close()
	if err != nil {
		t.Fatal(err)
	}
	c := st.Chunks[1]
	data, err := c.Load()
	if err != nil || int64(len(data)) != c.Size {
		t.Fatalf("%s after close: %d bytes, %v", c.Name, len(data), err)
	}
	r := newMemReader(path, "", data, 0)
	h, _ := parseHeader(newMemReader(path, "", b, 0))
	var s Surface
	parseGeometry(r, h.lay, h.surf[0], &s, len(h.file.Joints))
	if r.err != nil || r.left() != 0 || len(s.Targets) != 3 {
		t.Errorf("the loaded chunk does not parse as the body's geometry: %v", r.err)
	}
}

// TestSceneRejectsBadModels: Scene checks a hand-built File instead of
// panicking on it.
func TestSceneRejectsBadModels(t *testing.T) {
	bad := map[string]func(f *File){
		"cycle":        func(f *File) { f.Joints[0].Parent = 2 },
		"parent range": func(f *File) { f.Joints[1].Parent = 9 },
		"uv count":     func(f *File) { f.Surfaces[0].UV1 = f.Surfaces[0].UV1[1:] },
		"weight joint": func(f *File) { f.Surfaces[1].Weights[0][0].Joint = 5 },
		"target size":  func(f *File) { f.Surfaces[0].Targets[1].Positions = nil },
		"index":        func(f *File) { f.Surfaces[0].CIndices[0] = 99 },
		"bind count":   func(f *File) { f.Bind = f.Bind[1:] },
	}
	for name, mutate := range bad {
		f := characterFile()
		mutate(f)
		_, err := Scene(f, "hand.mesh_skinned", "hand")
		var fe *decode.FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestHighlyCompressible: header counts are checked against what the
// blocks can decompress to, so a mesh whose block compresses far below the
// size of its positions still reads.
func TestHighlyCompressible(t *testing.T) {
	f := bigGridFile(MagicMS15, 100)
	s := &f.Surfaces[0]
	for i := range s.Targets[0].Positions {
		s.Targets[0].Positions[i] = [3]float32{}
		s.UV0[i] = [2]float32{}
	}
	for i := range s.CIndices {
		s.CIndices[i], s.TIndices[i] = 0, 0
	}
	s.Bounds, f.Bounds = Bounds{}, Bounds{}
	s.Collision = CollisionBlock(0, s.Bounds)
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	if 12*len(s.Targets[0].Positions) <= len(b) {
		t.Fatalf("the file (%d bytes) is not smaller than its positions", len(b))
	}
	got, err := readBytes(t, "flat.mesh", b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, f) {
		t.Error(diff(got, f))
	}
}
