package fs

import (
	"github.com/meshfs/meshfs/internal/walk"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A source folder's first listing sniffs the next two folders (in the
// order a walker meets them) in the background, so that their listings find
// every sniff done; each file is sniffed once in all, and nothing is
// scanned or converted.
func TestListAhead(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := fakeTree(t, 40) // d00..d03: ten meshes and notes.txt each
		f, mnt := mountT(t, src, Config{})
		root, err := os.Open(mnt)
		if err != nil {
			t.Fatal(err)
		}
		ents, err := root.ReadDir(-1) // the walker's order, unsorted
		root.Close()
		if err != nil || len(ents) != 4 {
			t.Fatalf("root: %v %v", ents, err)
		}
		if s := f.Stats(); s.Sniffs != 0 {
			t.Fatalf("listing the root sniffed %d files", s.Sniffs)
		}
		const perFolder = 11
		list := func(i int) {
			t.Helper()
			if _, err := os.ReadDir(filepath.Join(mnt, ents[i].Name())); err != nil {
				t.Fatal(err)
			}
		}
		list(0)
		if !waitFor(10*time.Second, func() bool { return f.Stats().SniffsAhead >= 2*perFolder }) {
			t.Fatalf("sniffs ahead: %d, want %d", f.Stats().SniffsAhead, 2*perFolder)
		}
		before := f.Stats().Sniffs
		if before != 3*perFolder {
			t.Fatalf("%d sniffs after listing one folder, want %d (its own and the next two's)", before, 3*perFolder)
		}
		// The next folder's listing finds its sniffs done, and starts the
		// pass over the last one.
		list(1)
		if !waitFor(10*time.Second, func() bool { return f.Stats().SniffsAhead >= 3*perFolder }) {
			t.Fatalf("sniffs ahead: %d, want %d", f.Stats().SniffsAhead, 3*perFolder)
		}
		list(2)
		list(3)
		list(0) // listed before: no second pass
		f.tree.StopAhead()
		s := f.Stats()
		if s.Sniffs != 4*perFolder || s.SniffsAhead != 3*perFolder {
			t.Fatalf("sniffs %d (%d ahead), want %d (%d ahead): each file once", s.Sniffs, s.SniffsAhead, 4*perFolder, 3*perFolder)
		}
		if totalScans(s) != 0 || conversions(s) != 0 {
			t.Fatalf("listing ahead scanned %d and converted %d", totalScans(s), conversions(s))
		}
		// What the listings show does not depend on who sniffed.
		for _, e := range ents {
			n := names(t, filepath.Join(mnt, e.Name()))
			if len(n) != perFolder {
				t.Fatalf("%s lists %v", e.Name(), n)
			}
		}
	})
}

// A pass sniffs at most walk.Config.ListMax files (an `ls` of one folder must not
// make the daemon read a huge sibling folder), and none when the parent
// was never listed (no walker goes through it).
func TestListAheadBounded(t *testing.T) {
	src := fakeTree(t, 40)
	f, mnt := mountT(t, src, Config{Ahead: walk.Config{ListMax: 5}})
	// Not listed: the root. A folder looked up by path and listed starts
	// no pass.
	if _, err := os.ReadDir(filepath.Join(mnt, "d01")); err != nil {
		t.Fatal(err)
	}
	root, err := os.Open(mnt)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := root.ReadDir(-1)
	root.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n := f.Stats().SniffsAhead; n != 0 {
		t.Fatalf("%d sniffs ahead before the parent was listed", n)
	}
	// A folder followed by one not sniffed yet.
	for i := 0; i+1 < len(ents); i++ {
		if ents[i].Name() != "d01" && ents[i+1].Name() != "d01" {
			if _, err := os.ReadDir(filepath.Join(mnt, ents[i].Name())); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	waitFor(10*time.Second, func() bool { return f.Stats().SniffsAhead > 0 })
	f.tree.StopAhead() // waits for the pass
	if n := f.Stats().SniffsAhead; n > 5 || n == 0 {
		t.Fatalf("%d sniffs ahead, want 1 to 5", n)
	}
}
