package tfever

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/tfever/luasandbox"
)

// fuzzLimits keep each run short; the hostile-script tests cover the
// default limits.
var fuzzLimits = luasandbox.Limits{Timeout: 2 * time.Second, MaxInstructions: 200_000, MaxBytes: 4 << 20}

// FuzzDecode mutates a .msh script and its blob together: the Lua table
// reader and the blob decoder. Any result must be a FormatError or a scene
// that keeps the model's invariants.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"tf2_cube", "trainfever_door", "tf2_nan"} {
		script, err1 := os.ReadFile(filepath.Join(fixtureDir, name+".msh"))
		blob, err2 := os.ReadFile(filepath.Join(fixtureDir, name+".msh.blob"))
		if err1 != nil || err2 != nil {
			f.Fatal(err1, err2)
		}
		f.Add(script, blob)
	}
	f.Add([]byte("function data() return { vertexAttr = { position = { count = 12, numComp = 3, offset = 0 } }, subMeshes = { { indices = { position = { count = 12, offset = 12 } } } } } end"),
		[]byte("\x00\x00\x80\x3f\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, script, blob []byte) {
		src := memSource("f.msh", map[string][]byte{"f.msh": script, "f.msh.blob": blob})
		format := Msh{Limits: fuzzLimits}
		st, err := format.Scan(context.Background(), src)
		checkErr(t, err)
		if st == nil {
			t.Fatal("Scan returned no structure")
		}
		if _, err := decode.HeaderJSON(st.Header); err != nil {
			t.Fatalf("header.json: %v", err)
		}
		if err == nil {
			for _, c := range st.Chunks {
				b, err := c.Bytes(src.R)
				if err != nil || int64(len(b)) != c.Size {
					t.Fatalf("chunk %s: %d bytes, %v", c.Name, len(b), err)
				}
			}
		}
		s, err := format.Decode(context.Background(), src)
		checkErr(t, err)
		if err == nil {
			checkScene(t, s)
		}
	})
}

// FuzzAni mutates an .ani script.
func FuzzAni(f *testing.F) {
	b, err := os.ReadFile(filepath.Join(fixtureDir, "walk.ani"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("function data() return { times = { 0 }, transfs = { { 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1 } } } end"))
	f.Fuzz(func(t *testing.T, script []byte) {
		src := memSource("f.ani", map[string][]byte{"f.ani": script})
		format := Ani{Limits: fuzzLimits}
		st, err := format.Scan(context.Background(), src)
		checkErr(t, err)
		if _, err := decode.HeaderJSON(st.Header); err != nil {
			t.Fatalf("header.json: %v", err)
		}
		s, err := format.Decode(context.Background(), src)
		checkErr(t, err)
		if err == nil {
			checkScene(t, s)
		}
	})
}

func checkErr(t *testing.T, err error) {
	t.Helper()
	var fe *decode.FormatError
	if err != nil && !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a FormatError", err, err)
	}
}

func finite(v ...float32) bool { return decode.Finite(v...) }

// checkScene asserts what exporters rely on.
func checkScene(t *testing.T, s *decode.Scene) {
	t.Helper()
	for _, m := range s.Meshes {
		for pi, p := range m.Primitives {
			n := len(p.Positions)
			if len(p.Indices)%3 != 0 {
				t.Fatalf("primitive %d: %d indices", pi, len(p.Indices))
			}
			for _, i := range p.Indices {
				if int(i) >= n {
					t.Fatalf("primitive %d: index %d of %d vertices", pi, i, n)
				}
			}
			if p.Material >= len(s.Materials) {
				t.Fatalf("primitive %d: material %d", pi, p.Material)
			}
			for _, v := range p.Positions {
				if !finite(v[:]...) {
					t.Fatalf("non-finite position %v", v)
				}
			}
			if p.Normals != nil && len(p.Normals) != n || p.Tangents != nil && len(p.Tangents) != n {
				t.Fatal("attribute lengths differ")
			}
			for _, v := range p.Normals {
				if l := math.Sqrt(float64(v[0]*v[0] + v[1]*v[1] + v[2]*v[2])); math.Abs(l-1) > 1e-3 {
					t.Fatalf("normal %v has length %v", v, l)
				}
			}
			for _, v := range p.Tangents {
				if v[3] != 1 && v[3] != -1 || !finite(v[:]...) {
					t.Fatalf("tangent %v", v)
				}
			}
			for _, uv := range p.UVs {
				if len(uv) != n {
					t.Fatal("uv length differs")
				}
				for _, v := range uv {
					if !finite(v[:]...) {
						t.Fatalf("non-finite uv %v", v)
					}
				}
			}
			for _, c := range p.Colors {
				if len(c) != n {
					t.Fatal("colour length differs")
				}
			}
		}
	}
	for _, a := range s.Animations {
		for _, c := range a.Channels {
			if c.Index >= len(s.Meshes) || len(c.Times) == 0 {
				t.Fatalf("channel %+v", c)
			}
			per := 3
			if c.Path == decode.PathRotation {
				per = 4
			}
			if len(c.Values) != per*len(c.Times) || !finite(c.Values...) || !finite(c.Times...) {
				t.Fatalf("channel values %d for %d times", len(c.Values), len(c.Times))
			}
			for i := range c.Times {
				if c.Times[i] < 0 || i > 0 && !(c.Times[i] > c.Times[i-1]) {
					t.Fatalf("times %v", c.Times)
				}
			}
		}
	}
}

// FuzzMdl mutates a model script, with the fixture tree's meshes and
// modules to require: any result must be a FormatError or a Model whose
// trees, references and channels keep what the assembler relies on.
func FuzzMdl(f *testing.F) {
	tree := fixtureTree(f)
	for _, name := range []string{"car.mdl", "sign.mdl"} {
		f.Add(tree["models/model/fixture/"+name])
	}
	f.Add([]byte(`function data() return { lods = { { node = { meshes = { { mesh = "a.msh", transf = { 1,0,0,0, 0,1,0,0, 0,0,1,0, 1,2,3,1 } } }, skin = "s.msh" } } } } end`))
	f.Fuzz(func(t *testing.T, script []byte) {
		files := map[string][]byte{}
		for k, v := range tree {
			files[k] = v
		}
		files["models/model/f.mdl"] = script
		src := treeSource("models/model/f.mdl", files)
		format := Mdl{Limits: fuzzLimits}
		st, err := format.Scan(context.Background(), src)
		checkErr(t, err)
		if st == nil {
			t.Fatal("Scan returned no structure")
		}
		if _, err := decode.HeaderJSON(st.Header); err != nil {
			t.Fatalf("header.json: %v", err)
		}
		m, err := format.DecodeModel(context.Background(), src)
		checkErr(t, err)
		if err == nil {
			checkModel(t, m)
		}
	})
}

// checkModel asserts what the assembler relies on.
func checkModel(t *testing.T, m *decode.Model) {
	t.Helper()
	if len(m.LODs) == 0 {
		t.Fatal("no LOD")
	}
	if _, err := decode.HeaderJSON(m.Header); err != nil {
		t.Fatalf("header: %v", err)
	}
	for li, lod := range m.LODs {
		for i, n := range lod.Nodes {
			if i == 0 && n.Parent != -1 || i > 0 && !(n.Parent >= 0 && n.Parent < i) {
				t.Fatalf("LOD %d node %d: parent %d", li, i, n.Parent)
			}
			for _, v := range n.Matrix {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("LOD %d node %d: matrix %v", li, i, n.Matrix)
				}
			}
			for _, p := range n.Parts {
				if p.Mesh.Base != decode.RefAssetRoot || !strings.HasPrefix(p.Mesh.Rel, "models/mesh/") {
					t.Fatalf("part %+v", p)
				}
			}
		}
		for _, a := range lod.Animations {
			if a.Node < 0 || a.Node >= len(lod.Nodes) || (a.File == nil) == (a.Channels == nil) {
				t.Fatalf("animation %+v", a)
			}
			for _, c := range a.Channels {
				per := 3
				if c.Path == decode.PathRotation {
					per = 4
				}
				if c.Kind != decode.TargetJoint || c.Index != a.Node || len(c.Times) == 0 || len(c.Values) != per*len(c.Times) ||
					!finite(c.Values...) || !increasing(c.Times) {
					t.Fatalf("channel %+v", c)
				}
			}
		}
	}
}
