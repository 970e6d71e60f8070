package vfs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/walk"
)

// A pass ahead scans the meshes after the one the walker entered, one pass
// per folder at a time; a folder's first listing sniffs the folders after
// it in its parent's listing, once.
func TestAhead(t *testing.T) {
	src := t.TempDir()
	gem, err := meshgen.GEM(20, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"a", "b", "c"} {
		for i := range 3 {
			p := filepath.Join(src, sub, fmt.Sprintf("m%d.ply", i))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, gem, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	a := walk.NewAhead(walk.Config{})
	defer a.Close()
	d := mirrorFolder(t, filepath.Join(src, "a"))
	if _, err := d.List(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var scanned []string
	release := make(chan struct{})
	scan := func(ctx context.Context, p string, st *syscall.Stat_t, format decode.Format) bool {
		<-release
		mu.Lock()
		defer mu.Unlock()
		scanned = append(scanned, filepath.Base(p))
		return true
	}
	d.ScanAhead(a, "m0.ply", scan)
	d.ScanAhead(a, "m1.ply", scan) // one pass at a time per folder: not started
	close(release)
	waitUntil(t, func() bool { return !d.ScanningAhead.Load() })
	mu.Lock()
	slices.Sort(scanned)
	got := slices.Clone(scanned)
	mu.Unlock()
	if !slices.Equal(got, []string{"m1.ply", "m2.ply"}) || a.Scans.Load() != 2 {
		t.Fatalf("scanned %v (%d counted), want the two meshes after m0.ply", got, a.Scans.Load())
	}

	root := mirrorFolder(t, src)
	if _, err := root.List(); err != nil {
		t.Fatal(err)
	}
	// Whichever of the folders the listing gave first has folders after it.
	var children []*Folder
	for _, name := range []string{"a", "b", "c"} {
		child := mirrorFolder(t, filepath.Join(src, name))
		children = append(children, child)
		root.ListAhead(a, root.Sniffer, child, name)
	}
	waitUntil(t, func() bool { return a.Sniffs.Load() > 0 })
	a.Close() // every pass ended
	if n := a.Sniffs.Load(); n > 6 {
		t.Fatalf("%d files sniffed ahead; the two folders after the first hold 6", n)
	}
	for _, child := range children {
		if !child.ListedAhead.Load() {
			t.Fatal("a folder's first listing not recorded")
		}
	}
	b := walk.NewAhead(walk.Config{})
	defer b.Close()
	root.ListAhead(b, root.Sniffer, children[0], "a")
	b.Close()
	if b.Sniffs.Load() != 0 {
		t.Fatal("a folder's second listing sniffed ahead again")
	}
}

func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}
