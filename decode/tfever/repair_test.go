package tfever

import (
	"context"
	"encoding/binary"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/gltf"
	"github.com/meshfs/meshfs/export/gltf/validator"
)

func dot3(a, b [3]float32) float64 {
	return float64(a[0])*float64(b[0]) + float64(a[1])*float64(b[1]) + float64(a[2])*float64(b[2])
}

func xyz(t [4]float32) [3]float32 { return [3]float32{t[0], t[1], t[2]} }

// checkFrames asserts that every normal and tangent of the scene is finite
// and unit length with tangent w = ±1. Sources are not held to more: real
// files have tangents that are not orthogonal to their normals.
func checkFrames(t *testing.T, s *decode.Scene) {
	t.Helper()
	for _, m := range s.Meshes {
		for pi, p := range m.Primitives {
			for v, nr := range p.Normals {
				if !finite(nr[:]...) || math.Abs(dot3(nr, nr)-1) > 1e-5 {
					t.Fatalf("primitive %d vertex %d: normal %v", pi, v, nr)
				}
			}
			for v, tg := range p.Tangents {
				if !finite(tg[:]...) || math.Abs(dot3(xyz(tg), xyz(tg))-1) > 1e-5 || tg[3] != 1 && tg[3] != -1 {
					t.Fatalf("primitive %d vertex %d: tangent %v", pi, v, tg)
				}
			}
		}
	}
}

// checkRepairedTangent asserts that a recomputed tangent is unit length,
// orthogonal to its normal, with w = ±1.
func checkRepairedTangent(t *testing.T, p *decode.Primitive, v int) {
	t.Helper()
	tg := p.Tangents[v]
	if !finite(tg[:]...) || math.Abs(dot3(xyz(tg), xyz(tg))-1) > 1e-5 || tg[3] != 1 && tg[3] != -1 {
		t.Fatalf("vertex %d: repaired tangent %v", v, tg)
	}
	if math.Abs(dot3(xyz(tg), p.Normals[v])) > 1e-5 {
		t.Fatalf("vertex %d: repaired tangent %v not orthogonal to normal %v", v, tg, p.Normals[v])
	}
}

// TestRepairFixture decodes tf2_nan: each kind of non-finite value gets its
// repair, header.json lists them with their counts, and the recomputed
// normal and tangent match the surface's own within a few degrees.
func TestRepairFixture(t *testing.T) {
	m := nanGrid()
	s, st := decodeMsh(t, m)
	r := func(attr string, verts int, action string, tris int) decode.Repair {
		return decode.Repair{Mesh: "m", Primitive: "submesh0", Attribute: attr, Vertices: verts, Action: action, Triangles: tris}
	}
	want := decode.RepairFields([]decode.Repair{
		r("position", 1, decode.RepairDropTriangles, 2),
		r("uv0", 1, decode.RepairDropTriangles, 2),
		r("normal", 1, decode.RepairRecompute, 0),
		r("tangent", 1, decode.RepairRecompute, 0),
	})
	if got := st.Header.Get("repairs"); !reflect.DeepEqual(got, want) {
		t.Fatalf("repairs %v, want %v", got, want)
	}
	if !reflect.DeepEqual(decode.RepairFields(s.Repairs), want) {
		t.Errorf("the scene's repairs %+v differ from header.json's", s.Repairs)
	}
	checkScene(t, s)
	checkFrames(t, s)
	p := s.Meshes[0].Primitives[0]
	if len(p.Indices)/3 != 2*5*5-4 || len(p.Positions) != 6*6-2 {
		t.Fatalf("%d triangles, %d vertices; want 46, 34", len(p.Indices)/3, len(p.Positions))
	}
	// The grid point's vertex, found by its position.
	find := func(point int) int {
		pos := m.Attrs[0].Data[3*point : 3*point+3]
		want := decode.ZUpToYUp([3]float32{pos[0], pos[1], pos[2]})
		for v, q := range p.Positions {
			if q == want {
				return v
			}
		}
		t.Fatalf("grid point %d not found", point)
		return -1
	}
	// The surface's own frame at a grid point.
	exact := func(point int) (nr, tg [3]float32) {
		px := 2*float64(point%6)/5 - 1
		nl := math.Hypot(0.4*px, 1)
		return decode.ZUpToYUp([3]float32{float32(-0.4 * px / nl), 0, float32(1 / nl)}),
			decode.ZUpToYUp([3]float32{float32(1 / nl), 0, float32(0.4 * px / nl)})
	}
	nv, tv := find(nanNormal), find(nanTangent)
	checkRepairedTangent(t, &p, tv)
	wantN, _ := exact(nanNormal)
	_, wantT := exact(nanTangent)
	if cos := dot3(p.Normals[nv], wantN); cos < 0.999 {
		t.Errorf("recomputed normal %v, the surface's %v: cos %.5f", p.Normals[nv], wantN, cos)
	}
	if cos := dot3(xyz(p.Tangents[tv]), wantT); cos < 0.999 {
		t.Errorf("recomputed tangent %v, the surface's %v: cos %.5f", p.Tangents[tv], wantT, cos)
	}
	if w := p.Tangents[find(nanTangent)][3]; w != -1 {
		t.Errorf("recomputed tangent w %v, the fixture's sound tangents have −1", w)
	}
}

// realMeshes lists the .msh files of ../shared/realdata/transport-fever
// and of the asset trees under ../shared/assets (but tf-nan's).
func realMeshes(t *testing.T) []string {
	files, _ := filepath.Glob(filepath.Join(realDir(t), "*.msh"))
	assets := decodetest.NeedShared(t, "assets")
	filepath.WalkDir(assets, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".msh") && !strings.Contains(p, "tf-nan") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) == 0 {
		t.Fatal("no real Transport Fever meshes found")
	}
	return files
}

// TestRepairTangentsReal knocks out every 7th tangent of each real mesh
// and repairs it: the recomputed tangents must point where the game's
// exporter put them and have the same handedness (this fixes the w
// convention), and be unit length and orthogonal to their normals.
func TestRepairTangentsReal(t *testing.T) {
	files := realMeshes(t)
	agree, tested := 0, 0
	var sumCos float64
	for _, f := range files {
		s, err := Msh{}.Decode(context.Background(), fileSource(t, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, pr := range s.Meshes[0].Primitives {
			if pr.Tangents == nil {
				continue
			}
			q := pr
			q.Tangents = append([][4]float32(nil), pr.Tangents...)
			for v := 0; v < len(q.Tangents); v += 7 {
				q.Tangents[v] = [4]float32{float32(math.NaN()), 0, 0, 1}
			}
			rs := q.Repair()
			if len(rs) != 1 || rs[0].Attribute != "tangent" {
				t.Fatalf("%s: repairs %+v", f, rs)
			}
			if rs[0].Action != decode.RepairRecompute {
				continue // some knocked-out vertex lies in triangles without UV area
			}
			for v := 0; v < len(q.Tangents); v += 7 {
				checkRepairedTangent(t, &q, v)
				a, b := pr.Tangents[v], q.Tangents[v]
				tested++
				if a[3] == b[3] {
					agree++
				}
				sumCos += dot3(xyz(a), xyz(b))
			}
		}
	}
	if tested < 100 {
		t.Fatalf("only %d tangents recomputed", tested)
	}
	t.Logf("%d tangents recomputed: w agrees for %d, mean cos %.4f with the stored ones", tested, agree, sumCos/float64(tested))
	if agree < tested*99/100 || sumCos/float64(tested) < 0.98 {
		t.Errorf("recomputed tangents differ from the stored ones: w agrees for %d of %d, mean cos %.4f", agree, tested, sumCos/float64(tested))
	}
}

// TestNaNAssets converts the real files with NaN in normals and tangents:
// both decode, header.json lists the repair, the frames are sound, and the
// .glb has 0 validator errors.
func TestNaNAssets(t *testing.T) {
	dir := decodetest.NeedShared(t, "assets/tf-nan")
	want := map[string][]decode.Repair{
		// One normal item (NaN, NaN, NaN), used by 2 joined vertices.
		"v160_br216_rumpf_lollo_lod2.msh": {{Mesh: "v160_br216_rumpf_lollo_lod2", Primitive: "submesh0",
			Attribute: "normal", Vertices: 2, Action: decode.RepairRecompute}},
		// Six tangent items, all in triangles whose UVs are all (0, 0).
		"v160_br219_dachplatten_c_lod2.msh": {{Mesh: "v160_br219_dachplatten_c_lod2", Primitive: "submesh0",
			Attribute: "tangent", Vertices: 6, Action: decode.RepairDropAttribute}},
	}
	var paths []string
	for name, w := range want {
		src := fileSource(t, filepath.Join(dir, name))
		st, err := Msh{}.Scan(context.Background(), src)
		if err != nil {
			t.Fatalf("%s: scan: %v", name, err)
		}
		if got := st.Header.Get("repairs"); !reflect.DeepEqual(got, decode.RepairFields(w)) {
			t.Errorf("%s: repairs %v, want %v", name, got, w)
		}
		s, err := Msh{}.Decode(context.Background(), src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(s.Repairs, w) {
			t.Errorf("%s: the scene's repairs %+v differ from header.json's", name, s.Repairs)
		}
		checkScene(t, s)
		checkFrames(t, s)
		checkDistinct(t, name, src, s)
		glb, err := gltf.Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), name+".glb")
		if err := os.WriteFile(p, glb, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if err := validator.Available(); err != nil && os.Getenv("CI") == "" {
		t.Skipf("glTF validator not installed: %v", err)
	}
	reports, err := validator.ValidateFiles(paths...)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reports {
		t.Run(filepath.Base(paths[i]), func(t *testing.T) { validator.CheckReport(t, r) })
	}
}

// checkDistinct asserts that each primitive has exactly one vertex per
// distinct tuple of attribute values its corners use after the axis
// conversion (FORMATS.md §2's items, read from the blob through the
// submesh's index lists, rotated to Y up, normals and tangents made unit,
// tangent w made ±1, colours clamped): join by value, not by index. A file
// with non-finite values must have had nothing dropped.
func checkDistinct(t *testing.T, name string, src *decode.Source, s *decode.Scene) {
	t.Helper()
	_, m, err := Msh{}.load(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	rd, size, err := src.OpenSibling(blobName(src))
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, size)
	if _, err := rd.ReadAt(data, 0); err != nil {
		t.Fatal(err)
	}
	for si, sm := range m.SubMeshes {
		n := int(sm.index("position").items())
		tuples := map[string]bool{}
		for c := range n {
			var key []float32
			for _, a := range m.Attrs {
				if !isGeometry(a.Name) {
					continue
				}
				r := sm.index(a.Name)
				if r == nil {
					r = sm.index("position")
				}
				item := int64(binary.LittleEndian.Uint32(data[r.Offset+4*int64(c):]))
				x := make([]float32, a.NumComp)
				for k := range x {
					x[k] = math.Float32frombits(binary.LittleEndian.Uint32(data[a.Offset+4*(a.NumComp*item+int64(k)):]))
				}
				switch {
				case !decode.Finite(x...):
					x = []float32{float32(math.NaN())} // the decoder's one NaN per attribute
				case a.Name == "position":
					v := decode.ZUpToYUp([3]float32(x))
					x = v[:]
				case a.Name == "normal" || a.Name == "tangent":
					v := decode.Normalize3(decode.ZUpToYUp([3]float32(x[:3])))
					w := float32(1)
					if len(x) == 4 && x[3] < 0 {
						w = -1
					}
					x = append(v[:], w)
				case strings.HasPrefix(a.Name, "color"):
					for k := range x {
						x[k] = min(max(x[k], 0), 1)
					}
				}
				key = append(append(key, x...), float32(len(x)))
			}
			b := make([]byte, 4*len(key))
			for k, f := range key {
				binary.LittleEndian.PutUint32(b[4*k:], math.Float32bits(f))
			}
			tuples[string(b)] = true
		}
		p := s.Meshes[0].Primitives[si]
		if got := len(p.Positions); got != len(tuples) {
			t.Errorf("%s submesh %d: %d vertices for %d distinct attribute tuples of %d corners", name, si, got, len(tuples), n)
		} else {
			t.Logf("%s submesh %d: %d corners, %d vertices", name, si, n, got)
		}
	}
}

// TestJoinByValueReal: every real mesh's .glb vertex count equals the
// number of distinct attribute tuples its corners use.
func TestJoinByValueReal(t *testing.T) {
	for _, f := range realMeshes(t) {
		src := fileSource(t, f)
		s, err := Msh{}.Decode(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		checkDistinct(t, filepath.Base(f), src, s)
	}
}

// TestJoinSoup: a mesh stored as triangle soup (every corner its own
// normal, tangent and UV item, with repeated values, as some exporters
// write) gets one vertex per distinct value tuple: a grid's points.
func TestJoinSoup(t *testing.T) {
	m := gridMesh(5) // 25 points, 32 triangles, 96 corners
	sm := m.SubMeshes[0]
	uv := m.Attrs[3].Data
	var normals, tangents, uvs []float32
	var ni, ti, ui []uint32
	for c, p := range sm.Indices["position"] {
		normals = append(normals, 0, 0, 1)
		tangents = append(tangents, 1, 0, 0, 1)
		uvs = append(uvs, uv[2*p], uv[2*p+1])
		ni, ti, ui = append(ni, uint32(c)), append(ti, uint32(c)), append(ui, uint32(c))
	}
	m.Attrs[1].Data, m.Attrs[2].Data, m.Attrs[3].Data = normals, tangents, uvs
	sm.Indices["normal"], sm.Indices["tangent"], sm.Indices["uv0"] = ni, ti, ui
	s, _ := decodeMsh(t, m)
	p := s.Meshes[0].Primitives[0]
	if len(p.Positions) != 25 || len(p.Indices) != 96 {
		t.Fatalf("%d vertices for %d corners; want 25 (the grid's points)", len(p.Positions), len(p.Indices))
	}
}
