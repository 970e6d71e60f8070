package texture

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/woozymasta/bcn"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

// assetTextures lists every .dds and .tga under ../shared/assets.
func assetTextures(t *testing.T) []string {
	t.Helper()
	root := decodetest.NeedShared(t, "assets")
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ext := strings.ToLower(filepath.Ext(p)); ext == ".dds" || ext == ".tga" {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no textures under ../shared/assets")
	}
	return files
}

// meanAbsDiff is the mean absolute difference of two images' channels, in
// 1/255 units; it fails on a size mismatch.
func meanAbsDiff(t *testing.T, got, want *image.NRGBA) float64 {
	t.Helper()
	if got.Rect != want.Rect {
		t.Fatalf("size %v, want %v", got.Rect, want.Rect)
	}
	var sum int64
	for y := range want.Rect.Dy() {
		g, w := got.Pix[y*got.Stride:][:4*want.Rect.Dx()], want.Pix[y*want.Stride:][:4*want.Rect.Dx()]
		for i := range g {
			d := int64(g[i]) - int64(w[i])
			sum += max(d, -d)
		}
	}
	return float64(sum) / float64(4*want.Rect.Dx()*want.Rect.Dy())
}

// TestRealTexturesMatchReference decodes every texture of the shared asset
// trees, through the PNG that meshfs writes, and compares its pixels with
// the independent reference decoders: BC1 and BC3 exactly, the others
// within a mean absolute error of 1/255.
func TestRealTexturesMatchReference(t *testing.T) {
	for _, p := range assetTextures(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			img, err := Decode(p, bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := PNG(&buf, img); err != nil {
				t.Fatal(err)
			}
			back, err := png.Decode(&buf)
			if err != nil {
				t.Fatal(err)
			}
			got := toNRGBA(back)
			var want *image.NRGBA
			exact := false
			if strings.EqualFold(filepath.Ext(p), ".tga") {
				want, err = refTGA(b)
			} else {
				var fourCC string
				want, fourCC, err = refDDS(b)
				// Uncompressed files (no FourCC) are exact too.
				exact = fourCC == "DXT1" || fourCC == "DXT5" || fourCC == ""
				if fourCC != "" && fourCC != img.Encoding {
					t.Errorf("encoding %q, the file says %q", img.Encoding, fourCC)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			d := meanAbsDiff(t, got, want)
			if exact && d != 0 {
				t.Errorf("%s: mean absolute difference %.4f/255 from the reference, want 0", img.Encoding, d)
			} else if d > 1 {
				t.Errorf("%s: mean absolute difference %.4f/255 from the reference, want ≤ 1", img.Encoding, d)
			}
		})
	}
}

// TestTGAOrigin checks that rows come out top-down whatever the origin bit
// says: the same picture stored bottom-up and top-down decodes alike.
func TestTGAOrigin(t *testing.T) {
	const w, h = 3, 2
	px := [][3]byte{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}, {13, 14, 15}, {16, 17, 18}} // top row first, RGB
	mk := func(topDown bool) []byte {
		b := []byte{0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, w, 0, h, 0, 24, 0}
		if topDown {
			b[17] = 0x20
		}
		for row := range h {
			y := h - 1 - row
			if topDown {
				y = row
			}
			for x := range w {
				c := px[y*w+x]
				b = append(b, c[2], c[1], c[0])
			}
		}
		return b
	}
	for _, td := range []bool{false, true} {
		b := mk(td)
		img, err := Decode("x.tga", bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range px {
			got := img.NRGBAAt(i%w, i/w)
			if got.R != c[0] || got.G != c[1] || got.B != c[2] || got.A != 255 {
				t.Errorf("top-down=%v pixel %d,%d = %v, want %v", td, i%w, i/w, got, c)
			}
		}
	}
}

// encodeDDS makes a DDS file of a w×h gradient in format f with bcn's
// encoder.
func encodeDDS(t testing.TB, w, h int, f bcn.Format) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			i := y*img.Stride + 4*x
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(x), uint8(y), uint8(x^y), uint8(255-x)
		}
	}
	return decodetest.DDS(t, img, f, true)
}

// TestDDSFormats decodes encoder-made files of each block format, with
// mips, and checks the size and the encoding reported.
func TestDDSFormats(t *testing.T) {
	for _, f := range []bcn.Format{bcn.FormatBC1, bcn.FormatBC2, bcn.FormatBC3, bcn.FormatBC4, bcn.FormatBC5, bcn.FormatBC7, bcn.FormatRGBA8} {
		b := encodeDDS(t, 64, 32, f)
		img, err := Decode("t.dds", bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		if img.Rect.Dx() != 64 || img.Rect.Dy() != 32 || img.Mips < 2 {
			t.Errorf("%v: %v, %d mips", f, img.Rect, img.Mips)
		}
	}
}

// TestHostileSizes checks that claims beyond the file are refused before
// any allocation, with a positioned error.
func TestHostileSizes(t *testing.T) {
	good := encodeDDS(t, 64, 64, bcn.FormatBC1)
	for _, tc := range []struct {
		name  string
		edit  func(b []byte) []byte
		field string
	}{
		{"huge width", func(b []byte) []byte { b[offWidth+1] = 0x40; return b }, "width"},
		{"zero height", func(b []byte) []byte { copy(b[offHeight:], []byte{0, 0, 0, 0}); return b }, "width"},
		{"side over the limit", func(b []byte) []byte { copy(b[offWidth:], []byte{0, 0, 1, 0}); return b }, "width"},
		{"truncated data", func(b []byte) []byte { return b[:128+2000] }, ""},
		{"truncated header", func(b []byte) []byte { return b[:100] }, ""},
		{"unknown fourcc", func(b []byte) []byte { copy(b[offFourCC:], "ZZZZ"); return b }, "fourcc"},
	} {
		b := tc.edit(bytes.Clone(good))
		_, err := Decode("bad.dds", bytes.NewReader(b), int64(len(b)))
		var fe *decode.FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: %v, want a FormatError", tc.name, err)
			continue
		}
		if fe.Field != tc.field || fe.File != "bad.dds" {
			t.Errorf("%s: %v: field %q, want %q", tc.name, err, fe.Field, tc.field)
		}
	}
	tgaHuge := []byte{0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0x3f, 0xff, 0x3f, 32, 0}
	if _, err := Decode("bad.tga", bytes.NewReader(tgaHuge), int64(len(tgaHuge))); err == nil || !errors.Is(err, decode.ErrTruncated) {
		t.Errorf("huge TGA: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(encodeDDS(f, 8, 8, bcn.FormatBC1))
	f.Add(encodeDDS(f, 8, 4, bcn.FormatBC7))
	f.Add([]byte{0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0, 24, 0, 1, 2, 3, 4, 5, 6})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, name := range []string{"f.dds", "f.tga"} {
			img, err := Decode(name, bytes.NewReader(b), int64(len(b)))
			if err == nil && int64(len(img.Pix)) > 8*int64(len(b))+4 && !strings.HasSuffix(name, ".tga") {
				t.Fatalf("%d bytes of pixels from a %d-byte file", len(img.Pix), len(b))
			}
		}
	})
}

// TestBlockBands: a picture decoded in bands of block rows on all CPUs is
// the picture decoded in one piece, for sides that are not multiples of 4
// or of a band, and data one block short is an error, not a panic.
func TestBlockBands(t *testing.T) {
	pic := detailImage(1030, 526)
	for _, f := range []bcn.Format{bcn.FormatBC1, bcn.FormatBC3, bcn.FormatBC7} {
		dds := ddsOf(t, pic, f)
		par, err := Decode("t.dds", bytes.NewReader(dds), int64(len(dds)))
		if err != nil {
			t.Fatal(f, err)
		}
		serialBlocks = true
		one, err := Decode("t.dds", bytes.NewReader(dds), int64(len(dds)))
		serialBlocks = false
		if err != nil {
			t.Fatal(f, err)
		}
		if par.Rect != one.Rect || !bytes.Equal(par.Pix, one.Pix) {
			t.Errorf("%v: banded decode differs from the one-piece decode", f)
		}
		bx, by := (1030+3)/4, (526+3)/4
		if _, err := decodeBlocks(context.Background(), make([]byte, bx*by*blockBytes(f)-1), 1030, 526, f); err == nil {
			t.Errorf("%v: short data decoded", f)
		}
	}
}
