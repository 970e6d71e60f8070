package unigine

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/unigine/guid"
)

// worldPos is node i's origin in the scene: its matrices chained to the root.
func worldPos(lod decode.ModelLOD, i int) [3]float64 {
	m := lod.Nodes[i].Matrix
	for p := lod.Nodes[i].Parent; p >= 0; p = lod.Nodes[p].Parent {
		m = lod.Nodes[p].Matrix.Mul(m)
	}
	return [3]float64{m[12], m[13], m[14]}
}

func findNode(t *testing.T, lod decode.ModelLOD, name, parent string) int {
	t.Helper()
	for i, n := range lod.Nodes {
		if n.Name == name && n.Parent >= 0 && lod.Nodes[n.Parent].Name == parent {
			return i
		}
	}
	t.Fatalf("no node %q under %q", name, parent)
	return -1
}

func near3(a, b [3]float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-5 {
			return false
		}
	}
	return true
}

var nodeTagRE = regexp.MustCompile(`<node[ >]`)

// TestSkyrunnerScenes reads both worlds and every .node of the project:
// one model node per <node> element, every mesh part naming a file that
// exists, every unresolved mesh one the index cannot resolve, and two
// placements computed by hand from JumpRunTest.world.
func TestSkyrunnerScenes(t *testing.T) {
	dir := decodetest.NeedShared(t, "assets/unigine-skyrunner")
	root := filepath.Join(dir, "data")
	ix, err := guid.Scan(root, decodetest.DirFiles{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".node") || strings.HasSuffix(p, ".world")) {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 19 {
		t.Fatalf("%d .node/.world files, want the project's 19", len(files))
	}
	models := map[string]*decode.Model{}
	parts := 0
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := os.Open(p)
		m, err := ReadScene(p, f, ix, dirFiles(ix))
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		models[filepath.Base(p)] = m
		lod := m.LODs[0]
		// A directional or spot light adds the child carrying it.
		turned := len(regexp.MustCompile(`<node type="Light(World|Proj)"`).FindAll(b, -1))
		if want := len(nodeTagRE.FindAll(b, -1)) + turned; len(lod.Nodes) != want {
			t.Errorf("%s: %d nodes, the XML has %d and %d directional or spot lights", p, len(lod.Nodes), want-turned, turned)
		}
		meshes := 0
		for _, n := range lod.Nodes {
			for _, part := range n.Parts {
				parts++
				meshes++
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(part.Mesh.Rel))); err != nil {
					t.Errorf("%s: node %q: mesh %s: %v", p, n.Name, part.Mesh.Stored, err)
				}
				if len(part.Materials) == 0 {
					t.Errorf("%s: node %q: no surface materials", p, n.Name)
				}
			}
		}
		un := m.Header.Get("unresolved").([]decode.Fields)
		for _, u := range un {
			if _, _, ok := ix.Resolve(u.Get("mesh").(string)); ok {
				t.Errorf("%s: %v recorded unresolved but resolves", p, u)
			}
		}
		if want := len(regexp.MustCompile(`<mesh_name>`).FindAll(b, -1)); meshes+len(un) != want || m.Header.Get("meshes") != want {
			t.Errorf("%s: %d meshes placed + %d unresolved, the XML names %d", p, meshes, len(un), want)
		}
	}
	if parts < 17 {
		t.Errorf("%d mesh parts resolved in the whole project, want the 17 the snapshot has", parts)
	}
	lod := models["JumpRunTest.world"].LODs[0]
	// smallBonus: scale 0.22218251 (z), at (4.3126187, 0.41676468,
	// 1.0384705) Z up; its child smallBonus_1 at local z 1.8117805, so at
	// z = 1.0384705 + 0.22218251·1.8117805 = 1.44101644; Y up (x, z, −y).
	i := findNode(t, lod, "smallBonus_1", "smallBonus")
	if got, want := worldPos(lod, i), [3]float64{4.3126187, 1.44101644, -0.41676468}; !near3(got, want) {
		t.Errorf("smallBonus_1 at %v, want %v", got, want)
	}
	// PlayerActor at (-5.7924957, -4.2556086, 0.78402871) rotated +90°
	// about Z (x axis → (0.00054646, 0.99999982)); PlayerStep local
	// (-0.16248083, -0.026034944, 0.070388831): x' = -5.7924957 +
	// 0.00054646·-0.16248083 + -0.99999994·-0.026034944 = -5.76654956,
	// y' = -4.2556086 + 0.99999982·-0.16248083 + 0.00054646·-0.026034944
	// = -4.41810365, z' = 0.78402871 + 0.070388831 = 0.85441754.
	i = findNode(t, lod, "PlayerStep", "PlayerActor")
	if got, want := worldPos(lod, i), [3]float64{-5.76654956, 0.85441754, 4.41810365}; !near3(got, want) {
		t.Errorf("PlayerStep at %v, want %v", got, want)
	}
	lights := 0
	for _, n := range lod.Nodes {
		if l, ok := n.Extras.Get("light").(decode.Fields); ok {
			lights++
			if n.Name == "LightOmni" && lod.Nodes[n.Parent].Name == "smallBonus" && fmt.Sprint(l.Get("color")) != "[1 1 0.0823529437]" {
				t.Errorf("LightOmni colour %v, want the XML's 1 1 0.0823529437", l.Get("color"))
			}
		}
	}
	if lights != 3 {
		t.Errorf("%d lights in JumpRunTest.world, want its LightWorld and 2 LightOmni", lights)
	}
	// The glTF lights: the omni lights on their nodes (range the XML's
	// attenuation_distance 1.04700005), the sun on a child turned so that
	// glTF's −Z is the sun node's −Y (UNIGINE's −Z once Y up).
	var kinds []string
	for _, n := range lod.Nodes {
		if n.Light == nil {
			continue
		}
		kinds = append(kinds, n.Light.Kind)
		switch n.Light.Kind {
		case "point":
			if n.Name != "LightOmni" || math.Abs(float64(n.Light.Range)-1.04700005) > 1e-6 {
				t.Errorf("point light on %q, range %v", n.Name, n.Light.Range)
			}
		case "directional":
			if n.Name != "sun.light" || lod.Nodes[n.Parent].Name != "sun" || lod.Nodes[n.Parent].Light != nil {
				t.Errorf("directional light on %q", n.Name)
			}
			// The matrix's third column is where it takes +Z: +Y, so −Z to −Y.
			if c := n.Matrix; c[8] != 0 || c[9] != 1 || c[10] != 0 {
				t.Errorf("sun.light's matrix %v takes +Z to (%v %v %v), want +Y", c, c[8], c[9], c[10])
			}
		}
	}
	if fmt.Sprint(kinds) != "[directional point point]" {
		t.Errorf("glTF lights %v, want the sun and the two omni lights", kinds)
	}
}

// writeTree writes files (slash path → content) beneath a new folder and
// returns it with its index.
func writeTree(t *testing.T, files map[string]string) (string, *guid.Index) {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		fp := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fp, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := guid.Scan(root, decodetest.DirFiles{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	return root, ix
}

func readFile(t *testing.T, root, rel string, ix *guid.Index) (*decode.Model, error) {
	t.Helper()
	p := filepath.Join(root, rel)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return ReadScene(p, f, ix, dirFiles(ix))
}

const tr = "<transform>1 0 0 0 0 1 0 0 0 0 1 0 %s 1</transform>"

func TestSceneReferences(t *testing.T) {
	root, ix := writeTree(t, map[string]string{
		"a.node":     `<nodes><node type="NodeReference" name="toB"><reference>sub/b.node</reference>` + fmt.Sprintf(tr, "1 2 3") + `</node></nodes>`,
		"sub/b.node": `<nodes><node type="ObjectMeshStatic" name="box"><mesh_name>box.mesh</mesh_name><surface name="s" material="m.mat"/>` + fmt.Sprintf(tr, "0 0 1") + `</node><node type="NodeReference" name="back"><reference>a.node</reference></node><node type="NodeReference" name="gone"><reference>none.node</reference></node></nodes>`,
		"box.mesh":   "x",
	})
	m, err := readFile(t, root, "a.node", ix)
	if err != nil {
		t.Fatal(err)
	}
	lod := m.LODs[0]
	// toB, box, back, gone: the cycle back to a.node is not expanded.
	if len(lod.Nodes) != 4 {
		t.Fatalf("%d nodes, want 4: %+v", len(lod.Nodes), lod.Nodes)
	}
	i := findNode(t, lod, "box", "toB")
	// Z up (1, 2, 3) + (0, 0, 1) = (1, 2, 4) → Y up (1, 4, −2).
	if got := worldPos(lod, i); !near3(got, [3]float64{1, 4, -2}) {
		t.Errorf("box at %v, want (1, 4, -2)", got)
	}
	if p := lod.Nodes[i].Parts; len(p) != 1 || p[0].Mesh.Rel != "box.mesh" || p[0].Materials[0] != "m.mat" {
		t.Errorf("box parts %+v", p)
	}
	failed := fmt.Sprint(m.Header.Get("failed"))
	if !strings.Contains(failed, "cycle") || !strings.Contains(failed, "back") {
		t.Errorf("failed = %s, want the cycle through node back", failed)
	}
	if un := fmt.Sprint(m.Header.Get("unresolved")); !strings.Contains(un, "none.node") {
		t.Errorf("unresolved = %s, want none.node", un)
	}
	// Named relative to the working folder, with the index's root too, the
	// file read is still the one the cycle comes back to.
	t.Chdir(root)
	rix, err := guid.Scan(".", decodetest.DirFiles{Root: "."})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := readFile(t, "", "a.node", rix); err != nil || len(m.LODs[0].Nodes) != 4 {
		t.Errorf("relative names: %v, %d nodes, want 4", err, len(m.LODs[0].Nodes))
	}
	// Without an index nothing resolves, and nothing fails.
	m, err = readFile(t, root, "a.node", nil)
	if err != nil || len(m.LODs[0].Nodes) != 1 || len(m.Header.Get("unresolved").([]decode.Fields)) != 1 {
		t.Errorf("without an index: %v, %+v", err, m)
	}
}

// TestSceneRefDepth: a chain of references deeper than MaxRefDepth stops
// there, recorded, and a fan-out past MaxSceneNodes is a limit error.
func TestSceneRefDepth(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < MaxRefDepth+5; i++ {
		files[fmt.Sprintf("n%d.node", i)] = fmt.Sprintf(`<nodes><node type="NodeReference" name="r%d"><reference>n%d.node</reference></node></nodes>`, i, i+1)
	}
	var fan strings.Builder
	fan.WriteString("<nodes>")
	for i := 0; i < 300; i++ {
		fan.WriteString(`<node type="NodeReference" name="f"><reference>leaf.node</reference></node>`)
	}
	fan.WriteString("</nodes>")
	files["fan.node"] = fan.String()
	files["leaf.node"] = "<nodes>" + strings.Repeat(`<node type="NodeDummy" name="x"/>`, 300) + "</nodes>"
	root, ix := writeTree(t, files)
	m, err := readFile(t, root, "n0.node", ix)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.LODs[0].Nodes); n != MaxRefDepth+1 {
		t.Errorf("%d nodes, want %d", n, MaxRefDepth+1)
	}
	if f := fmt.Sprint(m.Header.Get("failed")); !strings.Contains(f, "references deep") {
		t.Errorf("failed = %s", f)
	}
	_, err = readFile(t, root, "fan.node", ix)
	if !errors.Is(err, decode.ErrLimit) {
		t.Errorf("300 × 300 nodes: %v, want ErrLimit", err)
	}
}

// spaces is a reader of n spaces that allocates nothing per byte.
type spaces struct{ n int64 }

func (s *spaces) Read(b []byte) (int, error) {
	if s.n <= 0 {
		return 0, io.EOF
	}
	k := int64(len(b))
	if k > s.n {
		k = s.n
	}
	for i := range b[:k] {
		b[i] = ' '
	}
	s.n -= k
	return int(k), nil
}

func TestSceneHostile(t *testing.T) {
	node := func(body string) string { return `<nodes><node type="NodeDummy" name="n">` + body + `</node></nodes>` }
	for _, c := range []struct {
		name  string
		r     io.Reader
		limit bool
		want  string // in the message
	}{
		{"deep", strings.NewReader(strings.Repeat(`<node name="d">`, MaxSceneDepth+1)), true, "nested"},
		{"many", strings.NewReader("<nodes>" + strings.Repeat("<node/>", MaxSceneNodes+1) + "</nodes>"), true, "nodes"},
		{"big", io.MultiReader(strings.NewReader("<nodes>"), &spaces{MaxSceneBytes}, strings.NewReader("</nodes>")), true, "bytes"},
		{"15 numbers", strings.NewReader(node("<transform>1 0 0 0 0 1 0 0 0 0 1 0 0 0 1</transform>")), false, "field transform"},
		{"NaN", strings.NewReader(node("<transform>1 0 0 0 0 1 0 0 0 0 1 0 NaN 0 0 1</transform>")), false, "field transform"},
		{"huge", strings.NewReader(node("<transform>1 0 0 0 0 1 0 0 0 0 1 0 1e300 0 0 1</transform>")), false, "float32"},
		{"projective", strings.NewReader(node("<transform>1 0 0 0.5 0 1 0 0 0 0 1 0 0 0 0 1</transform>")), false, "last row"},
		{"not xml", strings.NewReader("<nodes><node"), false, "not a scene"},
		{"other root", strings.NewReader("<material/>"), false, "root element"},
		{"empty", strings.NewReader(""), false, "no root"},
	} {
		_, err := ReadScene("h.node", c.r, nil, nil)
		var fe *decode.FormatError
		if !errors.As(err, &fe) || fe.File != "h.node" || !strings.Contains(err.Error(), c.want) || errors.Is(err, decode.ErrLimit) != c.limit {
			t.Errorf("%s: %v, want a FormatError of h.node saying %q (limit %v)", c.name, err, c.want, c.limit)
		}
	}
	// A bad transform is reported at its element's offset.
	src := node("<transform>x</transform>")
	_, err := ReadScene("h.node", strings.NewReader(src), nil, nil)
	var fe *decode.FormatError
	if !errors.As(err, &fe) || fe.Offset != int64(strings.Index(src, "x</transform>")) {
		t.Errorf("bad transform: %v, want offset %d", err, strings.Index(src, "x</transform>"))
	}
}

// FuzzReadScene: any input either fails with a FormatError of its file or
// gives a tree (each parent an earlier node) of finite transforms.
func FuzzReadScene(f *testing.F) {
	f.Add([]byte(`<nodes><node type="ObjectMeshStatic" name="a"><mesh_name>guid://e0a18b04956a9a9364ca5ed63f65083d83cdac78</mesh_name><surface name="s" material="m"/>` + fmt.Sprintf(tr, "1 2 3") + `<node type="LightOmni"><color>1 0 0 1</color></node></node></nodes>`))
	f.Add([]byte(`<world><editor><node type="NodeReference"><reference>csharp_template/template_props/primitives/cube.node</reference></node></editor></world>`))
	var ix *guid.Index
	if dir, ok := decodetest.Shared(f, "assets/unigine-skyrunner"); ok {
		root := filepath.Join(dir, "data")
		var err error
		if ix, err = guid.Scan(root, decodetest.DirFiles{Root: root}); err != nil {
			f.Fatal(err)
		}
		for _, p := range []string{"csharp_template/template_props/primitives/cone.node", "csharp_template/template_props/material_ball/material_ball.node"} {
			if b, err := os.ReadFile(filepath.Join(root, p)); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ReadScene("f.node", strings.NewReader(string(b)), ix, dirFiles(ix))
		if err != nil {
			var fe *decode.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("%v is not a FormatError", err)
			}
			return
		}
		for i, n := range m.LODs[0].Nodes {
			if n.Parent >= i || n.Parent < -1 {
				t.Fatalf("node %d has parent %d", i, n.Parent)
			}
			for _, v := range n.Matrix {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("node %d matrix %v", i, n.Matrix)
				}
			}
		}
	})
}

// BenchmarkReadSceneWorld reads JumpRunTest.world (157 KB, 125 nodes) with
// the project's index built once.
func BenchmarkReadSceneWorld(b *testing.B) {
	root := filepath.Join(decodetest.NeedShared(b, "assets/unigine-skyrunner"), "data")
	ix, err := guid.Scan(root, decodetest.DirFiles{Root: root})
	if err != nil {
		b.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "JumpRunTest.world"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadScene("JumpRunTest.world", strings.NewReader(string(src)), ix, dirFiles(ix)); err != nil {
			b.Fatal(err)
		}
	}
}

// dirFiles are the files of the project ix indexes (nil for none).
func dirFiles(ix *guid.Index) decode.ProjectFiles {
	if ix == nil {
		return nil
	}
	return decodetest.DirFiles{Root: ix.Root}
}
