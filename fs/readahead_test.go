package fs

import (
	"fmt"
	"github.com/meshfs/meshfs/internal/walk"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshfs/meshfs/export/outputs"
)

func totalScans(s Stats) int64 {
	var n int64
	for _, v := range s.Scans {
		n += v
	}
	return n
}

// Listing one cold mesh folder scans the folder's other meshes in the
// background (never converting), so a walker entering them next finds
// their scans done; a folder only listed (ls, no mesh folder entered)
// scans nothing, and sources over walk.Config.ScanMax wait for their own listing.
func TestScanAhead(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := fakeTree(t, 20) // d00 and d01, ten meshes each
		big := filepath.Join(src, "d00", "zbig"+fakeExt)
		write(t, big, fakeMesh(200, 1))
		fi, err := os.Stat(big)
		if err != nil {
			t.Fatal(err)
		}
		f, mnt := mountT(t, src, Config{Ahead: walk.Config{ScanMax: fi.Size() - 1}})
		// Listing the source folders (with their entries' attributes)
		// scans nothing.
		for _, d := range []string{"d00", "d01"} {
			if _, err := os.ReadDir(filepath.Join(mnt, d)); err != nil {
				t.Fatal(err)
			}
			for _, n := range names(t, filepath.Join(mnt, d)) {
				if _, err := os.Lstat(filepath.Join(mnt, d, n)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if s := f.Stats(); totalScans(s) != 0 || s.ScansAhead != 0 {
			t.Fatalf("listing source folders scanned %d (%d ahead)", totalScans(s), s.ScansAhead)
		}

		// Entering one mesh folder of d00 scans the nine others of d00
		// ahead (not the big one, not d01's).
		if _, err := os.ReadDir(filepath.Join(mnt, "d00", "m003"+fakeExt)); err != nil {
			t.Fatal(err)
		}
		if !waitFor(10*time.Second, func() bool { return f.Stats().ScansAhead >= 9 }) {
			t.Fatalf("scans ahead: %d, want 9", f.Stats().ScansAhead)
		}
		f.tree.StopAhead() // wait for the pass to end
		s := f.Stats()
		if s.ScansAhead != 9 || totalScans(s) != 10 {
			t.Fatalf("scans %d (%d ahead), want 10 (9 ahead): %v", totalScans(s), s.ScansAhead, s.Scans)
		}
		if c := conversions(s); c != 0 {
			t.Fatalf("scanning ahead converted %d outputs", c)
		}

		// The walker now finds every small mesh's scan done, and the big
		// one is scanned when entered; header.json is what it would be.
		for i := range 10 {
			name := fmt.Sprintf("m%03d%s", i, fakeExt)
			b, err := os.ReadFile(filepath.Join(mnt, "d00", name, outputs.HeaderName))
			if err != nil {
				t.Fatal(err)
			}
			m := outputs.New(filepath.Join(src, "d00", name), fakeFormat{})
			want, err := m.Header(m.Scan(t.Context()))
			if err != nil || string(b) != string(want) {
				t.Fatalf("%s: header.json %q, want %q (%v)", name, b, want, err)
			}
		}
		if n := totalScans(f.Stats()); n != 10 {
			t.Fatalf("walking the scanned meshes scanned again: %d scans", n)
		}
		if _, err := os.ReadDir(filepath.Join(mnt, "d00", "zbig"+fakeExt)); err != nil {
			t.Fatal(err)
		}
		if s := f.Stats(); totalScans(s) != 11 || s.ScansAhead != 9 {
			t.Fatalf("big mesh: %d scans, %d ahead", totalScans(s), s.ScansAhead)
		}
	})
}

// A pass covers walk.Config.ScanWindow meshes after the one entered; a walker
// that gets past them starts the next pass when it misses.
func TestScanAheadWindow(t *testing.T) {
	src := fakeTree(t, 10) // d00: ten meshes
	f, mnt := mountT(t, src, Config{Ahead: walk.Config{ScanWindow: 3}})
	enter := func(name string) {
		t.Helper()
		if _, err := os.ReadDir(filepath.Join(mnt, "d00", name)); err != nil {
			t.Fatal(err)
		}
	}
	// The pass flag clears when a pass ends: wait for that, not a time.
	idle := func() bool {
		d := f.root.GetChild("d00")
		return d != nil && !d.Operations().(*dirNode).dir.ScanningAhead.Load()
	}
	enter("m000" + fakeExt)
	if !waitFor(10*time.Second, func() bool { return f.Stats().ScansAhead >= 3 && idle() }) {
		t.Fatalf("scans ahead: %d, want 3", f.Stats().ScansAhead)
	}
	if s := f.Stats(); s.ScansAhead != 3 || totalScans(s) != 4 {
		t.Fatalf("one pass: %d scans, %d ahead; want 4, 3", totalScans(s), s.ScansAhead)
	}
	// Enter every mesh: each miss (no pass running) starts a pass of at
	// most three more, and every mesh is scanned exactly once in all.
	for i := range 10 {
		enter(fmt.Sprintf("m%03d%s", i, fakeExt))
		waitFor(10*time.Second, idle)
	}
	if s := f.Stats(); totalScans(s) != 10 || s.ScansAhead < 3 || s.ScansAhead > 9 {
		t.Fatalf("walk: %d scans (%d ahead), want 10", totalScans(s), s.ScansAhead)
	}
	if c := conversions(f.Stats()); c != 0 {
		t.Fatalf("scanning ahead converted %d outputs", c)
	}
}

// A folder big enough to be sized up by several goroutines lists what one
// would: meshes as folders, plain files, links and subfolders with their
// kinds, companions left out, in the source's order; each file is sniffed
// once, and a second listing sniffs nothing.
func TestListingManyEntries(t *testing.T) {
	src := t.TempDir()
	want := map[string]os.FileMode{}
	for i := range 70 {
		name := fmt.Sprintf("m%03d%s", i, fakeExt)
		write(t, filepath.Join(src, name), fakeMesh(3+i%4, float32(i)))
		want[name] = os.ModeDir
		if i%10 == 0 {
			write(t, filepath.Join(src, name+".side"), []byte("companion")) // hidden
			write(t, filepath.Join(src, fmt.Sprintf("n%03d.txt", i)), []byte("plain"))
			want[fmt.Sprintf("n%03d.txt", i)] = 0
			// Named like a mesh, not one: a plain file.
			write(t, filepath.Join(src, fmt.Sprintf("x%03d%s", i, fakeExt)), []byte("nope"))
			want[fmt.Sprintf("x%03d%s", i, fakeExt)] = 0
		}
	}
	if err := os.Mkdir(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	want["sub"] = os.ModeDir
	if err := os.Symlink("m001"+fakeExt, filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	want["link"] = os.ModeSymlink
	f, mnt := mountT(t, src, Config{})
	for pass := range 2 {
		ents, err := os.ReadDir(mnt)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]os.FileMode{}
		for _, e := range ents {
			got[e.Name()] = e.Type()
		}
		if len(got) != len(want) {
			t.Fatalf("pass %d: %d entries, want %d: %v", pass, len(got), len(want), got)
		}
		for n, m := range want {
			if g, ok := got[n]; !ok || g != m {
				t.Errorf("pass %d: %s: %v (listed %v), want %v", pass, n, g, ok, m)
			}
		}
		// 70 meshes, 7 plain .txt, 7 fake-named plain files.
		if s := f.Stats(); s.Sniffs != 84 {
			t.Errorf("pass %d: %d sniffs, want 84 (each file once)", pass, s.Sniffs)
		}
	}
}

// READDIRPLUS of a mesh folder answers the geometry outputs converted in
// memory (no disk cache) with their exact sizes, and leaves those not
// converted to a LOOKUP (which converts them, as a stat must).
func TestReadDirPlusConvertedInMemory(t *testing.T) {
	src := fakeTree(t, 2)
	f, mnt := mountT(t, src, Config{})
	name := "m000" + fakeExt
	m := outputs.New(filepath.Join(src, "d00", name), fakeFormat{})
	glb, err := m.GLBFile(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(mnt, "d00", name)
	if b, err := os.ReadFile(filepath.Join(dir, m.GLBName())); err != nil || len(b) != len(glb) {
		t.Fatalf(".glb: %d bytes %v, want %d", len(b), err, len(glb))
	}
	// Make the kernel forget the folder's listing and entries.
	md := f.root.GetChild("d00").GetChild(name)
	if md == nil {
		t.Fatal("no mesh folder node")
	}
	md.NotifyContent(0, 0)
	for _, n := range []string{m.GLBName(), m.OBJName(), m.MTLName(), outputs.HeaderName} {
		md.NotifyEntry(n)
	}
	before := f.raw.requests()
	before2 := conversions(f.Stats())
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == m.GLBName() {
			fi, err := e.Info()
			if err != nil || fi.Size() != int64(len(glb)) {
				t.Fatalf(".glb listed with size %v %v, want %d", fi, err, len(glb))
			}
		}
	}
	_, d := requestsSince(f, before)
	if d["READDIRPLUS"] == 0 {
		t.Fatalf("no READDIRPLUS: %v", d)
	}
	if d["LOOKUP"] != 0 {
		t.Errorf("stat of a converted .glb after READDIRPLUS: %v", d)
	}
	if c := conversions(f.Stats()) - before2; c != 0 {
		t.Errorf("listing converted %d outputs", c)
	}
	// The .obj was not converted: its stat is a LOOKUP, which converts it.
	if _, err := os.Stat(filepath.Join(dir, m.OBJName())); err != nil {
		t.Fatal(err)
	}
	if _, d := requestsSince(f, before); d["LOOKUP"] != 1 {
		t.Errorf("stat of the unconverted .obj: %v, want one LOOKUP", d)
	}
}
