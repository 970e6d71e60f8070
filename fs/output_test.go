package fs

import (
	"bytes"
	"context"
	"errors"
	"log"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store"
	meshstats "github.com/meshfs/meshfs/internal/store/stats"
)

// gemStore is a store over a folder holding one GEM mesh of n triangles,
// the mesh, its version and the store's Close (once; at the end if not
// called).
func gemStore(t *testing.T, n int) (*store.Store, *outputs.Mesh, source.Version, func()) {
	t.Helper()
	src := t.TempDir()
	p := filepath.Join(src, "m.ply")
	b, err := meshgen.GEM(n, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	tr := &source.Tracker{}
	s, err := store.Open(store.Config{CacheSize: 64 << 20, Concurrency: 2}, src, tr, log.New(os.Stderr, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	var closed sync.Once
	closeStore := func() { closed.Do(s.Close) }
	t.Cleanup(closeStore)
	om, err := outputs.Open(p) // sniffed
	if err != nil || om == nil {
		t.Fatalf("%s: %v, %v", p, om, err)
	}
	id, _, err := source.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return s, s.NewMesh(p, om.Format), tr.Version(p, id), closeStore
}

// glbLoads is how often s converted m's .glb.
func glbLoads(s *store.Store, m *outputs.Mesh) int64 {
	return s.Stats(meshstats.MountCounts{Counts: &meshstats.Counts{}}).Conversions[store.Label(m, store.OutGLB)]
}

// otherVersion is v of a file of another size.
func otherVersion(v source.Version) source.Version {
	v.Size++
	return v
}

// A pinned output stands for the version of the first size told: asked
// for another version, it converts nothing and tells the size and serves
// the bytes of the told version while memory holds them, else ESTALE.
func TestOutputPinned(t *testing.T) {
	s, m, v, closeStore := gemStore(t, 200)
	ctx := context.Background()
	glb, _ := m.Entry(m.GLBName())
	o := NewOutput(s, m, glb, "", true)
	if !o.IsGLB() || !o.Reusable(v) {
		t.Fatal("a fresh .glb node is not reusable")
	}
	if _, _, err := o.Size(ctx, v, true); !errors.Is(err, store.ErrNotCheap) {
		t.Fatalf("cheap size of an unconverted .glb: %v", err)
	}
	if !o.View.Told().Zero() {
		t.Fatal("a size not known was told")
	}
	size, scanned, err := o.Size(ctx, v, false)
	want, _, _ := o.Content(ctx, v)
	if err != nil || !scanned || size != int64(len(want)) || !o.View.Told().Same(v) {
		t.Fatalf("size %d (scanned %v), %v; want %d told", size, scanned, err, len(want))
	}
	if size, scanned, err := o.Size(ctx, v, true); err != nil || scanned || size != int64(len(want)) {
		t.Fatalf("the converted .glb's cheap size %d (scanned %v), %v", size, scanned, err)
	}
	w := otherVersion(v)
	if o.Reusable(w) {
		t.Fatal("a node pinned to v reused for another version")
	}
	loads := glbLoads(s, m)
	// While memory holds the version the node stands for, the node tells
	// its size (a reader that opened before the kernel heard of the change
	// reads it whole); once memory gives it back, ESTALE.
	if size, _, err := o.Size(ctx, w, false); err != nil || size != int64(len(want)) {
		t.Fatalf("another version's size on a pinned node: %d, %v; want the told %d", size, err, len(want))
	}
	if n := glbLoads(s, m); n != loads {
		t.Fatal("a node that cannot show a version converted it")
	}
	data, raw, err := o.Serve(ctx, w)
	if err != nil || raw != nil || !bytes.Equal(data, want) {
		t.Fatalf("a READ after a change: %v, not the told version's bytes", err)
	}
	// Per-handle nodes tell any version.
	h := NewOutput(s, m, glb, "", false)
	if _, _, err := h.Size(ctx, v, false); err != nil || !h.Reusable(w) {
		t.Fatalf("a per-handle node: %v, reusable %v", err, h.Reusable(w))
	}
	// A .glb passed through to another version's file needs a node of its own.
	if !h.Pass.Try(v) || h.Reusable(w) || !h.Reusable(v) {
		t.Fatal("a .glb node passed through to v's file reused for another version")
	}
	// Closing the store gives back its memory, as the budget would.
	closeStore()
	if _, _, err := o.Serve(ctx, w); !errors.Is(err, syscall.ESTALE) {
		t.Fatalf("the told version gone from memory: %v, want ESTALE", err)
	}
	if _, _, err := o.Size(ctx, w, false); !errors.Is(err, syscall.ESTALE) {
		t.Fatalf("another version's size, the told one gone from memory: %v, want ESTALE", err)
	}
}

// header.json is pushed once, only while the source is the listed
// version, and a change during the store drops what was stored.
func TestOutputPush(t *testing.T) {
	s, m, v, _ := gemStore(t, 200)
	ctx := context.Background()
	_, r, _, _, err := s.Listing(ctx, m, v)
	if err != nil {
		t.Fatal(err)
	}
	cur := v
	now := func() (source.Version, bool) { return cur, true }
	var wrote [][]byte
	write := func(b []byte) bool { wrote = append(wrote, b); return true }
	drops := make(chan struct{}, 4)
	drop := func() { drops <- struct{}{} }
	o := NewOutput(s, m, outputs.Entry{}, "", true)
	cur = otherVersion(v)
	if o.Push(v, r, now, write, drop) || len(wrote) != 0 {
		t.Fatal("pushed a header of a version the source no longer is")
	}
	cur = v
	if !o.Push(v, r, now, write, drop) || len(wrote) != 1 {
		t.Fatal("the listed version's header not pushed")
	}
	if want, _, _ := o.Content(ctx, v); !bytes.Equal(wrote[0], want) {
		t.Fatal("pushed bytes are not header.json")
	}
	if o.Push(v, r, now, write, drop) || len(wrote) != 1 {
		t.Fatal("pushed twice")
	}
	if len(drops) != 0 {
		t.Fatal("dropped pages of the version the source is")
	}
	o2 := NewOutput(s, m, outputs.Entry{}, "", true)
	write2 := func(b []byte) bool { cur = otherVersion(v); return true }
	if !o2.Push(v, r, now, write2, drop) {
		t.Fatal("not pushed")
	}
	select {
	case <-drops:
	case <-time.After(5 * time.Second):
		t.Fatal("a change during the store did not drop what was stored")
	}
	o3 := NewOutput(s, m, outputs.Entry{}, "", true)
	cur = v
	if o3.Push(v, r, now, func([]byte) bool { return false }, drop) || !o3.View.WantsPages(v) {
		t.Fatal("a failed store was recorded")
	}
}
