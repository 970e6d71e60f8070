package fs

import (
	"fmt"
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
// scans nothing, and sources over scanAheadMax wait for their own listing.
func TestScanAhead(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := fakeTree(t, 20) // d00 and d01, ten meshes each
		big := filepath.Join(src, "d00", "zbig"+fakeExt)
		write(t, big, fakeMesh(200, 1))
		fi, err := os.Stat(big)
		if err != nil {
			t.Fatal(err)
		}
		old := scanAheadMax
		scanAheadMax = fi.Size() - 1
		t.Cleanup(func() { scanAheadMax = old })

		f, mnt := mountT(t, src, Config{})
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
		f.ahead.close() // wait for the pass to end
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
