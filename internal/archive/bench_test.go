package archive

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// bigList is an archive of 50 000 entries as a game's .pak holds them:
// paths of 5 to 8 folders, small files, stored and deflated.
func bigList(b *testing.B) (string, int) {
	b.Helper()
	p := filepath.Join(b.TempDir(), "list.zip")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	w := zip.NewWriter(bw)
	const n = 50000
	for i := range n {
		m := zip.Store
		if i%2 == 1 {
			m = zip.Deflate
		}
		fw, err := w.CreateHeader(&zip.FileHeader{Method: m, Modified: testTime,
			Name: fmt.Sprintf("resource/entity/-vehicle/tank_%03d/lod%d/part_%05d.ply", i/500, i%3, i)})
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(fw, "entry %d", i)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	bw.Flush()
	f.Close()
	return p, n
}

// BenchmarkList50k: listing a 50 000-entry archive cold (Open: one read of
// the central directory) and after a remount (Resume from MarshalBinary's
// listing), against `unzip -l` of the same file when installed (the ratio
// is logged).
func BenchmarkList50k(b *testing.B) {
	p, n := bigList(b)
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	var open time.Duration
	b.Run("open", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			a, err := Open(f, fi.Size(), p, DefaultLimits)
			if err != nil || a.Len() < n {
				b.Fatalf("%d entries, %v", a.Len(), err)
			}
		}
		open = time.Since(start) / time.Duration(b.N)
	})
	a, _ := Open(f, fi.Size(), p, DefaultLimits)
	blob, _ := a.MarshalBinary()
	b.Run("resume", func(b *testing.B) {
		for b.Loop() {
			r, err := Resume(f, fi.Size(), p, DefaultLimits, blob)
			if err != nil || r.Len() != a.Len() {
				b.Fatalf("%v", err)
			}
		}
		b.ReportMetric(float64(len(blob))/float64(n), "listing-B/entry")
	})
	if _, err := exec.LookPath("unzip"); err != nil {
		b.Logf("unzip is not installed: no ratio")
		return
	}
	b.Run("unzip-l", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			if err := exec.Command("unzip", "-l", p).Run(); err != nil {
				b.Fatal(err)
			}
		}
		unzip := time.Since(start) / time.Duration(b.N)
		if open > 0 {
			b.Logf("Open %v, unzip -l %v: %.2f× unzip's time", open, unzip, float64(open)/float64(unzip))
		}
	})
}

// bigEntry is an archive holding one deflated entry of 64 MiB
// (ARCHIVE_BENCH_MB to change) shaped like mesh data, and the same bytes in
// a plain file.
var bigEntry = sync.OnceValues(func() (string, string) {
	dir, err := os.MkdirTemp("", "meshfs-archive-bench-")
	if err != nil {
		panic(err)
	}
	size := 64 << 20
	if mb, err := strconv.Atoi(os.Getenv("ARCHIVE_BENCH_MB")); err == nil && mb > 0 {
		size = mb << 20
	}
	data := make([]byte, size)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < size; i += 4 {
		v := uint32(rng.NormFloat64()*1000) & 0xffff
		data[i], data[i+1] = byte(v), byte(v>>8)
	}
	plain := filepath.Join(dir, "plain.bin")
	os.WriteFile(plain, data, 0o644)
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	w.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) { return flate.NewWriter(out, flate.BestSpeed) })
	fw, _ := w.Create("big.bin")
	fw.Write(data)
	w.Close()
	z := filepath.Join(dir, "big.zip")
	os.WriteFile(z, buf.Bytes(), 0o644)
	return z, plain
})

// BenchmarkRandomReadDeflated: random 4 KiB reads of a 64 MiB deflated
// entry once inflated into a spill file, and through checkpoints (each read
// inflating up to a span), against the same bytes from a plain file; and
// the first read at a random offset of a freshly opened entry (spill
// file), which inflates up to it.
func BenchmarkRandomReadDeflated(b *testing.B) {
	z, plain := bigEntry()
	defer os.RemoveAll(filepath.Dir(z))
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
