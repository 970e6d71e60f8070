package fs

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/meshfs/meshfs/internal/meshgen"
)

// Benchmarks for `make bench` (issue 8 tabulates them):
//
//	go test ./fs -run '^$' -bench . -benchtime 5x
//
// BenchmarkFirstReadGLB: a generated ≈1 M-triangle GEM mesh's .glb read
// through the mount, conversion included, in MB/s of source.
// BenchmarkWarmRead: the same .glb read again (kernel page cache, FOPEN_KEEP_CACHE)
// against a plain file of the same size read from the disk's page cache.

const benchTriangles = 1_000_000

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

// benchSource makes a folder with big.ply (≈1 M triangles), once per run.
func benchSource(b *testing.B) string {
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "meshfs-bench")
		if benchErr != nil {
			return
		}
		var data []byte
		data, benchErr = meshgen.GEM(benchTriangles, 0)
		if benchErr == nil {
			benchErr = os.WriteFile(filepath.Join(benchDir, "big.ply"), data, 0o644)
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir
}

func readAll(b *testing.B, p string) int64 {
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	n, err := io.Copy(io.Discard, f)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

func BenchmarkFirstReadGLB(b *testing.B) {
	src := benchSource(b)
	_, mnt := mountT(b, src, Config{})
	sp := filepath.Join(src, "big.ply")
	fi, _ := os.Stat(sp)
	b.SetBytes(fi.Size())
	glb := filepath.Join(mnt, "big.ply", "big.glb")
	base := fi.ModTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// A new mtime is a new source version: the read converts again.
		b.StopTimer()
		if err := os.Chtimes(sp, base, base.Add(time.Duration(i+1)*time.Second)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		readAll(b, glb)
	}
}

func BenchmarkWarmRead(b *testing.B) {
	src := benchSource(b)
	_, mnt := mountT(b, src, Config{})
	glb := filepath.Join(mnt, "big.ply", "big.glb")
	size := readAll(b, glb) // converts
	plain := filepath.Join(b.TempDir(), "plain")
	data, err := os.ReadFile(glb)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(plain, data, 0o644); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, path string }{{"mount", glb}, {"plain", plain}} {
		b.Run(c.name, func(b *testing.B) {
			readAll(b, c.path) // warm the page cache
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				readAll(b, c.path)
			}
		})
	}
}
