package unigine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/export/gltf"
	"github.com/meshfs/meshfs/export/gltf/validator"
)

// TestGLBValidates converts every fixture and real file to .glb and runs
// the Khronos validator over all of them at once: 0 errors each.
func TestGLBValidates(t *testing.T) {
	if err := validator.Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	var paths []string
	for _, fx := range fixtures {
		paths = append(paths, filepath.Join(fixtureDir, fx.name))
	}
	if _, err := os.Stat(filepath.Join("..", "..", "..", "shared", "realdata", "unigine")); err == nil {
		paths = append(paths, realFiles(t)...)
	}
	dir := t.TempDir()
	var glbs []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := Format{}.Decode(context.Background(), memSource(p, b))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		glb, err := gltf.Encode(sc)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out := filepath.Join(dir, filepath.Base(p)+".glb")
		if err := os.WriteFile(out, glb, 0o644); err != nil {
			t.Fatal(err)
		}
		glbs = append(glbs, out)
	}
	reports, err := validator.ValidateFiles(glbs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reports {
		t.Run(filepath.Base(paths[i]), func(t *testing.T) { validator.CheckReport(t, r) })
	}
}

// BenchmarkConvertUnigine decodes a generated ms15 mesh of about a million
// triangles (708×708 grid: 999 698 triangles, 501 264 vertices, compact
// indices) and encodes the .glb. SetBytes is the source size.
func BenchmarkConvertUnigine(b *testing.B) {
	f := bigGridFile(MagicMS15, 708)
	src, err := Encode(f)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		sc, err := Format{}.Decode(context.Background(), memSource("bench.mesh", src))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := gltf.Encode(sc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeUnigine is the decode half alone.
func BenchmarkDecodeUnigine(b *testing.B) {
	src, err := Encode(bigGridFile(MagicMS15, 708))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (Format{}).Decode(context.Background(), memSource("bench.mesh", src)); err != nil {
			b.Fatal(err)
		}
	}
}

var _ = decode.Identity
