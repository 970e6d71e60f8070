package fs

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/meshfs/meshfs/internal/fusetest"
)

// bigFolder is how many entries TestRelistBigFolder's folder holds: more
// than the sniff cache keeps (FS.sniffs).
const bigFolder = 100_000

// TestRelistBigFolder lists a folder of 100 000 files, changes one, and
// lists it again (the watcher drops the kernel's listing): the second
// listing sniffs only the changed file, not every entry again.
func TestRelistBigFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 100 000 files")
	}
	src := t.TempDir()
	big := filepath.Join(src, "big")
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	mesh := fakeMesh(1, 0)
	for i := range bigFolder {
		name := fmt.Sprintf("f%06d.txt", i)
		b := []byte("plain")
		if i%10 == 0 {
			name, b = fmt.Sprintf("m%06d.fmesh", i), mesh
		}
		if err := os.WriteFile(filepath.Join(big, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, mnt := mountT(t, src, Config{})
	fusetest.GuardMount(t, mnt, 5*time.Minute)
	dir := filepath.Join(mnt, "big")
	list := func() ([]os.DirEntry, time.Duration) {
		t.Helper()
		start := time.Now()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		return ents, time.Since(start)
	}
	ents, took := list()
	if len(ents) != bigFolder {
		t.Fatalf("%d entries listed, want %d", len(ents), bigFolder)
	}
	before := f.sniffer.Count()
	t.Logf("first listing: %v, %d sniffs, %s", took, before, memNow(t))

	// One file changes (here: one appears); the watcher drops the listing.
	write(t, filepath.Join(big, "new.txt"), []byte("new"))
	var again []os.DirEntry
	if !waitFor(time.Minute, func() bool { again, took = list(); return len(again) == bigFolder+1 }) {
		t.Fatalf("%d entries after a file appeared, want %d", len(again), bigFolder+1)
	}
	sniffs := f.sniffer.Count() - before
	t.Logf("listing after a change: %v, %d sniffs, %s", took, sniffs, memNow(t))
	if sniffs > 1 {
		t.Errorf("relisting after one file appeared sniffed %d files, want 1", sniffs)
	}
	dirs := 0
	for _, e := range again {
		if e.IsDir() {
			dirs++
		}
	}
	if dirs != bigFolder/10 {
		t.Errorf("%d mesh folders listed again, want %d", dirs, bigFolder/10)
	}
}

// memNow describes this process's memory (the mount serves from it): the
// heap in use after a collection, and the resident size.
func memNow(t *testing.T) string {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss := "?"
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, ln := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(ln, "VmRSS:"); ok {
				rss = strings.TrimSpace(v)
			}
		}
	}
	return fmt.Sprintf("heap %d MiB, RSS %s", ms.HeapAlloc>>20, rss)
}
