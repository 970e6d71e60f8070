package preview

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"image"

	"github.com/meshfs/meshfs/decode/texture"
)

// NAME.preview.png has a length fixed by its side alone (FixedLen), so
// that a listing can tell its exact size before it is drawn. The file is
// the picture's PNG (Encode: the compact encoding, or the picture as
// stored deflate blocks when the compact one would not fit) with one
// padding chunk of zero bytes inserted before IEND that brings it to
// exactly FixedLen (Pad). FixedLen is a true bound of any picture: the
// size×size RGBA picture (each row a filter byte and its pixels) as
// stored deflate blocks of at most 65 535 bytes in one IDAT, plus the
// padding chunk's 12 bytes (length, type, CRC), so a stored encoding
// gets an empty padding chunk.
//
// The padding chunk's type is PadChunk, "msPd": ancillary (m: a decoder
// may ignore it), private (s), the reserved bit clear (P), safe to copy
// (d: it says nothing of the pixels). Decoders skip it (image/png,
// libpng, browsers); its data are zero bytes.

// PadChunk is the type of NAME.preview.png's padding chunk.
const PadChunk = "msPd"

// chunkOverhead is a PNG chunk's bytes besides its data: length, type, CRC.
const chunkOverhead = 12

// storedBlock is the most bytes a stored deflate block holds.
const storedBlock = 65535

// pngSignature starts every PNG.
const pngSignature = "\x89PNG\r\n\x1a\n"

// iend is the PNG's last chunk, whole (no data; its CRC).
const iend = "\x00\x00\x00\x00IEND\xaeB`\x82"

// FixedLen is the length of every NAME.preview.png of side size: the
// stored encoding's (storedLen) plus an empty padding chunk. It depends
// on size alone.
func FixedLen(size int) int64 {
	if size <= 0 {
		return 0
	}
	return storedLen(size, size) + chunkOverhead
}

// storedLen is the length of a w×h RGBA PNG whose IDAT is stored deflate
// blocks (encodeStored): signature, IHDR, IDAT (zlib header, a 5-byte
// header per block, the rows, Adler-32), IEND.
func storedLen(w, h int) int64 {
	raw := int64(h) * (1 + 4*int64(w))
	blocks := (raw + storedBlock - 1) / storedBlock
	idat := 2 + 5*blocks + raw + 4
	return int64(len(pngSignature)) + (chunkOverhead + 13) + (chunkOverhead + idat) + int64(len(iend))
}

// Encode returns img (square, the preview's side) as the PNG Pad
// completes: texture.EncodePNG's compact file when it leaves room for the
// padding chunk within FixedLen, else the picture as stored blocks
// (encodeStored), which always does.
func Encode(img *image.NRGBA) ([]byte, error) {
	size := img.Rect.Dx()
	if size <= 0 || img.Rect.Dy() != size {
		return nil, fmt.Errorf("a preview is square, not %d×%d", img.Rect.Dx(), img.Rect.Dy())
	}
	b, err := texture.EncodePNG(&texture.Image{NRGBA: img})
	if err != nil {
		return nil, err
	}
	if int64(len(b)) <= FixedLen(size)-chunkOverhead {
		return b, nil
	}
	return encodeStored(img), nil
}

// encodeStored is img as an 8-bit RGBA PNG, every row unfiltered, its
// IDAT one zlib stream of stored deflate blocks: storedLen bytes.
func encodeStored(img *image.NRGBA) []byte {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	out := make([]byte, 0, storedLen(w, h))
	out = append(out, pngSignature...)
	var hdr [13]byte
	binary.BigEndian.PutUint32(hdr[0:], uint32(w))
	binary.BigEndian.PutUint32(hdr[4:], uint32(h))
	hdr[8], hdr[9] = 8, 6 // 8 bits, RGBA; compression, filter, interlace 0
	out = texture.AppendPNGChunk(out, "IHDR", hdr[:])

	raw := int64(h) * (1 + 4*int64(w))
	blocks := (raw + storedBlock - 1) / storedBlock
	out = binary.BigEndian.AppendUint32(out, uint32(2+5*blocks+raw+4))
	start := len(out)
	out = append(out, "IDAT"...)
	out = append(out, 0x78, 0x01) // zlib: deflate, 32 KiB window, no preset dictionary
	sum := adler32.New()
	left, inBlock := raw, 0 // bytes of rows to come; room left in the block
	put := func(b []byte) {
		for len(b) > 0 {
			if inBlock == 0 {
				n := min(left, storedBlock)
				final := byte(0)
				if n == left {
					final = 1
				}
				out = append(out, final, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
				inBlock = int(n)
			}
			k := min(len(b), inBlock)
			out = append(out, b[:k]...)
			sum.Write(b[:k])
			b, inBlock, left = b[k:], inBlock-k, left-int64(k)
		}
	}
	for y := range h {
		put([]byte{0}) // filter type None
		at := img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y)
		put(img.Pix[at : at+4*w])
	}
	out = binary.BigEndian.AppendUint32(out, sum.Sum32())
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[start:]))
	return append(out, iend...)
}

// Pad returns NAME.preview.png of side size from the PNG Encode made of
// it (compact): its chunks, then the padding chunk, then IEND, exactly
// FixedLen(size) bytes. It fails when compact is not a PNG of that side
// ending in IEND, or leaves no room for the padding chunk.
func Pad(compact []byte, size int) ([]byte, error) {
	want := FixedLen(size)
	if err := checkCompact(compact, size); err != nil {
		return nil, err
	}
	if n := int64(len(compact)); n+chunkOverhead > want {
		return nil, fmt.Errorf("a %d-byte PNG does not fit the preview's fixed length of %d bytes", n, want)
	}
	body := len(compact) - len(iend)
	out := make([]byte, want)
	copy(out, compact[:body])
	pad := out[body : want-int64(len(iend))]
	data := pad[8 : len(pad)-4] // zero, as make left it
	binary.BigEndian.PutUint32(pad, uint32(len(data)))
	copy(pad[4:], PadChunk)
	crc := crc32.Update(crc32.ChecksumIEEE([]byte(PadChunk)), crc32.IEEETable, data)
	binary.BigEndian.PutUint32(pad[len(pad)-4:], crc)
	copy(out[want-int64(len(iend)):], iend)
	return out, nil
}

// errNotPreview is the failure of a compact PNG that Pad cannot complete.
var errNotPreview = errors.New("not a preview's PNG")

// checkCompact checks that b starts as a PNG whose IHDR is size×size and
// ends with IEND.
func checkCompact(b []byte, size int) error {
	if len(b) < len(pngSignature)+chunkOverhead+13+len(iend) || string(b[:len(pngSignature)]) != pngSignature ||
		string(b[12:16]) != "IHDR" || string(b[len(b)-len(iend):]) != iend {
		return errNotPreview
	}
	w, h := binary.BigEndian.Uint32(b[16:]), binary.BigEndian.Uint32(b[20:])
	if int64(w) != int64(size) || int64(h) != int64(size) {
		return fmt.Errorf("%w: %d×%d, not %d×%d", errNotPreview, w, h, size, size)
	}
	return nil
}
