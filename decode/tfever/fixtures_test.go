package tfever

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

var update = flag.Bool("update", false, "rewrite the fixtures in testdata/tfever")

const fixtureDir = "../../testdata/tfever"

// cube returns the attributes of a unit cube stored OBJ-style, as the game's
// exporter does: 8 positions, 6 normals and tangents, 4 UVs per set, each
// face's corners indexing each list separately. faces[f] gives, per face, the
// index lists for positions, normals, tangents, uv0, uv1 (and color0 when
// withColor).
type cubeFace struct {
	pos, nrm, tan, uv [6]uint32
}

func cube(size float32) (attrs []EncAttr, faces []cubeFace) {
	var pos, nrm, tan []float32
	for i := 0; i < 8; i++ {
		for a := 0; a < 3; a++ {
			c := -size / 2
			if i>>a&1 == 1 {
				c = size / 2
			}
			pos = append(pos, c)
		}
	}
	// Each face: outward normal n and in-plane axes u, v with u×v = n, so
	// the corners c−u−v, c+u−v, c+u+v, c−u+v run counter-clockwise seen
	// from outside.
	type axes struct{ n, u, v [3]float32 }
	fs := []axes{
		{[3]float32{1, 0, 0}, [3]float32{0, 1, 0}, [3]float32{0, 0, 1}},
		{[3]float32{-1, 0, 0}, [3]float32{0, 0, 1}, [3]float32{0, 1, 0}},
		{[3]float32{0, 1, 0}, [3]float32{0, 0, 1}, [3]float32{1, 0, 0}},
		{[3]float32{0, -1, 0}, [3]float32{1, 0, 0}, [3]float32{0, 0, 1}},
		{[3]float32{0, 0, 1}, [3]float32{1, 0, 0}, [3]float32{0, 1, 0}},
		{[3]float32{0, 0, -1}, [3]float32{0, 1, 0}, [3]float32{1, 0, 0}},
	}
	corner := func(n, u, v [3]float32, su, sv float32) uint32 {
		idx := uint32(0)
		for a := 0; a < 3; a++ {
			if n[a]+su*u[a]+sv*v[a] > 0 {
				idx |= 1 << a
			}
		}
		return idx
	}
	for fi, f := range fs {
		nrm = append(nrm, f.n[:]...)
		tan = append(tan, f.u[0], f.u[1], f.u[2], float32(1-2*(fi%2)))
		c := [4]uint32{
			corner(f.n, f.u, f.v, -1, -1), corner(f.n, f.u, f.v, 1, -1),
			corner(f.n, f.u, f.v, 1, 1), corner(f.n, f.u, f.v, -1, 1),
		}
		tri := [6]int{0, 1, 2, 0, 2, 3}
		var cf cubeFace
		for k, t := range tri {
			cf.pos[k] = c[t]
			cf.nrm[k] = uint32(fi)
			cf.tan[k] = uint32(fi)
			cf.uv[k] = uint32(t)
		}
		faces = append(faces, cf)
	}
	attrs = []EncAttr{
		{Name: "position", NumComp: 3, Data: pos},
		{Name: "normal", NumComp: 3, Data: nrm},
		{Name: "tangent", NumComp: 4, Data: tan},
		{Name: "uv0", NumComp: 2, Data: []float32{0, 0, 1, 0, 1, 1, 0, 1}},
		{Name: "uv1", NumComp: 2, Data: []float32{0.5, 0.5, 0.75, 0.5, 0.75, 0.75, 0.5, 0.75}},
	}
	return attrs, faces
}

// subMeshOf joins faces into one submesh's index lists.
func subMeshOf(faces []cubeFace, color bool) EncSubMesh {
	sm := EncSubMesh{Indices: map[string][]uint32{}}
	for fi, f := range faces {
		sm.Indices["position"] = append(sm.Indices["position"], f.pos[:]...)
		sm.Indices["normal"] = append(sm.Indices["normal"], f.nrm[:]...)
		sm.Indices["tangent"] = append(sm.Indices["tangent"], f.tan[:]...)
		sm.Indices["uv0"] = append(sm.Indices["uv0"], f.uv[:]...)
		sm.Indices["uv1"] = append(sm.Indices["uv1"], f.uv[:]...)
		if color {
			for k := range f.uv {
				sm.Indices["color0"] = append(sm.Indices["color0"], uint32((fi+k)%3))
			}
		}
	}
	return sm
}

// tf2Cube is the Transport Fever 2 style: two submeshes, no materials,
// uv1, regions in a shuffled order.
func tf2Cube() *EncMesh {
	attrs, faces := cube(2)
	return &EncMesh{
		Attrs:     attrs,
		SubMeshes: []EncSubMesh{subMeshOf(faces[:4], false), subMeshOf(faces[4:], false)},
		Shuffle:   7,
	}
}

// trainFeverDoor is the older Train Fever style: matConfigs, per-submesh
// materials (submesh 1 has two, and matConfigs picks the second), colours,
// an attribute glTF has no place for, an unknown key, and a KEYFRAME
// animation about an origin off the mesh's.
func trainFeverDoor() *EncMesh {
	attrs, faces := cube(1)
	attrs = append(attrs,
		EncAttr{Name: "color0", NumComp: 4, Data: []float32{1, 0, 0, 1, 0, 1, 0, 0.5, 0, 0, 1, 1}},
		EncAttr{Name: "attrOffsetLOD", NumComp: 1, Data: []float32{0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5}},
	)
	subs := []EncSubMesh{subMeshOf(faces[:2], true), subMeshOf(faces[2:4], true), subMeshOf(faces[4:], true)}
	subs[0].Materials = []string{"vehicle/train/door.mtl"}
	subs[1].Materials = []string{"vehicle/train/frame_old.mtl", "vehicle/train/frame.mtl"}
	subs[2].Materials = []string{"vehicle/train/door.mtl"}
	return &EncMesh{
		Attrs:      attrs,
		SubMeshes:  subs,
		MatConfigs: [][]int{{0, 1, 0}},
		Animations: []EncAnim{
			{Name: "open", Origin: [3]float64{0.5, -0.5, 0}, Keyframes: []EncKeyframe{
				{TimeMs: 0},
				{TimeMs: 400, Rot: [3]float64{45, 0, 0}, Transl: [3]float64{0, 0, 0.1}},
				{TimeMs: 1250.5, Rot: [3]float64{90, 10, -20}, Transl: [3]float64{0.2, 0.3, 0.1}},
				{TimeMs: 2000, Rot: [3]float64{200, 0, 0}, Transl: [3]float64{0, 0, 0}},
			}},
			{Name: "shake", Keyframes: []EncKeyframe{
				{TimeMs: 100, Rot: [3]float64{0, 0, 5}},
				{TimeMs: 200, Rot: [3]float64{0, 0, -5}, Transl: [3]float64{-1, 0, 0}},
			}},
		},
		Extra:   []string{`metadata = { author = "meshfs", version = 2, }`},
		Shuffle: 3,
	}
}

// nanGrid is a Transport Fever 2 style mesh as real files break: a curved
// n×n grid (z = 0.2·x², x and y in [−1, 1]) with a position, normal,
// tangent and UV per grid point, where some values are NaN: the normal of
// point nanNormal, the tangent of point nanTangent, the position of
// nanPosition (a corner) and the UV of nanUV (another corner). The sound
// normals and tangents are the surface's own, so repaired ones can be
// compared with what they replace.
func nanGrid() *EncMesh {
	const n = 6
	var pos, nrm, tan, uv []float32
	for y := range n {
		for x := range n {
			px, py := 2*float64(x)/(n-1)-1, 2*float64(y)/(n-1)-1
			pos = append(pos, float32(px), float32(py), float32(0.2*px*px))
			nl := math.Hypot(0.4*px, 1)
			nrm = append(nrm, float32(-0.4*px/nl), 0, float32(1/nl))
			// u grows with x, v falls with y: the bitangent (increasing v)
			// is −y, on the side of −cross(n, t): w = −1.
			tan = append(tan, float32(1/nl), 0, float32(0.4*px/nl), -1)
			uv = append(uv, float32(x)/(n-1), 1-float32(y)/(n-1))
		}
	}
	nan := float32(math.NaN())
	for k := range 3 {
		nrm[3*nanNormal+k] = nan
		tan[4*nanTangent+k] = nan
	}
	pos[3*nanPosition+2] = nan
	uv[2*nanUV] = float32(math.Inf(1))
	sm := EncSubMesh{Indices: map[string][]uint32{}}
	for y := range n - 1 {
		for x := range n - 1 {
			a := uint32(y*n + x)
			b, c, d := a+1, a+uint32(n)+1, a+uint32(n)
			sm.Indices["position"] = append(sm.Indices["position"], a, b, c, a, c, d)
		}
	}
	for _, name := range []string{"normal", "tangent", "uv0"} {
		sm.Indices[name] = sm.Indices["position"]
	}
	return &EncMesh{
		Attrs: []EncAttr{
			{Name: "position", NumComp: 3, Data: pos},
			{Name: "normal", NumComp: 3, Data: nrm},
			{Name: "tangent", NumComp: 4, Data: tan},
			{Name: "uv0", NumComp: 2, Data: uv},
		},
		SubMeshes: []EncSubMesh{sm},
	}
}

// The grid points of nanGrid with a NaN.
const (
	nanNormal   = 2*6 + 2
	nanTangent  = 3*6 + 3
	nanPosition = 0
	nanUV       = 6*6 - 1
)

// aniTrack returns times (ms) and Z-up column-major matrices: a turn about
// Z and a tilt about X, a walk along Y, a uniform scale and, at one key, a
// mirroring X scale.
func aniTrack() ([]float64, [][16]float64) {
	times := []float64{0, 33.333, 100, 250.5, 1000}
	var ms [][16]float64
	for i := range times {
		yaw := float64(i) * 50 * math.Pi / 180
		tilt := float64(i) * 10 * math.Pi / 180
		s := 1 + 0.25*float64(i)
		sx := s
		if i == 3 {
			sx = -s
		}
		// R = Rz(yaw)·Rx(tilt), columns scaled by (sx, s, s).
		cz, sz := math.Cos(yaw), math.Sin(yaw)
		cx, sxn := math.Cos(tilt), math.Sin(tilt)
		r := [3][3]float64{
			{cz, -sz * cx, sz * sxn},
			{sz, cz * cx, -cz * sxn},
			{0, sxn, cx},
		}
		sc := [3]float64{sx, s, s}
		var m [16]float64
		for c := 0; c < 3; c++ {
			for row := 0; row < 3; row++ {
				m[4*c+row] = r[row][c] * sc[c]
			}
		}
		m[12], m[13], m[14], m[15] = 0.1*float64(i), 0.5*float64(i), 0.02*float64(i*i), 1
		ms = append(ms, m)
	}
	return times, ms
}

// fixtures returns every fixture file by name.
func fixtures(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	for name, m := range map[string]*EncMesh{"tf2_cube": tf2Cube(), "trainfever_door": trainFeverDoor(), "tf2_nan": nanGrid()} {
		script, blob, err := EncodeMsh(m)
		if err != nil {
			t.Fatal(err)
		}
		out[name+".msh"] = script
		out[name+".msh.blob"] = blob
	}
	// (A mesh without its blob is tested in memory, TestBadLayouts: the
	// fixture tree holds only files that convert.)
	times, ms := aniTrack()
	out["walk.ani"] = EncodeAni(times, ms)
	for p, b := range modelFixtures(t) {
		out[p] = b
	}
	return out
}

func TestFixtures(t *testing.T) {
	for name, b := range fixtures(t) {
		decodetest.Golden(t, filepath.Join(fixtureDir, name), b, *update, "go test ./decode/tfever -run TestFixtures -update")
	}
}

// memSource serves files from memory, siblings included.
func memSource(name string, files map[string][]byte) *decode.Source {
	b := files[filepath.Base(name)]
	return &decode.Source{Name: name, R: bytes.NewReader(b), Size: int64(len(b)),
		OpenSibling: func(sib string) (io.ReaderAt, int64, error) {
			sb, ok := files[sib]
			if !ok {
				return nil, 0, fmt.Errorf("open %s: %w", sib, os.ErrNotExist)
			}
			return bytes.NewReader(sb), int64(len(sb)), nil
		}}
}

// fileSource opens a file on disk with siblings from its folder.
func fileSource(t testing.TB, path string) *decode.Source {
	t.Helper()
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
			files[e.Name()] = b
		}
	}
	return memSource(path, files)
}

func decodeMsh(t testing.TB, m *EncMesh) (*decode.Scene, *decode.Structure) {
	t.Helper()
	script, blob, err := EncodeMsh(m)
	if err != nil {
		t.Fatal(err)
	}
	src := memSource("x/m.msh", map[string][]byte{"m.msh": script, "m.msh.blob": blob})
	st, err := Msh{}.Scan(context.Background(), src)
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	s, err := Msh{}.Decode(context.Background(), src)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return s, st
}
