package meshgen

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/export/outputs"
)

func TestGEMConverts(t *testing.T) {
	b, err := GEM(1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "g.ply")
	os.WriteFile(p, b, 0o644)
	m, err := outputs.Open(p)
	if err != nil || m == nil {
		t.Fatalf("not sniffed: %v", err)
	}
	g, err := m.GLBFile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := m.Decode(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tris := 0
	for _, me := range sc.Meshes {
		for _, pr := range me.Primitives {
			tris += len(pr.Indices) / 3
		}
	}
	if tris < 900 || tris > 1100 || len(g) < 12*tris {
		t.Fatalf("%d triangles, %d glb bytes; want about 1000 triangles", tris, len(g))
	}
}
