package decode

import (
	"encoding/binary"
	"math"
)

// Cursor reads little-endian values from a byte slice and turns every
// overrun into a FormatError that names the file, section, field and the
// absolute offset. Errors are sticky: after the first one every read returns
// zero, so a decoder can read a group of fields and check Err once.
type Cursor struct {
	File    string
	Section string
	Base    int64 // offset of b[0] in the file (or block)
	b       []byte
	pos     int
	err     error
}

// NewCursor reads b, whose first byte is at offset base.
func NewCursor(file string, b []byte, base int64) *Cursor {
	return &Cursor{File: file, b: b, Base: base}
}

// Err returns the first error.
func (c *Cursor) Err() error { return c.err }

// Pos is the current position relative to b.
func (c *Cursor) Pos() int { return c.pos }

// Offset is the current absolute offset.
func (c *Cursor) Offset() int64 { return c.Base + int64(c.pos) }

// Len is the number of unread bytes.
func (c *Cursor) Len() int { return len(c.b) - c.pos }

// Seek moves to position p relative to b.
func (c *Cursor) Seek(p int) {
	if p < 0 || p > len(c.b) {
		c.Fail("", "seek to %d outside %d bytes", p, len(c.b))
		return
	}
	c.pos = p
}

// Fail records an error at the current offset unless one is already set.
func (c *Cursor) Fail(field, format string, args ...any) {
	if c.err == nil {
		c.err = Errorf(c.File, c.Section, field, c.Offset(), format, args...)
	}
}

// SetErr records err unless an error is already set.
func (c *Cursor) SetErr(err error) {
	if c.err == nil {
		c.err = err
	}
}

// Bytes returns the next n bytes without copying.
func (c *Cursor) Bytes(field string, n int) []byte {
	if c.err != nil {
		return nil
	}
	if n < 0 || n > c.Len() {
		c.err = &FormatError{File: c.File, Section: c.Section, Field: field, Offset: c.Offset(),
			Msg: sizeMsg(n, c.Len()), Err: ErrTruncated}
		return nil
	}
	b := c.b[c.pos : c.pos+n]
	c.pos += n
	return b
}

func sizeMsg(n, left int) string {
	return "needs " + itoa(n) + " bytes, " + itoa(left) + " left"
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(buf[i:])
}

// Need checks that count elements of size bytes each remain, without
// reading them: the check to make before allocating for a claimed count.
func (c *Cursor) Need(field string, count, size int64) bool {
	if c.err != nil {
		return false
	}
	if count < 0 || size < 0 || (size > 0 && count > int64(c.Len())/size) {
		c.err = &FormatError{File: c.File, Section: c.Section, Field: field, Offset: c.Offset(),
			Msg: "count " + itoa(int(count)) + " × " + itoa(int(size)) + " bytes exceeds the " + itoa(c.Len()) + " bytes left",
			Err: ErrTruncated}
		return false
	}
	return true
}

func (c *Cursor) U8(field string) uint8 {
	b := c.Bytes(field, 1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (c *Cursor) U16(field string) uint16 {
	b := c.Bytes(field, 2)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint16(b)
}

func (c *Cursor) U32(field string) uint32 {
	b := c.Bytes(field, 4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (c *Cursor) U64(field string) uint64 {
	b := c.Bytes(field, 8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (c *Cursor) I16(field string) int16 { return int16(c.U16(field)) }
func (c *Cursor) I32(field string) int32 { return int32(c.U32(field)) }
func (c *Cursor) I64(field string) int64 { return int64(c.U64(field)) }

func (c *Cursor) F32(field string) float32 { return math.Float32frombits(c.U32(field)) }

// F32s reads n floats into dst (which must have room for n).
func (c *Cursor) F32s(field string, dst []float32) {
	b := c.Bytes(field, 4*len(dst))
	if b == nil {
		return
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

// Vec3 reads three floats.
func (c *Cursor) Vec3(field string) (v [3]float32) {
	c.F32s(field, v[:])
	return v
}
