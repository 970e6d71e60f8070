package tfever

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

// treeSource is the file rel of an asset tree held in files (slash paths
// beneath res/): OpenSibling reads beside it, OpenAsset beneath res/.
func treeSource(rel string, files map[string][]byte) *decode.Source {
	b := files[rel]
	dir := path.Dir(rel)
	open := func(p string) (io.ReaderAt, int64, error) {
		fb, ok := files[p]
		if !ok {
			return nil, 0, fmt.Errorf("open %s: %w", p, os.ErrNotExist)
		}
		return bytes.NewReader(fb), int64(len(fb)), nil
	}
	return &decode.Source{Name: "res/" + rel, R: bytes.NewReader(b), Size: int64(len(b)),
		OpenSibling: func(name string) (io.ReaderAt, int64, error) { return open(path.Join(dir, name)) },
		OpenAsset: func(p string) (io.ReaderAt, int64, string, error) {
			r, n, err := open(p)
			return r, n, "res/" + p, err
		}}
}

// diskSource is the file at p beneath a real tree's res/ folder, with
// OpenAsset reading beneath that folder and OpenSibling beside the file.
func diskSource(t testing.TB, p string) *decode.Source {
	t.Helper()
	i := strings.LastIndex(filepath.ToSlash(p), "/res/")
	if i < 0 {
		t.Fatalf("%s is not beneath a res/ folder", p)
	}
	res := p[:i+len("/res/")]
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	openFile := func(q string) (io.ReaderAt, int64, error) {
		fb, err := os.ReadFile(q)
		if err != nil {
			return nil, 0, err
		}
		return bytes.NewReader(fb), int64(len(fb)), nil
	}
	return &decode.Source{Name: p, R: bytes.NewReader(b), Size: int64(len(b)),
		OpenSibling: func(name string) (io.ReaderAt, int64, error) { return openFile(filepath.Join(filepath.Dir(p), name)) },
		OpenAsset: func(rel string) (io.ReaderAt, int64, string, error) {
			q := filepath.Join(res, filepath.FromSlash(rel))
			r, n, err := openFile(q)
			return r, n, q, err
		}}
}

// realModels lists the Transport Fever .mdl files of ../shared/assets.
func realModels(t *testing.T) []string {
	root := decodetest.NeedShared(t, "assets")
	var files []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".mdl") && strings.Contains(p, "/res/models/model/") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) < 4 {
		t.Fatalf("%d Transport Fever models under %s, want the 4 of tf-inova, tf-flirt, tf-roadsign", len(files), root)
	}
	return files
}

func TestMdlSniff(t *testing.T) {
	for _, c := range []struct {
		name string
		head string
		want bool
	}{
		{"a.mdl", "local vec3 = req", true},
		{"a.mdl", "function data()\n", true},
		{"a.MDL", "\ufeff-- comment\nfun", true},
		{"a.mdl", "                ", true}, // undecidable from the head: Scan decides
		{"a.mdl", ";Exported by: bu", false},
		{"a.mdl", "  \n{Skeleton {bon", false},
		{"a.mdl", "\x00\x01binary", false},
		{"a.msh", "function data()\n", false},
	} {
		if got := (Mdl{}).Sniff(c.name, []byte(c.head)); got != c.want {
			t.Errorf("Sniff(%q, %q) = %v, want %v", c.name, c.head, got, c.want)
		}
	}
}

// TestMdlGEMFails: a GEM model whose head is white space passes Sniff, and
// Scan and DecodeModel then say what it is.
func TestMdlGEMFails(t *testing.T) {
	gem := []byte(strings.Repeat(" ", 20) + "{Skeleton {bone \"basis\" {Orientation 1 0 0 0 1 0 0 0 1}}}\n")
	src := treeSource("models/model/g.mdl", map[string][]byte{"models/model/g.mdl": gem})
	if !(Mdl{}).Sniff("g.mdl", gem[:16]) {
		t.Fatal("a white-space head is not sniffed")
	}
	st, err := Mdl{}.Scan(context.Background(), src)
	if err == nil || !strings.Contains(err.Error(), "GEM model") || st == nil {
		t.Fatalf("Scan: %v, %v", st, err)
	}
	if _, err := (Mdl{}).DecodeModel(context.Background(), src); err == nil || !strings.Contains(err.Error(), "GEM model") {
		t.Fatalf("DecodeModel: %v", err)
	}
	checkErr(t, err)
}

// TestRealModels scans and decodes every real model: header.json marshals,
// every LOD has nodes, every part names a .msh that the tree holds or that
// the tree's SOURCE.txt lists as not in the repository, and every file
// animation names an .ani in the tree.
func TestRealModels(t *testing.T) {
	for _, p := range realModels(t) {
		src := diskSource(t, p)
		if !(Mdl{}).Sniff(p, readHead(t, p)) {
			t.Errorf("%s: not sniffed", p)
		}
		st, err := Mdl{}.Scan(context.Background(), src)
		if err != nil {
			t.Errorf("scan: %v", err)
			continue
		}
		if _, err := decode.HeaderJSON(st.Header); err != nil {
			t.Errorf("%s: header.json: %v", p, err)
		}
		m, err := Mdl{}.DecodeModel(context.Background(), src)
		if err != nil {
			t.Errorf("decode: %v", err)
			continue
		}
		res := p[:strings.LastIndex(p, "/res/")+len("/res/")]
		for li, lod := range m.LODs {
			if len(lod.Nodes) == 0 || lod.Nodes[0].Parent != -1 {
				t.Errorf("%s: LOD %d: nodes %v", p, li, lod.Nodes)
			}
			for ni, n := range lod.Nodes {
				if ni > 0 && !(n.Parent >= 0 && n.Parent < ni) {
					t.Errorf("%s: LOD %d node %d: parent %d", p, li, ni, n.Parent)
				}
				for _, part := range n.Parts {
					if _, err := os.Stat(filepath.Join(res, part.Mesh.Rel)); err != nil {
						t.Errorf("%s: LOD %d node %s: %v", p, li, n.Name, err)
					}
					if len(part.Materials) == 0 {
						t.Errorf("%s: node %s has no materials", p, n.Name)
					}
				}
			}
			for _, a := range lod.Animations {
				if a.File != nil {
					if _, err := os.Stat(filepath.Join(res, a.File.Rel)); err != nil {
						t.Errorf("%s: animation %s: %v", p, a.Name, err)
					}
				}
			}
		}
		if m.Unit != "metre" || m.Scale != 1 || m.Header.Get("boundingInfo") == nil || m.Header.Get("metadata") == nil {
			t.Errorf("%s: unit %q scale %v header %v", p, m.Unit, m.Scale, m.Header)
		}
	}
}

func readHead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b[:min(16, len(b))]
}

func realModel(t *testing.T, suffix string) (*decode.Model, *decode.Structure) {
	t.Helper()
	for _, p := range realModels(t) {
		if strings.HasSuffix(p, suffix) {
			src := diskSource(t, p)
			st, err := Mdl{}.Scan(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Mdl{}.DecodeModel(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			return m, st
		}
	}
	t.Fatalf("no model %s", suffix)
	return nil, nil
}

type animCount struct{ keyframe, file int }

func countAnims(m *decode.Model) (animCount, map[string]bool) {
	var c animCount
	files := map[string]bool{}
	for _, lod := range m.LODs {
		for _, a := range lod.Animations {
			if a.File != nil {
				c.file++
				files[a.File.Rel] = true
			} else if len(a.Channels) > 0 {
				c.keyframe++
			}
		}
	}
	return c, files
}

// TestInova: 3 LODs with the file's ranges, 85 nodes, 48 KEYFRAME
// animations on the step and door nodes (24 in each of the first two
// LODs), each named set/node and targeting its node.
func TestInova(t *testing.T) {
	m, st := realModel(t, "ws_inovab_wc.mdl")
	if len(m.LODs) != 3 {
		t.Fatalf("%d LODs", len(m.LODs))
	}
	ranges := [][2]float64{{0, 120}, {120, 600}, {600, 2300}}
	nodes, parts := 0, 0
	for i, lod := range m.LODs {
		if lod.VisibleFrom != ranges[i][0] || lod.VisibleTo != ranges[i][1] {
			t.Errorf("LOD %d: %v–%v", i, lod.VisibleFrom, lod.VisibleTo)
		}
		nodes += len(lod.Nodes)
		for _, n := range lod.Nodes {
			parts += len(n.Parts)
		}
	}
	if c, _ := countAnims(m); c != (animCount{keyframe: 48}) {
		t.Errorf("animations %+v, want 48 KEYFRAME", c)
	}
	for i, want := range []int{24, 24, 0} {
		if got := len(m.LODs[i].Animations); got != want {
			t.Errorf("LOD %d: %d animations, want %d", i, got, want)
		}
	}
	for _, a := range m.LODs[0].Animations {
		n := m.LODs[0].Nodes[a.Node]
		if a.Name != a.Extras.Get("set").(string)+"/"+n.Name || !strings.Contains(n.Name, "tritt") && !strings.Contains(n.Name, "door") {
			t.Errorf("animation %s on node %s", a.Name, n.Name)
		}
		for _, c := range a.Channels {
			if c.Kind != decode.TargetJoint || c.Index != a.Node {
				t.Errorf("animation %s: channel %+v", a.Name, c)
			}
		}
	}
	// 3 roots, 2 bogie groups in each of the first two LODs, and 42 mesh
	// nodes (grep: 49 names and 42 meshes in the file's lods).
	if nodes != 49 || parts != 42 {
		t.Errorf("%d nodes, %d parts", nodes, parts)
	}
	if got := st.Header.Get("lodCount"); got != 3 {
		t.Errorf("lodCount %v", got)
	}
	req := st.Header.Get("requires").([]decode.Fields)
	if len(req) != 2 || req[0].Get("module") != "vec3" || req[0].Get("unresolved") == nil {
		t.Errorf("requires %v", req)
	}
}

// TestFlirt: one LOD; 6 door and step nodes carry 12 FILE_REF animations
// (an opening and a closing set each) naming the tree's 6 .ani files; the
// mirrored doors keep their mirror.
func TestFlirt(t *testing.T) {
	m, _ := realModel(t, "flirt200_bls_wf.mdl")
	c, files := countAnims(m)
	if c != (animCount{file: 12}) || len(files) != 6 {
		t.Errorf("animations %+v on %d files, want 12 FILE_REF on 6", c, len(files))
	}
	mirrored := 0
	for _, a := range m.LODs[0].Animations {
		n := m.LODs[0].Nodes[a.Node]
		if !strings.HasSuffix(a.Name, "/"+n.Name) || !strings.HasSuffix(a.File.Rel, ".ani") {
			t.Errorf("animation %s (%s) on node %s", a.Name, a.File.Rel, n.Name)
		}
	}
	for _, n := range m.LODs[0].Nodes {
		if det3(n.Matrix) < 0 {
			mirrored++
		}
	}
	// The doors and step on the +Y side are mirrored in Y, one gangway
	// in X.
	if mirrored != 4 {
		t.Errorf("%d mirrored nodes, want 4", mirrored)
	}
}

func det3(m decode.Mat4) float64 {
	return m[0]*(m[5]*m[10]-m[9]*m[6]) - m[4]*(m[1]*m[10]-m[9]*m[2]) + m[8]*(m[1]*m[6]-m[5]*m[2])
}

// TestRoadsign: the model's table comes from a required script of the
// tree; its box collider becomes a shape.
func TestRoadsign(t *testing.T) {
	m, st := realModel(t, "bh_100ydjn.mdl")
	req := st.Header.Get("requires").([]decode.Fields)
	if len(req) != 1 || req[0].Get("module") != "bh_uk_roadsigns/bh_models" || req[0].Get("opened") == nil {
		t.Errorf("requires %v", req)
	}
	if len(m.LODs) != 1 || len(m.LODs[0].Nodes) != 4 {
		t.Fatalf("LODs %+v", m.LODs)
	}
	if got := m.LODs[0].Nodes[2].Parts[0].Materials; !slices.Equal(got, []string{"bh_uk_roadsigns/larger_roadside/bh_rs_100ydjn.mtl"}) {
		t.Errorf("materials %v", got)
	}
	if len(m.Colliders) != 1 {
		t.Fatalf("colliders %+v", m.Colliders)
	}
	c := m.Colliders[0]
	// halfExtents (0.05, 0.355, 1.5008) in Z up, at the model's origin.
	want := [3]float64{2 * 0.049999818205833, 2 * 1.5007991790771, 2 * 0.35518911480904}
	if c.Kind != "box" || c.Size != want || c.Matrix != identity {
		t.Errorf("collider %+v", c)
	}
}

// bounds is an axis-aligned box.
type bounds struct{ min, max [3]float64 }

func emptyBounds() bounds {
	return bounds{[3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}, [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}}
}

func (b *bounds) add(v [3]float64) {
	for i := range v {
		b.min[i] = math.Min(b.min[i], v[i])
		b.max[i] = math.Max(b.max[i], v[i])
	}
}

func apply4(m decode.Mat4, v [3]float32) [3]float64 {
	x, y, z := float64(v[0]), float64(v[1]), float64(v[2])
	return [3]float64{m[0]*x + m[4]*y + m[8]*z + m[12], m[1]*x + m[5]*y + m[9]*z + m[13], m[2]*x + m[6]*y + m[10]*z + m[14]}
}

// worlds composes each node's matrix with its parents'.
func worlds(lod decode.ModelLOD) []decode.Mat4 {
	w := make([]decode.Mat4, len(lod.Nodes))
	for i, n := range lod.Nodes {
		if n.Parent < 0 {
			w[i] = n.Matrix
		} else {
			w[i] = w[n.Parent].Mul(n.Matrix)
		}
	}
	return w
}

// lodBounds places every part's decoded .msh at its node and returns the
// bounds of LOD lod's vertices, leaving out the parts on nodes skip
// names (or beneath them).
func lodBounds(t *testing.T, res string, lod decode.ModelLOD, skip func(name string) bool) bounds {
	b := emptyBounds()
	w := worlds(lod)
	skipped := make([]bool, len(lod.Nodes))
	for i, n := range lod.Nodes {
		skipped[i] = skip(n.Name) || n.Parent >= 0 && skipped[n.Parent]
		if skipped[i] {
			continue
		}
		for _, p := range n.Parts {
			src := diskSource(t, filepath.Join(res, filepath.FromSlash(p.Mesh.Rel)))
			s, err := Msh{}.Decode(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			for _, mesh := range s.Meshes {
				m := w[i]
				if !mesh.Transform.IsIdentity() {
					m = m.Mul(mesh.Transform.Matrix())
				}
				for _, pr := range mesh.Primitives {
					for _, v := range pr.Positions {
						b.add(apply4(m, v))
					}
				}
			}
		}
	}
	return b
}

// authoredBounds are the models whose boundingInfo is not their meshes'
// box but set by hand, with what the test leaves out for them. The
// flirt's box is the car's slot in the train (x from −7.85 to 8.15: the
// 16 m pitch from the far gangway to the joint) and 5 m high, while its
// Jacobs bogie sits beneath the joint (x 6.0 to 10.1), its invisible
// helper wheels beyond both ends (x −9.95 and 8.19, down to −0.52 m) and
// its roof tops out at 4.10 m. The car's own shell is checked against
// the box, the box's top is not.
var authoredBounds = map[string]struct {
	skip   func(node string) bool
	noTopY bool
}{
	"flirt200_bls_wf.mdl": {
		skip: func(n string) bool {
			return strings.HasPrefix(n, "GRP_flirt200_jboogie") || strings.HasPrefix(n, "MSH_flirt200_unsichtbarrad")
		},
		noTopY: true,
	},
}

// TestModelBounds is the acceptance check: LOD 0's parts, placed by the
// node matrices, span the model's boundingInfo (converted to Y up as the
// geometry is) within 2 % of its diagonal, in every real model (but what
// authoredBounds leaves out, and only where the whole LOD 0 does miss the
// box, so that the exception cannot outlive its reason).
func TestModelBounds(t *testing.T) {
	for _, p := range realModels(t) {
		name := filepath.Base(p)
		res := p[:strings.LastIndex(p, "/res/")+len("/res/")]
		m, err := Mdl{}.DecodeModel(context.Background(), diskSource(t, p))
		if err != nil {
			t.Fatal(err)
		}
		bi := m.Header.Get("boundingInfo").(decode.Fields)
		lo, hi := floats3(t, bi.Get("bbMin")), floats3(t, bi.Get("bbMax"))
		// (x, y, z) → (x, z, −y): Y-up min is (x₀, z₀, −y₁).
		want := bounds{[3]float64{lo[0], lo[2], -hi[1]}, [3]float64{hi[0], hi[2], -lo[1]}}
		diag := math.Sqrt(sq(hi[0]-lo[0]) + sq(hi[1]-lo[1]) + sq(hi[2]-lo[2]))
		off := func(got bounds, noTopY bool) float64 {
			worst := 0.0
			for i := 0; i < 3; i++ {
				worst = max(worst, math.Abs(got.min[i]-want.min[i]))
				if !(noTopY && i == 1) {
					worst = max(worst, math.Abs(got.max[i]-want.max[i]))
				}
			}
			return worst
		}
		all := off(lodBounds(t, res, m.LODs[0], func(string) bool { return false }), false)
		worst := all
		if ex, ok := authoredBounds[name]; ok {
			if all <= 0.02*diag {
				t.Errorf("%s: LOD 0 matches its boundingInfo (off by %.2g m): drop it from authoredBounds", name, all)
			}
			worst = off(lodBounds(t, res, m.LODs[0], ex.skip), ex.noTopY)
			t.Logf("%s: the whole LOD 0 is off by %.2g m (%.1f %%); the box is authored", name, all, 100*all/diag)
		}
		if worst > 0.02*diag {
			t.Errorf("%s: LOD 0 is off its boundingInfo %v by %.3g m, more than 2%% of %.3g m", name, want, worst, diag)
		}
		t.Logf("%s: off by %.2g m of a %.3g m diagonal (%.2f %%)", name, worst, diag, 100*worst/diag)
	}
}

func sq(x float64) float64 { return x * x }

func floats3(t *testing.T, v any) [3]float64 {
	s, ok := v.([]any)
	if !ok || len(s) != 3 {
		t.Fatalf("%v is not 3 numbers", v)
	}
	var out [3]float64
	for i, e := range s {
		out[i] = e.(float64)
	}
	return out
}

// hostileModel wraps expr as the value of a model's lods.
func hostileModel(lods string) []byte {
	return []byte("function data() return { lods = " + lods + " } end")
}

// TestMdlHostile: scripts that loop, build huge tables or trees, or
// require themselves end in an error within the sandbox's limits or the
// model's own.
func TestMdlHostile(t *testing.T) {
	node := `{ name = "n", mesh = "a.msh", materials = { "m.mtl" }, children = {} }`
	// String doubling stops at 256 MiB, four times the sandbox's byte
	// budget: without the byte limit the case fails instead of exhausting
	// the test's memory (luasandbox tests the endless form, isolated).
	for name, c := range map[string]struct {
		script []byte
		files  map[string][]byte
		want   error
	}{
		"infinite loop":     {script: []byte("function data() while true do end end"), want: decode.ErrLimit},
		"huge table":        {script: hostileModel(`(function() local t = {} for i = 1, 1e9 do t[i] = i end return t end)()`), want: decode.ErrLimit},
		"string doubling":   {script: hostileModel(`(function() local s = "x" for i = 1, 28 do s = s .. s end end)()`), want: decode.ErrLimit},
		"many nodes":        {script: hostileModel(`{ { node = { children = (function() local t = {} for i = 1, 20000 do t[i] = ` + node + ` end return t end)() } } }`), want: decode.ErrLimit},
		"many LOD parts":    {script: hostileModel(`(function() local n = ` + node + ` local t = {} for i = 1, 20000 do t[i] = { node = n } end return t end)()`), want: decode.ErrLimit},
		"deep tree":         {script: hostileModel(`(function() local n = {} for i = 1, 500 do n = { children = { n } } end return { { node = n } } end)()`), want: decode.ErrLimit},
		"keyframe flood":    {script: hostileModel(`(function() local k = {} for i = 1, 20000 do k[i] = { time = i, rot = {0,0,0}, transl = {0,0,0} } end return { { node = { animations = { a = { type = "KEYFRAME", params = { keyframes = k } } } } } } end)()`), want: decode.ErrLimit},
		"recursive module":  {script: []byte(`local m = require "self" function data() return m end`), files: map[string][]byte{"scripts/self.lua": []byte(`return require "self"`)}},
		"no lods":           {script: []byte(`function data() return { lods = {} } end`)},
		"bad transf":        {script: hostileModel(`{ { node = { transf = { 1, 2, 3 } } } }`)},
		"projective":        {script: hostileModel(`{ { node = { transf = { 1,0,0,1, 0,1,0,0, 0,0,1,0, 0,0,0,1 } } } }`)},
		"many meshes":       {script: hostileModel(`{ { node = { meshes = (function() local t = {} for i = 1, 20000 do t[i] = { mesh = "a.msh" } end return t end)() } } }`), want: decode.ErrLimit},
		"many materials":    {script: hostileModel(`{ { node = { mesh = "a.msh", materials = (function() local t = {} for i = 1, 5000 do t[i] = "m" .. i end return t end)() } } }`), want: decode.ErrLimit},
		"TF1 group cycle":   {script: hostileModel(`{ { children = { { id = "g.grp", type = "GROUP" } } } }`), files: map[string][]byte{"models/group/g.grp": []byte(`function data() return { children = { { id = "g.grp", type = "GROUP" } } } end`)}, want: decode.ErrLimit},
		"TF1 many children": {script: hostileModel(`{ { children = (function() local t = {} for i = 1, 20000 do t[i] = { id = "a.msh", type = "MESH" } end return t end)() } }`), want: decode.ErrLimit},
		"TF1 event child":   {script: hostileModel(`{ { children = { { id = "a.msh", type = "MESH" } }, events = { open = { [7] = { name = "open", forward = true } } } } }`)},
		"TF1 event by name": {script: hostileModel(`{ { children = { { id = "a.msh", type = "MESH" } }, events = { open = { door = { name = "open" } } } } }`)},
		"TF1 matConfig":     {script: hostileModel(`{ { children = { { id = "a.msh", type = "MESH" } }, matConfigs = { { -1 } } } }`)},
		"TF1 no id":         {script: hostileModel(`{ { children = { { type = "MESH" } } } }`)},
		"mesh not a name":   {script: hostileModel(`{ { node = { mesh = {} } } }`)},
		"missing module":    {script: []byte(`local transf = require "transf" function data() return { lods = { { node = { transf = transf.rotZ(1) } } } } end`)},
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string][]byte{"models/model/h.mdl": c.script}
			for k, v := range c.files {
				files[k] = v
			}
			src := treeSource("models/model/h.mdl", files)
			start := time.Now()
			_, err := Mdl{}.DecodeModel(context.Background(), src)
			if err == nil {
				t.Fatal("no error")
			}
			checkErr(t, err)
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("%v is not %v", err, c.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			st, serr := Mdl{}.Scan(context.Background(), src)
			if serr == nil || st == nil {
				t.Errorf("scan: %v, %v", st, serr)
			}
			if name == "missing module" && !strings.Contains(err.Error(), `require 'transf': the module was not found`) {
				t.Errorf("error does not name the module: %v", err)
			}
			t.Log(err)
		})
	}
}

// TestMdlNodeShapes: a skin is a skinned part; a meshes list puts an
// entry without transf on its node and one with a transf on a child node
// of its own, placed by it.
func TestMdlNodeShapes(t *testing.T) {
	script := []byte(`function data() return { lods = { { node = { name = "root",
		skin = "person/body.msh", skinMaterials = { "person/skin.mtl" },
		meshes = {
			{ mesh = "a/b.msh", materials = { "a.mtl", "b.mtl" } },
			{ mesh = "a/c.msh", transf = { 1,0,0,0, 0,1,0,0, 0,0,1,0, 1,2,3,1 }, _extra = 7 },
		},
		children = { { name = "kid", mesh = "a/d.msh" } },
	} } } } end`)
	m, err := Mdl{}.DecodeModel(context.Background(), treeSource("models/model/x.mdl", map[string][]byte{"models/model/x.mdl": script}))
	if err != nil {
		t.Fatal(err)
	}
	nodes := m.LODs[0].Nodes
	if len(nodes) != 3 || nodes[1].Name != "c" || nodes[1].Parent != 0 || nodes[2].Name != "kid" || nodes[2].Parent != 0 {
		t.Fatalf("nodes %+v", nodes)
	}
	root := nodes[0].Parts
	if len(root) != 2 || !root[0].Skinned || root[0].Mesh.Rel != "models/mesh/person/body.msh" || !slices.Equal(root[0].Materials, []string{"person/skin.mtl"}) ||
		root[1].Skinned || root[1].Mesh.Rel != "models/mesh/a/b.msh" || len(root[1].Materials) != 2 {
		t.Errorf("root parts %+v", root)
	}
	// TF (1, 2, 3) is Y-up (1, 3, −2).
	if c := nodes[1]; len(c.Parts) != 1 || c.Parts[0].Mesh.Rel != "models/mesh/a/c.msh" || c.Matrix[12] != 1 || c.Matrix[13] != 3 || c.Matrix[14] != -2 || c.Extras.Get("_extra") != 7.0 {
		t.Errorf("meshes child %+v", c)
	}
	if k := nodes[2]; len(k.Parts) != 1 || k.Parts[0].Materials != nil {
		t.Errorf("kid %+v", k)
	}
}

// TestMdlDuplicateNodeNames: two nodes of one name keep distinct animation
// names, in the Model and in header.json.
func TestMdlDuplicateNodeNames(t *testing.T) {
	script := []byte(`function data() return { lods = { { node = { name = "root", children = {
		{ name = "door", animations = { open = { type = "FILE_REF", params = { id = "a.ani" } } } },
		{ name = "door", animations = { open = { type = "FILE_REF", params = { id = "b.ani" } } } },
		{ name = "step", animations = { open = { type = "FILE_REF", params = { id = "c.ani" } } } },
	} } } } } end`)
	src := treeSource("models/model/x.mdl", map[string][]byte{"models/model/x.mdl": script})
	m, err := Mdl{}.DecodeModel(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Mdl{}.Scan(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"open/door#1", "open/door#2", "open/step"}
	hdr := st.Header.Get("animations").([]decode.Fields)
	for i, a := range m.LODs[0].Animations {
		if a.Name != want[i] || hdr[i].Get("name") != want[i] {
			t.Errorf("animation %d: %q, header %q, want %q", i, a.Name, hdr[i].Get("name"), want[i])
		}
	}
}
