package fs

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/gltf/validator"
	"github.com/meshfs/meshfs/internal/meshgen"
)

// writeTree writes files (by slash path) under dir.
func writeTree(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOverlayMount: with Config.Overlay, a resource/ folder holding a
// loose file and a.pak and b.pak (ZIPs by Go's writer) shows the merged
// tree: every loose name and both archives' trees, the archives as their
// own folders too; a name in several is the loose file's, else b.pak's,
// else a.pak's (by content, with the exact size); a mesh from a.pak is a
// folder whose .glb is byte for byte the same mesh's loose, and valid; a
// rewritten b.pak shows in the merged folders within seconds. Without
// Overlay, resource/ shows only its own entries. In both open
// modes.
func TestOverlayMount(t *testing.T) { bothModes(t, testOverlayMount) }

func testOverlayMount(t *testing.T) {
	gem, err := meshgen.GEM(200, 3)
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	res := filepath.Join(src, "resource")
	writeTree(t, res, map[string][]byte{"x.txt": []byte("loose"), "sub/l.txt": []byte("loose")})
	writeTree(t, filepath.Join(src, "loose"), map[string][]byte{"a.ply": gem})
	a, b := t.TempDir(), t.TempDir()
	writeTree(t, a, map[string][]byte{"x.txt": []byte("from a"), "y.txt": []byte("from a"), "z.txt": []byte("from a"),
		"sub/l.txt": []byte("from a"), "sub/p.txt": []byte("from a"), "entity/m/a.ply": gem})
	writeTree(t, b, map[string][]byte{"x.txt": []byte("from b"), "y.txt": []byte("from b, longer"), "sub/p.txt": []byte("from b")})
	decodetest.ZipTree(t, a, filepath.Join(res, "a.pak"), 0)
	decodetest.ZipTree(t, b, filepath.Join(res, "b.pak"), 0)

	_, mnt := mountT(t, src, Config{Overlay: true})
	top := filepath.Join(mnt, "resource")
	ents, err := os.ReadDir(top)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	if want := []string{"a.pak", "b.pak", "entity", "sub", "x.txt", "y.txt", "z.txt"}; !slices.Equal(names, want) {
		t.Errorf("the merged resource/ lists %q, want %q", names, want)
	}
	for name, want := range map[string]string{"x.txt": "loose", "y.txt": "from b, longer", "z.txt": "from a",
		"sub/l.txt": "loose", "sub/p.txt": "from b", "b.pak/y.txt": "from b, longer", "a.pak/y.txt": "from a"} {
		p := filepath.Join(top, filepath.FromSlash(name))
		got, err := os.ReadFile(p)
		fi, serr := os.Stat(p)
		if err != nil || serr != nil || string(got) != want || fi.Size() != int64(len(want)) {
			t.Errorf("resource/%s: %q (%v), stat %v, want %q", name, got, err, serr, want)
		}
	}
	glb, err := os.ReadFile(filepath.Join(top, "entity", "m", "a.ply", "a.glb"))
	if err != nil {
		t.Fatal(err)
	}
	loose, err := os.ReadFile(filepath.Join(mnt, "loose", "a.ply", "a.glb"))
	if err != nil || !bytes.Equal(glb, loose) {
		t.Errorf("the packed mesh's a.glb (%d bytes) differs from the loose one's (%d, %v)", len(glb), len(loose), err)
	}
	validator.Check(t, glb)

	// A rewritten archive shows in the merged folders within the
	// unwatched timeouts (a second), listing and contents.
	writeTree(t, b, map[string][]byte{"y.txt": []byte("from b, rewritten"), "sub/n.txt": []byte("new")})
	decodetest.ZipTree(t, b, filepath.Join(res, "b.pak"), 0)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, _ := os.ReadFile(filepath.Join(top, "y.txt"))
		ents, _ := os.ReadDir(filepath.Join(top, "sub"))
		if string(got) == "from b, rewritten" && len(ents) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after b.pak was rewritten: y.txt %q, sub/ lists %d entries", got, len(ents))
		}
		time.Sleep(100 * time.Millisecond)
	}

	_, plain := mountT(t, src, Config{})
	if _, err := os.Stat(filepath.Join(plain, "resource", "y.txt")); err == nil {
		t.Error("resource/ without Overlay shows a packed name")
	}
	if got, err := os.ReadFile(filepath.Join(plain, "resource", "b.pak", "y.txt")); err != nil || string(got) != "from b, rewritten" {
		t.Errorf("b.pak's folder without Overlay: %q, %v", got, err)
	}
}

// TestNestedMount: a ZIP of gem-pilot (../shared/assets) inside a ZIP is
// a plain file of its exact bytes without nesting, and with it
// (source.Packed.SetNested, --nested) a folder showing the same files
// and folders, byte for byte (models assembled, header.json, every
// output), as a mount of the loose tree. In both open modes.
func TestNestedMount(t *testing.T) { bothModes(t, testNestedMount) }

func testNestedMount(t *testing.T) {
	assets := decodetest.NeedShared(t, "assets")
	loose := filepath.Join(assets, "gem-pilot")
	tmp, src := t.TempDir(), t.TempDir()
	os.Mkdir(filepath.Join(tmp, "mods"), 0o755)
	decodetest.ZipTree(t, loose, filepath.Join(tmp, "mods", "pilot.zip"), 0)
	decodetest.ZipTree(t, tmp, filepath.Join(src, "outer.zip"), 0)
	inner, err := os.ReadFile(filepath.Join(tmp, "mods", "pilot.zip"))
	if err != nil {
		t.Fatal(err)
	}

	_, mnt := mountT(t, src, Config{})
	nested := filepath.Join(mnt, "outer.zip", "mods", "pilot.zip")
	if fi, err := os.Stat(nested); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("without nesting, the inner zip is %v (%v)", fi, err)
	}
	if got, err := os.ReadFile(nested); err != nil || !bytes.Equal(got, inner) {
		t.Errorf("without nesting, the inner zip reads %d bytes (%v), want %d", len(got), err, len(inner))
	}

	_, mnt = mountT(t, src, nestedConfig())
	_, lmnt := mountT(t, assets, Config{})
	want := mountedFiles(t, filepath.Join(lmnt, "gem-pilot"), "")
	got := mountedFiles(t, filepath.Join(mnt, "outer.zip", "mods", "pilot.zip"), "")
	glbs := 0
	for p, b := range want {
		if g, ok := got[p]; !ok || g != b {
			t.Errorf("%s: %d bytes loose, %d (present %v) in the nested zip", p, len(b), len(g), ok)
		}
		if strings.HasSuffix(p, ".glb") {
			glbs++
		}
	}
	if len(got) != len(want) || glbs == 0 {
		t.Errorf("the nested zip shows %d files and folders, the loose tree %d (%d .glb)", len(got), len(want), glbs)
	}
}

// TestOverlayPermissions: mounted with allow_other and Overlay, a merged
// folder fed by a 0600 archive is listed by no one who may not read that
// archive: nobody gets Permission denied for resource/ and for a folder
// the archive shares with the loose tree (whose names it would show),
// and still lists and reads a resource/ whose archives all may read.
func TestOverlayPermissions(t *testing.T) {
	src := reachableDir(t)
	closed, open := filepath.Join(src, "closed", "resource"), filepath.Join(src, "open", "resource")
	writeTree(t, closed, map[string][]byte{"x.txt": []byte("loose"), "sub/l.txt": []byte("loose")})
	writeTree(t, open, map[string][]byte{"x.txt": []byte("loose")})
	pk := t.TempDir()
	writeTree(t, pk, map[string][]byte{"secret-name.txt": []byte("packed"), "sub/secret-too.txt": []byte("packed")})
	decodetest.ZipTree(t, pk, filepath.Join(closed, "b.pak"), 0)
	decodetest.ZipTree(t, pk, filepath.Join(open, "b.pak"), 0)
	if err := os.Chmod(filepath.Join(closed, "b.pak"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(closed), closed, filepath.Join(closed, "sub"), filepath.Dir(open), open} {
		os.Chmod(d, 0o755)
	}
	_, mnt := mountOther(t, src, Config{Overlay: true}, fuse.MountOptions{})
	wantNobodyDenied(t, filepath.Join(mnt, "closed", "resource"))
	wantNobodyDenied(t, filepath.Join(mnt, "closed", "resource", "sub"))
	if out, err := asNobody(t, "ls", filepath.Join(mnt, "open", "resource"), filepath.Join(mnt, "open", "resource", "sub")); err != nil ||
		!strings.Contains(out, "secret-name.txt") || !strings.Contains(out, "secret-too.txt") {
		t.Errorf("nobody: ls of the readable merged folders: %v\n%s", err, out)
	}
	wantNobodyReads(t, filepath.Join(mnt, "open", "resource", "secret-name.txt"), []byte("packed"))
	// Root, who may read the archive, still lists the merged folder.
	if ents, err := os.ReadDir(filepath.Join(mnt, "closed", "resource", "sub")); err != nil || len(ents) != 2 {
		t.Errorf("root: the merged sub/: %v, %d entries", err, len(ents))
	}
}
