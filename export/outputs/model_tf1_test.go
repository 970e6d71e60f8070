package outputs_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	qgltf "github.com/qmuntal/gltf"
	"github.com/qmuntal/gltf/modeler"

	"github.com/meshfs/meshfs/decode/tfever"
	"github.com/meshfs/meshfs/export/gltf/validator"
	"github.com/meshfs/meshfs/export/outputs"
)

func tf1Transl(x, y, z float64) *[16]float64 {
	return &[16]float64{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, x, y, z, 1}
}

// tf1Box is a box mesh of side size around its origin: positions and one
// submesh, counter-clockwise outwards.
func tf1Box(size float32) *tfever.EncMesh {
	var pos []float32
	for i := 0; i < 8; i++ {
		for a := 0; a < 3; a++ {
			c := -size / 2
			if i>>a&1 == 1 {
				c = size / 2
			}
			pos = append(pos, c)
		}
	}
	// Corner i has x = bit 0, y = bit 1, z = bit 2.
	quads := [][4]uint32{{1, 3, 7, 5}, {0, 4, 6, 2}, {2, 6, 7, 3}, {0, 1, 5, 4}, {4, 5, 7, 6}, {0, 2, 3, 1}}
	var idx []uint32
	for _, q := range quads {
		idx = append(idx, q[0], q[1], q[2], q[0], q[2], q[3])
	}
	return &tfever.EncMesh{
		Attrs:     []tfever.EncAttr{{Name: "position", NumComp: 3, Data: pos}},
		SubMeshes: []tfever.EncSubMesh{{Indices: map[string][]uint32{"position": idx}}},
	}
}

// tf1Tree writes a mod folder holding a Train Fever (1) layout railcar:
// LOD 0 is a body (material configuration 1 of its mesh's two), a bogie
// group of two axles and a door whose mesh animation two events play
// (forwards and backwards); LOD 1 is the body alone at configuration 0.
// The model's script finds its own folder with debug.getinfo, as mods do.
func tf1Tree(t *testing.T) string {
	dir := t.TempDir()
	res := filepath.Join(dir, "mymod_1", "res")
	write := func(rel string, b []byte) {
		p := filepath.Join(res, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mesh := func(rel string, m *tfever.EncMesh) {
		script, blob, err := tfever.EncodeMsh(m)
		if err != nil {
			t.Fatal(err)
		}
		write(rel, script)
		write(rel+".blob", blob)
	}
	body := tf1Box(2)
	body.SubMeshes[0].Materials = []string{"tf1/red.mtl", "tf1/blue.mtl"}
	body.MatConfigs = [][]int{{0}, {1}}
	mesh("models/mesh/tf1/body.msh", body)
	mesh("models/mesh/tf1/axle.msh", tf1Box(0.5))
	for _, ext := range []string{"", ".blob"} {
		b, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "tfever", "trainfever_door.msh"+ext))
		if err != nil {
			t.Fatal(err)
		}
		write("models/mesh/tf1/door.msh"+ext, b)
	}
	write("models/group/tf1/bogie.grp", tfever.EncodeGrp([]tfever.EncChild{
		{ID: "tf1/axle.msh", Transf: tf1Transl(1, 0, 0.5)},
		{ID: "tf1/axle.msh", Transf: tf1Transl(-1, 0, 0.5)},
	}, [][]int{{0, 0}}))
	write("models/model/tf1/railcar.mdl", tfever.EncodeTF1Mdl(&tfever.EncTF1Model{
		Prelude: `local src = debug.getinfo(1, "S").source
local modDir = src:sub(2, #src - #"res/models/model/tf1/railcar.mdl")
`,
		Metadata: `{ modDir = modDir, }`,
		BBMin:    [3]float64{-6, -2, 0},
		BBMax:    [3]float64{6, 2, 3},
		LODs: []tfever.EncTF1LOD{
			{
				Children: []tfever.EncChild{
					{ID: "tf1/body.msh", Transf: tf1Transl(0, 0, 1)},
					{ID: "tf1/bogie.grp", Group: true, Transf: tf1Transl(5, 0, 0)},
					{ID: "tf1/door.msh", Transf: tf1Transl(2, -1.5, 1)},
				},
				MatConfigs: [][]int{{1, 0, 0}},
				Events: []tfever.EncEvent{
					{Name: "open_doors", Child: 3, Take: "open", Forward: true},
					{Name: "close_doors", Child: 3, Take: "open", Forward: false},
				},
				VisibleTo: 100,
			},
			{
				Children:    []tfever.EncChild{{ID: "tf1/body.msh", Transf: tf1Transl(0, 0, 1)}},
				MatConfigs:  [][]int{{0}},
				VisibleFrom: 100, VisibleTo: 1000,
			},
		},
	}))
	return filepath.Join(res, "models", "model", "tf1", "railcar.mdl")
}

// meshPlaces lists, per mesh name, the world translations of the nodes
// showing it and the names of its primitives' materials.
func meshPlaces(doc *qgltf.Document) (map[string][][3]float64, map[string][]string) {
	at := map[string][][3]float64{}
	mats := map[string][]string{}
	for i, n := range doc.Nodes {
		if n.Mesh == nil {
			continue
		}
		m := doc.Meshes[*n.Mesh]
		w := worldOf(doc, i)
		at[m.Name] = append(at[m.Name], [3]float64{w[12], w[13], w[14]})
		for _, p := range m.Primitives {
			if p.Material != nil && !slices.Contains(mats[m.Name], doc.Materials[*p.Material].Name) {
				mats[m.Name] = append(mats[m.Name], doc.Materials[*p.Material].Name)
			}
		}
	}
	return at, mats
}

// TestTF1Model: a model in the Train Fever (1) layout assembles as the
// mount does: each child where its transf puts it (Z up made Y up:
// (x, y, z) → (x, z, −y)), a group's children inside the group's
// transform, the material configuration the model picks per mesh, both
// LOD ranges, and the door's events as animations of its node, the
// backward one the forward one reversed. Its script reads its path with
// debug.getinfo. Every .glb passes the validator.
func TestTF1Model(t *testing.T) {
	p := tf1Tree(t)
	m, err := outputs.Open(p)
	if err != nil || m == nil {
		t.Fatalf("open: %v %v", m, err)
	}
	if m.LODs() != 2 {
		t.Fatalf("%d LODs, want 2", m.LODs())
	}
	model, err := m.DecodeModel(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if l := model.LODs; l[0].VisibleFrom != 0 || l[0].VisibleTo != 100 || l[1].VisibleFrom != 100 || l[1].VisibleTo != 1000 {
		t.Errorf("LOD ranges %v–%v, %v–%v", l[0].VisibleFrom, l[0].VisibleTo, l[1].VisibleFrom, l[1].VisibleTo)
	}
	if md, _ := json.Marshal(model.Header); !strings.Contains(string(md), `"modDir":"mymod_1/"`) {
		t.Errorf("metadata %s: want the folder debug.getinfo gave the script", md)
	}
	glbs, _, err := m.ModelGLBs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(glbs) != 2 {
		t.Fatalf("%d .glb files, want 2", len(glbs))
	}
	for _, b := range glbs {
		validator.Check(t, b)
	}
	doc := parseGLB(t, glbs[0])
	at, mats := meshPlaces(doc)
	want := map[string][][3]float64{
		"body": {{0, 1, 0}},
		"axle": {{6, 0.5, 0}, {4, 0.5, 0}},
		"door": {{2, 1, 1.5}},
	}
	for name, w := range want {
		got := at[name]
		if len(got) != len(w) {
			t.Errorf("%s shown %d times at %v, want at %v", name, len(got), got, w)
			continue
		}
		for _, g := range got {
			if !slices.ContainsFunc(w, func(x [3]float64) bool { return near(x[0], g[0]) && near(x[1], g[1]) && near(x[2], g[2]) }) {
				t.Errorf("%s at %v, want at %v", name, got, w)
			}
		}
	}
	if !slices.Equal(mats["body"], []string{"tf1/blue.mtl"}) {
		t.Errorf("body's materials %v, want configuration 1's tf1/blue.mtl", mats["body"])
	}
	if !slices.Equal(mats["door"], []string{"vehicle/train/door.mtl", "vehicle/train/frame.mtl"}) {
		t.Errorf("door's materials %v, want its own first configuration's", mats["door"])
	}
	_, mats1 := meshPlaces(parseGLB(t, glbs[1]))
	if !slices.Equal(mats1["body"], []string{"tf1/red.mtl"}) {
		t.Errorf("LOD 1 body's materials %v, want configuration 0's tf1/red.mtl", mats1["body"])
	}

	// The events: one animation each on the door's node; the backward one
	// starts where the forward one ends.
	door := -1
	for i, n := range doc.Nodes {
		if n.Mesh != nil && doc.Meshes[*n.Mesh].Name == "door" {
			door = parentOf(doc, i) // the model's node; the mesh hangs under it
		}
	}
	tracks := map[string][][]float32{}
	for _, a := range doc.Animations {
		for _, c := range a.Channels {
			if c.Target.Path != qgltf.TRSTranslation {
				continue
			}
			if c.Target.Node == nil || *c.Target.Node != door {
				t.Errorf("%s moves node %v, want the door's %d", a.Name, *c.Target.Node, door)
				continue
			}
			s := a.Samplers[c.Sampler]
			times, err := modeler.ReadAccessor(doc, doc.Accessors[s.Input], nil)
			if err != nil {
				t.Fatal(err)
			}
			vals, err := modeler.ReadAccessor(doc, doc.Accessors[s.Output], nil)
			if err != nil {
				t.Fatal(err)
			}
			var flat []float32
			for _, v := range vals.([][3]float32) {
				flat = append(flat, v[:]...)
			}
			tracks[a.Name] = [][]float32{times.([]float32), flat}
		}
	}
	fw, bw := tracks["open_doors/door"], tracks["close_doors/door"]
	if fw == nil || bw == nil {
		t.Fatalf("animations %v, want open_doors/door and close_doors/door", keysOf(tracks))
	}
	n := len(fw[0])
	if n < 2 || len(bw[0]) != n || !near(float64(fw[0][n-1]), 2) {
		t.Fatalf("forward times %v, backward %v: want the 2 s take both ways", fw[0], bw[0])
	}
	for k := 0; k < n; k++ {
		j := n - 1 - k
		if !near(float64(bw[0][k]), float64(fw[0][n-1]-fw[0][j])) {
			t.Errorf("backward time %d is %v, want %v", k, bw[0][k], fw[0][n-1]-fw[0][j])
		}
		for c := 0; c < 3; c++ {
			if math.Abs(float64(bw[1][3*k+c]-fw[1][3*j+c])) > 1e-5 {
				t.Errorf("backward key %d = %v, want forward key %d = %v", k, bw[1][3*k:3*k+3], j, fw[1][3*j:3*j+3])
				break
			}
		}
	}
	if near(float64(fw[1][0]), float64(fw[1][3*(n-1)])) && near(float64(fw[1][2]), float64(fw[1][3*(n-1)+2])) {
		t.Errorf("the door's take does not move it: %v", fw[1])
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
