package unigine

import (
	"encoding/binary"
	"errors"
	"io"
	"math"

	"github.com/meshfs/meshfs/decode"
)

// reader reads little-endian fields and compact ints. It reads either a byte
// slice in memory (a decompressed block) or a file through an io.ReaderAt,
// loading the file's bytes only as far as the parser gets, so that scanning
// the header of a large mesh reads the header and nothing else. Errors are
// sticky *decode.FormatErrors: after the first, reads return zero values.
type reader struct {
	file    string
	section string
	ra      io.ReaderAt // nil when b holds everything
	b       []byte      // loaded bytes; b[0] is at offset base
	base    int64
	size    int64 // bytes readable from base (len(b) for in-memory data)
	pos     int
	err     error
}

func newMemReader(file, section string, b []byte, base int64) *reader {
	return &reader{file: file, section: section, b: b, base: base, size: int64(len(b))}
}

func newFileReader(file, section string, ra io.ReaderAt, size int64) *reader {
	return &reader{file: file, section: section, ra: ra, size: size}
}

func (r *reader) offset() int64 { return r.base + int64(r.pos) }
func (r *reader) left() int64   { return r.size - int64(r.pos) }

func (r *reader) fail(field string, cause error, format string, args ...any) {
	if r.err == nil {
		e := decode.Errorf(r.file, r.section, field, r.offset(), format, args...)
		e.Err = cause
		r.err = e
	}
}

// ensure makes n more bytes available in b, loading from ra when needed.
func (r *reader) ensure(field string, n int64) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || n > r.left() {
		r.fail(field, decode.ErrTruncated, "needs %d bytes, %d left", n, r.left())
		return false
	}
	end := int64(r.pos) + n
	if end <= int64(len(r.b)) {
		return true
	}
	// Grow geometrically so that a header parsed field by field costs a few
	// reads, never more than the bytes it actually covers (times two).
	want := max(end, 2*int64(len(r.b)), 4096)
	want = min(want, r.size)
	nb := make([]byte, want)
	copy(nb, r.b)
	got, err := r.ra.ReadAt(nb[len(r.b):], r.base+int64(len(r.b)))
	if got < len(nb)-len(r.b) {
		// A source shorter than its stated size reads as truncated data.
		if err == nil || errors.Is(err, io.EOF) {
			err = decode.ErrTruncated
		}
		r.fail(field, err, "read %d of %d bytes at 0x%x", got, len(nb)-len(r.b), r.base+int64(len(r.b)))
		return false
	}
	r.b = nb
	return true
}

// need checks that count elements of size bytes each can still be read: the
// check made before allocating for a count taken from the file.
func (r *reader) need(field string, count, size int64) bool {
	if r.err != nil {
		return false
	}
	if count < 0 || (size > 0 && count > r.left()/size) {
		r.fail(field, decode.ErrTruncated, "count %d × %d bytes exceeds the %d bytes left", count, size, r.left())
		return false
	}
	return true
}

func (r *reader) bytes(field string, n int64) []byte {
	if !r.ensure(field, n) {
		return nil
	}
	b := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b
}

func (r *reader) u8(field string) uint8 {
	if b := r.bytes(field, 1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u16(field string) uint16 {
	if b := r.bytes(field, 2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) u32(field string) uint32 {
	if b := r.bytes(field, 4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64(field string) uint64 {
	if b := r.bytes(field, 8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *reader) f32(field string) float32 { return math.Float32frombits(r.u32(field)) }

func (r *reader) f32s(field string, dst []float32) {
	b := r.bytes(field, 4*int64(len(dst)))
	if b == nil {
		return
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

// compact reads one compact int.
func (r *reader) compact(field string) int32 {
	if r.err != nil {
		return 0
	}
	r.ensure(field, min(maxCompactLen, r.left()))
	if r.err != nil {
		return 0
	}
	v, n, err := parseCompact(r.b[r.pos:min(len(r.b), r.pos+maxCompactLen)])
	if err != nil {
		cause := error(nil)
		if err == errCompactShort {
			cause = decode.ErrTruncated
		}
		r.fail(field, cause, "%v (bytes % x)", err, r.b[r.pos:r.pos+n])
		return 0
	}
	r.pos += n
	return v
}

// count reads a compact int that counts elements of at least size bytes each
// and checks that they fit in what is left.
func (r *reader) count(field string, size int64) int {
	v, _, ok := r.nonNegative(field)
	if !ok || !r.need(field, int64(v), size) {
		return 0
	}
	return int(v)
}

// blockCount reads a header count of elements that live in LZ4 blocks
// further on: they may expand up to 255:1, so the count is checked against
// what the rest of the file could decompress to, not its raw size (a highly
// compressible mesh, such as morph targets equal to the base, is legal).
func (r *reader) blockCount(field string, size int64) int {
	v, at, ok := r.nonNegative(field)
	if !ok {
		return 0
	}
	if int64(v)*size > maxLZ4Ratio*r.left()+64 {
		r.pos = at
		r.fail(field, decode.ErrTruncated, "count %d × %d bytes exceeds what the %d bytes left can decompress to", v, size, r.left())
		return 0
	}
	return int(v)
}

// str reads a string whose length (counting the terminating NUL) is a
// compact int (header strings) or an int32 (sk10's skeleton reference).
func (r *reader) str(field string, int32Len bool) string {
	var n int64
	at := r.pos
	if int32Len {
		n = int64(int32(r.u32(field + " length")))
	} else {
		n = int64(r.compact(field + " length"))
	}
	if r.err != nil {
		return ""
	}
	if n < 0 {
		r.pos = at
		r.fail(field+" length", nil, "negative string length %d", n)
		return ""
	}
	b := r.bytes(field, n)
	// The length counts the NUL; tolerate names without one, and cut at
	// the first NUL in case the writer padded.
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	return string(b)
}

// magic reads a four-byte magic and checks it against want.
func (r *reader) magic(field, want string) {
	at := r.pos
	b := r.bytes(field, 4)
	if b != nil && string(b) != want {
		r.pos = at
		r.fail(field, nil, "magic %q, expected %q", b, want)
	}
}

// errf builds a FormatError outside a reader.
func errf(file, section, field string, off int64, format string, args ...any) error {
	return decode.Errorf(file, section, field, off, format, args...)
}

// nonNegative reads a compact int that must not be negative; at is where
// it started, so a caller's error can point at the count.
func (r *reader) nonNegative(field string) (v int32, at int, ok bool) {
	at = r.pos
	v = r.compact(field)
	if r.err != nil {
		return 0, at, false
	}
	if v < 0 {
		r.pos = at
		r.fail(field, nil, "negative count %d", v)
		return 0, at, false
	}
	return v, at, true
}

// optionalCount reads the count of an array that is either empty or has
// exactly want entries of at least size bytes (one per triangle or
// coordinate vertex, named by per); anything else is an error at the count.
func (r *reader) optionalCount(field string, size int64, want int, what, per string) int {
	at := r.pos
	n := r.count(field, size)
	if r.err != nil || n == 0 {
		return 0
	}
	if n != want {
		r.pos = at
		r.fail(field, nil, "%d %s for %d %s", n, what, want, per)
		return 0
	}
	return n
}
