package archive

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// bigEntry writes into dir an archive holding one deflated entry of
// 200 MiB (ARCHIVE_BENCH_MB to change) shaped like mesh data (16-bit
// normally distributed values in 32-bit words: about 1.8:1 with deflate's
// fastest level), and the same bytes in a plain file. It streams: the
// bytes are never all in memory.
func bigEntry(b *testing.B, dir string) (zipPath, plainPath string) {
	b.Helper()
	size := 200 << 20
	if mb, err := strconv.Atoi(os.Getenv("ARCHIVE_BENCH_MB")); err == nil && mb > 0 {
		size = mb << 20
	}
	zipPath, plainPath = filepath.Join(dir, "big.zip"), filepath.Join(dir, "plain.bin")
	zf, err := os.Create(zipPath)
	if err != nil {
		b.Fatal(err)
	}
	pf, err := os.Create(plainPath)
	if err != nil {
		b.Fatal(err)
	}
	zb := bufio.NewWriter(zf)
	w := zip.NewWriter(zb)
	w.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) { return flate.NewWriter(out, flate.BestSpeed) })
	fw, err := w.Create("big.bin")
	if err != nil {
		b.Fatal(err)
	}
	out := io.MultiWriter(fw, pf)
	rng := rand.New(rand.NewPCG(5, 6))
	chunk := make([]byte, 1<<20)
	for left := size; left > 0; left -= len(chunk) {
		clear(chunk)
		for i := 0; i < len(chunk); i += 4 {
			v := uint32(rng.NormFloat64()*1000) & 0xffff
			chunk[i], chunk[i+1] = byte(v), byte(v>>8)
		}
		if _, err := out.Write(chunk[:min(len(chunk), left)]); err != nil {
			b.Fatal(err)
		}
	}
	for _, err := range []error{w.Close(), zb.Flush(), zf.Close(), pf.Close()} {
		if err != nil {
			b.Fatal(err)
		}
	}
	return zipPath, plainPath
}

// BenchmarkRandomReadDeflated: random 4 KiB reads of a 200 MiB deflated
// entry once inflated into a spill file, and through checkpoints (each read
// inflating up to a span), against the same bytes from a plain file; and
// the first read at a random offset of a freshly opened entry (spill
// file), which inflates up to it.
func BenchmarkRandomReadDeflated(b *testing.B) {
	z, plain := bigEntry(b, b.TempDir())
	f, err := os.Open(z)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	limits := Limits{MaxInflate: 1 << 30, MemInflate: 1 << 20, SpillDir: b.TempDir()}
	a, err := Open(f, fi.Size(), z, limits)
	if err != nil {
		b.Fatal(err)
	}
	e, _ := a.Lookup("big.bin")
	random := func(b *testing.B, r io.ReaderAt, size int64) {
		rng := rand.New(rand.NewPCG(7, 8))
		p := make([]byte, 4096)
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			if _, err := r.ReadAt(p, rng.Int64N(size-int64(len(p)))); err != nil {
				b.Fatal(err)
			}
		}
	}
	var times [2]time.Duration
	b.Run("archive", func(b *testing.B) {
		r, err := a.Open(e)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		r.ReadAt(make([]byte, 1), e.Size-1) // inflated whole, once
		start := time.Now()
		random(b, r, e.Size)
		times[0] = time.Since(start) / time.Duration(b.N)
	})
	b.Run("plain", func(b *testing.B) {
		pf, err := os.Open(plain)
		if err != nil {
			b.Fatal(err)
		}
		defer pf.Close()
		start := time.Now()
		random(b, pf, e.Size)
		times[1] = time.Since(start) / time.Duration(b.N)
		if times[0] > 0 {
			b.Logf("archive %v, plain file %v a read: %.2f×", times[0], times[1], float64(times[0])/float64(times[1]))
		}
	})
	b.Run("checkpoints", func(b *testing.B) {
		ca := *a
		ca.limits = Limits{MaxInflate: 1 << 30, MemInflate: 1 << 20}
		r, err := ca.Open(e)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		r.ReadAt(make([]byte, 1), e.Size-1) // indexed whole, once
		random(b, r, e.Size)
		b.ReportMetric(float64(e.Size)/float64(e.CompressedSize), "deflate-ratio")
		if c := r.(*checkpointed); c.r != nil {
			b.Fatal("fell back to inflating in memory")
		}
	})
	b.Run("checkpoints-index", func(b *testing.B) {
		ca := *a
		ca.limits = Limits{MaxInflate: 1 << 30, MemInflate: 1 << 20}
		b.SetBytes(e.Size)
		for b.Loop() {
			r, err := ca.Open(e)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.ReadAt(make([]byte, 1), e.Size-1); err != nil { // the whole pass
				b.Fatal(err)
			}
			r.Close()
		}
	})
	b.Run("first-read", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(9, 10))
		p := make([]byte, 4096)
		for b.Loop() {
			r, err := a.Open(e)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := r.ReadAt(p, rng.Int64N(e.Size-4096)); err != nil {
				b.Fatal(err)
			}
			r.Close()
		}
	})
}
