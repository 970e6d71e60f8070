package walk

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/source"
)

// tree writes n GEM meshes and a plain file into a new folder.
func tree(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	b, err := meshgen.GEM(50, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%02d.ply", i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("plain"), 0o644)
	return dir
}

func TestSnifferRemembersVersions(t *testing.T) {
	dir := tree(t, 1)
	s, err := NewSniffer(source.NewView())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := filepath.Join(dir, "m00.ply")
	var st syscall.Stat_t
	syscall.Stat(p, &st)
	fm, read, known := s.Sniff(p, &st)
	if fm == nil || !read || !known {
		t.Fatalf("first sniff: %v %v %v", fm, read, known)
	}
	if _, read, _ := s.Sniff(p, &st); read || s.Count() != 1 {
		t.Fatalf("second sniff of one version read the file (%d reads)", s.Count())
	}
	// Another version is sniffed again.
	os.WriteFile(p, []byte("plain now"), 0o644)
	syscall.Stat(p, &st)
	if fm, read, _ := s.Sniff(p, &st); fm != nil || !read {
		t.Fatalf("rewritten as plain: %v, read %v", fm, read)
	}
	q := filepath.Join(dir, "notes.txt")
	syscall.Stat(q, &st)
	if fm, _, known := s.Sniff(q, &st); fm != nil || !known {
		t.Fatalf("plain file: %v %v", fm, known)
	}
}

func TestFolderOrder(t *testing.T) {
	var o *FolderOrder
	if o.After("a", 2) != nil {
		t.Fatal("a nil order has folders")
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		o = o.Add(n)
	}
	if got := fmt.Sprint(o.After("a", 2), o.After("c", 2), o.After("d", 2), o.After("x", 2)); got != "[b c] [d] [] []" {
		t.Fatalf("after: %s", got)
	}
}

func TestAheadOneAtATimeAndClose(t *testing.T) {
	a := NewAhead(Config{})
	var running, most atomic.Int32
	release := make(chan struct{})
	dropped := 0
	for range 3 {
		a.Go(Scans, func(ctx context.Context) {
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			running.Add(-1)
		}, nil)
	}
	listed := make(chan struct{})
	a.Go(Lists, func(context.Context) { close(listed) }, nil)
	select {
	case <-listed:
	case <-time.After(5 * time.Second):
		t.Fatal("a list pass waited for a scan pass")
	}
	// One scan pass runs; the other two have had time to start beside it.
	for deadline := time.Now().Add(5 * time.Second); running.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no scan pass started")
		}
	}
	time.Sleep(50 * time.Millisecond)
	close(release)
	a.Close()
	if most.Load() != 1 {
		t.Fatalf("%d scan passes ran at once", most.Load())
	}
	if a.Go(Scans, func(context.Context) { t.Error("ran after Close") }, func() { dropped++ }) || dropped != 1 {
		t.Fatal("a pass started after Close, or its done was not called")
	}
}

func TestScanAheadWindowAndOrder(t *testing.T) {
	dir := tree(t, 10)
	s, _ := NewSniffer(source.NewView())
	defer s.Close()
	isMesh := func(name string, st *syscall.Stat_t, _ func(string) bool) (decode.Format, bool) {
		fm, _, _ := s.Sniff(filepath.Join(dir, name), st)
		return fm, fm != nil
	}
	var got []string
	ScanAhead(context.Background(), dir, "m03.ply", 4, 1<<20, isMesh, func(p string, _ *syscall.Stat_t, fm decode.Format) {
		if fm == nil {
			t.Errorf("%s scanned without a format", p)
		}
		got = append(got, filepath.Base(p))
	})
	if len(got) != 4 {
		t.Fatalf("scanned %v, want a window of 4", got)
	}
	for _, n := range got {
		if n == "m03.ply" || n == "notes.txt" {
			t.Fatalf("scanned %s (%v)", n, got)
		}
	}
	// Nothing over the size bound.
	got = nil
	ScanAhead(context.Background(), dir, "", 100, 10, isMesh, func(p string, _ *syscall.Stat_t, _ decode.Format) { got = append(got, p) })
	if len(got) != 0 {
		t.Fatalf("scanned files over the bound: %v", got)
	}
}

func TestSniffFolder(t *testing.T) {
	dir := tree(t, 20)
	s, _ := NewSniffer(source.NewView())
	defer s.Close()
	looked, read := SniffFolder(context.Background(), s, dir, 1000, 4)
	if looked != 21 || read != 21 {
		t.Fatalf("looked at %d, read %d; want 21, 21", looked, read)
	}
	if _, read := SniffFolder(context.Background(), s, dir, 1000, 4); read != 0 {
		t.Fatalf("sniffed %d again", read)
	}
	if looked, _ := SniffFolder(context.Background(), s, dir, 5, 4); looked != 5 {
		t.Fatalf("limit 5: looked at %d", looked)
	}
}

// SniffFolders stops at its limit of files in all.
func TestSniffFoldersBudget(t *testing.T) {
	parent := t.TempDir()
	for _, n := range []string{"a", "b"} {
		dir := tree(t, 3)
		if err := os.Rename(dir, filepath.Join(parent, n)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := NewSniffer(source.NewView())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var reads atomic.Int64
	SniffFolders(context.Background(), s, parent, []string{"a", "b"}, 5, 4, &reads)
	if n := reads.Load(); n < 1 || n > 5 || s.Count() > 5 {
		t.Fatalf("%d files read (%d sniffs), want at most 5", n, s.Count())
	}
}

// A mount's passes run as far as its Config says; a field left zero takes
// its default.
func TestAheadConfigDefaults(t *testing.T) {
	set := NewAhead(Config{ListMax: 5})
	defer set.Close()
	none := NewAhead(Config{})
	defer none.Close()
	c, d := set.Config(), none.Config()
	if c.ListMax != 5 || d.ListMax == 5 {
		t.Fatalf("ListMax %d set, %d by default", c.ListMax, d.ListMax)
	}
	if d.ScanMax <= 0 || d.ScanWindow <= 0 || d.ListWindow <= 0 || d.ListMax <= 0 || d.ListWorkers <= 0 {
		t.Fatalf("a zero field kept no default: %+v", d)
	}
	if c.ListMax = d.ListMax; c != d {
		t.Fatalf("fields not set differ from the defaults: %+v, %+v", c, d)
	}
}
