package unigine

import (
	"encoding/binary"

	"github.com/pierrec/lz4/v4"
)

// goDecodeMin is the decompressed size from which a block is decoded by
// decodeGo instead of lz4's assembly. The runtime cannot preempt assembly:
// a collection that starts as a big block's decode begins (the block's own
// buffer is what starts it) cannot scan that goroutine's stack until the
// decode returns, and meanwhile its worker spins on the other core,
// signalling the decoding thread every few microseconds. Below this size the
// assembly returns within a millisecond.
const goDecodeMin = 1 << 20

// uncompressBlock decompresses LZ4 block src into dst (lz4.UncompressBlock),
// in Go code the runtime can preempt when dst is big (goDecodeMin).
func uncompressBlock(src, dst []byte) (int, error) {
	if len(dst) < goDecodeMin {
		return lz4.UncompressBlock(src, dst)
	}
	if n := decodeGo(dst, src); n >= 0 {
		return n, nil
	}
	return 0, lz4.ErrInvalidSourceShortBuffer
}

// decodeGo decodes LZ4 block src into dst and returns the decoded length,
// or -1 when src is not a well-formed block that fits dst. It is lz4's own
// portable decoder, the one its assembly is fuzzed against
// (github.com/pierrec/lz4/v4 v4.1.33, internal/lz4block/decode_go.go),
// without its dictionary and with its two length loops as one (extLen):
// Copyright (c) 2015, Pierre Curto; its license, BSD 3-Clause, is
// LICENSE.lz4 beside this file.
func decodeGo(dst, src []byte) (ret int) {
	const minMatch = 4
	// Restricted capacities: an out-of-range index panics, recovered as -1;
	// a memory fault (a mapped file cut short: decompressMapped) goes on up.
	dst = dst[:len(dst):len(dst)]
	src = src[:len(src):len(src)]
	if len(src) == 0 {
		return 0 // as lz4.UncompressBlock
	}
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); fault {
				panic(r)
			}
			ret = -1
		}
	}()
	var si, di uint
	for si < uint(len(src)) {
		// The token: literals' and match's lengths.
		b := uint(src[si])
		si++
		if lLen := b >> 4; lLen > 0 {
			if lLen == 0xF {
				if lLen, si = extLen(src, si, lLen); si == 0 {
					return -1
				}
			}
			if lLen <= 16 && si+16 < uint(len(src)) {
				// 16 bytes copied whatever the length: an inlined copy.
				copy(dst[di:di+16], src[si:si+16])
			} else {
				copy(dst[di:di+lLen], src[si:si+lLen])
			}
			si += lLen
			di += lLen
		}
		mLen := b & 0xF
		if si == uint(len(src)) && mLen == 0 {
			break // the last sequence: literals only
		} else if si >= uint(len(src)) {
			return -1
		}
		mLen += minMatch
		offset := uint(binary.LittleEndian.Uint16(src[si:]))
		if offset == 0 || offset > di {
			return -1 // no dictionary: a match starts in the output
		}
		si += 2
		if mLen <= 16 {
			if mLen <= offset && di+16 <= uint(len(dst)) {
				i := di - offset
				copy(dst[di:di+16], dst[i:i+16])
				di += mLen
				continue
			}
		} else if mLen >= 15+minMatch {
			if mLen, si = extLen(src, si, mLen); si == 0 {
				return -1
			}
		}
		expanded := dst[di-offset:]
		if mLen > offset {
			// An overlapping match: the period doubled until it covers it.
			bytesToCopy := offset * (mLen / offset)
			for n := offset; n <= bytesToCopy+offset; n *= 2 {
				copy(expanded[n:], expanded[:n])
			}
			di += bytesToCopy
			mLen -= bytesToCopy
		}
		di += uint(copy(dst[di:di+mLen], expanded[:mLen]))
	}
	return int(di)
}

// extLen adds to n the length bytes at src[si:] (each 255 but the last) and
// returns it with the index after them; si 0 when the sum overflows.
func extLen(src []byte, si, n uint) (uint, uint) {
	for {
		x := uint(src[si])
		if n += x; int(n) < 0 {
			return 0, 0
		}
		si++
		if x != 0xFF {
			return n, si
		}
	}
}
