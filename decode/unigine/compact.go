package unigine

import "errors"

// UNIGINE's compact signed integer (Stream::readInt2 / writeInt2) is a
// sign-magnitude varint. The first byte holds the continuation flag (bit 7),
// the sign (bit 6) and the low 6 bits of the magnitude; each further byte
// holds the continuation flag and the next 7 bits. It is neither LEB128 nor
// zigzag: `41` is −1, `b6 95 01` is 9590.

// maxCompactLen is the longest encoding of a 32-bit magnitude: 6 + 4×7 = 34 bits.
const maxCompactLen = 5

var (
	errCompactShort    = errors.New("compact int runs past the end of the data")
	errCompactOverlong = errors.New("over-long compact int")
	errCompactOverflow = errors.New("compact int overflows 32 bits")
)

// parseCompact decodes the compact int at the start of b and returns it with
// its encoded length. Encodings of more than five bytes are rejected: no
// 32-bit value needs them, so they mean the reader is out of step with the
// file. A longer-than-minimal encoding within five bytes is accepted, since
// UNIGINE's own writer makes one: the real ms14_capsule_skinned.mesh stores 63
// as `bf 00` in its collision block.
func parseCompact(b []byte) (v int32, n int, err error) {
	if len(b) == 0 {
		return 0, 0, errCompactShort
	}
	c := b[0]
	neg := c&0x40 != 0
	mag := uint64(c & 0x3f)
	n = 1
	shift := uint(6)
	for c&0x80 != 0 {
		if n == maxCompactLen {
			return 0, n, errCompactOverlong
		}
		if n >= len(b) {
			return 0, n, errCompactShort
		}
		c = b[n]
		n++
		mag |= uint64(c&0x7f) << shift
		shift += 7
	}
	if neg {
		if mag > 1<<31 {
			return 0, n, errCompactOverflow
		}
		return int32(-int64(mag)), n, nil
	}
	if mag > 1<<31-1 {
		return 0, n, errCompactOverflow
	}
	return int32(mag), n, nil
}

// appendCompact appends the compact encoding of v.
func appendCompact(b []byte, v int32) []byte {
	mag := uint64(v)
	var sign byte
	if v < 0 {
		mag = uint64(-int64(v))
		sign = 0x40
	}
	c := byte(mag&0x3f) | sign
	mag >>= 6
	for mag != 0 {
		b = append(b, c|0x80)
		c = byte(mag & 0x7f)
		mag >>= 7
	}
	return append(b, c)
}
