package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/source"
)

// gemMesh writes a GEM mesh of n triangles (cut to frac of its bytes when
// frac < 1) into a new source folder and returns the store over it, the
// mesh and its version.
func gemMesh(t *testing.T, n int, frac float64) (*Store, *outputs.Mesh, source.Version) {
	t.Helper()
	src := t.TempDir()
	p := filepath.Join(src, "m.ply")
	b, err := meshgen.GEM(n, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b[:int(float64(len(b))*frac)], 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := newStore(t, src, t.TempDir())
	m, v := meshOf(t, s, p)
	return s, m, v
}

// The folder table's rule, asked per entry: chunks/ with chunks, no
// geometry for a broken mesh (and not kept as a negative entry), no
// animated .glb without an animation.
func TestHolds(t *testing.T) {
	ctx := context.Background()
	s, m, v := gemMesh(t, 200, 1)
	for _, e := range m.Entries() {
		holds, keep, err := s.Holds(ctx, m, v, e)
		if err != nil {
			t.Fatal(err)
		}
		want := e.Output != outputs.OutAnimated
		if holds != want || keep != want {
			t.Errorf("healthy %s: holds %v keep %v", e.Name, holds, keep)
		}
	}
	s, m, v = gemMesh(t, 500, 0.75)
	glb, _ := m.Entry(m.GLBName())
	if holds, _, _ := s.Holds(ctx, m, v, glb); !holds {
		t.Fatal("geometry gone before a conversion failed")
	}
	if e, err := s.geometry(ctx, m, v, OutGLB); err != nil || e.Err == nil {
		t.Fatal("the cut GEM file converts: this test needs one that fails")
	}
	if holds, keep, _ := s.Holds(ctx, m, v, glb); holds || keep {
		t.Fatalf("a broken mesh's .glb: holds %v keep %v", holds, keep)
	}
}

// writeGen writes gen's mesh of n triangles (seed) to p.
func writeGen(t *testing.T, p string, gen func(int, float32) ([]byte, error), n int, seed float32) {
	t.Helper()
	b, err := gen(n, seed)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
