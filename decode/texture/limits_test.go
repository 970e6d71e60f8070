package texture

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"sync/atomic"
	"testing"

	"github.com/woozymasta/bcn"

	"github.com/meshfs/meshfs/decode"
)

// TestMaxPixelsMipLevel: a DDS whose top level is over MaxPixels is
// decoded from its first mip level within it, pixel for pixel that level
// as bcn reads it; one without mips, a PNG and a TGA over the cap fail
// with decode.ErrLimit, naming the file and the field.
func TestMaxPixelsMipLevel(t *testing.T) {
	pic := detailImage(256, 128)
	for _, f := range []bcn.Format{bcn.FormatBC1, bcn.FormatBC7, bcn.FormatRGBA8} {
		b := ddsOf(t, pic, f)
		full, err := bcn.ReadDDS(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			max         int64
			level, w, h int
		}{{0, 0, 256, 128}, {256 * 128, 0, 256, 128}, {256*128 - 1, 1, 128, 64}, {2000, 3, 32, 16}, {1, 8, 1, 1}} {
			img, err := DecodeContext(context.Background(), "t.dds", bytes.NewReader(b), int64(len(b)), Options{MaxPixels: tc.max})
			if err != nil {
				t.Fatalf("%v max %d: %v", f, tc.max, err)
			}
			if img.Level != tc.level || img.Rect.Dx() != tc.w || img.Rect.Dy() != tc.h || img.Full != image.Pt(256, 128) {
				t.Fatalf("%v max %d: level %d %v of %v, want level %d %d×%d", f, tc.max, img.Level, img.Rect, img.Full, tc.level, tc.w, tc.h)
			}
			want, err := bcn.DecodeImage(full.Faces[0].Mipmaps[tc.level], tc.w, tc.h, full.Format)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(img.Pix, want.Pix) {
				t.Errorf("%v max %d: level %d's pixels differ from bcn's", f, tc.max, tc.level)
			}
			cfg, err := ReadConfig("t.dds", bytes.NewReader(b), int64(len(b)), Options{MaxPixels: tc.max})
			if err != nil || cfg.Level != img.Level || cfg.Size != img.Rect.Size() || cfg.Full != img.Full {
				t.Errorf("%v max %d: ReadConfig %+v, %v; the decoding: level %d %v", f, tc.max, cfg, err, img.Level, img.Rect)
			}
			if (cfg.Downscale() != "") != (tc.level > 0) {
				t.Errorf("%v max %d: Downscale %q", f, tc.max, cfg.Downscale())
			}
		}
	}

	noMips := encodeOne(t, pic)
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, pic); err != nil {
		t.Fatal(err)
	}
	tga := []byte{0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 128, 0, 32, 0x20}
	tga = append(tga, make([]byte, 256*128*4)...)
	for name, b := range map[string][]byte{"flat.dds": noMips, "png.dds": pngBuf.Bytes(), "t.tga": tga} {
		if _, err := DecodeContext(context.Background(), name, bytes.NewReader(b), int64(len(b)), Options{MaxPixels: 256 * 128}); err != nil {
			t.Fatalf("%s at its size: %v", name, err)
		}
		_, err := DecodeContext(context.Background(), name, bytes.NewReader(b), int64(len(b)), Options{MaxPixels: 256*128 - 1})
		if _, cerr := ReadConfig(name, bytes.NewReader(b), int64(len(b)), Options{MaxPixels: 256*128 - 1}); cerr == nil || err == nil || cerr.Error() != err.Error() {
			t.Errorf("%s over the cap: ReadConfig says %v, the decoding %v", name, cerr, err)
		}
		var fe *decode.FormatError
		if !errors.Is(err, decode.ErrLimit) || !errors.As(err, &fe) || fe.File != name || fe.Field != "width" {
			t.Errorf("%s over the cap: %v, want a limit error on its width", name, err)
		}
	}
}

// encodeOne is pic as a BC1 DDS with its top level alone.
func encodeOne(t *testing.T, pic image.Image) []byte {
	b := ddsOf(t, pic, bcn.FormatBC1)
	d, err := bcn.ReadDDS(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	d.Faces[0].Mipmaps = d.Faces[0].Mipmaps[:1]
	var buf bytes.Buffer
	if err := d.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// endsAfter is a context whose Err reports cancellation from its n+1th
// call on: it ends in the middle of a decoding, at a point the decoder
// itself chooses to look.
type endsAfter struct {
	context.Context
	n     int64
	calls atomic.Int64
}

func (c *endsAfter) Err() error {
	if c.calls.Add(1) > c.n {
		return context.Canceled
	}
	return nil
}

// TestDecodeStopsMidway: a decoding whose context ends after it has
// started stops with the context's error: a block-compressed picture
// between its bands, a PNG between its reads.
func TestDecodeStopsMidway(t *testing.T) {
	pic := detailImage(1030, 1030) // 9 bands of block rows
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, pic); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"bc1.dds": ddsOf(t, pic, bcn.FormatBC1), "bc7.dds": ddsOf(t, pic, bcn.FormatBC7), "p.png": pngBuf.Bytes()} {
		ctx := &endsAfter{Context: context.Background(), n: 3}
		_, err := DecodeContext(ctx, name, bytes.NewReader(b), int64(len(b)), Options{})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want it stopped by its context", name, err)
		}
		if c := ctx.calls.Load(); c < 4 {
			t.Errorf("%s: the context was asked %d times: the decoding never began", name, c)
		}
		if _, err := DecodeContext(context.Background(), name, bytes.NewReader(b), int64(len(b)), Options{}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
