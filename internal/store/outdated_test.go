package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshfs/meshfs/internal/meshgen"
)

// A big conversion drops the source's outputs of its earlier versions
// from memory, so that its memory can be reused; a small one leaves them
// to the budget.
func TestBigConversionDropsOutdated(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	s, _ := newStore(t, src, t.TempDir())
	for _, c := range []struct {
		name      string
		triangles int
		big       bool
	}{{"big.ply", 150_000, true}, {"small.ply", 500, false}} {
		p := filepath.Join(src, c.name)
		b, err := meshgen.GEM(c.triangles, 1)
		if err != nil {
			t.Fatal(err)
		}
		if big := int64(len(b)) >= bigConversionSize; big != c.big {
			t.Fatalf("%s: %d bytes, big %v", c.name, len(b), big)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		m1, v1 := meshOf(t, s, p)
		if e, err := s.geometry(ctx, m1, v1, OutGLB); err != nil || e.Err != nil {
			t.Fatalf("%s: %v %v", c.name, err, e.Err)
		}
		when := time.Now().Add(-time.Hour)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
		m2, v2 := meshOf(t, s, p)
		if v2 == v1 {
			t.Fatalf("%s: the new mtime is the same version", c.name)
		}
		if _, ok := s.cache.Peek(keyOf(m1, v1, OutGLB)); !ok {
			t.Fatalf("%s: the first version's .glb is not in memory", c.name)
		}
		if e, err := s.geometry(ctx, m2, v2, OutGLB); err != nil || e.Err != nil {
			t.Fatalf("%s: %v %v", c.name, err, e.Err)
		}
		if _, ok := s.cache.Peek(keyOf(m2, v2, OutGLB)); !ok {
			t.Fatalf("%s: the new version's .glb is not in memory", c.name)
		}
		if _, kept := s.cache.Peek(keyOf(m1, v1, OutGLB)); kept == c.big {
			t.Errorf("%s: the first version's .glb kept in memory: %v", c.name, kept)
		}
		if _, kept := s.cache.Peek(keyOf(m1, v1, OutScan)); kept == c.big {
			t.Errorf("%s: the first version's scan kept in memory: %v", c.name, kept)
		}
	}
}
