package unigine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/meshfs/meshfs/decode"
)

// block is one compressed block: u64 uncompressed size, u64 compressed
// size, then the data as a raw LZ4 block, or stored as is when both sizes
// are equal.
type block struct {
	off    int64 // offset of the block header in the file
	raw    int64 // uncompressed size
	packed int64 // compressed size
}

const blockHeaderSize = 16

func (b block) data() int64   { return b.off + blockHeaderSize }
func (b block) end() int64    { return b.data() + b.packed }
func (b block) stored() bool  { return b.raw == b.packed }
func (b block) length() int64 { return blockHeaderSize + b.packed }

// maxLZ4Ratio bounds the uncompressed size a compressed size can claim:
// LZ4's longest match costs one extra byte per 255 bytes produced, so no
// valid block expands more than about 255:1. A claim beyond that is a lie,
// rejected before allocating for it.
const maxLZ4Ratio = 255

// maxBlockSize caps one block's uncompressed size (2 GiB, far beyond the
// 2³¹-vertex limit's practical use), so that a lying size cannot ask for
// the address space.
const maxBlockSize = 1<<31 - 1

// readAt reads len(p) bytes at off from the source. Chunk loaders run after
// Scan has returned and the caller may have closed the file (a loose file's
// reads then fail with os.ErrClosed, an archive entry's otherwise); then the
// file is opened again through the source (decode.Source.Reopen).
func readAt(src *decode.Source, p []byte, off int64) error {
	n, err := src.R.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) && src.Reopen != nil {
		r, done, oerr := src.Reopen()
		if oerr != nil {
			return err
		}
		defer done()
		n, err = r.ReadAt(p, off)
	}
	if n == len(p) {
		return nil // a full read may still report EOF at the end of the source
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = decode.ErrTruncated
	}
	return err
}

// readBlockHeader reads and checks the header of the block at off.
func readBlockHeader(src *decode.Source, off int64, section string) (block, error) {
	if off < 0 || off > src.Size-blockHeaderSize {
		return block{}, &decode.FormatError{File: src.Name, Section: section, Field: "block header", Offset: off,
			Msg: fmt.Sprintf("block header at 0x%x does not fit in the %d-byte file", off, src.Size), Err: decode.ErrTruncated}
	}
	var hb [blockHeaderSize]byte
	if err := readAt(src, hb[:], off); err != nil {
		return block{}, &decode.FormatError{File: src.Name, Section: section, Field: "block header", Offset: off, Msg: "read error", Err: err}
	}
	raw := binary.LittleEndian.Uint64(hb[:])
	packed := binary.LittleEndian.Uint64(hb[8:])
	left := uint64(src.Size - off - blockHeaderSize)
	if packed > left {
		return block{}, &decode.FormatError{File: src.Name, Section: section, Field: "compressed_size", Offset: off + 8,
			Msg: fmt.Sprintf("%d bytes claimed, %d left in the file", packed, left), Err: decode.ErrTruncated}
	}
	if raw != packed && (raw > maxLZ4Ratio*packed+64 || raw > maxBlockSize) {
		return block{}, errf(src.Name, section, "uncompressed_size", off,
			"%d bytes claimed from %d compressed: beyond LZ4's %d:1 ratio or the %d-byte block limit", raw, packed, maxLZ4Ratio, int64(maxBlockSize))
	}
	return block{off: off, raw: int64(raw), packed: int64(packed)}, nil
}

// loadBlock reads and decompresses a block.
func loadBlock(src *decode.Source, b block, section string) ([]byte, error) {
	data := make([]byte, b.packed)
	if err := readAt(src, data, b.data()); err != nil {
		return nil, &decode.FormatError{File: src.Name, Section: section, Field: "block data", Offset: b.data(), Msg: "read error", Err: err}
	}
	if b.stored() {
		return data, nil
	}
	out := make([]byte, b.raw)
	n, err := uncompressBlock(data, out)
	if err != nil {
		return nil, &decode.FormatError{File: src.Name, Section: section, Field: "block data", Offset: b.data(),
			Msg: fmt.Sprintf("LZ4 block of %d bytes does not decompress to the %d bytes claimed", b.packed, b.raw), Err: err}
	}
	if int64(n) != b.raw {
		return nil, errf(src.Name, section, "uncompressed_size", b.off,
			"LZ4 block decompresses to %d bytes, the header claims %d", n, b.raw)
	}
	return out, nil
}

// fileLayout locates every block of a blocked file (ms15, sk10, ms14)
// from the header and the trailing offset table, reading block headers but
// no block data.
type fileLayout struct {
	geom, coll []block
	table      int64 // offset of the offset table's first entry
}

func geometrySection(i int) string  { return fmt.Sprintf("surface %d geometry block", i) }
func collisionSection(i int) string { return fmt.Sprintf("surface %d collision block", i) }

// locate reads the offset table at the end of the file and the block
// headers. The table says where each geometry block starts; the blocks of
// a well-formed file follow one another, so each entry is checked against
// the end of the previous block, and the collision blocks (which the table
// does not list) are found by walking their headers.
func locate(src *decode.Source, h *header) (*fileLayout, error) {
	n := int64(len(h.surf))
	magic := h.file.Magic
	const sec = "offset table"
	// Tail: magic, n int64 offsets, magic.
	tail := 8*n + 8
	if src.Size-h.end < tail+4 {
		return nil, &decode.FormatError{File: src.Name, Section: sec, Field: "offset table", Offset: h.end,
			Msg: fmt.Sprintf("%d surfaces need a %d-byte offset table, the file has %d bytes after the header", n, tail, src.Size-h.end), Err: decode.ErrTruncated}
	}
	start := src.Size - tail
	buf := make([]byte, tail)
	if err := readAt(src, buf, start); err != nil {
		return nil, &decode.FormatError{File: src.Name, Section: sec, Offset: start, Msg: "read error", Err: err}
	}
	if string(buf[:4]) != magic {
		return nil, errf(src.Name, sec, "table magic", start, "magic %q, expected %q", buf[:4], magic)
	}
	if string(buf[tail-4:]) != magic {
		return nil, errf(src.Name, sec, "final magic", src.Size-4, "magic %q, expected %q", buf[tail-4:], magic)
	}
	l := &fileLayout{table: start + 4}
	pos := h.end
	for i := int64(0); i < n; i++ {
		off := int64(binary.LittleEndian.Uint64(buf[4+8*i:]))
		if off != pos {
			return nil, errf(src.Name, sec, fmt.Sprintf("offset[%d]", i), l.table+8*i,
				"surface %d's geometry block is at 0x%x, the table says 0x%x", i, pos, off)
		}
		b, err := readBlockHeader(src, off, geometrySection(int(i)))
		if err != nil {
			return nil, err
		}
		l.geom = append(l.geom, b)
		pos = b.end()
	}
	// The magic that ends the geometry blocks.
	if err := checkMagic(src, pos, magic, "magic after the geometry blocks"); err != nil {
		return nil, err
	}
	pos += 4
	if h.lay.collision {
		for i := int64(0); i < n; i++ {
			b, err := readBlockHeader(src, pos, collisionSection(int(i)))
			if err != nil {
				return nil, err
			}
			if b.end() > start {
				return nil, errf(src.Name, collisionSection(int(i)), "compressed_size", pos+8,
					"block runs to 0x%x, into the offset table at 0x%x", b.end(), start)
			}
			l.coll = append(l.coll, b)
			pos = b.end()
		}
		if pos != start {
			return nil, errf(src.Name, sec, "", pos, "the collision blocks end at 0x%x, the offset table's magic is at 0x%x", pos, start)
		}
	} else if pos-4 != start {
		return nil, errf(src.Name, sec, "", pos-4, "the geometry blocks end at 0x%x, the offset table's magic is at 0x%x", pos-4, start)
	}
	return l, nil
}

func checkMagic(src *decode.Source, off int64, magic, field string) error {
	if off < 0 || off > src.Size-4 {
		return &decode.FormatError{File: src.Name, Section: "layout", Field: field, Offset: off, Msg: "past the end of the file", Err: decode.ErrTruncated}
	}
	var m [4]byte
	if err := readAt(src, m[:], off); err != nil {
		return &decode.FormatError{File: src.Name, Section: "layout", Field: field, Offset: off, Msg: "read error", Err: err}
	}
	if string(m[:]) != magic {
		return errf(src.Name, "layout", field, off, "magic %q, expected %q", m[:], magic)
	}
	return nil
}
