package fs

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/meshgen"
)

// scanTree is sampleTree without the mesh whose decoding fails (failed
// conversions are not persisted: a remount converts it again to find
// error.txt), plus a few GEM meshes.
func scanTree(t *testing.T) string {
	src := sampleTree(t)
	os.Remove(filepath.Join(src, "models", "bad.fmesh"))
	for i := range 3 {
		b, err := meshgen.GEM(100+i, float32(i))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(src, "gem", fmt.Sprintf("g%d.ply", i)), b)
	}
	return src
}

// treeView is what ls -lR, reading every header.json and error.txt and
// listing every chunks/ show of a mount.
type treeView struct {
	attrs map[string]string // path → "dir", "size N" or the stat's error
	lists map[string]string // folder → its names, in listing order
	files map[string]string // header.json and error.txt → contents or error
}

// walkView walks root as ls -lR does (list, then lstat each entry), then
// reads every header.json and error.txt.
func walkView(t *testing.T, root string) treeView {
	t.Helper()
	v := treeView{attrs: map[string]string{}, lists: map[string]string{}, files: map[string]string{}}
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatalf("list %s: %v", dir, err)
		}
		rel, _ := filepath.Rel(root, dir)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		v.lists[rel] = strings.Join(names, " ")
		for _, n := range names {
			p := filepath.Join(dir, n)
			r, _ := filepath.Rel(root, p)
			fi, err := os.Lstat(p)
			switch {
			case err != nil:
				var errno syscall.Errno
				errors.As(err, &errno)
				v.attrs[r] = "error " + errno.Error()
			case fi.IsDir():
				v.attrs[r] = "dir"
				walk(p)
			default:
				v.attrs[r] = fmt.Sprintf("size %d", fi.Size())
			}
			if n == outputs.HeaderName || n == outputs.ErrorName {
				b, err := os.ReadFile(p)
				if err != nil {
					v.files[r] = "error " + err.Error()
				} else {
					v.files[r] = string(b)
				}
			}
		}
	}
	walk(root)
	return v
}

func sum(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

func sameView(t *testing.T, what string, got, want treeView) {
	t.Helper()
	for _, c := range []struct {
		name      string
		got, want map[string]string
	}{{"attributes", got.attrs, want.attrs}, {"listings", got.lists, want.lists}, {"contents", got.files, want.files}} {
		for _, k := range slices.Sorted(maps.Keys(c.want)) {
			if c.got[k] != c.want[k] {
				t.Errorf("%s: %s of %s: %q, want %q", what, c.name, k, c.got[k], c.want[k])
			}
		}
		for k := range c.got {
			if _, ok := c.want[k]; !ok {
				t.Errorf("%s: %s: %s is new", what, c.name, k)
			}
		}
	}
}

// A remount answers ls -lR, every header.json and chunks/ listing, and a
// broken mesh's error.txt, from the scans persisted by the first mount:
// no scan, no conversion, the same bytes and sizes.
func TestScanIndexRemount(t *testing.T) { bothModes(t, testScanIndexRemount) }

func testScanIndexRemount(t *testing.T) {
	src := scanTree(t)
	dir := t.TempDir()
	f, mnt, stop := mountDisk(t, src, dir, false)
	first := walkView(t, mnt)
	s := f.Stats()
	if sum(s.Scans) == 0 {
		t.Fatalf("the first mount scanned nothing: %+v", s.Scans)
	}
	// The tree exercises what the test claims: a loaded chunk's size, a
	// hostile chunk name, a broken mesh.
	for _, want := range []string{"models/tank.fmesh/chunks/POS.x2", "models/broken.fmesh/error.txt", "gem/g0.ply/header.json"} {
		if !strings.HasPrefix(first.attrs[want], "size ") {
			t.Fatalf("%s: %q in the first mount", want, first.attrs[want])
		}
	}
	if !strings.Contains(first.files["models/broken.fmesh/header.json"], "broken on purpose") {
		t.Fatalf("broken mesh's header.json: %q", first.files["models/broken.fmesh/header.json"])
	}
	stop()

	f, mnt, stop = mountDisk(t, src, dir, false)
	again := walkView(t, mnt)
	sameView(t, "remount", again, first)
	s = stats(t, mnt)
	if n := sum(s.Scans); n != 0 {
		t.Errorf("remount: %d scans (%v), want 0", n, s.Scans)
	}
	if n := conversions(s); n != 0 {
		t.Errorf("remount: %d conversions (%v), want 0", n, s.Conversions)
	}
	if n := sum(s.ChunkLoads); n != 0 {
		t.Errorf("remount: %d chunk loads (%v), want 0", n, s.ChunkLoads)
	}
	// tank, jeep, broken and the three GEM meshes.
	if n := s.DiskLoads["fake/scan"] + s.DiskLoads["gem-ply/scan"]; n != 6 {
		t.Errorf("remount: %d scans loaded from the disk cache (%v), want 6", n, s.DiskLoads)
	}

	// A loaded chunk's bytes come from a scan of the source then, and are
	// the first mount's.
	want := append(fakeMesh(20, 1)[8:], fakeMesh(20, 1)[8:]...)
	got, err := os.ReadFile(filepath.Join(mnt, "models", "tank.fmesh", "chunks", "POS.x2"))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("loaded chunk after remount: %d bytes, %v; want %d bytes", len(got), err, len(want))
	}
	got, err = os.ReadFile(filepath.Join(mnt, "models", "tank.fmesh", "chunks", "POS"))
	if err != nil || !bytes.Equal(got, want[:len(want)/2]) {
		t.Fatalf("raw chunk after remount: %d bytes, %v", len(got), err)
	}
	if s := f.Stats(); sum(s.Scans) != 1 {
		t.Errorf("reading a loaded chunk: %d scans (%v), want 1", sum(s.Scans), s.Scans)
	}
	stop()

	// A source modified between mounts is scanned again, alone.
	write(t, filepath.Join(src, "models", "jeep.fmesh"), fakeMesh(7, 9))
	_, mnt, _ = mountDisk(t, src, dir, false)
	third := walkView(t, mnt)
	s = stats(t, mnt)
	if s.Scans["fake/scan"] != 1 || sum(s.Scans) != 1 {
		t.Errorf("after one source changed: scans %v, want 1", s.Scans)
	}
	if h := third.files["models/jeep.fmesh/header.json"]; !strings.Contains(h, `"triangles": 7`) {
		t.Errorf("changed mesh's header.json: %q", h)
	}
	if got, want := third.attrs["models/jeep.fmesh/chunks/POS"], fmt.Sprintf("size %d", 7*36); got != want {
		t.Errorf("changed mesh's chunk: %s, want %s", got, want)
	}
	for k, v := range first.files {
		if !strings.HasPrefix(k, "models/jeep.fmesh/") && third.files[k] != v {
			t.Errorf("%s changed with another mesh's source", k)
		}
	}
}

// editMetaLines rewrites the index's "meta" lines with edit.
func editMetaLines(t *testing.T, dir string, edit func(fields []string) []string) []string {
	t.Helper()
	ip := filepath.Join(dir, "index")
	b, err := os.ReadFile(ip)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var names []string
	for i, ln := range lines {
		f := strings.Fields(ln)
		if len(f) > 0 && f[0] == "meta" {
			names = append(names, f[1])
			lines[i] = strings.Join(edit(f), " ")
		}
	}
	if err := os.WriteFile(ip, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return names
}

// Damaged scan records are never served: a damaged index line makes the
// mesh scan again; a damaged header.json file makes its read scan again;
// either way the mount shows what it showed before.
func TestScanIndexDamaged(t *testing.T) { bothModes(t, testScanIndexDamaged) }

func testScanIndexDamaged(t *testing.T) {
	src := scanTree(t)
	dir := t.TempDir()
	_, mnt, stop := mountDisk(t, src, dir, false)
	first := walkView(t, mnt)
	stop()

	// Every scan record's blob damaged (one byte flipped, CRC kept).
	n := len(editMetaLines(t, dir, func(f []string) []string {
		b := []byte(f[5])
		b[len(b)/2] ^= 1
		f[5] = string(b)
		return f
	}))
	if n != 6 {
		t.Fatalf("%d scan records in the index, want 6", n)
	}
	_, mnt, stop = mountDisk(t, src, dir, false)
	sameView(t, "damaged index lines", walkView(t, mnt), first)
	if s := stats(t, mnt); sum(s.Scans) != 6 || s.DiskLoads["fake/scan"]+s.DiskLoads["gem-ply/scan"] != 0 {
		t.Errorf("damaged index lines: scans %v, disk loads %v; want 6 scans", s.Scans, s.DiskLoads)
	}
	stop()

	// Every header.json damaged (inline in the index: one base64 digit
	// changed): listing and stat'ing still read nothing; each header read
	// finds the damage and scans.
	damaged := 0
	editMetaLines(t, dir, func(f []string) []string {
		if len(f) == 7 && len(f[6]) > 10 {
			b := []byte(f[6])
			b[len(b)/2] = map[bool]byte{true: 'B', false: 'A'}[b[len(b)/2] == 'A']
			f[6] = string(b)
			damaged++
		}
		return f
	})
	if damaged != 6 {
		t.Fatalf("%d inline headers damaged, want 6", damaged)
	}
	f, mnt, _ := mountDisk(t, src, dir, false)
	sameView(t, "damaged headers", walkView(t, mnt), first)
	s := f.Stats()
	if sum(s.Scans) != 6 || s.DiskCache.Damaged != 6 {
		t.Errorf("damaged headers: scans %v, damaged %d; want 6 and 6", s.Scans, s.DiskCache.Damaged)
	}
}
