package unigine

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/meshfs/meshfs/decode"
)

// surfCounts are the counts of one surface that live in its geometry block
// (or ms11's stream) and collision block, as Scan reads them for
// header.json. −1 means not read (yet): a broken block leaves the rest
// unread, and header.json shows what was.
type surfCounts struct {
	cIndices, tIndices int
	targets            []targetCounts // one per target; target 0 is the base
	weights            int            // weighted coordinate vertices (0 or the coordinate-vertex count)
	uv0, uv1, colors   int            // 0 or the triangle-vertex count each
	nodes              int            // spatial tree nodes in the collision block
	// nonFinite: the base positions or a UV set hold NaN or ±Inf, which
	// decode.Scene.Repair repairs (the tangent frames are shorts, always
	// finite).
	nonFinite bool
}

type targetCounts struct{ vertices, tangents int }

func newSurfCounts(sh surfHeader) *surfCounts {
	c := &surfCounts{cIndices: -1, tIndices: -1, weights: -1, uv0: -1, uv1: -1, colors: -1, nodes: -1}
	c.targets = make([]targetCounts, len(sh.targets))
	for k := range c.targets {
		c.targets[k] = targetCounts{-1, -1}
	}
	return c
}

// skip steps over n bytes; a block in memory is only re-sliced.
func (r *reader) skip(field string, n int64) { r.bytes(field, n) }

// countGeometry walks one surface's geometry as parseGeometry reads it but
// only reads the counts: arrays are skipped by arithmetic (compact indices
// by counting their last bytes), no float is converted and nothing is
// allocated for the geometry. It makes the same count checks as
// parseGeometry, with the same fields and offsets; what it does not check
// (index and joint ranges, compact-int encodings) only Decode finds. It
// notes, in c.nonFinite, NaN or ±Inf in the base positions and UV sets
// (what decode.Scene.Repair changes) without converting them.
func countGeometry(r *reader, lay layout, sh surfHeader, c *surfCounts) {
	for k, th := range sh.targets {
		t := &c.targets[k]
		tf := fmt.Sprintf("morph_target[%d]", k)
		if !lay.targets {
			tf = "surface"
		}
		nv := th.vertices
		if nv < 0 {
			nv = r.count(tf+".vertex_count", 12)
		}
		pos := r.bytes(tf+".vertices", 12*int64(nv))
		if r.err != nil {
			return
		}
		if k == 0 && decode.NonFiniteFloats(pos) {
			c.nonFinite = true
		}
		t.vertices = nv
		size := int64(8)
		if lay.tangents7 {
			size = 7
		}
		nt := r.count(tf+".tangent_count", size)
		r.skip(tf+".tangents", size*int64(nt))
		if r.err != nil {
			return
		}
		t.tangents = nt
		if k > 0 {
			base := c.targets[0]
			if t.vertices != base.vertices {
				r.fail(tf+".vertex_count", nil, "morph target %q has %d vertices, the base has %d", th.name, t.vertices, base.vertices)
			} else if t.tangents != 0 && t.tangents != base.tangents {
				r.fail(tf+".tangent_count", nil, "morph target %q has %d tangents, the base has %d", th.name, t.tangents, base.tangents)
			}
			if r.err != nil {
				return
			}
		}
	}
	nc, ntv := c.targets[0].vertices, c.targets[0].tangents
	if lay.weights {
		if c.weights = r.skipWeights(nc); r.err != nil {
			return
		}
	}
	for _, uv := range []struct {
		n           *int
		count, name string
	}{{&c.uv0, "uv0_count", "uv0"}, {&c.uv1, "uv1_count", "uv1"}} {
		n := r.optionalCount(uv.count, 8, ntv, "entries", "triangle vertices")
		if n > 0 && decode.NonFiniteFloats(r.bytes(uv.name, 8*int64(n))) {
			c.nonFinite = true
		}
		if *uv.n = n; r.err != nil {
			return
		}
	}
	if c.colors = r.skipArray("color_count", "colors", 4, ntv, "colours"); r.err != nil {
		return
	}
	ci, ti := sh.cIndices, sh.tIndices
	if ci < 0 {
		ci = r.count("coordinate_index_count", 1)
	}
	cAt := r.pos
	if r.skipIndices("coordinate_indices", lay, ci, nc); r.err != nil {
		return
	}
	cEnd := r.pos
	c.cIndices = ci
	if ti < 0 {
		ti = r.count("triangle_index_count", 1)
	}
	if n := cEnd - cAt; ti == ci && ti > 0 && lay.indexWidth(ntv) == lay.indexWidth(nc) && int64(n) <= r.left() &&
		r.ensure("triangle_indices", int64(n)) && equalBytes(r.b[cAt:cEnd], r.b[r.pos:r.pos+n]) {
		// The same list stored twice (a surface without seams, see
		// sameIndices): it ends as far on as the first did, no need
		// to count its terminators again.
		r.pos += n
	} else if r.skipIndices("triangle_indices", lay, ti, ntv); r.err != nil {
		return
	}
	c.tIndices = ti
	if ci != ti {
		r.fail("triangle_index_count", nil, "%d coordinate indices but %d triangle indices", ci, ti)
	} else if ci%3 != 0 {
		r.fail("coordinate_index_count", nil, "%d indices is not a whole number of triangles", ci)
	}
}

// skipArray reads the compact count of an array that is empty or has one
// entry of size bytes per triangle vertex, and skips the entries.
func (r *reader) skipArray(countField, field string, size int64, ntv int, what string) int {
	n := r.optionalCount(countField, size, ntv, what, "triangle vertices")
	if n > 0 {
		r.skip(field, size*int64(n))
	}
	return n
}

// skipWeights reads the weight count and steps over the per-vertex joint
// lists (a u8 length, at most 4, each; the entries are not read).
func (r *reader) skipWeights(nc int) int {
	n := r.optionalCount("weight_count", 1, nc, "weights", "coordinate vertices")
	if n == 0 {
		return 0
	}
	for i := 0; i < n; i++ {
		k := int(r.u8("weight.joint_count"))
		if r.err != nil {
			return 0
		}
		if k > 4 {
			r.pos--
			r.fail("weight.joint_count", nil, "vertex %d has %d joints, at most 4", i, k)
			return 0
		}
		r.skip("weight.joints", 4*int64(k))
	}
	return n
}

// skipIndices steps over count indices into an array of n vertices, in the
// width n selects in layout lay. Compact indices are skipped by counting the
// bytes that end them (bit 7 clear), without decoding them.
func (r *reader) skipIndices(field string, lay layout, count, n int) {
	w := lay.indexWidth(n)
	if !r.need(field, int64(count), int64(max(w, 1))) || count == 0 {
		return
	}
	if w > 0 {
		r.skip(field, int64(w)*int64(count))
		return
	}
	r.skipCompacts(field, count)
}

// skipCompacts steps over count compact ints.
func (r *reader) skipCompacts(field string, count int) {
	if count == 0 || !r.ensure(field, r.left()) {
		return
	}
	end := afterTerminators(r.b[r.pos:int64(r.pos)+r.left()], count)
	if end < 0 {
		r.fail(field, decode.ErrTruncated, "%d compact ints do not fit in the %d bytes left", count, r.left())
		return
	}
	r.pos += end
}

// countCollision reads the spatial tree's node count from a collision
// block: the edge flags (one byte per triangle) and the node-index list
// (compact ints) before it are skipped.
func countCollision(r *reader, c *surfCounts) {
	edges := r.count("edge_count", 1)
	r.skip("edges", int64(edges))
	ni := r.count("node_index_count", 1)
	r.skipCompacts("node_indices", ni)
	// A node is at least a u8 axis, four one-byte compact ints, six bound
	// floats and a split float.
	nodes := r.count("node_count", 1+4+6*4+4)
	if r.err == nil {
		c.nodes = nodes
	}
}

// blockBuffers are the two buffers Scan reads every block through: the
// compressed bytes and the decompressed ones. Each surface's blocks reuse
// them, so a scan holds one decompressed block at a time, sized by the
// largest.
type blockBuffers struct {
	packed, raw []byte
	// mapped: the last block load decompressed from a mapping of the
	// file (mapBlock), so packed does not hold its compressed bytes.
	mapped bool
}

// minMapped is the smallest compressed block decompressed from a mapping
// of the file rather than read into a buffer: below it the mapping costs
// more than the copy it saves.
const minMapped = 1 << 20

// buffers keeps blockBuffers between scans and decodes: a fresh buffer of
// tens of MB is zeroed before the read and the decompression overwrite it,
// and that zeroing cost as much as a third of the decompression. sync.Pool
// drops what it holds within two garbage collections, so the memory held
// for reuse stays short-lived.
var buffers = sync.Pool{New: func() any { return new(blockBuffers) }}

// maxPooled bounds the buffers kept for reuse; larger ones (a huge block)
// are left to the garbage collector.
const maxPooled = 64 << 20

func getBuffers() *blockBuffers { return buffers.Get().(*blockBuffers) }

func putBuffers(bb *blockBuffers) {
	if cap(bb.packed)+cap(bb.raw) <= maxPooled {
		buffers.Put(bb)
	}
}

// grow returns b resized to n bytes, reallocated if too small. The result
// is never nil: pierrec/lz4's assembly decoder, given a nil destination,
// takes its fast path and writes through the nil pointer (a block that
// claims 0 bytes uncompressed reaches it). A new buffer is not zeroed:
// every use overwrites all n bytes (a read of them all, a decompression
// checked to produce exactly n) or fails and leaves them unread.
func grow(b []byte, n int64) []byte {
	if b == nil || int64(cap(b)) < n {
		return unzeroed[byte](int(n))
	}
	return b[:n]
}

// load reads and decompresses block b into the buffers and returns the
// decompressed bytes, valid until the next load. The checks and errors
// are loadBlock's.
func (bb *blockBuffers) load(src *decode.Source, b block, section string) ([]byte, error) {
	if b.stored() {
		bb.raw = grow(bb.raw, b.raw)
		if err := readAt(src, bb.raw, b.data()); err != nil {
			return nil, &decode.FormatError{File: src.Name, Section: section, Field: "block data", Offset: b.data(), Msg: "read error", Err: err}
		}
		return bb.raw, nil
	}
	if packed, unmap, ok := mapBlock(src, b); ok {
		defer unmap()
		bb.mapped = true
		return bb.decompressMapped(src, b, section, packed)
	}
	bb.mapped = false
	if err := bb.readPacked(src, b, section); err != nil {
		return nil, err
	}
	return bb.decompress(src, b, section)
}

// decompressMapped decompresses block b from packed, a mapping of the
// file's bytes. A file cut short since it was opened makes the access
// past its new end fault (SIGBUS); the fault is turned into a panic for
// this goroutine (debug.SetPanicOnFault) and the panic into the read
// error a read of the missing bytes would have given.
func (bb *blockBuffers) decompressMapped(src *decode.Source, b block, section string, packed []byte) (raw []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			raw, err = nil, &decode.FormatError{File: src.Name, Section: section, Field: "block data", Offset: b.data(),
				Msg: "read error: the file was cut short while it was read", Err: decode.ErrTruncated}
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	if mappedHook != nil {
		mappedHook()
	}
	return bb.decompressFrom(src, b, section, packed)
}

// mappedHook, when set (by tests), runs between mapping a block and
// reading it.
var mappedHook func()

// readPacked reads compressed block b's bytes into bb.packed.
func (bb *blockBuffers) readPacked(src *decode.Source, b block, section string) error {
	bb.packed = grow(bb.packed, b.packed)
	if err := readAt(src, bb.packed, b.data()); err != nil {
		return &decode.FormatError{File: src.Name, Section: section, Field: "block data", Offset: b.data(), Msg: "read error", Err: err}
	}
	return nil
}

// decompress decompresses bb.packed (block b's bytes) into bb.raw.
func (bb *blockBuffers) decompress(src *decode.Source, b block, section string) ([]byte, error) {
	return bb.decompressFrom(src, b, section, bb.packed)
}

// decompressFrom decompresses packed (block b's bytes) into bb.raw.
func (bb *blockBuffers) decompressFrom(src *decode.Source, b block, section string, packed []byte) ([]byte, error) {
	bb.raw = grow(bb.raw, b.raw)
	n, err := uncompressBlock(packed, bb.raw)
	if err != nil {
		return nil, &decode.FormatError{File: src.Name, Section: section, Field: "block data", Offset: b.data(),
			Msg: fmt.Sprintf("LZ4 block of %d bytes does not decompress to the %d bytes claimed", b.packed, b.raw), Err: err}
	}
	if int64(n) != b.raw {
		return nil, errf(src.Name, section, "uncompressed_size", b.off,
			"LZ4 block decompresses to %d bytes, the header claims %d", n, b.raw)
	}
	return bb.raw, nil
}

// scanSurface reads surface i's counts from its geometry block, then its
// collision block, one after the other through bb. With leave (the last
// surface), a large geometry block is left for a decode that may follow.
//
// A large collision block is read and counted on another CPU meanwhile,
// through buffers of its own (the geometry block's error, if any, still
// comes first, as in one pass).
func scanSurface(src *decode.Source, h *header, l *fileLayout, i int, bb *blockBuffers, c *surfCounts) error {
	if h.lay.collision && l.coll[i].raw >= minConcurrentCollision && runtime.GOMAXPROCS(0) >= 2 {
		cc := surfCounts{nodes: -1}
		done := make(chan error, 1)
		go func() {
			cb := getBuffers()
			defer putBuffers(cb)
			done <- scanCollision(src, l, i, cb, &cc)
		}()
		err := scanGeometry(src, h, l, i, bb, c)
		cerr := <-done // also when the geometry failed: the source must not be read after Scan returns
		if err != nil {
			return err
		}
		c.nodes = cc.nodes
		return cerr
	}
	if err := scanGeometry(src, h, l, i, bb, c); err != nil {
		return err
	}
	if !h.lay.collision {
		return nil
	}
	return scanCollision(src, l, i, bb, c)
}

// minConcurrentCollision is the collision block size from which Scan reads
// it beside the geometry block: below it a goroutine costs more than the
// block.
const minConcurrentCollision = 1 << 20

// scanGeometry is scanSurface's geometry block.
func scanGeometry(src *decode.Source, h *header, l *fileLayout, i int, bb *blockBuffers, c *surfCounts) error {
	sec := geometrySection(i)
	data, err := bb.load(src, l.geom[i], sec)
	if err != nil {
		return err
	}
	r := newMemReader(src.Name, blockSection(sec), data, 0)
	countGeometry(r, h.lay, h.surf[i], c)
	if r.err == nil && r.left() != 0 {
		r.fail("", nil, "%d bytes left over after the surface's data", r.left())
	}
	if r.err != nil {
		return r.err
	}
	return nil
}

// scanCollision is scanSurface's collision block: the spatial tree's node
// count into c.nodes.
func scanCollision(src *decode.Source, l *fileLayout, i int, bb *blockBuffers, c *surfCounts) error {
	sec := collisionSection(i)
	data, err := bb.load(src, l.coll[i], sec)
	if err != nil {
		return err
	}
	r := newMemReader(src.Name, blockSection(sec), data, 0)
	countCollision(r, c)
	return r.err
}
