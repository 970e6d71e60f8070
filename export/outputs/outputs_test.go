package outputs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/export/gltf/validator"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

// repoRoot is the module root, found from this file's path.
func repoRoot(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// meshFiles lists every file under dir that a decoder claims.
func meshFiles(t testing.TB, dir string) []*outputs.Mesh {
	var out []*outputs.Mesh
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		m, err := outputs.Open(path)
		if err != nil {
			return err
		}
		if m != nil {
			out = append(out, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// corpora are the fixture tree (always) and the real files (when present).
func corpora(t testing.TB) []string {
	root := repoRoot(t)
	dirs := []string{filepath.Join(root, "testdata")}
	if real, ok := decodetest.RealData(t, ""); ok {
		dirs = append(dirs, real)
	}
	return dirs
}

// TestEveryFileConverts converts every fixture and real file as `meshfs
// convert` does and holds each result to the rules every format shares: a
// complete folder, no error.txt, a header.json in stable order, and a .glb
// with 0 errors in the Khronos validator.
func TestEveryFileConverts(t *testing.T) {
	out := t.TempDir()
	var glbs []string
	formats := map[string]int{}
	tr := vfstest.Tree(t, "/", nil)
	for _, dir := range corpora(t) {
		for _, m := range meshFiles(t, dir) {
			formats[m.Format.Name()]++
			rel, _ := filepath.Rel(filepath.Dir(dir), m.Path)
			dst := filepath.Join(out, rel)
			if err := vfstest.WriteFolder(t, tr, vfstest.Name(t, "/", m.Path), dst); err != nil {
				t.Errorf("%s: %v", rel, err)
				continue
			}
			checkFolder(t, m, dst)
			for n := range m.LODs() {
				glbs = append(glbs, filepath.Join(dst, m.LODGLBName(n)))
			}
			if m.HasColliders() {
				glbs = append(glbs, filepath.Join(dst, m.CollisionGLBName()))
			}
			if _, err := os.Stat(filepath.Join(dst, m.AnimatedGLBName())); err == nil {
				glbs = append(glbs, filepath.Join(dst, m.AnimatedGLBName()))
			}
		}
	}
	t.Logf("converted %d files: %v", len(glbs), formats)
	if formats["gem-ply"] == 0 {
		t.Fatal("no GEM file found: the fixture tree is missing")
	}
	if err := validator.Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("glTF validator: %v", err)
		}
		t.Skipf("glTF validator: %v (run make validator)", err)
	}
	reports, err := validator.ValidateFiles(glbs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reports {
		if r.Fatal != "" || r.Issues.NumErrors > 0 {
			t.Errorf("%s: %d validator errors: %v %v", glbs[i], r.Issues.NumErrors, r.Fatal, r.Issues.Messages)
		}
	}
}

func checkFolder(t *testing.T, m *outputs.Mesh, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	want := []string{m.GLBName(), m.MTLName(), m.OBJName(), outputs.ChunksDir, outputs.HeaderName}
	if _, anim := m.Format.(decode.AnimationOnly); anim {
		// An animation file: no geometry, no OBJ.
		want = []string{m.GLBName(), outputs.ChunksDir, outputs.HeaderName}
	}
	if m.IsModel() {
		// A model: every LOD's .glb, no OBJ.
		want = []string{outputs.ChunksDir, outputs.HeaderName}
		for n := range m.LODs() {
			want = append(want, m.LODGLBName(n))
		}
		if m.HasColliders() {
			want = append(want, m.CollisionGLBName())
		}
	}
	if m.HasPreview() {
		want = append(want, m.PreviewName())
		checkPreview(t, m, filepath.Join(dir, m.PreviewName()))
	}
	if m.IsModel() {
	} else if anims, err := m.Animations(context.Background()); err != nil {
		t.Errorf("%s: animations: %v", dir, err)
	} else if len(anims) > 0 {
		want = append(want, m.AnimatedGLBName())
	}
	sort.Strings(want)
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("%s holds %v, want %v", dir, names, want)
	}
	hdr, err := os.ReadFile(filepath.Join(dir, outputs.HeaderName))
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(hdr, &obj); err != nil {
		t.Errorf("%s: header.json is not JSON: %v", dir, err)
	}
	if !bytes.HasPrefix(hdr, []byte("{\n  \"file\": ")) || !bytes.HasSuffix(hdr, []byte("}\n")) {
		t.Errorf("%s: header.json is not 2-space indented with file first and a trailing newline", dir)
	}
	if !m.IsModel() {
		checkCounts(t, m, obj)
	}
	chunks, _ := os.ReadDir(filepath.Join(dir, outputs.ChunksDir))
	if len(chunks) == 0 {
		t.Errorf("%s: chunks/ is empty", dir)
	}
}

// TestBrokenFileWritesErrorText cuts every fixture short: convert must
// still write header.json and an error.txt that names the file and an
// offset, and report failure, never panic.
func TestBrokenFileWritesErrorText(t *testing.T) {
	src := t.TempDir()
	for _, m := range meshFiles(t, filepath.Join(repoRoot(t), "testdata")) {
		data, err := os.ReadFile(m.Path)
		if err != nil {
			t.Fatal(err)
		}
		// Keep the magic so the sniffer still claims it; drop the second half.
		cut := filepath.Join(src, filepath.Base(m.Path))
		if err := os.WriteFile(cut, data[:len(data)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		for _, sib := range siblings(m.Path) {
			b, _ := os.ReadFile(sib)
			os.WriteFile(filepath.Join(src, filepath.Base(sib)), b, 0o644)
		}
		bm, err := outputs.Open(cut)
		if err != nil || bm == nil {
			t.Errorf("%s: cut file no longer sniffed: %v", cut, err)
			continue
		}
		dst := filepath.Join(t.TempDir(), "out")
		if vfstest.Convert(t, bm.Path, &bm.Limits, dst) == nil {
			t.Errorf("%s: a file cut in half converted without error", m.Path)
			continue
		}
		msg, err := os.ReadFile(filepath.Join(dst, outputs.ErrorName))
		if err != nil {
			t.Errorf("%s: no error.txt: %v", m.Path, err)
			continue
		}
		if !strings.Contains(string(msg), cut) || !strings.Contains(string(msg), "offset") {
			t.Errorf("%s: error.txt does not name the file and offset: %s", m.Path, msg)
		}
		if _, err := os.Stat(filepath.Join(dst, outputs.HeaderName)); err != nil {
			t.Errorf("%s: no header.json beside error.txt", m.Path)
		}
		if _, err := os.Stat(filepath.Join(dst, bm.GLBName())); err == nil {
			t.Errorf("%s: a .glb was written for a broken file", m.Path)
		}
	}
}

// siblings are files that travel with a mesh (a .msh's .msh.blob) or that
// its outputs read (the .anim files beside a UNIGINE mesh).
func siblings(path string) []string {
	var out []string
	if _, err := os.Stat(path + ".blob"); err == nil {
		out = append(out, path+".blob")
	}
	// The animation files NAME.animated.glb may read.
	ents, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range ents {
		if p := filepath.Join(filepath.Dir(path), e.Name()); p != path && formats.IsAnimationFile(e.Name()) {
			out = append(out, p)
		}
	}
	return out
}

func TestStanfordPLYIsNotOurs(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bunny.ply")
	os.WriteFile(p, []byte("ply\nformat ascii 1.0\nelement vertex 0\nend_header\n"), 0o644)
	m, err := outputs.Open(p)
	if err != nil || m != nil {
		t.Fatalf("Stanford PLY sniffed as %v (err %v)", m, err)
	}
}

// checkCounts holds header.json's "counts" object, which every format
// writes with the same keys, to the decoded scene.
func checkCounts(t *testing.T, m *outputs.Mesh, hdr map[string]any) {
	t.Helper()
	counts, ok := hdr["counts"].(map[string]any)
	if !ok {
		t.Errorf("%s: header.json has no counts object", m.Path)
		return
	}
	for _, k := range []string{"submeshes", "triangles", "vertices", "bones", "morph_targets", "animations"} {
		if _, ok := counts[k].(float64); !ok {
			t.Errorf("%s: counts.%s missing", m.Path, k)
		}
	}
	scene, err := m.Decode(context.Background())
	if err != nil {
		t.Errorf("%s: %v", m.Path, err)
		return
	}
	c := scene.Count()
	// The header counts the source's triangles; repairs may drop some
	// (decode.Scene.Repair), and say how many uses of bad values they had.
	dropped := 0
	for _, r := range scene.Repairs {
		dropped += r.Triangles
	}
	if got := int(counts["triangles"].(float64)); got < c.Triangles || got > c.Triangles+dropped {
		t.Errorf("%s: header.json counts %d triangles, the scene has %d, repairs dropped %d", m.Path, got, c.Triangles, dropped)
	}
	if got := int(counts["animations"].(float64)); got != c.Animations {
		t.Errorf("%s: header.json counts %d animations, the scene has %d", m.Path, got, c.Animations)
	}
	if got := int(counts["morph_targets"].(float64)); got != c.MorphTargets {
		t.Errorf("%s: header.json counts %d morph targets, the scene has %d", m.Path, got, c.MorphTargets)
	}
	if bones := int(counts["bones"].(float64)); (bones > 0) != (c.Joints > 0) || bones > c.Joints {
		t.Errorf("%s: header.json counts %d bones, the scene's skeleton has %d joints", m.Path, bones, c.Joints)
	}
}

// checkPreview holds NAME.preview.png to its rule: a square PNG of
// Limits.PreviewSize pixels a side, with something drawn on a transparent
// background.
func checkPreview(t *testing.T, m *outputs.Mesh, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Error(err)
		return
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	if r := img.Bounds(); r.Dx() != m.Limits.PreviewSize || r.Dy() != m.Limits.PreviewSize {
		t.Errorf("%s is %v, want %d²", path, r, m.Limits.PreviewSize)
	}
	var drawn, clear int
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if _, _, _, a := img.At(x, y).RGBA(); a == 0 {
				clear++
			} else {
				drawn++
			}
		}
	}
	if clear == 0 {
		t.Errorf("%s has no transparent background", path)
	}
	if drawn == 0 && !strings.Contains(path, "empty") {
		t.Logf("%s: nothing drawn", path)
	}
}

// TestInFolder: the siblings function answers from the folder as it is.
func TestInFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.msh"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	in := outputs.InFolder(dir)
	if !in("a.msh") || in("b.msh.blob") {
		t.Fatal("siblings answer wrong")
	}
}
