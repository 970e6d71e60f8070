package texture

import (
	"bytes"
	"image"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/woozymasta/bcn"
	"golang.org/x/sys/unix"

	"github.com/meshfs/meshfs/decode/decodetest"
)

// detailImage is a w×h picture with the structure of a painted texture:
// smooth shading, a few hard edges (panels) and fine grain, so that the
// blocks and the PNG's filters see neither a flat ramp nor pure noise.
func detailImage(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			fx, fy := float64(x)/float64(w), float64(y)/float64(h)
			shade := 0.5 + 0.25*math.Sin(6*fx+2*fy) + 0.15*math.Cos(11*fy-3*fx)
			if (x/256+y/192)%3 == 0 {
				shade *= 0.7 // a panel
			}
			grain := float64(uint32(x*2654435761^y*40503)>>27) - 16 // ±16
			v := func(k float64) uint8 { return uint8(max(0, min(255, 255*shade*k+grain))) }
			i := y*img.Stride + 4*x
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = v(1), v(0.85), v(0.6), 255
		}
	}
	return img
}

// ddsOf encodes img in format f with bcn's encoder, mips included as in
// shipped textures.
func ddsOf(tb testing.TB, img image.Image, f bcn.Format) []byte {
	return decodetest.DDS(tb, img, f, true)
}

// readTime is the median time of reading the file at p whole (os.ReadFile)
// over n reads: from the page cache, or with cold set from the disk (the
// file's cached pages dropped before each read with
// posix_fadvise(DONTNEED), which touches no other file's).
func readTime(tb testing.TB, p string, n int, cold bool) time.Duration {
	tb.Helper()
	ts := make([]time.Duration, n)
	for i := range ts {
		if cold {
			f, err := os.Open(p)
			if err != nil {
				tb.Fatal(err)
			}
			err = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
			f.Close()
			if err != nil {
				tb.Fatal(err)
			}
		}
		t0 := time.Now()
		if _, err := os.ReadFile(p); err != nil {
			tb.Fatal(err)
		}
		ts[i] = time.Since(t0)
	}
	slices.Sort(ts)
	return ts[len(ts)/2]
}

// writeSynced writes b to p and waits for the disk, so that its pages
// are clean and can be dropped.
func writeSynced(tb testing.TB, p string, b []byte) {
	tb.Helper()
	f, err := os.Create(p)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkTexture decodes a 2048² BC1 and BC7 texture (with mips, of a
// painted-looking picture, made by bcn's encoder) and encodes its PNG
// (EncodePNG), as the mount does on a texture's first use; MB/s is of the
// DDS file. It reports ms per texture and the median time to read the same file whole,
// from the page cache (read-ms) and from the disk (disk-ms), with the
// ratios x-read and x-disk: issue #15's target is texture work within 20
// times the read from disk. The -serial runs decode the blocks on one
// goroutine, for comparison in the same run.
func BenchmarkTexture(b *testing.B) {
	pic := detailImage(2048, 2048)
	for _, f := range []bcn.Format{bcn.FormatBC1, bcn.FormatBC7} {
		dds := ddsOf(b, pic, f)
		p := filepath.Join(b.TempDir(), "t.dds")
		writeSynced(b, p, dds)
		for _, serial := range []bool{false, true} {
			name := f.String()
			if serial {
				name += "-serial"
			}
			b.Run(name, func(b *testing.B) {
				serialBlocks = serial
				defer func() { serialBlocks = false }()
				disk := readTime(b, p, 7, true)
				read := readTime(b, p, 21, false)
				decodetest.Loop(b, int64(len(dds)), func() error {
					img, err := Decode("t.dds", bytes.NewReader(dds), int64(len(dds)))
					if err != nil {
						return err
					}
					_, err = EncodePNG(img)
					return err
				})
				per := b.Elapsed() / time.Duration(b.N)
				b.ReportMetric(float64(per)/1e6, "ms/texture")
				b.ReportMetric(float64(read)/1e6, "read-ms")
				b.ReportMetric(float64(disk)/1e6, "disk-ms")
				b.ReportMetric(float64(per)/float64(read), "x-read")
				b.ReportMetric(float64(per)/float64(disk), "x-disk")
			})
		}
	}
}
