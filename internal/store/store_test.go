package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store/failures"
	"github.com/meshfs/meshfs/internal/store/record"
	"github.com/meshfs/meshfs/internal/store/stats"
)

// recHooks records what the store tells the mount.
type recHooks struct {
	mu     sync.Mutex
	deps   map[string]int
	broken []string
}

func (h *recHooks) DepsFound(path string, _ source.Set, _ bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.deps == nil {
		h.deps = map[string]int{}
	}
	h.deps[path]++
}

func (h *recHooks) Broken(path string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.broken = append(h.broken, path)
}

// newStore is a store over src with its own memory cache and the disk
// cache in disk (opened with the store's version string).
func newStore(t *testing.T, src, disk string) (*Store, *recHooks) {
	t.Helper()
	dc, err := OpenDiskCache(disk, 1<<30, record.CacheVersion("", outputs.DefaultLimits))
	if err != nil {
		t.Fatal(err)
	}
	h := &recHooks{}
	s, err := Open(Config{CacheSize: 64 << 20, DiskCache: dc, Concurrency: 2, Events: h}, src, &source.Tracker{}, log.New(os.Stderr, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	s.dc = dc
	t.Cleanup(func() {
		s.Close()
		dc.Close()
	})
	return s, h
}

// closeDisk waits for s's saves and closes its disk cache, as an unmount
// does.
func (s *Store) closeDisk() {
	s.disk.Close()
	s.dc.Close()
}

// meshOf describes the source file at p as the store converts it, and
// its version now.
func meshOf(t *testing.T, s *Store, p string) (*outputs.Mesh, source.Version) {
	t.Helper()
	f, err := source.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	format, err := formats.SniffReader(p, f)
	f.Close()
	if err != nil || format == nil {
		t.Fatalf("sniff %s: %v, %v", p, format, err)
	}
	id, _, err := source.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return s.NewMesh(p, format), s.versions.Version(p, id)
}

// TestStoreTiers: an output converts once per version, is served from
// memory after, from an earlier store's disk cache in a new store (no
// conversion), and converts again when a file of its set changes.
func TestStoreTiers(t *testing.T) {
	src, disk := t.TempDir(), t.TempDir()
	p := filepath.Join(src, "m.ply")
	writeGen(t, p, meshgen.GEM, 500, 1)
	ctx := context.Background()
	s, h := newStore(t, src, disk)
	m, v := meshOf(t, s, p)
	e, err := s.geometry(ctx, m, v, OutGLB)
	if err != nil || e.Err != nil || !bytes.HasPrefix(e.Part(0), []byte("glTF")) {
		t.Fatalf("glb: %v, %v", err, e.Err)
	}
	glb := e.Part(0)
	if again, _ := s.geometry(ctx, m, v, OutGLB); again != e {
		t.Fatal("a second read of one version converted again")
	}
	label := Label(m, OutGLB)
	if n := s.cache.Stats().Loads[label]; n != 1 {
		t.Fatalf("%d conversions, want 1", n)
	}
	if h.deps[p] != 1 {
		t.Fatalf("the scan told the mount of its files %d times, want 1", h.deps[p])
	}
	if !s.converted(m, v, OutGLB) || s.converted(m, v, OutOBJ) {
		t.Fatal("Converted does not know what converted")
	}
	glbEntry, _ := m.Entry(m.GLBName())
	if n, ok := s.convertedSize(m, v, glbEntry, true); !ok || n != int64(len(glb)) {
		t.Fatalf("size from memory %d, %v; want %d", n, ok, len(glb))
	}
	if _, ok := s.convertedSize(m, v, glbEntry, false); ok {
		t.Fatal("a size from memory when asked for the disk cache's only")
	}
	if b, _, err := s.Content(ctx, m, v, glbEntry, ""); err != nil || !bytes.Equal(b, glb) {
		t.Fatalf("content of the .glb: %v", err)
	}
	hdrEntry, _ := m.Entry(outputs.HeaderName)
	if b, _, err := s.Content(ctx, m, v, hdrEntry, ""); err != nil || !bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		t.Fatalf("header.json %q, %v", b, err)
	}
	errEntry, _ := m.Entry(outputs.ErrorName)
	if _, _, err := s.Content(ctx, m, v, errEntry, ""); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error.txt of a healthy mesh: %v", err)
	}
	s.closeDisk()

	// A new store (a remount): the disk cache's bytes, no conversion.
	s2, _ := newStore(t, src, disk)
	m2, v2 := meshOf(t, s2, p)
	if sizes, ok := s2.disk.Sizes(keyOf(m2, v2, OutGLB)); !ok || sizes[0] != int64(len(glb)) {
		t.Fatalf("disk sizes %v, %v; want [%d]", sizes, ok, len(glb))
	}
	e2, err := s2.geometry(ctx, m2, v2, OutGLB)
	if err != nil || e2.Err != nil || !bytes.Equal(e2.Part(0), glb) {
		t.Fatalf("from disk: %v, %v", err, e2.Err)
	}
	st := s2.cache.Stats()
	if st.Loads[label] != 0 || st.Loads[label+DiskSuffix] != 1 {
		t.Fatalf("loads %v, want one disk load and no conversion", st.Loads)
	}
	// A change reported that changed nothing (events lost): the same
	// version, still served from the disk cache.
	s2.Changed(src, true)
	s2.versions.Changed(src)
	s2.versions.ChangedAll()
	if _, v := meshOf(t, s2, p); !v.Same(v2) {
		t.Fatal("a change that changed no file made another version")
	}
	// A dependency file (an animation) appears in its folder: another
	// version, not in the disk cache (the .glb saved was made without it).
	if err := os.WriteFile(filepath.Join(src, "walk.anim"), []byte("not an animation"), 0o644); err != nil {
		t.Fatal(err)
	}
	s2.Changed(src, true)
	s2.versions.Changed(src)
	_, v3 := meshOf(t, s2, p)
	if v3.Same(v2) {
		t.Fatal("a change of the folder's files left the version")
	}
	if _, ok := s2.disk.Sizes(keyOf(m2, v3, OutGLB)); ok {
		t.Fatal("the disk cache served a .glb made before its folder's animation file appeared")
	}
}

// TestStoreFailures: a broken mesh fails once, is in the failure list,
// tells the mount its folder changed shape, and a new store knows it from
// the disk cache without converting.
func TestStoreFailures(t *testing.T) {
	src, disk := t.TempDir(), t.TempDir()
	p := filepath.Join(src, "broken.ply")
	b, err := meshgen.GEM(500, 2)
	if err != nil {
		t.Fatal(err)
	}
	// The structure scans; the geometry's index count runs past the file.
	b = b[:len(b)*3/4]
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, h := newStore(t, src, disk)
	m, v := meshOf(t, s, p)
	e, err := s.geometry(ctx, m, v, OutGLB)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Scan(ctx, m, v)
	if err != nil {
		t.Fatal(err)
	}
	if e.Err == nil && r.ScanErr == nil {
		t.Fatal("the cut GEM file converts: this test needs one that fails")
	}
	if !s.knownBroken(m, v, r) {
		t.Fatal("a failed mesh is not known broken")
	}
	if got := s.failed.Current(src); len(got) != 1 || got[0].Rel != "broken.ply" {
		t.Fatalf("failure list %+v", got)
	}
	var ce *failures.ConvError
	if glbEntry, _ := m.Entry(m.GLBName()); r.ScanErr == nil {
		if _, _, err := s.Content(ctx, m, v, glbEntry, ""); !errors.As(err, &ce) {
			t.Fatalf("content of a failed .glb: %v, want a ConvError", err)
		}
	}
	text, err := s.errorText(ctx, m, v)
	if err != nil || !strings.Contains(string(text), "broken.ply") {
		t.Fatalf("error.txt %q, %v", text, err)
	}
	if r.ScanErr == nil && len(h.broken) != 1 {
		t.Fatalf("the mount was told %d times that the folder broke, want 1", len(h.broken))
	}
	s.closeDisk()

	s2, _ := newStore(t, src, disk)
	m2, v2 := meshOf(t, s2, p)
	if !s2.failedOnDisk(m2, v2) {
		t.Fatal("a new store does not find the failure on disk")
	}
	r2, err := s2.Scan(ctx, m2, v2)
	if err != nil || !s2.knownBroken(m2, v2, r2) {
		t.Fatalf("known broken after a remount: %v", err)
	}
	for label, n := range s2.cache.Stats().Loads {
		if IsConversion(label) && n > 0 {
			t.Fatalf("the remount converted (%s: %d) to learn it is broken", label, n)
		}
	}
	// Fixed in place: another version, no failure.
	good, _ := meshgen.GEM(500, 2)
	os.WriteFile(p, good, 0o644)
	m3, v3 := meshOf(t, s2, p)
	if e, err := s2.geometry(ctx, m3, v3, OutGLB); err != nil || e.Err != nil {
		t.Fatalf("fixed: %v, %v", err, e.Err)
	}
	if got := s2.failed.Current(src); len(got) != 0 {
		t.Fatalf("the fixed mesh is still listed: %+v", got)
	}
}

// Stats sorts the cache's loads into conversions, scans and disk loads,
// and reports the mount's counts beside them.
func TestStoreStats(t *testing.T) {
	src, disk := t.TempDir(), t.TempDir()
	p := filepath.Join(src, "m.ply")
	writeGen(t, p, meshgen.GEM, 50, 1)
	s, _ := newStore(t, src, disk)
	m, v := meshOf(t, s, p)
	if e, err := s.geometry(context.Background(), m, v, OutGLB); err != nil || e.Err != nil {
		t.Fatalf("glb: %v", err)
	}
	st := s.Stats(stats.MountCounts{Counts: &stats.Counts{}, Start: time.Now().Add(-time.Second), NoOpen: true, Sniffs: 3, Requests: map[string]int64{"READ": 2}})
	label := Label(m, OutGLB)
	if st.Conversions[label] != 1 || len(st.DiskLoads) != 0 {
		t.Fatalf("conversions %v, disk loads %v; want one %s conversion", st.Conversions, st.DiskLoads, label)
	}
	if len(st.Scans) != 1 || st.Source != src || st.UptimeS < 1 {
		t.Fatalf("scans %v, source %q, uptime %v", st.Scans, st.Source, st.UptimeS)
	}
	if st.OpenMode != "no_open" || st.Sniffs != 3 || st.Requests["READ"] != 2 || st.DiskCache == nil {
		t.Fatalf("mount counts not reported: %+v", st)
	}
	if st.Failing == nil || st.ScanFailures+st.ConversionFailures != 0 {
		t.Fatalf("failing %v for a healthy mesh", st.Failing)
	}
	s.closeDisk()
	s2, _ := newStore(t, src, disk)
	m2, v2 := meshOf(t, s2, p)
	if _, err := s2.geometry(context.Background(), m2, v2, OutGLB); err != nil {
		t.Fatal(err)
	}
	if st := s2.Stats(stats.MountCounts{Counts: &stats.Counts{}}); st.DiskLoads[label] != 1 || st.Conversions[label] != 0 || st.OpenMode != "handles" {
		t.Fatalf("remount: disk loads %v, conversions %v, mode %s", st.DiskLoads, st.Conversions, st.OpenMode)
	}
}

// .meshfs holds stats.json and errors.txt, rendered anew on each call.
func TestMetaFile(t *testing.T) {
	src := t.TempDir()
	s, _ := newStore(t, src, t.TempDir())
	calls := 0
	render, ok := stats.MetaFile(stats.StatsName, func() stats.Stats { calls++; return s.Stats(stats.MountCounts{Counts: &stats.Counts{}}) })
	if !ok {
		t.Fatal("no stats.json")
	}
	var st stats.Stats
	if err := json.Unmarshal(render(), &st); err != nil || st.Source != src {
		t.Fatalf("stats.json: %v, source %q", err, st.Source)
	}
	render()
	if calls != 2 {
		t.Fatalf("stats rendered %d times for 2 reads", calls)
	}
	if errs, ok := stats.MetaFile(stats.ErrorsName, func() stats.Stats { return s.Stats(stats.MountCounts{Counts: &stats.Counts{}}) }); !ok || len(errs()) != 0 {
		t.Fatal("errors.txt of a mount without failures")
	}
	if _, ok := stats.MetaFile("other", nil); ok || len(stats.MetaNames()) != 2 {
		t.Fatal("an unknown .meshfs file")
	}
}

// A change of a file a mesh read names that mesh, whose outputs of the
// version before stay in memory until the budget needs the room (a node the
// kernel still holds for that version is served it whole); a change of a
// file no mesh read names none.
func TestChanged(t *testing.T) {
	p := texturedMesh(t)
	ctx := context.Background()
	s, _ := newStore(t, filepath.Dir(p), t.TempDir())
	m, v := meshOf(t, s, p)
	if e, err := s.geometry(ctx, m, v, OutGLB); err != nil || e.Err != nil {
		t.Fatalf("glb: %v %v", err, e.Err)
	}
	set := s.versions.Set(p)
	if len(set) == 0 {
		t.Fatal("the scan found no file the mesh reads")
	}
	if got := s.Changed(filepath.Join(filepath.Dir(p), "unrelated.txt"), false); len(got) != 0 {
		t.Fatalf("an unrelated file names %v", got)
	}
	if got := s.Changed(set[0].Path, false); len(got) != 1 || got[0] != p {
		t.Fatalf("a file the mesh read names %v", got)
	}
	if _, ok := s.cache.Peek(keyOf(m, v, OutGLB)); !ok {
		t.Fatal("the .glb of the version before left memory at the change")
	}
}
