package outputs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/gem"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

// TestFolderTable: a healthy folder holds the geometry and no error.txt; a
// broken one holds error.txt and no geometry; chunks/ only when the scan
// found chunks. The tree convert and the mount read shows exactly the
// table's files.
func TestFolderTable(t *testing.T) {
	m := openFixture(t, "gem/pm01_gem3.ply")
	names := func(s outputs.State) []string {
		var out []string
		for _, e := range m.Files(s) {
			out = append(out, e.Name)
		}
		return out
	}
	base := strings.TrimSuffix(m.GLBName(), ".glb")
	if got, want := names(outputs.State{Chunks: true}), []string{"header.json", "chunks", base + ".glb", base + ".obj", base + ".mtl", base + ".preview.png"}; !slices.Equal(got, want) {
		t.Errorf("healthy: %v, want %v", got, want)
	}
	if got, want := names(outputs.State{Broken: true}), []string{"header.json", "error.txt"}; !slices.Equal(got, want) {
		t.Errorf("broken: %v, want %v", got, want)
	}
	if got, want := names(outputs.State{Animated: true}), []string{"header.json", base + ".glb", base + ".obj", base + ".mtl", base + ".preview.png", base + ".animated.glb"}; !slices.Equal(got, want) {
		t.Errorf("animated: %v, want %v", got, want)
	}
	if got, want := names(outputs.State{Broken: true, Animated: true}), []string{"header.json", "error.txt"}; !slices.Equal(got, want) {
		t.Errorf("broken with animations: %v, want %v", got, want)
	}
	inos := map[uint64]bool{}
	for _, e := range m.Entries() {
		if inos[e.Ino] || e.Ino == 0 {
			t.Errorf("%s: inode number %d not unique", e.Name, e.Ino)
		}
		inos[e.Ino] = true
		if got, ok := m.Entry(e.Name); !ok || got != e {
			t.Errorf("Entry(%q) = %+v, %v", e.Name, got, ok)
		}
	}

	// Convert writes the table's files, no more.
	dir := t.TempDir()
	if err := vfstest.Convert(t, m.Path, &m.Limits, dir); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var written []string
	for _, e := range ents {
		written = append(written, e.Name())
	}
	want := names(outputs.State{Chunks: true})
	slices.Sort(want)
	if !slices.Equal(written, want) {
		t.Errorf("convert wrote %v, want %v", written, want)
	}
}

// TestHeaderWithError: adding a conversion error to header.json gives the
// bytes Header renders for that error, valid JSON ending in a newline.
func TestHeaderWithError(t *testing.T) {
	m := openFixture(t, "gem/pm01_gem3.ply")
	st, err := m.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hdr, _ := m.Header(st, nil)
	cause := errors.New(`decoding failed: "quoted" <tag> & more`)
	want, _ := m.Header(st, cause)
	got := outputs.HeaderWithError(hdr, cause)
	if !bytes.Equal(got, want) {
		t.Fatalf("HeaderWithError:\n%s\nwant\n%s", got, want)
	}
	var h map[string]any
	if err := json.Unmarshal(got, &h); err != nil || h["error"] != cause.Error() || !bytes.HasSuffix(got, []byte("}\n")) {
		t.Fatalf("%v %v", h["error"], err)
	}
	if !bytes.Equal(outputs.HeaderWithError(hdr, nil), hdr) {
		t.Fatal("no error changed the header")
	}
}

// TestEveryTextEndsWithNewline: every text file a folder holds (header.json,
// error.txt, .obj, .mtl) ends with a newline, for every fixture and a
// broken file.
func TestEveryTextEndsWithNewline(t *testing.T) {
	dirs := []string{filepath.Join(repoRoot(t), "testdata")}
	meshes := meshFiles(t, dirs[0])
	good := openFixture(t, "gem/pm01_gem3.ply")
	data, err := os.ReadFile(good.Path)
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "broken.ply")
	os.WriteFile(broken, data[:len(data)/2], 0o644)
	bm, err := outputs.Open(broken)
	if err != nil || bm == nil {
		t.Fatalf("broken: %v", err)
	}
	meshes = append(meshes, bm)
	texts, want := 0, 2 // the broken one: header, error.txt
	for _, m := range meshes[:len(meshes)-1] {
		if _, anim := m.Format.(decode.AnimationOnly); m.IsModel() || anim {
			want++ // header.json
		} else {
			want += 3 // header, obj, mtl
		}
	}
	for _, m := range meshes {
		tr, name := vfstest.Mesh(t, m.Path, &m.Limits)
		made, _ := vfstest.Folder(context.Background(), tr, name)
		for _, f := range made {
			switch b := f.Data; filepath.Ext(f.Name) {
			case ".json", ".txt", ".obj", ".mtl":
				texts++
				if !bytes.HasSuffix(b, []byte("\n")) {
					t.Errorf("%s: %s does not end with a newline: …%q", m.Path, f.Name, b[max(0, len(b)-20):])
				}
			}
		}
	}
	if texts != want {
		t.Fatalf("%d text files for %d meshes", texts, len(meshes))
	}
}

func TestChangedByFailure(t *testing.T) {
	m := outputs.New("/src/m.ply", gem.Format{})
	var got []string
	for _, e := range m.Entries() {
		if e.ChangedByFailure() {
			got = append(got, e.Name)
		}
	}
	want := []string{m.GLBName(), m.OBJName(), m.MTLName(), m.PreviewName(), m.AnimatedGLBName(), outputs.ErrorName}
	if !slices.Equal(got, want) {
		t.Fatalf("changed by a failure: %v, want %v", got, want)
	}
	if names := m.Names(); len(names) != len(m.Entries()) || names[0] != outputs.HeaderName || !slices.Contains(names, m.GLBName()) {
		t.Fatalf("names %v", names)
	}
}

func TestChunkEntries(t *testing.T) {
	es := outputs.ChunkEntries([]string{"VERT", "IND4"})
	if len(es) != 2 || es[0].Name != "VERT" || es[0].Ino != 1 || es[1].Ino != 2 || es[1].Dir || es[1].Converted() {
		t.Fatalf("chunk entries %+v", es)
	}
}

// TestAnimationFolderHasNoOBJ: an animation file's folder (UNIGINE .anim,
// GEM .anm, Transport Fever .ani) holds no NAME.obj or NAME.mtl, in the
// table the mount lists and in what convert writes; its .glb stays, and a
// mesh keeps its OBJ.
func TestAnimationFolderHasNoOBJ(t *testing.T) {
	for _, c := range []struct {
		fixture string
		obj     bool
	}{
		{"unigine/an10_wave.anim", false},
		{"gem/gun_fire.anm", false},
		{"tfever/walk.ani", false},
		{"unigine/ms15_cube.mesh", true},
	} {
		m := openFixture(t, c.fixture)
		if m.HasOBJ() != c.obj {
			t.Errorf("%s: HasOBJ = %v, want %v", c.fixture, m.HasOBJ(), c.obj)
		}
		listed := map[string]bool{}
		for _, e := range m.Files(outputs.State{Chunks: true}) {
			listed[e.Name] = true
		}
		dir := t.TempDir()
		if err := vfstest.Convert(t, m.Path, &m.Limits, dir); err != nil {
			t.Fatalf("%s: %v", c.fixture, err)
		}
		for _, name := range []string{m.GLBName(), m.OBJName(), m.MTLName()} {
			_, err := os.Stat(filepath.Join(dir, name))
			want := name == m.GLBName() || c.obj
			if listed[name] != want || (err == nil) != want {
				t.Errorf("%s: %s listed %v, written %v; want %v", c.fixture, name, listed[name], err == nil, want)
			}
		}
		if o, l, err := m.OBJFiles(context.Background()); err != nil || (o == nil) == c.obj || (l == nil) == c.obj {
			t.Errorf("%s: OBJFiles gave %d and %d bytes, %v", c.fixture, len(o), len(l), err)
		}
	}
}
