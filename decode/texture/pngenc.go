package texture

import (
	"bytes"
	"encoding/binary"
	"hash/adler32"
	"hash/crc32"
	"image"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/flate"

	"github.com/meshfs/meshfs/decode"
)

// pngFilter is the one PNG filter type every row gets. image/png chooses
// per row (all five tried, the smallest sum of absolute differences kept);
// on decoded block-compressed textures Up alone gives files as small
// (within 2 %) and leaves deflate less to do than Paeth or Sub, whose
// residues break up the 4×4 blocks' runs.
const pngFilter = filterUp

// PNG filter types (PNG spec §9.2).
const (
	filterNone = iota
	filterSub
	filterUp
	filterAverage
	filterPaeth
)

// pngBand is the number of bytes of filtered rows compressed as one piece:
// the pieces are deflated in parallel and joined into one zlib stream
// (each but the last ends on a sync flush, so no block spans two pieces;
// none refers back into another, which costs the first 32 KiB of each
// piece its history, under 1 % at this size).
const pngBand = 1 << 20

// writePNG writes m as an 8-bit PNG (encodePNG).
func writePNG(w io.Writer, m *image.NRGBA) error {
	b, err := encodePNG(m)
	if err == nil {
		_, err = w.Write(b)
	}
	return err
}

// encodePNG returns m as an 8-bit PNG: RGB when every pixel is opaque,
// RGBA otherwise, at flate.BestSpeed, every row filtered with pngFilter.
func encodePNG(m *image.NRGBA) ([]byte, error) {
	wd, ht := m.Rect.Dx(), m.Rect.Dy()
	if wd <= 0 || ht <= 0 {
		return nil, decode.Errorf("", "", "", 0, "cannot encode a %d×%d image as PNG", wd, ht)
	}
	opaque := m.Opaque()
	bpp := 4
	colorType := byte(6)
	if opaque {
		bpp, colorType = 3, 2
	}
	stride := 1 + bpp*wd // filter byte + pixels
	rowsPer, bands := pngBands(wd, ht, stride, runtime.GOMAXPROCS(0))
	type piece struct {
		z     []byte
		adler uint32
		n     int
	}
	pieces := make([]piece, bands)
	each := decode.ParallelEach
	if bands == 1 {
		each = func(n int, fn func(i int) error) error {
			for i := range n {
				if err := fn(i); err != nil {
					return err
				}
			}
			return nil
		}
	}
	err := each(bands, func(i int) error {
		// Each filtered row goes to the compressor as it is made: a
		// band's rows are never held whole.
		y0, y1 := i*rowsPer, min(ht, (i+1)*rowsPer)
		prev := make([]byte, bpp*wd)
		cur := make([]byte, bpp*wd)
		out := make([]byte, stride)
		if y0 > 0 {
			rowBytes(m, y0-1, opaque, prev)
		}
		var buf bytes.Buffer
		buf.Grow((y1 - y0) * stride / 3)
		fw := flateWriter(&buf)
		defer flatePool.Put(fw)
		sum := adler32.New()
		for y := y0; y < y1; y++ {
			rowBytes(m, y, opaque, cur)
			out[0] = byte(pngFilter)
			filterRow(out[1:], cur, prev, bpp, pngFilter)
			sum.Write(out)
			if _, err := fw.Write(out); err != nil {
				return err
			}
			prev, cur = cur, prev
		}
		var err error
		if i == bands-1 {
			err = fw.Close()
		} else {
			err = fw.Flush()
		}
		pieces[i] = piece{z: buf.Bytes(), adler: sum.Sum32(), n: (y1 - y0) * stride}
		return err
	})
	if err != nil {
		return nil, err
	}
	var hdr [13]byte
	binary.BigEndian.PutUint32(hdr[0:], uint32(wd))
	binary.BigEndian.PutUint32(hdr[4:], uint32(ht))
	hdr[8], hdr[9] = 8, colorType // bit depth, colour type; compression, filter, interlace 0
	// One IDAT: zlib header (deflate, 32 KiB window, fastest level), the
	// pieces, the Adler-32 of all filtered rows. The file is assembled in
	// one buffer of its exact size.
	idatLen := 2 + 4
	for _, p := range pieces {
		idatLen += len(p.z)
	}
	const sig = "\x89PNG\r\n\x1a\n"
	out := make([]byte, 0, len(sig)+3*12+len(hdr)+idatLen)
	out = append(out, sig...)
	out = AppendPNGChunk(out, "IHDR", hdr[:])
	out = binary.BigEndian.AppendUint32(out, uint32(idatLen))
	start := len(out)
	out = append(out, "IDAT"...)
	out = append(out, 0x78, 0x01)
	sum := uint32(1)
	for _, p := range pieces {
		out = append(out, p.z...)
		sum = adler32Combine(sum, p.adler, p.n)
	}
	out = binary.BigEndian.AppendUint32(out, sum)
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[start:]))
	return AppendPNGChunk(out, "IEND", nil), nil
}

// parallelPixels is the picture size from which writePNG deflates its
// bands on all CPUs: below it the goroutines cost more than they save.
const parallelPixels = 512 * 512

// pngBands splits the ht rows of stride bytes of a wd-wide picture into
// bands of rowsPer rows (the last may have fewer): as few bands as hold at
// most pngBand bytes each; from parallelPixels on, a multiple of cpus of
// them (at most one per row), of equal rows, so that no CPU is left with
// a band when the others are done (a 1024² RGB picture: 4 bands of 256
// rows, not 3 of 341 and one of 1).
func pngBands(wd, ht, stride, cpus int) (rowsPer, bands int) {
	bands = (ht*stride + pngBand - 1) / pngBand
	if wd*ht >= parallelPixels && cpus > 1 {
		bands = (bands + cpus - 1) / cpus * cpus
	}
	bands = max(1, min(bands, ht))
	rowsPer = (ht + bands - 1) / bands
	return rowsPer, (ht + rowsPer - 1) / rowsPer
}

// flatePool holds level-1 writers of klauspost/compress's flate: the
// format compress/flate's BestSpeed writes, made in about two thirds of
// its time on decoded textures and 1–3 % smaller.
var flatePool sync.Pool

func flateWriter(w io.Writer) *flate.Writer {
	if fw, ok := flatePool.Get().(*flate.Writer); ok {
		fw.Reset(w)
		return fw
	}
	fw, _ := flate.NewWriter(w, flate.BestSpeed) // a valid level: no error
	return fw
}

// AppendPNGChunk appends the PNG chunk typ holding data to b (its length,
// type, data and CRC).
func AppendPNGChunk(b []byte, typ string, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	start := len(b)
	b = append(b, typ...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
}

// rowBytes copies row y (from 0, the top) of m into dst as RGB (opaque) or RGBA bytes.
func rowBytes(m *image.NRGBA, y int, opaque bool, dst []byte) {
	at := m.PixOffset(m.Rect.Min.X, m.Rect.Min.Y+y)
	src := m.Pix[at : at+4*m.Rect.Dx()]
	if !opaque {
		copy(dst, src)
		return
	}
	for i, j := 0, 0; i+3 < len(src); i, j = i+4, j+3 {
		dst[j], dst[j+1], dst[j+2] = src[i], src[i+1], src[i+2]
	}
}

// filterRow writes row cur filtered by type f against the row above,
// prev (all zeros for the first row, as the spec has it).
func filterRow(out, cur, prev []byte, bpp, f int) {
	switch f {
	case filterNone:
		copy(out, cur)
	case filterSub:
		copy(out[:bpp], cur[:bpp])
		for i := bpp; i < len(cur); i++ {
			out[i] = cur[i] - cur[i-bpp]
		}
	case filterUp:
		for i := range cur {
			out[i] = cur[i] - prev[i]
		}
	case filterAverage:
		for i := range bpp {
			out[i] = cur[i] - prev[i]/2
		}
		for i := bpp; i < len(cur); i++ {
			out[i] = cur[i] - byte((int(cur[i-bpp])+int(prev[i]))/2)
		}
	case filterPaeth:
		for i := range bpp {
			out[i] = cur[i] - prev[i] // paeth(0, up, 0) is up
		}
		for i := bpp; i < len(cur); i++ {
			a, b, c := int(cur[i-bpp]), int(prev[i]), int(prev[i-bpp])
			p := b - c
			q := a - c
			pa, pb, pc := abs(p), abs(q), abs(p+q)
			pred := a
			if pb < pa {
				pred, pa = b, pb
			}
			if pc < pa {
				pred = c
			}
			out[i] = cur[i] - byte(pred)
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// adler32Combine is the Adler-32 of A followed by B from a = adler(A),
// b = adler(B) and len(B) (zlib's adler32_combine).
func adler32Combine(a, b uint32, n int) uint32 {
	const base = 65521
	rem := uint32(n % base)
	s1 := a & 0xffff
	s2 := (rem * s1) % base
	s1 += (b & 0xffff) + base - 1
	s2 += (a >> 16) + (b >> 16) + base - rem
	if s1 >= base {
		s1 -= base
	}
	if s1 >= base {
		s1 -= base
	}
	if s2 >= base<<1 {
		s2 -= base << 1
	}
	if s2 >= base {
		s2 -= base
	}
	return s1 | s2<<16
}
