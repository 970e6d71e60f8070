// Package texture decodes the image files that game materials name (DDS,
// TGA, PNG, JPEG) into 8-bit RGBA pixels, and encodes them as PNG, the
// lossless one of the two image formats glTF allows.
//
// Only the top mip level of the first face is read. Rows come out top-down,
// the first row the top of the picture: DDS stores them so, a TGA says in
// its origin bit (honoured), PNG and JPEG always do. glTF puts UV (0,0) at
// the top-left of the image, so a texture's rows go into the .glb as they
// come from here; a decoder whose format puts V=0 at the bottom (as
// OpenGL-era engines do) flips V in its UVs, never the image.
//
// Every size a file claims is checked against the bytes it has before
// anything is allocated for it: a decoded image is at most 4 bytes per
// pixel, and the densest encoding read here (BC1) holds 2 pixels a byte,
// so a picture never costs more than 8 times its file's size.
//
// Options.MaxPixels caps the picture decoded, checked on the header before
// any pixel is: a DDS whose top level exceeds it is decoded from its
// first mip level within it (Image.Level says which), any other texture
// over it fails with decode.ErrLimit. DecodeContext stops when its context
// ends: block-compressed pictures between bands of block rows, PNG and
// JPEG between reads of the file. The TGA decoder cannot stop midway (it
// takes the whole file and returns the whole picture), so a TGA's time is
// bounded by MaxPixels alone.
package texture

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
	"io"
	"path/filepath"
	"strings"

	"github.com/ftrvxmtrx/tga"
	"github.com/woozymasta/bcn"

	"github.com/meshfs/meshfs/decode"
)

// MaxSide is the largest width or height accepted (Direct3D's limit).
const MaxSide = 16384

// Image is a decoded texture.
type Image struct {
	*image.NRGBA
	// Encoding names what the file held: "DXT1", "BC7", "RGBA8", "TGA", ...
	Encoding string
	// Mips is the number of mip levels the file declares (1 for TGA, PNG,
	// JPEG).
	Mips int
	// Level is the mip level decoded: 0, the top, unless the top is over
	// Options.MaxPixels. Full is the size of the top level.
	Level int
	Full  image.Point
}

// Options bound one decoding.
type Options struct {
	// MaxPixels caps the pixels of the picture decoded (0: no cap).
	MaxPixels int64
}

// pickLevel returns the first of mips levels of a w×h picture (each half
// the one before, at least 1 pixel a side) that max pixels hold (max 0:
// the top), and its size; ok is false when none does.
func pickLevel(w, h, mips int, max int64) (level, lw, lh int, ok bool) {
	for l := range mips {
		if max <= 0 || int64(w)*int64(h) <= max {
			return l, w, h, true
		}
		if w > 1 {
			w >>= 1
		}
		if h > 1 {
			h >>= 1
		}
	}
	return 0, 0, 0, false
}

// Is reports whether a file of this name is a texture this package reads.
func Is(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".dds", ".tga", ".png", ".jpg", ".jpeg":
		return true
	}
	return false
}

// Decode reads the texture file name (its bytes in r, size long), without
// a pixel cap or a deadline: DecodeContext with no options.
func Decode(name string, r io.ReaderAt, size int64) (*Image, error) {
	return DecodeContext(context.Background(), name, r, size, Options{})
}

// DecodeContext reads the texture file name (its bytes in r, size long)
// within o, until ctx ends (its error then wraps ctx's). The format is
// told as sniff tells it.
func DecodeContext(ctx context.Context, name string, r io.ReaderAt, size int64, o Options) (*Image, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch kind, err := sniff(name, r); kind {
	case "DDS":
		return decodeDDS(ctx, name, r, size, o)
	case "PNG":
		return decodeStd(ctx, name, r, size, o, kind, png.DecodeConfig, png.Decode)
	case "JPEG":
		return decodeStd(ctx, name, r, size, o, kind, jpeg.DecodeConfig, jpeg.Decode)
	case "TGA":
		return decodeTGA(ctx, name, r, size, o)
	default:
		return nil, err
	}
}

// Config is what a texture file's header says of the picture
// DecodeContext would make of it, found without decoding any pixel.
type Config struct {
	// Size is the picture's, Full the file's top level's; Level is the
	// mip level decoded (0: the top) of the Mips the file declares.
	Size, Full  image.Point
	Level, Mips int
}

// Downscale says how the picture is smaller than the file's top level,
// "" when it is not.
func (c Config) Downscale() string {
	if c.Level == 0 {
		return ""
	}
	return fmt.Sprintf("mip level %d (%d×%d) of a %d×%d texture", c.Level, c.Size.X, c.Size.Y, c.Full.X, c.Full.Y)
}

// ReadConfig reads the header of the texture file name and checks it as
// DecodeContext does before it decodes: its errors are DecodeContext's for
// a file whose header is wrong or over o.
func ReadConfig(name string, r io.ReaderAt, size int64, o Options) (Config, error) {
	switch kind, err := sniff(name, r); kind {
	case "DDS":
		d, err := ddsHeader(name, r, size, o)
		return d.Config, err
	case "PNG":
		return stdHeader(name, r, size, o, kind, png.DecodeConfig)
	case "JPEG":
		return stdHeader(name, r, size, o, kind, jpeg.DecodeConfig)
	case "TGA":
		return tgaHeader(name, r, size, o)
	default:
		return Config{}, err
	}
}

// sniff tells a texture file's format by its first bytes where it has a
// magic number (DDS, PNG, JPEG), by the name's extension otherwise (TGA).
func sniff(name string, r io.ReaderAt) (string, error) {
	var head [4]byte
	n, _ := r.ReadAt(head[:], 0)
	switch {
	case n == 4 && string(head[:]) == "DDS ":
		return "DDS", nil
	case n == 4 && string(head[:]) == "\x89PNG":
		return "PNG", nil
	case n >= 3 && head[0] == 0xff && head[1] == 0xd8 && head[2] == 0xff:
		return "JPEG", nil
	case strings.EqualFold(filepath.Ext(name), ".tga"):
		return "TGA", nil
	}
	return "", decode.Errorf(name, "", "magic", 0, "not a DDS, PNG or JPEG file, and not named .tga")
}

// SniffSize is how many leading bytes ShowsPNG needs.
const SniffSize = tgaHeaderSize

// ShowsPNG reports whether a file called name whose first bytes are head
// is a texture shown as a PNG beside it (the mount's NAME.EXT.png): a
// .dds with DDS's magic number, a .tga whose header is of a kind this
// package reads (colour-mapped, true-colour or grey, raw or run-length,
// 8 to 32 bits a pixel, no side 0). A PNG or JPEG is one already.
func ShowsPNG(name string, head []byte) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".dds":
		return len(head) >= 4 && string(head[:4]) == "DDS "
	case ".tga":
		if len(head) < tgaHeaderSize || head[1] > 1 {
			return false
		}
		switch head[tgaOffType] {
		case 1, 2, 3, 9, 10, 11:
		default:
			return false
		}
		switch head[16] {
		case 8, 15, 16, 24, 32:
		default:
			return false
		}
		le := binary.LittleEndian
		return le.Uint16(head[tgaOffWidth:]) > 0 && le.Uint16(head[tgaOffHeight:]) > 0
	}
	return false
}

// overLimit is the error of a w×h picture over o.MaxPixels with no
// smaller level to decode instead.
func overLimit(name, field string, off int64, w, h, mips int, o Options) error {
	e := decode.Errorf(name, "header", field, off, "%d×%d pixels, more than the %d allowed, and no mip level within them (%d levels)",
		w, h, o.MaxPixels, mips)
	e.Err = decode.ErrLimit
	return e
}

// ctxReader reads r until ctx ends: a decoder reading through it stops
// at its next read.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// checkSide reports a width or height out of range or more pixels than
// size bytes can encode at perByte pixels a byte.
func checkSide(name, field string, off int64, w, h int, size int64, perByte int64) error {
	if w <= 0 || h <= 0 || w > MaxSide || h > MaxSide {
		return decode.Errorf(name, "header", field, off, "%d×%d pixels: each side must be 1 to %d", w, h, MaxSide)
	}
	if int64(w)*int64(h) > perByte*size {
		return &decode.FormatError{File: name, Section: "header", Field: field, Offset: off,
			Msg: fmt.Sprintf("%d×%d pixels cannot fit in a %d-byte file", w, h, size), Err: decode.ErrTruncated}
	}
	return nil
}

// DDS layout: "DDS ", a 124-byte header, a 20-byte DX10 header when the
// pixel format's FourCC is "DX10", then the mips of each face.
const (
	ddsHeaderEnd = 4 + 124
	ddsDX10Size  = 20
	offHeight    = 4 + 8
	offWidth     = 4 + 12
	offMipCount  = 4 + 24
	offPFFlags   = 4 + 76
	offFourCC    = 4 + 80
	offCaps2     = 4 + 108
)

// ddsHead is a DDS file's header, checked: its bytes up to the pixel
// data, where that starts, its FourCC and the level to decode.
type ddsHead struct {
	Config
	hdr    []byte
	start  int64
	fourCC string
}

func ddsHeader(name string, r io.ReaderAt, size int64, o Options) (ddsHead, error) {
	if size < ddsHeaderEnd {
		return ddsHead{}, &decode.FormatError{File: name, Section: "header", Offset: 0,
			Msg: fmt.Sprintf("%d bytes, a DDS header needs %d", size, ddsHeaderEnd), Err: decode.ErrTruncated}
	}
	hdr := make([]byte, ddsHeaderEnd+ddsDX10Size)
	n, err := r.ReadAt(hdr, 0)
	if n < ddsHeaderEnd {
		return ddsHead{}, &decode.FormatError{File: name, Section: "header", Msg: "read error", Err: err}
	}
	hdr = hdr[:n]
	le := binary.LittleEndian
	w, h := int(le.Uint32(hdr[offWidth:])), int(le.Uint32(hdr[offHeight:]))
	if err := checkSide(name, "width", offWidth, w, h, size, 2); err != nil {
		return ddsHead{}, err
	}
	d := ddsHead{hdr: hdr, start: ddsHeaderEnd}
	d.Mips, d.Full = max(int(le.Uint32(hdr[offMipCount:])), 1), image.Pt(w, h)
	if le.Uint32(hdr[offPFFlags:])&bcn.DDSPFFourCC != 0 {
		d.fourCC = string(hdr[offFourCC : offFourCC+4])
		if d.fourCC == "DX10" {
			d.start += ddsDX10Size
		}
	}
	var ok bool
	d.Level, d.Size.X, d.Size.Y, ok = pickLevel(w, h, d.Mips, o.MaxPixels)
	if !ok {
		return ddsHead{}, overLimit(name, "width", offWidth, w, h, d.Mips, o)
	}
	return d, nil
}

func decodeDDS(ctx context.Context, name string, r io.ReaderAt, size int64, o Options) (*Image, error) {
	hd, err := ddsHeader(name, r, size, o)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	hdr, start, fourCC, level, lw, lh := hd.hdr, hd.start, hd.fourCC, hd.Level, hd.Size.X, hd.Size.Y
	w, h, mips := hd.Full.X, hd.Full.Y, hd.Mips
	// bcn reads every mip of every face; only one level of face 0 is
	// wanted, so it is given a header that declares just that level, and
	// the data from where that level starts. Which is found from the size
	// of one unit of the format (a 4×4 block, or a pixel), read by
	// declaring a 1×1 picture.
	one := bytes.Clone(hdr[:start])
	le.PutUint32(one[offMipCount:], 1)
	le.PutUint32(one[offCaps2:], le.Uint32(one[offCaps2:])&^bcn.DDSCaps2Cubemap)
	read := func(w, h int, off int64) (*bcn.DDS, error) {
		le.PutUint32(one[offWidth:], uint32(w))
		le.PutUint32(one[offHeight:], uint32(h))
		return bcn.ReadDDS(io.MultiReader(bytes.NewReader(one), io.NewSectionReader(r, off, size-off)))
	}
	unit, err := read(1, 1, start)
	if err != nil {
		return nil, ddsError(name, start, fourCC, err)
	}
	levelSize := func(w, h int) int64 {
		u := int64(len(unit.Faces[0].Mipmaps[0]))
		if blockBytes(unit.Format) != 0 {
			return int64((w+3)/4) * int64((h+3)/4) * u
		}
		return int64(w) * int64(h) * u
	}
	off, sw, sh := start, w, h
	for range level {
		off += levelSize(sw, sh)
		sw, sh = max(sw>>1, 1), max(sh>>1, 1)
	}
	// The level's data must lie in the file: checked before bcn allocates
	// for it.
	if off+levelSize(lw, lh) > size {
		return nil, &decode.FormatError{File: name, Section: fmt.Sprintf("mip %d", level), Offset: off,
			Msg: fmt.Sprintf("%d×%d pixels need %d bytes, the file ends at %d", lw, lh, levelSize(lw, lh), size), Err: decode.ErrTruncated}
	}
	d, err := read(lw, lh, off)
	if err != nil {
		return nil, ddsError(name, off, fourCC, err)
	}
	img, err := decodeBlocks(ctx, d.Faces[0].Mipmaps[0], d.Width, d.Height, d.Format)
	if err != nil {
		return nil, ddsError(name, off, fourCC, err)
	}
	enc := d.Format.String()
	if fourCC != "" && fourCC != "DX10" {
		enc = fourCC
	}
	return &Image{NRGBA: img, Encoding: enc, Mips: mips, Level: level, Full: image.Pt(w, h)}, nil
}

// blockBytes is the size of one 4×4 block of a block-compressed format,
// 0 for the others (bcn's table, which it does not export).
func blockBytes(f bcn.Format) int {
	switch f {
	case bcn.FormatBC1, bcn.FormatBC4, bcn.FormatBC4S:
		return 8
	case bcn.FormatBC2, bcn.FormatBC3, bcn.FormatBC5, bcn.FormatBC5S, bcn.FormatBC7, bcn.FormatBC6HU, bcn.FormatBC6HS:
		return 16
	}
	return 0
}

// blockBand is the number of block rows decoded as one piece.
const blockBand = 32

// serialBlocks makes decodeBlocks decode on one goroutine (a var for the
// benchmark's comparison).
var serialBlocks = false

// decodeBlocks decodes the w×h picture of format f in data. A block-
// compressed picture of parallelPixels or more is decoded in bands of
// blockBand block rows on all CPUs (decode.ParallelEach), each band
// straight into its rows of the one image: bcn's own workers are not
// used, so that one pool of goroutines (the project's) serves every
// parallel loop.
//
// ctx is checked before each band: a picture is given up within a band's
// time of ctx's end.
func decodeBlocks(ctx context.Context, data []byte, w, h int, f bcn.Format) (*image.NRGBA, error) {
	one := &bcn.DecodeOptions{Workers: 1}
	bs := blockBytes(f)
	if bs == 0 || w*h < parallelPixels || serialBlocks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return bcn.DecodeImageWithOptions(data, w, h, f, one)
	}
	bx, by := (w+3)/4, (h+3)/4
	if len(data) < bx*by*bs {
		return nil, bcn.ErrInsufficientData
	}
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	bands := (by + blockBand - 1) / blockBand
	err := decode.ParallelEach(bands, func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		y0, y1 := 4*i*blockBand, min(h, 4*(i+1)*blockBand)
		pix := img.Pix[y0*img.Stride : y1*img.Stride : y1*img.Stride]
		dst := &image.NRGBA{Pix: pix, Stride: img.Stride, Rect: image.Rect(0, 0, w, y1-y0)}
		band := data[i*blockBand*bx*bs : min(by, (i+1)*blockBand)*bx*bs]
		_, err := bcn.DecodeImageInto(dst, band, w, y1-y0, f, one)
		return err
	})
	if err != nil {
		return nil, err
	}
	return img, nil
}

func ddsError(name string, dataOff int64, fourCC string, err error) error {
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &decode.FormatError{File: name, Section: "pixels", Offset: dataOff, Msg: "decoding stopped", Err: err}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &decode.FormatError{File: name, Section: "pixels", Offset: dataOff, Msg: "pixel data ends early", Err: decode.ErrTruncated}
	case fourCC != "" && fourCC != "DX10":
		return &decode.FormatError{File: name, Section: "header", Field: "fourcc", Offset: offFourCC, Msg: fmt.Sprintf("pixel format %q", fourCC), Err: err}
	}
	return &decode.FormatError{File: name, Section: "header", Field: "pixel format", Offset: offPFFlags, Msg: "cannot decode", Err: err}
}

// TGA header fields used for the size check (tgaHeader).
const (
	tgaHeaderSize = 18
	tgaOffWidth   = 12
	tgaOffHeight  = 14
	tgaOffType    = 2
)

func tgaHeader(name string, r io.ReaderAt, size int64, o Options) (Config, error) {
	var hdr [tgaHeaderSize]byte
	if n, err := r.ReadAt(hdr[:], 0); n < tgaHeaderSize {
		return Config{}, &decode.FormatError{File: name, Section: "header", Msg: fmt.Sprintf("%d bytes, a TGA header needs %d", size, tgaHeaderSize), Err: errOr(err, decode.ErrTruncated)}
	}
	w, h := int(binary.LittleEndian.Uint16(hdr[tgaOffWidth:])), int(binary.LittleEndian.Uint16(hdr[tgaOffHeight:]))
	// Run-length TGA (types 9-11) packs up to 128 pixels in 2 bytes.
	perByte := int64(1)
	if hdr[tgaOffType] >= 9 {
		perByte = 64
	}
	if err := checkSide(name, "width", tgaOffWidth, w, h, size, perByte); err != nil {
		return Config{}, err
	}
	if _, _, _, ok := pickLevel(w, h, 1, o.MaxPixels); !ok {
		return Config{}, overLimit(name, "width", tgaOffWidth, w, h, 1, o)
	}
	return Config{Size: image.Pt(w, h), Full: image.Pt(w, h), Mips: 1}, nil
}

func decodeTGA(ctx context.Context, name string, r io.ReaderAt, size int64, o Options) (*Image, error) {
	cfg, err := tgaHeader(name, r, size, o)
	if err != nil {
		return nil, err
	}
	img, err := tga.Decode(ctxReader{ctx, io.NewSectionReader(r, 0, size)})
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, &decode.FormatError{File: name, Section: "image", Offset: tgaHeaderSize, Msg: "cannot decode", Err: err}
	}
	return &Image{NRGBA: toNRGBA(img), Encoding: "TGA", Mips: 1, Full: cfg.Full}, nil
}

// stdHeader reads and checks the header of a format of the standard
// library (PNG, JPEG): both compress, so the check is only the side limit,
// a generous ratio and o.
func stdHeader(name string, r io.ReaderAt, size int64, o Options, enc string, config func(io.Reader) (image.Config, error)) (Config, error) {
	cfg, err := config(io.NewSectionReader(r, 0, size))
	if err != nil {
		return Config{}, &decode.FormatError{File: name, Section: "header", Msg: "cannot read the " + enc + " header", Err: err}
	}
	// A deflate stream expands at most about 1032:1.
	if err := checkSide(name, "width", 0, cfg.Width, cfg.Height, size, 1032); err != nil {
		return Config{}, err
	}
	if _, _, _, ok := pickLevel(cfg.Width, cfg.Height, 1, o.MaxPixels); !ok {
		return Config{}, overLimit(name, "width", 0, cfg.Width, cfg.Height, 1, o)
	}
	return Config{Size: image.Pt(cfg.Width, cfg.Height), Full: image.Pt(cfg.Width, cfg.Height), Mips: 1}, nil
}

// decodeStd decodes a PNG or JPEG whose header stdHeader passed.
func decodeStd(ctx context.Context, name string, r io.ReaderAt, size int64, o Options, enc string,
	config func(io.Reader) (image.Config, error), dec func(io.Reader) (image.Image, error)) (*Image, error) {
	cfg, err := stdHeader(name, r, size, o, enc, config)
	if err != nil {
		return nil, err
	}
	img, err := dec(ctxReader{ctx, io.NewSectionReader(r, 0, size)})
	if err != nil {
		return nil, &decode.FormatError{File: name, Section: "image", Msg: "cannot decode", Err: err}
	}
	return &Image{NRGBA: toNRGBA(img), Encoding: enc, Mips: 1, Full: cfg.Full}, nil
}

func errOr(err, def error) error {
	if err != nil && err != io.EOF {
		return err
	}
	return def
}

// toNRGBA returns img as non-premultiplied 8-bit RGBA, converting only when
// it is another type.
func toNRGBA(img image.Image) *image.NRGBA {
	if n, ok := img.(*image.NRGBA); ok && n.Rect.Min == (image.Point{}) {
		return n
	}
	b := img.Bounds()
	n := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(n, n.Rect, img, b.Min, draw.Src)
	return n
}

// PNG encodes m as PNG: 8-bit RGB when every pixel is opaque, RGBA
// otherwise. Compression favours speed, since the file is made on first
// access: one fixed row filter, the fastest deflate level, bands of rows
// compressed on all CPUs (writePNG).
func PNG(w io.Writer, m *Image) error { return writePNG(w, m.NRGBA) }

// EncodePNG is PNG into a buffer of the file's exact size.
func EncodePNG(m *Image) ([]byte, error) { return encodePNG(m.NRGBA) }
