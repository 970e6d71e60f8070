package preview

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"
)

// pngChunk is one chunk of a PNG file as pngChunks walks it.
type pngChunk struct {
	typ  string
	data []byte
}

// pngChunks walks b's chunks after the signature, checking every CRC and
// that IEND ends the file exactly.
func pngChunks(t *testing.T, b []byte) []pngChunk {
	t.Helper()
	if !bytes.HasPrefix(b, []byte(pngSignature)) {
		t.Fatal("no PNG signature")
	}
	var cs []pngChunk
	for at := len(pngSignature); ; {
		if at+chunkOverhead > len(b) {
			t.Fatalf("a chunk header at %d runs past the file's %d bytes", at, len(b))
		}
		n := int(binary.BigEndian.Uint32(b[at:]))
		if at+chunkOverhead+n > len(b) {
			t.Fatalf("chunk at %d: %d bytes run past the file", at, n)
		}
		typ, data := string(b[at+4:at+8]), b[at+8:at+8+n]
		if crc := binary.BigEndian.Uint32(b[at+8+n:]); crc != crc32.ChecksumIEEE(b[at+4:at+8+n]) {
			t.Fatalf("chunk %s: bad CRC", typ)
		}
		cs = append(cs, pngChunk{typ, data})
		at += chunkOverhead + n
		if typ == "IEND" {
			if at != len(b) {
				t.Fatalf("%d bytes after IEND", len(b)-at)
			}
			return cs
		}
	}
}

// noisy is a size² picture of random pixels (alpha random too), which no
// deflate compresses.
func noisy(size int, r *rand.Rand) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	for i := range img.Pix {
		img.Pix[i] = byte(r.Uint32())
	}
	return img
}

// shapes is a size² picture like a preview: transparent, with an opaque
// disc of a gradient.
func shapes(size int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	c := float64(size) / 2
	for y := range size {
		for x := range size {
			dx, dy := float64(x)+0.5-c, float64(y)+0.5-c
			if dx*dx+dy*dy < c*c*0.8 {
				img.SetNRGBA(x, y, color.NRGBA{byte(x), byte(y), 128, 255})
			}
		}
	}
	return img
}

// opaque is a size² picture with every pixel opaque (the compact encoder
// writes RGB then).
func opaque(size int, r *rand.Rand) *image.NRGBA {
	img := noisy(size, r)
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	return img
}

// Every preview is FixedLen(size) bytes whatever its picture: pictures
// that compress well, random noise that compresses not at all (stored
// then), opaque noise (RGB), an empty picture, for many sides; the file
// is a valid PNG (every CRC right, IHDR first, IDAT before the padding
// chunk, the padding chunk's zero bytes just before IEND) that image/png
// decodes to the very pixels drawn.
func TestFixedLength(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 2, 3, 7, 16, 31, 64, 100, 127, 128, 129, 181, 255, 256, 257, 300, 512}
	stored := 0
	for _, size := range sizes {
		pics := map[string]*image.NRGBA{
			"empty":  image.NewNRGBA(image.Rect(0, 0, size, size)),
			"shapes": shapes(size),
			"noise":  noisy(size, r),
			"opaque": opaque(size, r),
		}
		for name, img := range pics {
			compact, err := Encode(img)
			if err != nil {
				t.Fatalf("%d %s: %v", size, name, err)
			}
			if int64(len(compact)) == storedLen(size, size) {
				stored++
			}
			b, err := Pad(compact, size)
			if err != nil {
				t.Fatalf("%d %s: %v", size, name, err)
			}
			if int64(len(b)) != FixedLen(size) {
				t.Fatalf("%d %s: %d bytes, want %d", size, name, len(b), FixedLen(size))
			}
			cs := pngChunks(t, b)
			if cs[0].typ != "IHDR" || cs[len(cs)-2].typ != PadChunk || cs[len(cs)-3].typ != "IDAT" {
				t.Fatalf("%d %s: chunks %v", size, name, chunkTypes(cs))
			}
			if pad := cs[len(cs)-2].data; int64(len(pad)) != FixedLen(size)-int64(len(compact))-chunkOverhead || bytes.ContainsFunc(pad, func(r rune) bool { return r != 0 }) {
				t.Fatalf("%d %s: padding of %d bytes, not zeros filling the rest", size, name, len(pad))
			}
			got, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%d %s: image/png: %v", size, name, err)
			}
			if !samePixels(img, got) {
				t.Fatalf("%d %s: decoded pixels differ", size, name)
			}
		}
	}
	if stored == 0 {
		t.Fatal("no picture was stored: the stored encoding went untested")
	}
}

func chunkTypes(cs []pngChunk) []string {
	var ts []string
	for _, c := range cs {
		ts = append(ts, c.typ)
	}
	return ts
}

// samePixels reports whether got shows want's pixels (as non-premultiplied
// colours; a fully transparent pixel's colour aside).
func samePixels(want *image.NRGBA, got image.Image) bool {
	if got.Bounds() != want.Bounds() {
		return false
	}
	for y := want.Rect.Min.Y; y < want.Rect.Max.Y; y++ {
		for x := want.Rect.Min.X; x < want.Rect.Max.X; x++ {
			w := want.NRGBAAt(x, y)
			g := color.NRGBAModel.Convert(got.At(x, y)).(color.NRGBA)
			if w.A == 0 && g.A == 0 {
				continue
			}
			if w != g {
				return false
			}
		}
	}
	return true
}

// The stored encoding is exactly storedLen bytes, so FixedLen leaves it
// an empty padding chunk, and its stored blocks are what image/png reads.
func TestStoredEncoding(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, size := range []int{1, 5, 128, 181, 256, 300} {
		img := noisy(size, r)
		b := encodeStored(img)
		if int64(len(b)) != storedLen(size, size) || int64(len(b))+chunkOverhead != FixedLen(size) {
			t.Fatalf("%d: stored %d bytes, storedLen %d, FixedLen %d", size, len(b), storedLen(size, size), FixedLen(size))
		}
		got, err := png.Decode(bytes.NewReader(b))
		if err != nil || !samePixels(img, got) {
			t.Fatalf("%d: stored PNG decodes to other pixels (%v)", size, err)
		}
	}
}

// Pad refuses what it cannot complete honestly: no PNG, a PNG of another
// side, one too long for the fixed length.
func TestPadRefuses(t *testing.T) {
	good, err := Encode(shapes(64))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Pad(good, 64); err != nil {
		t.Fatal(err)
	}
	if _, err := Pad(good, 32); err == nil {
		t.Fatal("a 64² PNG padded as a 32² preview")
	}
	if _, err := Pad(good[:len(good)-1], 64); err == nil {
		t.Fatal("a PNG without its IEND padded")
	}
	long := append(append([]byte{}, good[:len(good)-len(iend)]...), make([]byte, FixedLen(64))...)
	long = append(long, iend...)
	if _, err := Pad(long, 64); err == nil {
		t.Fatal("a PNG longer than the fixed length padded")
	}
	if _, err := Encode(image.NewNRGBA(image.Rect(0, 0, 4, 3))); err == nil {
		t.Fatal("a 4×3 picture encoded as a preview")
	}
}

// BenchmarkPad: the padding made on every read of a 256² preview from its
// compact PNG (an allocation of the fixed length and the padding's CRC).
func BenchmarkPad(b *testing.B) {
	compact, err := Encode(shapes(256))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(FixedLen(256))
	for b.Loop() {
		if _, err := Pad(compact, 256); err != nil {
			b.Fatal(err)
		}
	}
}
