package meshgen

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/unigine"
	"github.com/meshfs/meshfs/export/outputs"
)

// TestUnigineConverts: the generated mesh is sniffed as UNIGINE, decodes to
// the asked triangle count within 1 %, makes a .glb, and differs by seed.
func TestUnigineConverts(t *testing.T) {
	for _, tris := range []int{2000, 150000} {
		b, err := Unigine(tris, 1)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "g.mesh")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := outputs.Open(p)
		if err != nil || m == nil {
			t.Fatalf("not sniffed: %v", err)
		}
		sc, err := m.Decode(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, me := range sc.Meshes {
			for _, pr := range me.Primitives {
				got += len(pr.Indices) / 3
			}
		}
		if d := got - tris; 100*d > tris || -100*d > tris {
			t.Errorf("%d triangles asked, %d decoded: more than 1 %% off", tris, got)
		}
		g, err := m.GLBFile(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(g) < 12*got {
			t.Errorf("%d-byte .glb for %d triangles", len(g), got)
		}
	}
	a, _ := Unigine(2000, 1)
	b, _ := Unigine(2000, 2)
	if bytes.Equal(a, b) {
		t.Error("seeds 1 and 2 make the same file")
	}
}

// TestUnigineCompression: the geometry block is LZ4-compressed about as much
// as the real ms14 files' geometry blocks (1.18:1 to 1.70:1), neither
// incompressible nor a flat grid's repeated bytes.
func TestUnigineCompression(t *testing.T) {
	b, err := Unigine(200000, 3)
	if err != nil {
		t.Fatal(err)
	}
	src := &decode.Source{Name: "g.mesh", R: bytes.NewReader(b), Size: int64(len(b))}
	st, err := unigine.Format{}.Scan(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Chunks {
		if filepath.Ext(filepath.Base(c.Name[:len(c.Name)-len(".bin")])) != ".geometry" {
			continue
		}
		ratio := float64(c.Size) / float64(c.Length-16)
		t.Logf("%s: %d bytes from %d, %.2f:1", c.Name, c.Size, c.Length-16, ratio)
		if ratio < 1.1 || ratio > 2 {
			t.Errorf("%s: ratio %.2f:1, want a real file's 1.2 to 1.7", c.Name, ratio)
		}
	}
}

// BenchmarkUnigineColdConvert is the mount's conversion work on the cold
// first read of a 1 M-triangle generated mesh's .glb, through
// export/outputs as the mount calls it: the scan for the mesh folder, then
// GLBFile (read, decode, encode). FUSE and the disk cache are not
// included. SetBytes is the source size.
func BenchmarkUnigineColdConvert(b *testing.B) {
	src, err := Unigine(1000000, 1)
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(b.TempDir(), "ground.mesh")
	if err := os.WriteFile(p, src, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		m, err := outputs.Open(p)
		if err != nil || m == nil {
			b.Fatalf("not sniffed: %v", err)
		}
		if _, err := m.Scan(context.Background()); err != nil {
			b.Fatal(err)
		}
		if _, err := m.GLBFile(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
