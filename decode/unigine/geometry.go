package unigine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"

	"github.com/meshfs/meshfs/decode"
)

var finite = decode.Finite

// parseGeometry reads one surface's geometry from r: a decompressed block
// (ms15, sk10, ms14) or the uncompressed stream (ms11, ms10), and fills s.
// joints is the file's joint count, against which weights are checked.
func parseGeometry(r *reader, lay layout, sh surfHeader, s *Surface, joints int) {
	s.Targets = make([]Target, len(sh.targets))
	for k, th := range sh.targets {
		t := &s.Targets[k]
		t.Name = th.name
		tf := fmt.Sprintf("morph_target[%d]", k)
		if !lay.targets {
			tf = "surface"
		}
		nv := th.vertices
		if nv < 0 {
			nv = r.count(tf+".vertex_count", 12)
		}
		t.Positions = r.positions(tf+".vertices", nv)
		if lay.tangents7 {
			nt := r.count(tf+".tangent_count", 7)
			t.Tangents = r.tangents7(tf+".tangents", nt)
		} else {
			nt := r.count(tf+".tangent_count", 8)
			t.Tangents = r.tangents(tf+".tangents", nt)
		}
		if k > 0 && r.err == nil {
			base := s.Targets[0]
			if len(t.Positions) != len(base.Positions) {
				r.fail(tf+".vertex_count", nil, "morph target %q has %d vertices, the base has %d", t.Name, len(t.Positions), len(base.Positions))
			}
			if len(t.Tangents) != 0 && len(t.Tangents) != len(base.Tangents) {
				r.fail(tf+".tangent_count", nil, "morph target %q has %d tangents, the base has %d", t.Name, len(t.Tangents), len(base.Tangents))
			}
		}
	}
	if r.err != nil {
		return
	}
	nc := len(s.Targets[0].Positions)
	ntv := len(s.Targets[0].Tangents)
	if lay.weights {
		s.Weights = r.weights(nc, joints)
	}
	s.UV0 = r.uvs("uv0", ntv)
	s.UV1 = r.uvs("uv1", ntv)
	s.Colors = r.colors("colors", ntv)

	ci, ti := sh.cIndices, sh.tIndices
	if ci < 0 {
		ci = r.count("coordinate_index_count", 1)
	}
	cAt := r.pos
	s.CIndices = r.indices("coordinate_indices", lay, ci, nc)
	cEnd := r.pos
	if ti < 0 {
		ti = r.count("triangle_index_count", 1)
	}
	if r.sameIndices(lay, cAt, cEnd, ci, ti, nc, ntv) {
		// A surface without seams (every triangle vertex of one
		// coordinate vertex, numbered alike) stores the same index list
		// twice: the bytes compare equal, so the values are the
		// coordinate indices, each below nc ≤ ntv. One array serves
		// both (release and the scene's join know), and the second
		// list is neither decoded nor allocated.
		r.pos += cEnd - cAt
		s.TIndices = s.CIndices
	} else {
		s.TIndices = r.indices("triangle_indices", lay, ti, ntv)
	}
	if r.err == nil && len(s.CIndices) != len(s.TIndices) {
		r.fail("triangle_index_count", nil, "%d coordinate indices but %d triangle indices", len(s.CIndices), len(s.TIndices))
	}
	if r.err == nil && len(s.CIndices)%3 != 0 {
		r.fail("coordinate_index_count", nil, "%d indices is not a whole number of triangles", len(s.CIndices))
	}
}

// positions reads n float triples as stored; non-finite ones are kept for
// decode.Scene.Repair, which drops the triangles that use them.
func (r *reader) positions(field string, n int) [][3]float32 {
	b := r.bytes(field, 12*int64(n))
	if b == nil || n == 0 {
		return nil
	}
	p := positionScratch.get(n) // every entry written before any is read
	decode.Parallel(n, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			q := b[12*i : 12*i+12]
			x, y, z := binary.LittleEndian.Uint32(q), binary.LittleEndian.Uint32(q[4:]), binary.LittleEndian.Uint32(q[8:])
			p[i] = [3]float32{math.Float32frombits(x), math.Float32frombits(y), math.Float32frombits(z)}
		}
		return nil
	})
	return p
}

func (r *reader) tangents(field string, n int) [][4]int16 {
	b := r.bytes(field, 8*int64(n))
	if b == nil || n == 0 {
		return nil
	}
	t := tangentQScratch.get(n) // every entry written
	decode.Parallel(n, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			q := b[8*i : 8*i+8]
			t[i] = [4]int16{
				int16(binary.LittleEndian.Uint16(q)), int16(binary.LittleEndian.Uint16(q[2:])),
				int16(binary.LittleEndian.Uint16(q[4:])), int16(binary.LittleEndian.Uint16(q[6:])),
			}
		}
		return nil
	})
	return t
}

// tangents7 reads ms10's tangent frames: the quaternion's x, y, z as
// shorts, its w the non-negative value that makes it unit length, then a
// signed byte whose sign is the bitangent's (see packedFrame).
func (r *reader) tangents7(field string, n int) [][4]int16 {
	b := r.bytes(field, 7*int64(n))
	if b == nil || n == 0 {
		return nil
	}
	t := tangentQScratch.get(n) // every entry written
	for i := range t {
		q := b[7*i : 7*i+7]
		x := int16(binary.LittleEndian.Uint16(q))
		y := int16(binary.LittleEndian.Uint16(q[2:]))
		z := int16(binary.LittleEndian.Uint16(q[4:]))
		t[i] = packedFrame(x, y, z, int8(q[6]) < 0)
	}
	return t
}

// packedFrame is the four-short tangent frame of ms10's packed one: w is
// the non-negative value that makes (x, y, z, w) (each s/32767) unit
// length, and a negative bitangent is written as −q (the same rotation,
// w < 0), as the other versions store it; a w of zero then becomes −1 so
// that the sign survives.
func packedFrame(x, y, z int16, negative bool) [4]int16 {
	const s = 32767
	fx, fy, fz := float64(x)/s, float64(y)/s, float64(z)/s
	w := int16(math.Round(math.Sqrt(max(0, 1-fx*fx-fy*fy-fz*fz)) * s))
	if !negative {
		return [4]int16{x, y, z, w}
	}
	return [4]int16{-x, -y, -z, min(-w, -1)}
}

// uvs reads a compact count and that many float pairs; the count is 0 or the
// triangle-vertex count. Non-finite pairs are kept, as positions keeps them.
func (r *reader) uvs(field string, ntv int) [][2]float32 {
	n := r.optionalCount(field+"_count", 8, ntv, "entries", "triangle vertices")
	if n == 0 {
		return nil
	}
	b := r.bytes(field, 8*int64(n))
	if b == nil {
		return nil
	}
	uv := uvScratch.get(n) // every entry written before any is read
	decode.Parallel(n, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			q := b[8*i : 8*i+8]
			uv[i] = [2]float32{math.Float32frombits(binary.LittleEndian.Uint32(q)), math.Float32frombits(binary.LittleEndian.Uint32(q[4:]))}
		}
		return nil
	})
	return uv
}

func (r *reader) colors(field string, ntv int) [][4]uint8 {
	n := r.optionalCount("color_count", 4, ntv, "colours", "triangle vertices")
	if n == 0 {
		return nil
	}
	b := r.bytes(field, 4*int64(n))
	if b == nil {
		return nil
	}
	c := make([][4]uint8, n)
	for i := range c {
		copy(c[i][:], b[4*i:])
	}
	return c
}

// weights reads the weight section: a count (0 or one per coordinate
// vertex), then per vertex a joint count (≤ 4) and (short joint, u16 weight)
// pairs.
func (r *reader) weights(nc, joints int) [][]Influence {
	n := r.optionalCount("weight_count", 1, nc, "weights", "coordinate vertices")
	if n == 0 {
		return nil
	}
	ws := make([][]Influence, n)
	// One backing array for all influences: at most 4 per vertex, and the
	// count check above bounds n by the bytes left.
	backing := make([]Influence, 0, min(4*n, int(r.left()/4)+4))
	for i := range ws {
		k := int(r.u8("weight.joint_count"))
		if r.err != nil {
			return nil
		}
		if k > 4 {
			r.pos--
			r.fail("weight.joint_count", nil, "vertex %d has %d joints, at most 4", i, k)
			return nil
		}
		b := r.bytes("weight.joints", 4*int64(k))
		if b == nil {
			return nil
		}
		start := len(backing)
		for j := 0; j < k; j++ {
			in := Influence{Joint: int16(binary.LittleEndian.Uint16(b[4*j:])), Weight: binary.LittleEndian.Uint16(b[4*j+2:])}
			if in.Joint < 0 || int(in.Joint) >= joints {
				r.pos -= 4 * (k - j)
				r.fail("weight.joint", nil, "vertex %d: joint index %d outside the %d joints", i, in.Joint, joints)
				return nil
			}
			backing = append(backing, in)
		}
		ws[i] = backing[start:len(backing):len(backing)]
	}
	return ws
}

// sameIndices reports whether the triangle indices that start at r.pos
// are the same ti values as the coordinate indices just read from
// r.b[cAt:cEnd]: the same count and width, nc ≤ ntv (so every value is in
// range for both) and the same bytes. It reads nothing when they are not
// all there (the ordinary read then reports the shortage).
func (r *reader) sameIndices(lay layout, cAt, cEnd, ci, ti, nc, ntv int) bool {
	n := cEnd - cAt
	if r.err != nil || ci != ti || ci == 0 || nc > ntv || lay.indexWidth(nc) != lay.indexWidth(ntv) ||
		int64(n) > r.left() || !r.ensure("triangle_indices", int64(n)) {
		return false
	}
	return equalBytes(r.b[cAt:cEnd], r.b[r.pos:r.pos+n])
}

// errDiffer stops equalBytes' ranges once one has found a difference.
var errDiffer = errors.New("differ")

// equalBytes is bytes.Equal, over the CPUs for long slices (a large
// mesh's index lists are megabytes).
func equalBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	const grain = 1 << 20 // bytes per range
	if len(a) < 2*grain {
		return bytes.Equal(a, b)
	}
	return decode.ParallelEach((len(a)+grain-1)/grain, func(i int) error {
		lo, hi := i*grain, min((i+1)*grain, len(a))
		if !bytes.Equal(a[lo:hi], b[lo:hi]) {
			return errDiffer
		}
		return nil
	}) == nil
}

// indexWidth is the byte width of an index array addressing n vertices:
// 1 below 256, 2 below 65 536, then 0 for compact ints in a block (ms15,
// sk10, ms14) and 4 for an int32 each in a stream (ms13 to ms10).
func (l layout) indexWidth(n int) int {
	switch {
	case n < 256:
		return 1
	case n < 65536:
		return 2
	case !l.blocks:
		return 4
	}
	return 0
}

// indices reads count indices into an array of n vertices, in the width that
// n selects in layout lay, and checks each against n.
func (r *reader) indices(field string, lay layout, count, n int) []uint32 {
	if r.err != nil {
		return nil
	}
	w := lay.indexWidth(n)
	if !r.need(field, int64(count), int64(max(w, 1))) || count == 0 {
		return nil
	}
	// Every element is written below (or the array is dropped with the
	// error), so a stale scratch array does; Decode returns it.
	idx := indexScratch.get(count)
	switch w {
	case 1, 2, 4:
		b := r.bytes(field, int64(w)*int64(count))
		if b == nil {
			return nil
		}
		for i := range idx {
			var v uint32
			switch w {
			case 1:
				v = uint32(b[i])
			case 2:
				v = uint32(binary.LittleEndian.Uint16(b[2*i:]))
			default:
				v = binary.LittleEndian.Uint32(b[4*i:])
			}
			if v >= uint32(n) {
				r.pos -= w * (count - i)
				r.fail(field, nil, "index %d of corner %d is outside the %d vertices", v, i, n)
				return nil
			}
			idx[i] = v
		}
	default:
		// Compact ints, decoded straight from the loaded bytes (a stream
		// reader loads the rest of its file first; blocks are in memory).
		if !r.ensure(field, r.left()) {
			return nil
		}
		b := r.b[:int64(r.pos)+r.left()]
		var bad *compactErr
		r.pos, bad = compactIndices(b, r.pos, idx, n)
		if bad != nil {
			r.fail(field, bad.cause, "%s", bad.msg)
			return nil
		}
	}
	return idx
}

// compactErr is a failure of compactIndices: the reader fails with it at
// the position compactIndices returns, the start of the bad index.
type compactErr struct {
	cause error
	msg   string
}

// compactIndices decodes len(idx) compact indices into an array of n
// vertices from b at pos and returns the position after them, or the
// position of the first bad one and why. Large arrays are decoded in two
// halves at once: every index ends with the first byte whose bit 7 is
// clear, so counting such bytes finds where the second half starts; when
// the first half decodes without error it ends exactly there, and when it
// fails its error is the first, as in one pass.
func compactIndices(b []byte, pos int, idx []uint32, n int) (int, *compactErr) {
	count := len(idx)
	if count < 2*decode.ParallelGrain || runtime.GOMAXPROCS(0) < 2 {
		return compactRun(b, pos, idx, n, 0)
	}
	mid := count / 2
	split := afterTerminators(b[pos:], mid)
	if split < 0 {
		return compactRun(b, pos, idx, n, 0) // too few: the one pass finds the error
	}
	var (
		end2 int
		err2 *compactErr
		done = make(chan struct{})
	)
	go func() {
		end2, err2 = compactRun(b, pos+split, idx[mid:], n, mid)
		close(done)
	}()
	end1, err1 := compactRun(b, pos, idx[:mid], n, 0)
	<-done
	if err1 != nil {
		return end1, err1
	}
	return end2, err2
}

// afterTerminators returns the length of the prefix of b holding k bytes
// with bit 7 clear, the last of them ending it, or −1 when b has fewer.
func afterTerminators(b []byte, k int) int {
	seen, i := 0, 0
	// 32 bytes a step: each word's terminator flags (bit 7 of each byte)
	// shifted into distinct bit positions, so that one population count
	// covers four words; the step that would reach k is redone below a
	// word at a time.
	const hi = 0x8080808080808080
	le := binary.LittleEndian
	for ; i+32 <= len(b); i += 32 {
		q := b[i : i+32 : i+32]
		t := (^le.Uint64(q)&hi)>>7 | (^le.Uint64(q[8:])&hi)>>6 | (^le.Uint64(q[16:])&hi)>>5 | (^le.Uint64(q[24:])&hi)>>4
		c := bits.OnesCount64(t)
		if seen+c >= k {
			break
		}
		seen += c
	}
	for ; i+8 <= len(b); i += 8 {
		c := bits.OnesCount64(^binary.LittleEndian.Uint64(b[i:]) & 0x8080808080808080)
		if seen+c >= k {
			break
		}
		seen += c
	}
	for ; i < len(b); i++ {
		if b[i]&0x80 == 0 {
			if seen++; seen == k {
				return i + 1
			}
		}
	}
	return -1
}

// compactRun decodes compact indices one after another; corner0 is the
// corner number of idx[0], for errors.
func compactRun(b []byte, pos int, idx []uint32, n, corner0 int) (int, *compactErr) {
	outside := func(v int64, i int) *compactErr {
		return &compactErr{msg: fmt.Sprintf("index %d of corner %d is outside the %d vertices", v, corner0+i, n)}
	}
	un := uint32(n)
	for i := 0; i < len(idx); i++ {
		// Two three-byte indices (the usual form between 2¹³ and 2²⁰
		// vertices) or two four-byte ones (up to 2²⁷) from one 64-bit
		// load: bit 7 set in every byte but each index's last, sign bits
		// (bit 6 of each first byte) clear. Fixed shifts, no length to
		// find.
		if i+1 < len(idx) && pos+8 <= len(b) {
			w := binary.LittleEndian.Uint64(b[pos:])
			if w&0x8080c08080c0 == 0x008080008080 {
				v0 := uint32(w&0x3f | (w>>8&0x7f)<<6 | (w>>16&0x7f)<<13)
				w >>= 24
				v1 := uint32(w&0x3f | (w>>8&0x7f)<<6 | (w>>16&0x7f)<<13)
				if v0 < un && v1 < un {
					idx[i], idx[i+1] = v0, v1
					pos += 6
					i++
					continue
				}
			} else if w&0x808080c0808080c0 == 0x0080808000808080 {
				v0 := uint32(w&0x3f | (w>>8&0x7f)<<6 | (w>>16&0x7f)<<13 | (w>>24&0x7f)<<20)
				w >>= 32
				v1 := uint32(w&0x3f | (w>>8&0x7f)<<6 | (w>>16&0x7f)<<13 | (w>>24&0x7f)<<20)
				if v0 < un && v1 < un {
					idx[i], idx[i+1] = v0, v1
					pos += 8
					i++
					continue
				}
			}
		}
		// One non-negative index of one to four bytes (below 2²⁷) from
		// one 32-bit load without a branch on the length: the first byte
		// with bit 7 clear ends the number.
		if pos+4 <= len(b) {
			w := binary.LittleEndian.Uint32(b[pos:])
			k := uint(bits.TrailingZeros32(^w&0x80808080))/8 + 1 // 5: none ends it
			v := (w&0x3f | (w>>8&0x7f)<<6 | (w>>16&0x7f)<<13 | (w>>24&0x7f)<<20) & (1<<(7*k-1) - 1)
			last := w >> (8 * (k - 1)) & 0xff
			if k <= 4 && w&0x40 == 0 && (k == 1 || last != 0) && v < un {
				idx[i] = v
				pos += int(k)
				continue
			}
		}
		// Anything else (negative, longer, a zero last byte, an index
		// outside n, the last bytes of the data) goes through
		// parseCompact, which also makes every error. (A zero last byte
		// is an over-long form parseCompact accepts with the same value;
		// it is rare enough to leave to it.)
		v, k, err := parseCompact(b[pos:min(len(b), pos+maxCompactLen)])
		if err != nil {
			var cause error
			if err == errCompactShort {
				cause = decode.ErrTruncated
			}
			return pos, &compactErr{cause: cause, msg: fmt.Sprintf("corner %d: %v", corner0+i, err)}
		}
		if v < 0 || int64(v) >= int64(n) {
			return pos, outside(int64(v), i)
		}
		idx[i] = uint32(v)
		pos += k
	}
	return pos, nil
}
