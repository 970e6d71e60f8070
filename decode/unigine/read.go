package unigine

import (
	"bytes"
	"context"
	"fmt"

	"github.com/meshfs/meshfs/decode"
)

// Read parses the whole file into the raw model: header, every surface's
// geometry, and the collision blocks as bytes.
func Read(ctx context.Context, src *decode.Source) (*File, error) {
	return read(ctx, src, true)
}

// read is Read; without collision it leaves the collision blocks unread
// (Surface.Collision nil): the scene has no use for them, and Decode saves
// their reading and decompression (Scan still checks them, so error.txt
// still reports a broken one).
func read(ctx context.Context, src *decode.Source, collision bool) (*File, error) {
	r := newFileReader(src.Name, "header", src.R, src.Size)
	h, err := parseHeader(r)
	if err != nil {
		return nil, err
	}
	f := &h.file
	if !h.lay.blocks {
		return f, readStream(ctx, r, h)
	}
	l, err := locate(src, h)
	if err != nil {
		return nil, err
	}
	if err := readBlocks(ctx, src, h, l, func(i int) error { return readSurface(src, h, l, i, collision) }); err != nil {
		return nil, err
	}
	return f, nil
}

// readBlocks calls one for each surface of a blocked file, on all CPUs
// when the blocks are large.
func readBlocks(ctx context.Context, src *decode.Source, h *header, l *fileLayout, surface func(i int) error) error {
	f := &h.file
	one := func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return surface(i)
	}
	// Surfaces are independent blocks: large files read and parse them
	// on all CPUs (ReaderAt allows concurrent reads), reporting the first
	// surface's error as one pass would.
	var packed int64
	for _, b := range l.geom {
		packed += b.packed
	}
	if packed >= 1<<20 {
		return decode.ParallelEach(len(f.Surfaces), one)
	}
	for i := range f.Surfaces {
		if err := one(i); err != nil {
			return err
		}
	}
	return nil
}

// blockSection names a decompressed block in errors; offsets in such errors
// count from the block's first decompressed byte.
func blockSection(s string) string { return s + " (offsets within the decompressed data)" }

// readSurface decompresses and parses surface i's geometry block and, if
// asked, loads its collision block.
func readSurface(src *decode.Source, h *header, l *fileLayout, i int, collision bool) error {
	s := &h.file.Surfaces[i]
	sec := geometrySection(i)
	// The geometry block is only parsed (every array is copied out of
	// it), so it is read through pooled buffers (a large file's blocks
	// are tens of MB that a fresh allocation would zero first).
	bb := getBuffers()
	defer putBuffers(bb)
	data, err := bb.load(src, l.geom[i], sec)
	if err != nil {
		return err
	}
	s.Stored = l.geom[i].stored()
	br := newMemReader(src.Name, blockSection(sec), data, 0)
	parseGeometry(br, h.lay, h.surf[i], s, len(h.file.Joints))
	if br.err == nil && br.left() != 0 {
		br.fail("", nil, "%d bytes left over after the surface's data", br.left())
	}
	if br.err != nil {
		return br.err
	}
	if h.lay.collision && collision {
		if s.Collision, err = loadBlock(src, l.coll[i], collisionSection(i)); err != nil {
			return err
		}
	}
	return nil
}

// readStream parses the uncompressed stream of ms13 down to ms10: every
// surface's geometry in turn after the header, then the end (streamEnd).
func readStream(ctx context.Context, r *reader, h *header) error {
	f := &h.file
	if err := r.readAnims(ctx, f, true); err != nil {
		return err
	}
	for i := range f.Surfaces {
		if err := ctx.Err(); err != nil {
			return err
		}
		r.section = fmt.Sprintf("surface %d geometry", i)
		parseGeometry(r, h.lay, h.surf[i], &f.Surfaces[i], len(f.Joints))
	}
	r.streamEnd(f)
	return r.err
}

// readAnims reads the animations a stream stores after its bone
// transforms, one per name of the name list (f.Names), into f.Anims: a
// compact animated joint count and a short joint index each, a mask byte,
// a compact frame count and the records (flag bits as an10's, see
// meshRecord). keep keeps the records (Flags, Values); Scan only checks
// them.
func (r *reader) readAnims(ctx context.Context, f *File, keep bool) error {
	for i := range f.Names {
		r.section = fmt.Sprintf("animation %d", i)
		a := Anim{Magic: f.Magic}
		r.animatedJoints(&a, len(f.Joints))
		a.Mask = r.u8("mask")
		if r.err != nil {
			return r.err
		}
		if _, err := r.animFrames(ctx, &a, keep); err != nil {
			return err
		}
		f.Anims = append(f.Anims, a)
	}
	return nil
}

// streamEnd reads what follows a stream's last surface: the magic, ending
// the file. Bytes between the last surface and a magic that ends the file
// are kept as f.Tail (what they hold is unknown: the surfaces before them
// are complete and checked); anything else is an error.
func (r *reader) streamEnd(f *File) {
	r.section = "end"
	if left := r.left(); r.err == nil && left > 4 && r.ensure("final magic", left) {
		end := r.pos + int(left)
		if string(r.b[r.pos:r.pos+4]) != f.Magic && string(r.b[end-4:end]) == f.Magic {
			f.Tail = bytes.Clone(r.b[r.pos : end-4])
			r.pos = end - 4
		}
	}
	r.magic("final magic", f.Magic)
	if r.err == nil && r.left() != 0 {
		r.fail("", nil, "%d bytes after the final magic", r.left())
	}
}
