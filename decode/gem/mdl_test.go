package gem

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

// assetFiles lists the files with extension ext under the GEM trees of
// ../shared/assets and ../shared/realdata/gem (decodetest.NeedShared's
// rule when absent).
func assetFiles(t testing.TB, ext string) []string {
	t.Helper()
	root := decodetest.NeedShared(t, "assets")
	trees := []string{filepath.Join(root, "gem-centurion"), filepath.Join(root, "gem-pilot"),
		filepath.Join(root, "gem-pantera"), filepath.Join(root, "gem-su85")}
	if real, ok := decodetest.RealData(t, "gem"); ok {
		trees = append(trees, real)
	}
	var files []string
	for _, tree := range trees {
		filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.EqualFold(filepath.Ext(p), ext) {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) == 0 {
		t.Fatalf("no GEM %s under ../shared/assets", ext)
	}
	return files
}

// fileSource is a Source for path whose siblings open from its folder.
func fileSource(t testing.TB, path string) *decode.Source {
	t.Helper()
	src := source(t, path)
	dir := filepath.Dir(path)
	src.OpenSibling = func(name string) (io.ReaderAt, int64, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, 0, err
		}
		return bytes.NewReader(b), int64(len(b)), nil
	}
	return src
}

func realModel(t *testing.T, suffix string) (*decode.Model, string) {
	t.Helper()
	for _, p := range assetFiles(t, ".mdl") {
		if strings.HasSuffix(p, suffix) {
			m, err := Mdl{}.DecodeModel(context.Background(), fileSource(t, p))
			if err != nil {
				t.Fatal(err)
			}
			return m, p
		}
	}
	t.Fatalf("no %s under ../shared/assets", suffix)
	return nil, ""
}

// worlds composes each node's matrix with its ancestors'.
func worlds(nodes []decode.ModelNode) []decode.Mat4 {
	w := make([]decode.Mat4, len(nodes))
	for i, n := range nodes {
		if n.Parent < 0 {
			w[i] = n.Matrix
		} else {
			w[i] = w[n.Parent].Mul(n.Matrix)
		}
	}
	return w
}

func nodeIndex(t *testing.T, nodes []decode.ModelNode, name string) int {
	t.Helper()
	for i, n := range nodes {
		if n.Name == name {
			return i
		}
	}
	t.Fatalf("no node %q", name)
	return -1
}

func apply(m decode.Mat4, p [3]float64) [3]float64 {
	return [3]float64{
		m[0]*p[0] + m[4]*p[1] + m[8]*p[2] + m[12],
		m[1]*p[0] + m[5]*p[1] + m[9]*p[2] + m[13],
		m[2]*p[0] + m[6]*p[1] + m[10]*p[2] + m[14],
	}
}

// TestRealModels scans and decodes every GEM .mdl of ../shared/assets and
// checks the header's counts against the model.
func TestRealModels(t *testing.T) {
	want := map[string][5]int{ // bones, parts, LODs, sequences, volumes
		"centurion.mdl":     {76, 35, 1, 6, 17},
		"cw_rus_combez.mdl": {59, 2, 3, 0, 0},
	}
	for _, p := range assetFiles(t, ".mdl") {
		t.Run(filepath.Base(p), func(t *testing.T) {
			src := fileSource(t, p)
			head := make([]byte, 16)
			src.R.ReadAt(head, 0)
			if !(Mdl{}).Sniff(p, head) {
				t.Fatal("Sniff says no")
			}
			st, err := Mdl{}.Scan(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Chunks) != 1 || st.Chunks[0].Length != src.Size {
				t.Errorf("chunks %+v: want the whole text", st.Chunks)
			}
			m, err := Mdl{}.DecodeModel(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			got := [5]int{st.Header.Get("bone_count").(int), st.Header.Get("part_count").(int),
				st.Header.Get("lod_count").(int), st.Header.Get("sequence_count").(int), st.Header.Get("volume_count").(int)}
			if w, ok := want[filepath.Base(p)]; ok && got != w {
				t.Errorf("bones, parts, LODs, sequences, volumes = %v, want %v", got, w)
			}
			if len(m.LODs) != got[2] || len(m.Animations) != got[3] || len(m.Colliders) != got[4] {
				t.Errorf("model has %d LODs, %d animations, %d colliders; header %v", len(m.LODs), len(m.Animations), len(m.Colliders), got)
			}
			files := map[string]bool{}
			for _, lod := range m.LODs {
				if len(lod.Nodes) != got[0] {
					t.Errorf("LOD of %d nodes, want %d", len(lod.Nodes), got[0])
				}
				for i, n := range lod.Nodes {
					if n.Parent >= i {
						t.Errorf("node %d's parent %d is not earlier", i, n.Parent)
					}
					for _, part := range n.Parts {
						files[part.Mesh.Stored] = true
					}
				}
			}
			if len(files) != got[1] {
				t.Errorf("%d distinct part files in the LODs, header says %d", len(files), got[1])
			}
			if m.Header.Get("counts") != nil || m.Header.Get("bone_count") != got[0] {
				t.Errorf("model header %v: want the scan's fields but its counts", m.Header)
			}
			if m.Scale != MetresPerUnit || m.Unit != "GEM unit" {
				t.Errorf("unit %q scale %v", m.Unit, m.Scale)
			}
			if _, err := decode.HeaderJSON(st.Header); err != nil {
				t.Error(err)
			}
			sc, err := Mdl{}.Decode(context.Background(), src)
			if err != nil || sc.Skeleton == nil || len(sc.Skeleton.Joints) != got[0] {
				t.Errorf("Decode: %v", err)
			}
		})
	}
}

// TestCenturionAssembly: the wheel pairs are mirrored across the hull in
// the lateral axis (scene Z, GEM Y), the turret sits above the hull, the
// sequences name the .anm files beside the model, and the tracks are the
// skinned parts.
func TestCenturionAssembly(t *testing.T) {
	m, _ := realModel(t, "centurion.mdl")
	nodes := m.LODs[0].Nodes
	w := worlds(nodes)
	body := w[nodeIndex(t, nodes, "body")]
	for _, pair := range [][2]string{{"wheell9", "wheelr9"}, {"wheell1", "wheelr1"}, {"wheell4", "wheelr4"}, {"shieldl1", "shieldr1"}} {
		l, r := w[nodeIndex(t, nodes, pair[0])], w[nodeIndex(t, nodes, pair[1])]
		lt, rt := [3]float64{l[12], l[13], l[14]}, [3]float64{r[12], r[13], r[14]}
		if math.Abs(lt[0]-rt[0]) > 0.05 || math.Abs(lt[1]-rt[1]) > 0.05 {
			t.Errorf("%s at %v and %s at %v differ along the hull or in height", pair[0], lt, pair[1], rt)
		}
		if math.Abs((lt[2]-body[14])+(rt[2]-body[14])) > 0.05 || math.Abs(lt[2]-rt[2]) < 2 {
			t.Errorf("%s at z %v and %s at z %v are not mirrored across the hull (z %v)", pair[0], lt[2], pair[1], rt[2], body[14])
		}
	}
	turret := w[nodeIndex(t, nodes, "turret")]
	if turret[13]-body[13] < 0.4 {
		t.Errorf("turret at height %v, hull at %v: not above it", turret[13], body[13])
	}
	for _, a := range m.Animations {
		if a.File == nil || a.File.Base != decode.RefModelDir || a.File.Rel != a.Name+".anm" || a.Node != -1 {
			t.Errorf("sequence %q: file %+v", a.Name, a.File)
		}
	}
	if s := m.Animations[5].Extras; s.Get("speed") != 0.5 || s.Get("resume") != true {
		t.Errorf("open's extras %v", s)
	}
	var skinned []string
	for _, n := range nodes {
		for _, p := range n.Parts {
			if p.Skinned {
				skinned = append(skinned, p.Mesh.Rel)
			}
		}
	}
	if strings.Join(skinned, " ") != "trackl.ply trackr.ply" {
		t.Errorf("skinned parts %v, want the tracks", skinned)
	}
	twice, err := parseModel("m.mdl", []byte("{Skeleton {bone \"a\" {p_2 0} {p 1} {p 2} {p 3} {speed 1}}}"))
	if ex := twice.Bones[0].Extras; err != nil || len(ex) != 5 || ex.Get("p") != 1.0 || ex.Get("p_2") != 0.0 || ex.Get("p_3") != 2.0 || ex.Get("p_4") != 3.0 {
		t.Errorf("repeated extras: %v %v", ex, err)
	}
	vols := "{Skeleton" + strings.Repeat("{bone \"b\"}", 50000) + "{bone \"Last\"}}" + strings.Repeat("{Volume \"v\" {Box 1 1 1} {Bone \"last\"}}", 50000)
	start := time.Now()
	if m, err := parseModel("m.mdl", []byte(vols)); err != nil || m.Volumes[49999].Node != 50000 || time.Since(start) > 5*time.Second {
		t.Errorf("50 000 volumes on the last of 50 001 bones: %v in %v", err, time.Since(start))
	}
	many := "{Skeleton {bone \"a\"" + strings.Repeat("{parameters 1}", 200000) + "}}"
	start = time.Now()
	if m, err := parseModel("m.mdl", []byte(many)); err != nil || len(m.Bones[0].Extras) != 200000 || time.Since(start) > 5*time.Second {
		t.Errorf("200 000 alike extras: %v in %v", err, time.Since(start))
	}
	gun := nodes[nodeIndex(t, nodes, "gun_rot")]
	if gun.Extras.Get("kind") != "revolute" || len(gun.Extras.Get("limits").([]float64)) != 2 {
		t.Errorf("gun_rot extras %v", gun.Extras)
	}
	mirrored := 0
	for _, n := range nodes {
		if n.Extras.Get("mirrored") == true {
			mirrored++
		}
	}
	for _, c := range m.Colliders {
		if det3(c.Matrix) < 0 {
			mirrored++
		}
	}
	for i, n := range nodes {
		if (det3(n.Matrix) < 0) != (n.Extras.Get("mirrored") == true) {
			t.Errorf("node %d %q: determinant %v, extras %v", i, n.Name, det3(n.Matrix), n.Extras)
		}
	}
	if mirrored != 13 {
		t.Errorf("%d mirrored frames among bones and volumes, SOURCE.txt counts 13", mirrored)
	}
}

func det3(m decode.Mat4) float64 {
	return m[0]*(m[5]*m[10]-m[9]*m[6]) - m[4]*(m[1]*m[10]-m[9]*m[2]) + m[8]*(m[1]*m[6]-m[5]*m[2])
}

// partBounds is the box of a .ply's referenced vertices in the scene's
// axes (GEM units), from its own decoder.
func partBounds(t *testing.T, path string) (lo, hi [3]float64) {
	t.Helper()
	_, sc := scanDecode(t, path)
	return sceneBounds(sc)
}

// sceneBounds is the box of a scene's vertices (its own axes and units).
func sceneBounds(sc *decode.Scene) (lo, hi [3]float64) {
	lo = [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi = [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	for _, m := range sc.Meshes {
		for _, p := range m.Primitives {
			for _, v := range p.Positions {
				for k := 0; k < 3; k++ {
					lo[k] = math.Min(lo[k], float64(v[k]))
					hi[k] = math.Max(hi[k], float64(v[k]))
				}
			}
		}
	}
	return lo, hi
}

// placedBounds grows box by the corners of a part's box (GEM units)
// placed by node matrix w, the part scaled by scale.
func placedBounds(box *[2][3]float64, w decode.Mat4, lo, hi [3]float64, scale float64) {
	for c := 0; c < 8; c++ {
		p := [3]float64{lo[0], lo[1], lo[2]}
		for k := 0; k < 3; k++ {
			if c&(1<<k) != 0 {
				p[k] = hi[k]
			}
			p[k] *= scale
		}
		q := apply(w, p)
		for k := 0; k < 3; k++ {
			box[0][k] = math.Min(box[0][k], q[k])
			box[1][k] = math.Max(box[1][k], q[k])
		}
	}
}

// TestUnits measures the assembled models against the real objects: the
// Centurion's hull with its wheels and skirts (every rigid part but the
// turret's, placed by its bones) is about 7.8 m long and 3.4 m wide, the
// pilot a grown man. Parts are scaled by Model.Scale where they are
// placed, as the assembler does.
func TestUnits(t *testing.T) {
	m, path := realModel(t, "centurion.mdl")
	nodes := m.LODs[0].Nodes
	w := worlds(nodes)
	turret := nodeIndex(t, nodes, "turret")
	under := func(i, anc int) bool {
		for ; i >= 0; i = nodes[i].Parent {
			if i == anc {
				return true
			}
		}
		return false
	}
	box := [2][3]float64{{math.Inf(1), math.Inf(1), math.Inf(1)}, {math.Inf(-1), math.Inf(-1), math.Inf(-1)}}
	for i, n := range nodes {
		for _, p := range n.Parts {
			if p.Skinned || under(i, turret) {
				continue
			}
			lo, hi := partBounds(t, filepath.Join(filepath.Dir(path), p.Mesh.Rel))
			placedBounds(&box, w[i], lo, hi, m.Scale)
		}
	}
	length, width, height := box[1][0]-box[0][0], box[1][2]-box[0][2], box[1][1]-box[0][1]
	t.Logf("Centurion hull, wheels and skirts: %.2f m long, %.2f m wide, %.2f m high", length, width, height)
	if math.Abs(length-7.8)/7.8 > 0.03 || math.Abs(width-3.4)/3.4 > 0.03 {
		t.Errorf("hull %.2f × %.2f m, want 7.8 × 3.4 m within 3%%", length, width)
	}
	p, ppath := realModel(t, "cw_rus_combez.mdl")
	nodes = p.LODs[0].Nodes
	w = worlds(nodes)
	skin := nodeIndex(t, nodes, "skin")
	lo, hi := partBounds(t, filepath.Join(filepath.Dir(ppath), "skin.ply"))
	box = [2][3]float64{{math.Inf(1), math.Inf(1), math.Inf(1)}, {math.Inf(-1), math.Inf(-1), math.Inf(-1)}}
	placedBounds(&box, w[skin], lo, hi, p.Scale)
	head := w[nodeIndex(t, nodes, "head")]
	t.Logf("pilot: skin from %.3f to %.3f m high, head bone at %.3f m", box[0][1], box[1][1], head[13])
	if math.Abs(box[0][1]) > 0.05 || box[1][1] < 1.5 || box[1][1] > 1.9 || head[13] > box[1][1] || head[13] < 1.3 {
		t.Errorf("pilot stands from %.2f to %.2f m, head at %.2f m", box[0][1], box[1][1], head[13])
	}
}

// TestModelErrors: broken models fail with a FormatError at the line.
func TestModelErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"{Skeleton}", "has no bone"},
		{"; nothing\n{Volume \"v\" {Box 1 2 3}}", "no {Skeleton}"},
		{"{Skeleton\n{bone \"a\" {Matrix34 1 0 0 0 1 0 0 0 1 0 0}}}", "line 2"},
		{"{Skeleton {bone \"a\" {Orientation 0 0 0 0 0 0 0 0 0}}}", "singular"},
		{"{Skeleton {bone \"a\" {Position NaN 0 0}}}", "finite"},
		{"{Skeleton {bone \"a\"", "never closed"},
		{"{Skeleton {bone \"a\" {LODView {VolumeView \"x.ply\"} {Box 1 2 3}}}}", "LODView"},
		{"{Skeleton {bone \"a\"}}\n{Volume \"v\" {Bone \"a\"}}", "has no {Box}"},
		{"{Skeleton {bone a b c}}", "3 words"},
		{"{Skeleton {bone \"a\" {VolumeView \"\"}}}", "names no file"},
		{"{Skeleton {bone \"a\" {LODView" + strings.Repeat("{OFF}", 17) + "}}}", "17 LODs"},
	} {
		_, err := parseModel("m.mdl", []byte(c.text))
		var fe *decode.FormatError
		if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a FormatError with %q", c.text, err, c.want)
		}
	}
}

func TestMdlSniff(t *testing.T) {
	for _, c := range []struct {
		name, head string
		want       bool
	}{
		{"a.mdl", ";Exported by: x", true},
		{"a.MDL", "\ufeff\r\n{Skeleton", true},
		{"a.mdl", "function data()", false},
		{"a.mdl", "local t = require", false},
		{"a.mdl", "-- comment\nfunc", false},
		{"a.mdl", "   ", false},
		{"a.txt", "{Skeleton", false},
	} {
		if got := (Mdl{}).Sniff(c.name, []byte(c.head)); got != c.want {
			t.Errorf("Sniff(%q, %q) = %v", c.name, c.head, got)
		}
	}
}
