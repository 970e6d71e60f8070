package archive

import (
	"bufio"
	"bytes"
	"errors"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"sort"
	"sync"
)

// Checkpoints: random access to big deflated entries without holding them,
// as zran does for zlib. One pass of the package's own deflate decoder
// (indexer, RFC 1951), advanced as far as reads go, notes a checkpoint
// every so many bytes of output (at first span): its bit position in the
// compressed data, the 32 KiB of output before it and, inside a block, the
// block's code lengths; at the end it checks the size and CRC-32. A read
// restarts the decoder at the checkpoint before the span of output it
// falls in and inflates up to that span's end, keeping only the span; the
// last spans inflated are kept.
//
// What a reader keeps is charged to its Limits.Budget: each checkpoint,
// each kept span. A reader holds at most maxCheckpoints; when it has that
// many, or the budget refuses one while it holds minCheckpoints or more,
// it drops every other one and notes them twice as far apart from then
// on. So a read restarts at most the spacing before its span, and the
// spacing is at most the entry's size over minCheckpoints/2.

// span is the output a read inflates and a reader keeps at a time, and
// the first spacing of checkpoints.
const span = 1 << 20

// keptSpans is how many inflated spans a reader keeps.
const keptSpans = 4

// A reader's checkpoints are at most maxCheckpoints; it keeps
// minCheckpoints whatever its budget says.
const (
	maxCheckpoints = 512
	minCheckpoints = 16
)

// checkpoint is a place a read can restart inflating from.
type checkpoint struct {
	bit    int64  // in the compressed data
	out    int64  // bytes of output before it
	window []byte // the (up to) 32 KiB of output before it
	// Inside a block: the block's literal/length and distance code
	// lengths (lens[:nlit], lens[nlit:]) and whether it is the last.
	inBlock bool
	final   bool
	nlit    int
	lens    []uint8
}

// cost is what a checkpoint is charged.
func (cp *checkpoint) cost() int64 { return int64(len(cp.window)+len(cp.lens)) + 64 }

// errBadDeflate is the block decoder's failure.
var errBadDeflate = errors.New("invalid deflate data")

// bitReader reads a deflate stream's bits, least significant first.
type bitReader struct {
	r   *bufio.Reader
	b   uint64
	nb  uint
	pos int64 // bytes read
	err error
}

// fill tries to hold n bits; it holds fewer only at the end of the data.
func (br *bitReader) fill(n uint) {
	for br.nb < n {
		c, err := br.r.ReadByte()
		if err != nil {
			if br.err == nil {
				br.err = err
			}
			return
		}
		br.b |= uint64(c) << br.nb
		br.nb += 8
		br.pos++
	}
}

func (br *bitReader) bits(n uint) (uint32, bool) {
	br.fill(n)
	if br.nb < n {
		return 0, false
	}
	v := uint32(br.b & (1<<n - 1))
	br.b >>= n
	br.nb -= n
	return v, true
}

// bitPos is the position of the next bit to decode.
func (br *bitReader) bitPos() int64 { return br.pos*8 - int64(br.nb) }

// huffman is a canonical code's lookup table, by the next maxLen bits:
// symbol<<4 | length, 0 where no code lies.
type huffman struct {
	table  []uint32
	maxLen uint
}

// build makes the table for code lengths; an over-subscribed code, or an
// incomplete one other than a single code of length 1, is refused.
func (h *huffman) build(lengths []uint8) error {
	var count [16]int
	maxLen := uint(0)
	for _, l := range lengths {
		count[l]++
		if l > 0 && uint(l) > maxLen {
			maxLen = uint(l)
		}
	}
	count[0] = 0
	left := 1
	for l := 1; l < 16; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return errBadDeflate
		}
	}
	if left > 0 && !(maxLen == 1 && count[1] == 1) && maxLen != 0 {
		return errBadDeflate
	}
	var next [16]uint32
	code := uint32(0)
	for l := 1; l < 16; l++ {
		code = (code + uint32(count[l-1])) << 1
		next[l] = code
	}
	h.maxLen = max(maxLen, 1)
	n := 1 << h.maxLen
	if cap(h.table) < n {
		h.table = make([]uint32, n)
	}
	h.table = h.table[:n]
	clear(h.table)
	for sym, l := range lengths {
		if l == 0 {
			continue
		}
		c := next[l]
		next[l]++
		// Deflate sends codes most significant bit first: reverse them.
		r := uint32(0)
		for i := uint8(0); i < l; i++ {
			r = r<<1 | c>>i&1
		}
		for k := r; k < uint32(n); k += 1 << l {
			h.table[k] = uint32(sym)<<4 | uint32(l)
		}
	}
	return nil
}

// decode reads one symbol.
func (br *bitReader) decode(h *huffman) (int, bool) {
	br.fill(h.maxLen)
	e := h.table[br.b&(1<<h.maxLen-1)]
	l := uint(e & 15)
	if l == 0 || l > br.nb {
		return 0, false
	}
	br.b >>= l
	br.nb -= l
	return int(e >> 4), true
}

// Length and distance bases and extra bits (RFC 1951, 3.2.5).
var (
	lenBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase = [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtr = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	clOrder  = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// windowSize is deflate's largest distance.
const windowSize = 1 << 15

// indexer is one pass of the block decoder over a deflate stream, noting
// checkpoints (every bytes apart) as it goes, or a restart of the decoder
// at a checkpoint (restartAt). It advances as far as it is asked, stopping
// at a symbol boundary, inside a block when need be.
type indexer struct {
	br          bitReader
	buf         []byte // the output from base on: at least the window before out
	base        int64
	crcAt       int // bytes of buf the CRC-32 has had
	out, limit  int64
	crc         hash.Hash32
	cps         []checkpoint
	every, next int64 // the checkpoints' spacing; where the next is due
	mem         *charges
	lit, dist   huffman
	cl          huffman
	lens        [288 + 32]uint8 // the current block's code lengths
	nlit, ndist int
	final       bool // the current (or last) block is the last
	inBlock     bool // between a block's header and its end
	done        bool
	err         error
	stop        int64 // advance's target: decoding pauses there
	slideLen    int   // the output held when it is next due to slide
	// A restart (restartAt) takes no checkpoints and no CRC, and keeps
	// its output from keepFrom on in buf.
	restart  bool
	keepFrom int64
}

// slideAt is how much output a decoder holds before it drops what it no
// longer needs.
const slideAt = 1<<20 + windowSize

func newIndexer(r *bufio.Reader, limit int64, mem *charges) *indexer {
	return &indexer{br: bitReader{r: r}, buf: make([]byte, 0, min(limit+258, slideAt+64<<10)), limit: limit, crc: crc32.NewIEEE(),
		cps: []checkpoint{{}}, every: span, next: span, mem: mem, slideLen: slideAt}
}

// restartAt is a decoder of src from checkpoint cp on, up to limit bytes
// in all, that keeps its output from keepFrom on (to end, at most). It starts at cp's bit:
// the bits of its first byte before it are dropped, so that stored blocks
// align as in the original stream.
func restartAt(src *io.SectionReader, cp *checkpoint, limit, keepFrom, end int64) *indexer {
	r := bufio.NewReader(io.NewSectionReader(src, cp.bit/8, src.Size()-cp.bit/8))
	buf := make([]byte, len(cp.window), int64(len(cp.window))+min(end-cp.out, slideAt+end-keepFrom)+258)
	copy(buf, cp.window)
	ix := &indexer{br: bitReader{r: r}, buf: buf, base: cp.out - int64(len(cp.window)), out: cp.out, limit: limit,
		restart: true, keepFrom: keepFrom, final: cp.final, inBlock: cp.inBlock, next: math.MaxInt64, slideLen: slideAt}
	if skip := uint(cp.bit % 8); skip > 0 {
		ix.br.fill(8)
		if ix.br.nb >= skip {
			ix.br.b >>= skip
			ix.br.nb -= skip
		}
	}
	if cp.inBlock && !ix.tables(cp.lens[:cp.nlit], cp.lens[cp.nlit:]) {
		ix.err = errBadDeflate
	}
	return ix
}

// tables builds the block's codes from its code lengths, kept for the
// checkpoints inside it.
func (ix *indexer) tables(lit, dist []uint8) bool {
	if ix.lit.build(lit) != nil || ix.dist.build(dist) != nil {
		return false
	}
	ix.nlit, ix.ndist = len(lit), len(dist)
	if &lit[0] != &ix.lens[0] {
		copy(ix.lens[:], lit)
		copy(ix.lens[len(lit):], dist)
	}
	return true
}

func (ix *indexer) emit(c byte) {
	ix.buf = append(ix.buf, c)
	ix.out++
}

// copyBack appends length bytes from d back; an overlapping copy repeats
// the d bytes, in copies of a whole number of periods.
func (ix *indexer) copyBack(d, length int64) {
	start := len(ix.buf) - int(d)
	end := len(ix.buf) + int(length)
	for len(ix.buf) < end {
		ix.buf = append(ix.buf, ix.buf[start:start+min(end-len(ix.buf), len(ix.buf)-start)]...)
	}
	ix.out += length
}

// slide drops the output no longer needed: all but the window, or for a
// restart all before keepFrom (and the window before it). The CRC-32 has
// what it drops.
func (ix *indexer) slide() {
	keep := windowSize
	if ix.restart {
		keep = max(keep, int(ix.out-ix.keepFrom))
	} else {
		ix.crc.Write(ix.buf[ix.crcAt:])
	}
	keep = min(keep, len(ix.buf))
	n := copy(ix.buf, ix.buf[len(ix.buf)-keep:])
	ix.base += int64(len(ix.buf) - n)
	ix.buf = ix.buf[:n]
	ix.crcAt = n
	ix.slideLen = n + slideAt - windowSize
}

// checkpoint notes one where the decoder is (it is due: out ≥ next),
// within the reader's count and budget.
func (ix *indexer) checkpoint() {
	if len(ix.cps) >= maxCheckpoints {
		ix.thin()
		if ix.out < ix.next {
			return
		}
	}
	w := int(min(ix.out-ix.base, windowSize))
	cost := int64(w) + 64
	if ix.inBlock {
		cost += int64(ix.nlit + ix.ndist)
	}
	if len(ix.cps) < minCheckpoints {
		ix.mem.force(cost)
	} else if !ix.mem.take(cost) {
		ix.thin()
		if ix.out < ix.next {
			return
		}
		if !ix.mem.take(cost) {
			ix.next = ix.out + ix.every
			return
		}
	}
	cp := checkpoint{bit: ix.br.bitPos(), out: ix.out, inBlock: ix.inBlock, final: ix.final, window: bytes.Clone(ix.buf[len(ix.buf)-w:])}
	if ix.inBlock {
		cp.nlit, cp.lens = ix.nlit, bytes.Clone(ix.lens[:ix.nlit+ix.ndist])
	}
	ix.cps = append(ix.cps, cp)
	ix.next = ix.out + ix.every
}

// thin drops every other checkpoint (the first, at the start, stays) and
// doubles the spacing.
func (ix *indexer) thin() {
	kept := ix.cps[:1]
	for i := 1; i < len(ix.cps); i++ {
		if i%2 == 0 {
			kept = append(kept, ix.cps[i])
		} else {
			ix.mem.release(ix.cps[i].cost())
		}
	}
	clear(ix.cps[len(kept):])
	ix.cps = kept
	ix.every *= 2
	ix.next = ix.cps[len(ix.cps)-1].out + ix.every
}

// advance decodes until target bytes are out or the stream ends (done),
// or fails (err, sticky).
func (ix *indexer) advance(target int64) error {
	ix.stop = target
	// At the declared size the stream must still end: its last blocks are
	// decoded too (they may hold nothing), so that the CRC-32 is checked.
	for ix.err == nil && !ix.done && (ix.out < target || !ix.restart && ix.out == ix.limit && (!ix.final || ix.inBlock)) {
		if ix.final && !ix.inBlock {
			break
		}
		if !ix.block() {
			ix.err = errBadDeflate
			if ix.br.err != nil && ix.br.err != io.EOF {
				ix.err = ix.br.err
			}
		}
	}
	if ix.final && !ix.inBlock && !ix.done && ix.err == nil {
		if !ix.restart {
			ix.crc.Write(ix.buf[ix.crcAt:])
			ix.buf, ix.crcAt = nil, 0 // reads restart at checkpoints from now on
		}
		ix.done = true
	}
	return ix.err
}

// block decodes one block, or the rest of one, pausing inside it once the
// output reaches stop; false when the data is not deflate or runs past
// the limit.
func (ix *indexer) block() bool {
	br := &ix.br
	if !ix.inBlock {
		if ix.out >= ix.next {
			ix.checkpoint()
		}
		hdr, ok := br.bits(3)
		if !ok {
			return false
		}
		ix.final = hdr&1 == 1
		switch hdr >> 1 {
		case 0: // stored
			br.b >>= br.nb % 8
			br.nb -= br.nb % 8
			n, ok1 := br.bits(16)
			nn, ok2 := br.bits(16)
			if !ok1 || !ok2 || n != ^nn&0xffff || ix.out+int64(n) > ix.limit {
				return false
			}
			for range n {
				c, ok := br.bits(8)
				if !ok {
					return false
				}
				ix.emit(byte(c))
			}
			if len(ix.buf) >= ix.slideLen {
				ix.slide()
			}
			return true
		case 1:
			l := ix.lens[:]
			for i := range l[:288] {
				switch {
				case i < 144, i >= 280:
					l[i] = 8
				case i < 256:
					l[i] = 9
				default:
					l[i] = 7
				}
			}
			for i := 288; i < len(l); i++ {
				l[i] = 5
			}
			if !ix.tables(l[:288], l[288:]) {
				return false
			}
		case 2:
			if !ix.dynamicTables() {
				return false
			}
		default:
			return false
		}
		ix.inBlock = true
	}
	for {
		sym, ok := br.decode(&ix.lit)
		switch {
		case !ok:
			return false
		case sym < 256:
			ix.emit(byte(sym))
		case sym == 256:
			ix.inBlock = false
			return true
		default:
			sym -= 257
			if sym >= 29 {
				return false
			}
			e, ok := br.bits(uint(lenExtra[sym]))
			if !ok {
				return false
			}
			length := int64(lenBase[sym]) + int64(e)
			ds, ok := br.decode(&ix.dist)
			if !ok || ds >= 30 {
				return false
			}
			e, ok = br.bits(uint(distExtr[ds]))
			if !ok {
				return false
			}
			d := int64(distBase[ds] + e)
			if d > ix.out || d > int64(len(ix.buf)) || ix.out+length > ix.limit {
				return false
			}
			ix.copyBack(d, length)
		}
		if ix.out > ix.limit {
			return false
		}
		if len(ix.buf) >= ix.slideLen {
			ix.slide()
		}
		if ix.out >= ix.stop && (ix.restart || ix.out < ix.limit) {
			return true // paused inside the block: advance resumes it
		}
		if ix.out >= ix.next {
			ix.checkpoint()
		}
	}
}

// dynamicTables reads a dynamic block's code lengths and builds its tables.
func (ix *indexer) dynamicTables() bool {
	br := &ix.br
	hlit, ok1 := br.bits(5)
	hdist, ok2 := br.bits(5)
	hclen, ok3 := br.bits(4)
	if !ok1 || !ok2 || !ok3 || hlit > 29 || hdist > 29 {
		return false
	}
	var cll [19]uint8
	for i := range int(hclen) + 4 {
		v, ok := br.bits(3)
		if !ok {
			return false
		}
		cll[clOrder[i]] = uint8(v)
	}
	if ix.cl.build(cll[:]) != nil {
		return false
	}
	n := int(hlit) + 257 + int(hdist) + 1
	l := ix.lens[:]
	for i := 0; i < n; {
		sym, ok := br.decode(&ix.cl)
		if !ok {
			return false
		}
		rep, val := 1, uint8(sym)
		switch sym {
		case 16:
			if i == 0 {
				return false
			}
			e, ok := br.bits(2)
			if !ok {
				return false
			}
			rep, val = 3+int(e), l[i-1]
		case 17:
			e, ok := br.bits(3)
			if !ok {
				return false
			}
			rep, val = 3+int(e), 0
		case 18:
			e, ok := br.bits(7)
			if !ok {
				return false
			}
			rep, val = 11+int(e), 0
		}
		if i+rep > n {
			return false
		}
		for range rep {
			l[i] = val
			i++
		}
	}
	if l[256] == 0 {
		return false
	}
	return ix.tables(l[:int(hlit)+257], l[int(hlit)+257:n])
}

// indexed serves random reads of a deflated entry from the checkpoints of
// an indexer, which it advances as reads go further.
type indexed struct {
	src  *io.SectionReader // the compressed data
	size int64
	crc  uint32
	mem  *charges
	mu   sync.Mutex
	ix   *indexer
	kept []keptSpan // most recent first
}

// keptSpan is output from start on.
type keptSpan struct {
	start int64
	buf   []byte
}

func newIndexed(src *io.SectionReader, size int64, crc uint32, mem *charges) *indexed {
	return &indexed{src: src, size: size, crc: crc, mem: mem}
}

// errDisagree says the block decoder does not agree with the entry.
var errDisagree = errors.New("the block decoder disagrees with the entry")

func (x *indexed) Size() int64 { return x.size }

// Close drops what the reader keeps and gives back its charges.
func (x *indexed) Close() error {
	x.mu.Lock()
	x.kept, x.ix = nil, nil
	x.mu.Unlock()
	x.mem.releaseAll()
	return nil
}

func (x *indexed) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	n := 0
	for n < len(p) && off < x.size {
		buf, start, err := x.spanAt(off)
		if err != nil {
			return n, err
		}
		c := copy(p[n:], buf[off-start:])
		n += c
		off += int64(c)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// spanAt returns the span of output off falls in, and where it starts.
// The output from a checkpoint to the next is cut in spans of a MiB, the
// last one running to the next checkpoint (less than two MiB), so that
// with checkpoints a MiB apart a span is the output between two.
func (x *indexed) spanAt(off int64) ([]byte, int64, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, s := range x.kept {
		if s.start <= off && off < s.start+int64(len(s.buf)) {
			copy(x.kept[1:i+1], x.kept[:i])
			x.kept[0] = s
			return s.buf, s.start, nil
		}
	}
	if x.ix == nil { // the first read: an open that is never read costs nothing
		x.ix = newIndexer(bufio.NewReader(io.NewSectionReader(x.src, 0, x.src.Size())), x.size, x.mem)
	}
	ix := x.ix
	// The checkpoints up to two spans past off decide its span.
	if err := ix.advance(min(off+2*span, x.size)); err != nil {
		return nil, 0, errDisagree
	}
	if ix.done && (ix.out != x.size || ix.crc.Sum32() != x.crc) {
		return nil, 0, errDisagree
	}
	if ix.out <= off {
		return nil, 0, errDisagree
	}
	c := sort.Search(len(ix.cps), func(i int) bool { return ix.cps[i].out > off }) - 1
	cp := &ix.cps[c]
	start := cp.out + (off-cp.out)/span*span
	end := min(start+span, ix.out)
	if c+1 < len(ix.cps) && ix.cps[c+1].out-start < 2*span {
		end = ix.cps[c+1].out
	}
	// A span is never reused once handed out: readers copy from it unlocked.
	rx := restartAt(x.src, cp, x.size, start, end)
	if err := rx.advance(end); err != nil || rx.out < end {
		return nil, 0, errDisagree
	}
	buf := rx.buf[start-rx.base : end-rx.base : end-rx.base]
	if cap(rx.buf)-len(buf) > 2*windowSize {
		buf = bytes.Clone(buf) // not the restart's whole buffer
	}
	if len(x.kept) == keptSpans {
		x.mem.release(int64(cap(x.kept[keptSpans-1].buf)))
		x.kept = x.kept[:keptSpans-1]
	}
	if x.mem.take(int64(cap(buf))) {
		x.kept = append([]keptSpan{{start, buf}}, x.kept...)
	}
	return buf, start, nil
}

// checkpointed reads a deflated entry through an indexed reader; when the
// block decoder disagrees with the entry (damaged data) it goes on as an
// inflater in memory, from the start, which reports what is wrong in the
// terms of compress/flate and the directory.
type checkpointed struct {
	mu       sync.Mutex
	x        *indexed
	fallback func() Reader
	r        Reader // the inflater, once fallen back
	closed   bool
}

func (c *checkpointed) Size() int64 { return c.x.size }

func (c *checkpointed) ReadAt(p []byte, off int64) (int, error) {
	c.mu.Lock()
	r, closed := c.r, c.closed
	c.mu.Unlock()
	if closed {
		return 0, errors.New("read of a closed entry")
	}
	if r == nil {
		n, err := c.x.ReadAt(p, off)
		if err != errDisagree {
			return n, err
		}
		c.mu.Lock()
		if c.r == nil {
			c.r = c.fallback()
			c.x.Close()
		}
		r = c.r
		c.mu.Unlock()
	}
	return r.ReadAt(p, off)
}

func (c *checkpointed) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.x.Close()
	if c.r != nil {
		return c.r.Close()
	}
	return nil
}
