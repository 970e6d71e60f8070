package gem

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

// realFiles lists the real .ply files under ../shared/realdata/gem
// (decodetest.NeedRealData: absent, the test fails under CI and skips
// elsewhere).
func realFiles(t testing.TB) []string {
	t.Helper()
	realDir := decodetest.NeedRealData(t, "gem")
	var files []string
	err := filepath.WalkDir(realDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.EqualFold(filepath.Ext(path), ".ply") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no .ply files in " + realDir)
	}
	return files
}

func source(t testing.TB, path string) *decode.Source {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return &decode.Source{Name: path, R: bytes.NewReader(b), Size: int64(len(b))}
}

func scanDecode(t testing.TB, path string) (*decode.Structure, *decode.Scene) {
	t.Helper()
	src := source(t, path)
	st, err := Format{}.Scan(context.Background(), src)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	sc, err := Format{}.Decode(context.Background(), src)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return st, sc
}

// TestRealFiles decodes every real file and checks the header's counts
// against the submeshes and the scene, and the chunk table against the file.
func TestRealFiles(t *testing.T) {
	for _, path := range realFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src := source(t, path)
			head := make([]byte, 16)
			src.R.ReadAt(head, 0)
			if !(Format{}).Sniff(path, head) {
				t.Errorf("Sniff says no")
			}
			st, sc := scanDecode(t, path)
			subs := st.Header.Get("submeshes").([]decode.Fields)
			sum := 0
			for _, s := range subs {
				sum += int(s.Get("face_count").(uint32))
			}
			counts := st.Header.Get("counts").(decode.Fields)
			if got := counts.Get("triangles").(int); got != sum || sum == 0 {
				t.Errorf("header triangles %d, submesh face counts sum to %d", got, sum)
			}
			if got := sc.Count().Triangles; got != sum {
				t.Errorf("scene has %d triangles, submeshes %d", got, sum)
			}
			// The chunks tile the file after the magic.
			off := int64(4)
			for _, c := range st.Chunks {
				if c.Offset != off {
					t.Errorf("chunk %s at %d, want %d", c.Name, c.Offset, off)
				}
				off += c.Length
			}
			if off != src.Size {
				t.Errorf("chunks end at %d, file has %d bytes", off, src.Size)
			}
			if _, err := decode.HeaderJSON(st.Header); err != nil {
				t.Errorf("header.json: %v", err)
			}
			// Bounds of referenced vertices lie within BNDS (after conversion).
			bd := st.Header.Get("bounds").(decode.Fields)
			mn, mx := bd.Get("min").([]float32), bd.Get("max").([]float32)
			// (x, y, z) → (x, z, y): the Y mirror and the rotation's −y cancel.
			lo := convert(mn[0], mn[1], mn[2])
			hi := convert(mx[0], mx[1], mx[2])
			for _, p := range sc.Meshes[0].Primitives {
				for _, v := range p.Positions {
					for q := range 3 {
						if v[q] < lo[q]-1e-3*(1+abs(lo[q])) || v[q] > hi[q]+1e-3*(1+abs(hi[q])) {
							t.Fatalf("vertex %v outside BNDS %v..%v", v, lo, hi)
						}
					}
				}
			}
		})
	}
}

func abs(f float32) float32 {
	if f < 0 {
		return -f
	}
	return f
}

// TestRealWinding proves the space rule on the real files: after
// conversion, each face's (b−a)×(c−a) agrees with its vertex normals for
// the vast majority of faces (FORMATS.md counts 2 761 of 2 764 in the
// mirrored blyskawica, all of helmet4_ger and of the map submesh).
func TestRealWinding(t *testing.T) {
	for _, path := range realFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, sc := scanDecode(t, path)
			agree, total := 0, 0
			for _, p := range sc.Meshes[0].Primitives {
				a0, t0 := 0, 0
				for i := 0; i+2 < len(p.Indices); i += 3 {
					a, b, c := p.Positions[p.Indices[i]], p.Positions[p.Indices[i+1]], p.Positions[p.Indices[i+2]]
					var n [3]float32
					for _, k := range p.Indices[i : i+3] {
						n = [3]float32{n[0] + p.Normals[k][0], n[1] + p.Normals[k][1], n[2] + p.Normals[k][2]}
					}
					if dot3(cross3(sub3(b, a), sub3(c, a)), n) > 0 {
						a0++
					}
					t0++
				}
				if float64(a0) < 0.9*float64(t0) {
					t.Errorf("%s: only %d of %d faces agree with their normals", p.Name, a0, t0)
				}
				agree += a0
				total += t0
			}
			if float64(agree) < 0.97*float64(total) {
				t.Errorf("only %d of %d faces agree with their normals", agree, total)
			}
			t.Logf("%d of %d faces agree with their normals", agree, total)
		})
	}
}

// TestRealHorseJoints checks the skinned horse files: the skin's joints
// are the root and the SKIN bones, and every joint a vertex uses is one its
// bone map reaches, named as in SKIN. The first vertex is also checked
// against its raw bytes (weight float at +12, indices at +16 of the 0x1118
// layout).
func TestRealHorseJoints(t *testing.T) {
	files := realFiles(t)
	n := 0
	for _, path := range files {
		if !strings.HasPrefix(filepath.Base(path), "horse_") {
			continue
		}
		n++
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, _ := os.ReadFile(path)
			f, err := Parse(context.Background(), path, raw)
			if err != nil {
				t.Fatal(err)
			}
			var skin *Skin
			var sub *Submesh
			var vert *Vert
			var idx *Indices
			for _, c := range f.Chunks {
				switch c := c.(type) {
				case *Skin:
					skin = c
				case *Submesh:
					sub = c
				case *Vert:
					vert = c
				case *Indices:
					idx = c
				}
			}
			if skin == nil || sub == nil || !sub.HasBoneMap || sub.BoneMapRule != "0x800" {
				t.Fatalf("expected SKIN and a MESH with a 0x800 bone map")
			}
			_, sc := scanDecode(t, path)
			sk := sc.Skeleton
			if sk == nil || len(sk.Joints) != len(skin.Bones)+1 || !sc.Meshes[0].Skinned {
				t.Fatalf("skeleton %+v for %d SKIN bones", sk, len(skin.Bones))
			}
			reached := map[int]bool{}
			for _, v := range sub.BoneMap {
				reached[int(v)] = true
			}
			used := map[int]bool{}
			for _, p := range sc.Meshes[0].Primitives {
				for k := range p.Joints {
					for q := range 4 {
						if p.Weights[k][q] > 0 {
							used[int(p.Joints[k][q])] = true
						}
					}
				}
			}
			for j := range used {
				if !reached[j] {
					t.Errorf("joint %d (%s) is used but no bone map value reaches it", j, sk.Joints[j].Name)
				}
				if j > 0 && sk.Joints[j].Name != skin.Bones[j-1] {
					t.Errorf("joint %d is %q, SKIN bone %d is %q", j, sk.Joints[j].Name, j-1, skin.Bones[j-1])
				}
			}
			if len(used) < 2 {
				t.Errorf("only %d joints used", len(used))
			}
			// First vertex from raw bytes: v0 = first index of the submesh.
			v0 := idx.Values[3*sub.FaceStart]
			rec := vert.Data[int(v0)*int(vert.Size):]
			w := f32(rec[12:])
			b0, b1 := rec[16], rec[17]
			want := map[string]float32{}
			want[jointName(skin, sub.BoneMap[b0])] += w
			want[jointName(skin, sub.BoneMap[b1])] += 1 - w
			p := sc.Meshes[0].Primitives[0]
			got := map[string]float32{}
			for q := range 4 {
				if p.Weights[0][q] > 0 {
					got[sk.Joints[p.Joints[0][q]].Name] += p.Weights[0][q]
				}
			}
			for name, w := range want {
				if w > 1e-6 && !near(got[name], w, 1e-5) {
					t.Errorf("first vertex: %s weight %v, want %v (got %v)", name, got[name], w, got)
				}
			}
		})
	}
	if n != 2 {
		t.Errorf("found %d horse files, want 2", n)
	}
}

func jointName(s *Skin, v byte) string {
	if v == 0 {
		return "root"
	}
	return s.Bones[v-1]
}

// TestRealMapBasisUV checks FORMATS.md's BAS2 rule on the public map: the
// generated UV set equals the stored one.
func TestRealMapBasisUV(t *testing.T) {
	var path string
	for _, p := range realFiles(t) {
		if filepath.Base(p) == "map.ply" {
			path = p
		}
	}
	if path == "" {
		t.Skip("no map.ply")
	}
	_, sc := scanDecode(t, path)
	for _, p := range sc.Meshes[0].Primitives {
		if len(p.UVs) != 2 {
			t.Fatalf("%s: %d UV sets, want stored + BAS2", p.Name, len(p.UVs))
		}
		for k := range p.UVs[0] {
			a, b := p.UVs[0][k], p.UVs[1][k]
			if !near(a[0], b[0], 1e-3) || !near(a[1], b[1], 1e-3) {
				t.Fatalf("%s vertex %d: stored uv %v, BAS2 uv %v", p.Name, k, a, b)
			}
		}
	}
}

// TestRealDetails pins facts the README of the real data states.
func TestRealDetails(t *testing.T) {
	byName := map[string]string{}
	for _, p := range realFiles(t) {
		byName[filepath.Base(p)] = p
	}
	if p, ok := byName["helmet4_ger.ply"]; ok {
		// VERT flags 0: colours stored halved (0x80 grey) come out white.
		st, sc := scanDecode(t, p)
		if v := st.Header.Get("vertices").(decode.Fields); v.Get("colors_halved") != true {
			t.Errorf("helmet: colours not reported halved")
		}
		raw, _ := os.ReadFile(p)
		if !bytes.Contains(raw, []byte{0x80, 0x80, 0x80, 0xff}) {
			t.Fatalf("helmet: expected 0x808080ff colours in the file")
		}
		c := sc.Meshes[0].Primitives[0].Colors[0][0]
		if c != [4]float32{1, 1, 1, 1} {
			t.Errorf("helmet colour %v, want white", c)
		}
		if got := sc.Materials[0]; got.Name != "hat.tif.tex" || len(got.Textures) != 1 || got.Textures[0].Role != "diffuse" {
			t.Errorf("helmet material %+v", got)
		}
	}
	if p, ok := byName["antenn1.ply"]; ok {
		st, sc := scanDecode(t, p)
		s := st.Header.Get("submeshes").([]decode.Fields)[0]
		if s.Get("tangents_in_extra_bytes") != true || s.Get("format_size") != 32 || s.Get("layout_size") != 48 {
			t.Errorf("antenna: tangents not found in the 16 extra bytes: %v", s)
		}
		pr := sc.Meshes[0].Primitives[0]
		if len(pr.Tangents) != len(pr.Positions) {
			t.Fatalf("antenna: %d tangents for %d vertices", len(pr.Tangents), len(pr.Positions))
		}
		for _, tg := range pr.Tangents {
			if tg[3] != 1 && tg[3] != -1 {
				t.Fatalf("tangent w %v", tg[3])
			}
		}
	}
	if p, ok := byName["drawcall_0004.ply"]; ok {
		st, _ := scanDecode(t, p)
		if st.Header.Get("mirrored") != true {
			t.Errorf("blyskawica: MROR not reported")
		}
	}
	if p, ok := byName["map.ply"]; ok {
		raw, _ := os.ReadFile(p)
		if binary.LittleEndian.Uint32(raw) != binary.LittleEndian.Uint32([]byte("BPLY")) {
			t.Fatal("map.ply is not BPLY")
		}
		st, sc := scanDecode(t, p)
		if n := len(st.Header.Get("submeshes").([]decode.Fields)); n != 17 || len(sc.Materials) != 17 {
			t.Errorf("map: %d submeshes, %d materials, want 17", n, len(sc.Materials))
		}
	}
}
