package hostile

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/gem"
	"github.com/meshfs/meshfs/decode/tfever"
	"github.com/meshfs/meshfs/decode/unigine"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

// hostileNames are names a modded file may hold: path climbs, separators,
// NUL, invalid UTF-8, 4 KiB, and pairs that SafeName maps to one name
// ("a/b" and "a_b"; two long names alike in their first 96 bytes).
func hostileNames(maxLen int) []string {
	long := strings.Repeat("L", 4096)
	names := []string{
		"../../etc/passwd", "..", ".", "", "/", "a/b", "a_b", `a\b`, "a:b", "a\x00b", "\x00",
		"\xff\xfe", "\xc3", " ", "name\nnewmtl injected", "map_Kd /etc/passwd\r\n",
		long[:maxLen], long[:maxLen-1] + "2",
	}
	return names
}

// TestHostileNames writes, with each format's encoder, a file whose names
// (surfaces, attributes, index lists, materials, bones) are hostile, and
// converts it to disk: nothing may be written outside its folder, every
// chunk gets its own file (no two collide after sanitising), names are
// safe path elements, and the .obj and .mtl keep one statement per line.
func TestHostileNames(t *testing.T) {
	for _, c := range []struct {
		name   string
		format decode.Format
		files  map[string][]byte
	}{
		{"gem", gem.Format{}, gemNames(t)},
		{"unigine", unigine.Format{}, unigineNames(t)},
		{"tfever", tfever.Msh{}, tfeverNames(t)},
	} {
		t.Run(c.name, func(t *testing.T) {
			var main string
			for n := range c.files {
				if !strings.HasSuffix(n, ".blob") {
					main = n
				}
			}
			v := &variant{desc: c.name + " hostile names", format: c.format, main: main, files: c.files}
			if o := convert(v); o.failed() {
				t.Fatalf("in memory: %s", o)
			}

			root := t.TempDir()
			src := filepath.Join(root, "src")
			os.MkdirAll(src, 0o755)
			for n, b := range c.files {
				if err := os.WriteFile(filepath.Join(src, n), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			m, err := outputs.Open(filepath.Join(src, main))
			if err != nil || m == nil {
				t.Fatalf("not sniffed: %v", err)
			}
			st, err := m.Scan(context.Background())
			if err != nil {
				t.Fatalf("scan: %v", err)
			}
			out := filepath.Join(root, "out", filepath.Base(main))
			if err := vfstest.Convert(t, m.Path, &m.Limits, out); err != nil {
				t.Errorf("convert: %v", err)
			}
			checkTree(t, root, out, len(st.Chunks))
			checkLines(t, filepath.Join(out, m.OBJName()), "# ", "mtllib ", "o ", "g ", "usemtl ", "v ", "vt ", "vn ", "f ", "s ", "l ")
			checkLines(t, filepath.Join(out, m.MTLName()), "# ", "newmtl ", "Kd ", "d ", "map_Kd ")
			hdr, _ := os.ReadFile(filepath.Join(out, outputs.HeaderName))
			if !bytes.Contains(hdr, []byte(`etc/passwd`)) {
				t.Errorf("header.json does not show the names as the file holds them")
			}
		})
	}
}

// checkTree: everything under root is the source folder or inside out;
// chunks/ holds one safe, distinct file per chunk.
func checkTree(t *testing.T, root, out string, chunks int) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		if p == root || p == filepath.Join(root, "out") || strings.HasPrefix(p, filepath.Join(root, "src")) {
			return nil
		}
		if p != out && !strings.HasPrefix(p, out+string(filepath.Separator)) {
			t.Errorf("written outside the mesh's folder: %s", p)
		}
		return nil
	})
	entries, err := os.ReadDir(filepath.Join(out, outputs.ChunksDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != chunks {
		t.Errorf("chunks/ holds %d files for %d chunks: names collided", len(entries), chunks)
	}
	for _, e := range entries {
		n := e.Name()
		if !utf8.ValidString(n) || strings.ContainsAny(n, "\x00/\\") || len(n) > 96 || n == "." || n == ".." || n != decode.SafeName(n) {
			t.Errorf("chunk file name %q is not a safe path element", n)
		}
		if !e.Type().IsRegular() {
			t.Errorf("chunks/%s is not a regular file", n)
		}
	}
}

// checkLines: every line of the text file starts with one of the keywords
// (or is empty): a name cannot start a statement of its own.
func checkLines(t *testing.T, path string, keywords ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Error(err)
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		ok := line == ""
		for _, k := range keywords {
			ok = ok || strings.HasPrefix(line, k)
		}
		if !ok || strings.ContainsRune(line, '\r') {
			t.Errorf("%s line %d is no statement of its own: %.80q", filepath.Base(path), n, line)
		}
	}
}

func fixture(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gemNames: the skinned fixture with every bone and material renamed (GEM
// strings hold at most 255 bytes).
func gemNames(t *testing.T) map[string][]byte {
	f, err := gem.Parse(context.Background(), "x.ply", fixture(t, "gem/eply_skinned_0x800.ply"))
	if err != nil {
		t.Fatal(err)
	}
	names := hostileNames(255)
	k := 0
	next := func() string { k++; return names[k%len(names)] }
	renamed := 0
	for _, c := range f.Chunks {
		switch c := c.(type) {
		case *gem.Skin:
			for i := range c.Bones {
				c.Bones[i] = next()
				renamed++
			}
		case *gem.Submesh:
			c.Material = "../../etc/passwd"
			renamed++
		}
	}
	if renamed < 2 {
		t.Fatalf("the fixture has %d names to replace", renamed)
	}
	b, err := gem.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"hostile.ply": b}
}

// unigineNames: a multi-surface fixture with a surface per hostile name,
// and the names on its joints when it has any.
func unigineNames(t *testing.T) map[string][]byte {
	b := fixture(t, "unigine/ms15_multi.mesh")
	f, err := unigine.Read(context.Background(), &decode.Source{Name: "x.mesh", R: bytes.NewReader(b), Size: int64(len(b))})
	if err != nil {
		t.Fatal(err)
	}
	names := hostileNames(4096)
	for n := len(f.Surfaces); len(f.Surfaces) < len(names); {
		f.Surfaces = append(f.Surfaces, f.Surfaces[len(f.Surfaces)%n])
	}
	for i := range f.Surfaces {
		f.Surfaces[i].Name = names[i%len(names)]
	}
	out, err := unigine.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"hostile.mesh": out}
}

// tfeverNames: a triangle whose extra attributes, index lists and material
// carry the hostile names.
func tfeverNames(t *testing.T) map[string][]byte {
	m := &tfever.EncMesh{
		Attrs: []tfever.EncAttr{{Name: "position", NumComp: 3, Data: []float32{0, 0, 0, 1, 0, 0, 0, 1, 0}}},
		SubMeshes: []tfever.EncSubMesh{{
			Indices:   map[string][]uint32{"position": {0, 1, 2}},
			Materials: []string{"../../etc/passwd"},
		}},
		MatConfigs: [][]int{{0}},
	}
	for _, n := range hostileNames(4096) {
		if n == "" || n == "position" {
			continue
		}
		m.Attrs = append(m.Attrs, tfever.EncAttr{Name: n, NumComp: 1, Data: []float32{1, 2, 3}})
		m.SubMeshes[0].Indices[n] = []uint32{0, 1, 2}
	}
	script, blob, err := tfever.EncodeMsh(m)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"hostile.msh": script, "hostile.msh.blob": blob}
}
