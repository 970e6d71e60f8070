package texture

import (
	"bytes"
	"hash/adler32"
	"image"
	"image/png"
	"math/rand/v2"
	"testing"
)

// TestPNGRoundTrip: writePNG's files decode with image/png to exactly the
// pixels written, opaque (RGB) or not (RGBA), from 1×1 to several bands
// of rows, and from a sub-image whose origin is not (0, 0).
func TestPNGRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		w, h   int
		opaque bool
	}{{1, 1, true}, {1, 1, false}, {3, 5, true}, {7, 2, false}, {700, 900, true}, {600, 700, false}} {
		img := image.NewNRGBA(image.Rect(0, 0, c.w+3, c.h+2))
		for i := range img.Pix {
			img.Pix[i] = uint8(i/4%61) + uint8(r.IntN(4)) // runs and noise
			if i%4 == 3 && c.opaque {
				img.Pix[i] = 255
			}
		}
		sub := img.SubImage(image.Rect(2, 1, 2+c.w, 1+c.h)).(*image.NRGBA)
		if c.opaque {
			// The margin may be translucent: only the sub-image counts.
			img.Pix[3] = 7
		}
		var buf bytes.Buffer
		if err := writePNG(&buf, sub); err != nil {
			t.Fatal(err)
		}
		back, err := png.Decode(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("%dx%d: %v", c.w, c.h, err)
		}
		_, isRGB := back.(*image.RGBA) // image/png gives RGBA for colour type 2
		if isRGB != c.opaque {
			t.Errorf("%dx%d opaque=%v: decoded as %T", c.w, c.h, c.opaque, back)
		}
		if back.Bounds() != image.Rect(0, 0, c.w, c.h) {
			t.Fatalf("bounds %v", back.Bounds())
		}
		dec := toNRGBA(back)
		for y := range c.h {
			for x := range c.w {
				want := sub.NRGBAAt(2+x, 1+y)
				got := dec.NRGBAAt(x, y)
				if got != want {
					t.Fatalf("%dx%d: pixel %d,%d = %v, want %v", c.w, c.h, x, y, got, want)
				}
			}
		}
	}
	if err := writePNG(&bytes.Buffer{}, image.NewNRGBA(image.Rect(0, 0, 0, 4))); err == nil {
		t.Error("an empty image encoded")
	}
}

// TestAdler32Combine: the combined checksum of two pieces is the checksum
// of the two joined, for lengths around the modulus.
func TestAdler32Combine(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {5, 65520}, {65521, 65522}, {100000, 300001}} {
		a, b := make([]byte, n[0]), make([]byte, n[1])
		for i := range a {
			a[i] = byte(r.Uint32())
		}
		for i := range b {
			b[i] = 0xff - byte(i) // large bytes push both sums high
		}
		want := adler32.Checksum(append(append([]byte(nil), a...), b...))
		if got := adler32Combine(adler32.Checksum(a), adler32.Checksum(b), len(b)); got != want {
			t.Errorf("%v: %08x, want %08x", n, got, want)
		}
	}
}

// TestPNGBands: the bands cover every row once; each holds at most
// pngBand bytes; a picture from parallelPixels on has a multiple of the
// CPUs of them, of equal rows but the last, and one below it a single
// band when it fits in one.
func TestPNGBands(t *testing.T) {
	for _, c := range []struct{ w, h, bpp, cpus int }{
		{1024, 1024, 3, 2}, {1024, 1024, 4, 2}, {2048, 2048, 3, 2}, {512, 512, 3, 2}, {512, 512, 4, 3},
		{256, 256, 4, 2}, {4096, 4096, 4, 8}, {1024, 1024, 3, 1}, {600, 700, 4, 2}, {8192, 2, 4, 4},
	} {
		stride := 1 + c.bpp*c.w
		rows, bands := pngBands(c.w, c.h, stride, c.cpus)
		if rows < 1 || bands < 1 || (bands-1)*rows >= c.h || bands*rows < c.h {
			t.Errorf("%+v: %d bands of %d rows do not cover %d rows once", c, bands, rows, c.h)
		}
		if rows*stride > pngBand && rows > 1 {
			t.Errorf("%+v: a band of %d rows holds %d bytes, more than %d", c, rows, rows*stride, pngBand)
		}
		if c.w*c.h >= parallelPixels && c.cpus > 1 && bands%c.cpus != 0 {
			t.Errorf("%+v: %d bands, not a multiple of %d CPUs", c, bands, c.cpus)
		}
		if c.w*c.h < parallelPixels && c.h*stride <= pngBand && bands != 1 {
			t.Errorf("%+v: %d bands for a small picture", c, bands)
		}
	}
}
