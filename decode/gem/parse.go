package gem

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/meshfs/meshfs/decode"
)

// Parse reads a whole .ply file held in memory, arrays included. On error
// it returns the chunks read before the failure as well.
func Parse(ctx context.Context, name string, b []byte) (*File, error) {
	p := &parser{file: name, size: int64(len(b)), data: b}
	return p.parse(ctx)
}

// scanFile reads the chunk sequence through r without reading the vertex,
// index, adjacency, shadow, grid or markup arrays: only their counts,
// checked against the file size.
func scanFile(ctx context.Context, name string, r io.ReaderAt, size int64) (*File, error) {
	p := &parser{file: name, size: size, r: r, lazy: true}
	return p.parse(ctx)
}

// loadFile reads the chunk sequence through r as scanFile does, but reads
// the arrays too, each straight from r into the slice the File keeps: the
// file is never held whole in memory, large arrays are read in parallel
// pieces, and on a little-endian host IND4 values land in their []uint32
// with no conversion pass.
//
// With deferVert set, VERT's records are left in the file (Data nil, the
// claim checked): Decode's builder then reads them itself (see stream).
func loadFile(ctx context.Context, name string, r io.ReaderAt, size int64, deferVert bool) (*File, error) {
	p := &parser{file: name, size: size, r: r, deferVert: deferVert}
	return p.parse(ctx)
}

// parser walks the chunk sequence. With data set it reads from memory;
// otherwise it reads windows of the file through r, growing a window only
// when a chunk of variable length (names, declarations) does not fit, and
// either skips the arrays (lazy) or loads them (see loadFile).
type parser struct {
	file string
	size int64
	data []byte
	r    io.ReaderAt
	lazy bool // skip arrays (Scan)
	// deferVert: when loading, leave VERT's records in the file.
	deferVert bool
	magic     string

	buf    []byte // lazy mode: the last bytes read, starting at bufOff
	bufOff int64

	skipped    int64 // payload bytes skipped in the current chunk (lazy)
	payloadErr bool  // the current chunk's error is a count check, not a window overrun
}

// firstWindow is the first read size for a chunk in lazy mode: enough for
// every fixed header and for typical names and declarations.
const firstWindow = 512

// readAhead is the least a lazy read fetches.
const readAhead = 4096

// read returns up to n bytes at off (fewer at the end of the file).
func (p *parser) read(off int64, n int) ([]byte, error) {
	if off >= p.size || n <= 0 {
		return nil, nil
	}
	if int64(n) > p.size-off {
		n = int(p.size - off)
	}
	if p.data != nil {
		return p.data[off : off+int64(n)], nil
	}
	if off >= p.bufOff && off+int64(n) <= p.bufOff+int64(len(p.buf)) {
		return p.buf[off-p.bufOff:][:n], nil
	}
	// Read ahead: files of many small chunks then cost one read per
	// readAhead bytes. A fresh buffer each time, since slices of the old
	// one may still be in use by the caller.
	m := int64(max(n, readAhead))
	if m > p.size-off {
		m = p.size - off
	}
	b := make([]byte, m)
	got, err := p.r.ReadAt(b, off)
	if int64(got) == m {
		p.buf, p.bufOff = b, off
		return b[:n], nil
	}
	if got >= n {
		return b[:n], nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return nil, &decode.FormatError{File: p.file, Offset: off, Msg: fmt.Sprintf("reading %d bytes", n), Err: err}
}

// chunkAt reports whether a chunk starts at off, or the file ends there:
// the two things that may follow a chunk.
func (p *parser) chunkAt(off int64) bool {
	if off == p.size {
		return true
	}
	b, err := p.read(off, 4)
	return err == nil && knownFourCC(b)
}

func (p *parser) parse(ctx context.Context) (*File, error) {
	f := &File{}
	head, err := p.read(0, 4)
	if err != nil {
		return f, err
	}
	if len(head) < 4 {
		return f, &decode.FormatError{File: p.file, Field: "magic", Offset: 0,
			Msg: fmt.Sprintf("file has %d bytes, a magic needs 4", len(head)), Err: decode.ErrTruncated}
	}
	switch m := string(head); m {
	case MagicEPLY, MagicBPLY, MagicPM01:
		p.magic = m
	default:
		return f, decode.Errorf(p.file, "", "magic", 0, "magic %q is not EPLY, BPLY or PM01", head)
	}
	f.Magic = p.magic
	off := int64(4)
	for i := 0; off < p.size; i++ {
		if err := ctx.Err(); err != nil {
			return f, err
		}
		c, err := p.chunk(i, off)
		if err != nil {
			return f, err
		}
		f.Chunks = append(f.Chunks, c)
		off += c.Where().Length
	}
	return f, nil
}

// chunk parses the chunk at off, the i-th of the file.
func (p *parser) chunk(i int, off int64) (Chunk, error) {
	id, err := p.read(off, 4)
	if err != nil {
		return nil, err
	}
	if len(id) < 4 {
		return nil, &decode.FormatError{File: p.file, Section: fmt.Sprintf("chunk %d", i), Field: "fourcc",
			Offset: off, Msg: fmt.Sprintf("%d trailing bytes are too few for a chunk FourCC", len(id)),
			Err: decode.ErrTruncated}
	}
	if !knownFourCC(id) {
		return nil, decode.Errorf(p.file, fmt.Sprintf("chunk %d", i), "fourcc", off,
			"unknown chunk FourCC %q (bytes % x): chunks store no size, so it cannot be skipped", printable(id), id)
	}
	fourcc := string(id)
	section := fmt.Sprintf("%s (chunk %d)", fourcc, i)
	window := firstWindow
	if p.data != nil {
		window = int(p.size - off) // in memory: the whole rest of the file
	}
	for {
		b, err := p.read(off, window)
		if err != nil {
			return nil, err
		}
		c := decode.NewCursor(p.file, b, off)
		c.Section = section
		c.Bytes("fourcc", 4)
		p.skipped, p.payloadErr = 0, false
		ch := p.body(fourcc, c)
		if err := c.Err(); err != nil {
			// In lazy mode a body may not fit the window: read more and
			// try again, unless the window already reaches the end.
			if p.data == nil && !p.payloadErr && errors.Is(err, decode.ErrTruncated) && off+int64(len(b)) < p.size {
				window *= 4
				continue
			}
			return nil, err
		}
		sp := ch.Where()
		sp.Index, sp.Offset, sp.Length = i, off, int64(c.Pos())+p.skipped
		return ch, nil
	}
}

func printable(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			c = '.'
		}
		out[i] = c
	}
	return string(out)
}

// body reads the chunk after its FourCC.
func (p *parser) body(fourcc string, c *decode.Cursor) Chunk {
	switch fourcc {
	case "INDX", "IND4":
		ix := &Indices{Wide: fourcc == "IND4"}
		ix.Count = c.U32("index_count")
		w := int64(2)
		if ix.Wide {
			w = 4
		}
		if ix.Wide && hostLE && p.data == nil && !p.lazy {
			if p.claim(c, "indices", int64(ix.Count), w) {
				vals := make([]uint32, ix.Count)
				if p.load(c, "indices", unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(vals))), 4*len(vals))) {
					ix.Values = vals
				}
			}
			return ix
		}
		if b := p.payload(c, "indices", int64(ix.Count), w); b != nil {
			ix.Values = make([]uint32, ix.Count)
			vals := ix.Values
			decode.Parallel(len(vals), func(lo, hi int) error {
				if ix.Wide {
					for k := lo; k < hi; k++ {
						vals[k] = binary.LittleEndian.Uint32(b[4*k:])
					}
				} else {
					for k := lo; k < hi; k++ {
						vals[k] = uint32(binary.LittleEndian.Uint16(b[2*k:]))
					}
				}
				return nil
			})
		}
		return ix
	case "VERT":
		v := &Vert{}
		v.Count = c.U32("vertex_count")
		v.Size = c.U16("vertex_size")
		v.Flags = c.U16("vertex_flags")
		if c.Err() == nil && v.Size == 0 && v.Count > 0 {
			c.Fail("vertex_size", "vertex_size 0 with %d vertices", v.Count)
		}
		if p.deferVert && p.data == nil && !p.lazy {
			if p.claim(c, "vertices", int64(v.Count), int64(v.Size)) {
				p.skipped = int64(v.Count) * int64(v.Size)
			}
			return v
		}
		v.Data = p.payload(c, "vertices", int64(v.Count), int64(v.Size))
		return v
	case "BAS2":
		bs := &Basis{}
		for k := range 3 {
			c.F32s("polygons", bs.Poly[k][:])
		}
		for k := range 3 {
			c.F32s("texture", bs.Tex[k][:])
		}
		return bs
	case "InfG":
		g := &InfoGrid{}
		g.Start = [2]int32{c.I32("grid_start"), c.I32("grid_start")}
		g.End = [2]int32{c.I32("grid_end"), c.I32("grid_end")}
		g.Count = c.U32("face_count")
		if b := p.payload(c, "faces", int64(g.Count), 2); b != nil {
			g.Faces = make([]uint16, g.Count)
			for k := range g.Faces {
				g.Faces[k] = uint16(b[2*k]) | uint16(b[2*k+1])<<8
			}
		}
		return g
	case "BNDS":
		bd := &Bounds{}
		bd.Min = c.Vec3("min")
		bd.Max = c.Vec3("max")
		return bd
	case "ADJA":
		a := &Adjacency{}
		a.Count = p.count32(c, "face_count")
		if b := p.payload(c, "adjacencies", int64(a.Count), 6); b != nil {
			a.Faces = make([][3]uint16, a.Count)
			for k := range a.Faces {
				for j := range 3 {
					a.Faces[k][j] = uint16(b[6*k+2*j]) | uint16(b[6*k+2*j+1])<<8
				}
			}
		}
		return a
	case "SHDW":
		s := &Shadow{}
		s.Count = p.count32(c, "face_count")
		if b := p.payload(c, "shadow_infos", int64(s.Count), 1); b != nil {
			s.Casts = append([]byte(nil), b...)
		}
		return s
	case "MROR":
		return &Mirror{}
	case "MARK":
		m := &Markup{}
		m.Size = c.U32("mark_size")
		if b := p.payload(c, "marks", int64(m.Size), 1); b != nil {
			m.Data = append([]byte(nil), b...)
		}
		return m
	case "SKIN":
		s := &Skin{}
		n := c.U32("bone_count")
		if c.Need("bone_names", int64(n), 1) { // each name takes at least its length byte
			s.Bones = make([]string, 0, n)
			for k := 0; k < int(n) && c.Err() == nil; k++ {
				s.Bones = append(s.Bones, str8(c, fmt.Sprintf("bone_names[%d]", k)))
			}
		}
		return s
	case "MESH":
		return p.mesh(c)
	case "SBM1":
		return p.declared(c, KindSBM1)
	case "SUBM":
		if p.magic == MagicPM01 {
			return p.gem3(c)
		}
		return p.declared(c, KindSUBMAS2)
	}
	panic("unreachable: FourCC checked by knownFourCC")
}

// count32 reads an int32 count whose negative values are errors.
func (p *parser) count32(c *decode.Cursor, field string) uint32 {
	off := c.Offset()
	n := c.I32(field)
	if n < 0 && c.Err() == nil {
		c.SetErr(decode.Errorf(c.File, c.Section, field, off, "negative count %d", n))
		return 0
	}
	return uint32(n)
}

// payload returns the array of count × size bytes that ends a chunk, after
// checking the claim against the bytes the file has left. In lazy mode it
// only checks and records the length.
func (p *parser) payload(c *decode.Cursor, field string, count, size int64) []byte {
	if !p.claim(c, field, count, size) {
		return nil
	}
	n := count * size
	switch {
	case p.data != nil:
		return c.Bytes(field, int(n))
	case p.lazy:
		p.skipped = n
		return nil
	}
	b := make([]byte, n)
	if !p.load(c, field, b) {
		return nil
	}
	return b
}

// claim checks an array of count × size bytes at the cursor against the
// bytes the file has left, before anything is allocated for it.
func (p *parser) claim(c *decode.Cursor, field string, count, size int64) bool {
	if c.Err() != nil {
		return false
	}
	left := p.size - c.Offset()
	if count < 0 || (size > 0 && count > left/size) {
		p.payloadErr = true
		c.SetErr(&decode.FormatError{File: c.File, Section: c.Section, Field: field, Offset: c.Offset(),
			Msg: fmt.Sprintf("count %d × %d bytes exceeds the %d bytes left in the file", count, size, left),
			Err: decode.ErrTruncated})
		return false
	}
	return true
}

// load fills b with the array at the cursor, read through r, and counts
// it as part of the chunk. A short read is the chunk's error; the window
// is not grown for it (the array's length was claimed, not read).
func (p *parser) load(c *decode.Cursor, field string, b []byte) bool {
	off := c.Offset()
	p.skipped = int64(len(b))
	if at, err := readAtParallel(p.r, b, off); err != nil {
		p.payloadErr = true
		c.SetErr(&decode.FormatError{File: p.file, Section: c.Section, Field: field, Offset: at,
			Msg: fmt.Sprintf("reading %d bytes at 0x%x", len(b), off), Err: err})
		return false
	}
	return true
}

// readPiece is the least a parallel read gives each CPU: below it the
// goroutines cost more than the copy they share.
const readPiece = 4 << 20

// readAtParallel fills b from r at off, large reads in one piece per CPU
// (io.ReaderAt allows parallel calls; a page-cache copy then runs on every
// core). On failure it returns the offset where the lowest failing piece
// stopped.
func readAtParallel(r io.ReaderAt, b []byte, off int64) (int64, error) {
	parts := 1
	if len(b) >= 2*readPiece {
		parts = min(runtime.GOMAXPROCS(0), len(b)/readPiece)
	}
	var at atomic.Int64
	at.Store(math.MaxInt64)
	err := decode.ParallelEach(parts, func(i int) error {
		lo, hi := len(b)*i/parts, len(b)*(i+1)/parts
		n, err := r.ReadAt(b[lo:hi], off+int64(lo))
		if n == hi-lo {
			return nil
		}
		for end := off + int64(lo+n); ; {
			cur := at.Load()
			if end >= cur || at.CompareAndSwap(cur, end) {
				break
			}
		}
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return err
	})
	return at.Load(), err
}

// hostLE reports whether the host stores numbers little-endian, as the
// file does: then IND4 values can be read straight into a []uint32.
var hostLE = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// str8 reads a string8: a length byte, then that many bytes.
func str8(c *decode.Cursor, field string) string {
	n := c.U8(field)
	return string(c.Bytes(field, int(n)))
}

// textureSlots says which texture names a MESH without flag 0x400 stores,
// in order: diffuse + specular (0x200) + bump (0x100) when either is set;
// otherwise two diffuse names when the fvf has two UV sets or flag 0x1000,
// else one.
func textureSlots(fvf, flags uint32) (diffuse, diffuse1, specular, bump bool) {
	switch {
	case flags&(FlagSpecular|FlagBump) != 0:
		return true, false, flags&FlagSpecular != 0, flags&FlagBump != 0
	case fvf>>8&0xF == 2 || flags&FlagTwoTextures != 0:
		return true, true, false, false
	}
	return true, false, false, false
}

func (p *parser) mesh(c *decode.Cursor) *Submesh {
	s := &Submesh{Kind: KindMESH}
	s.FVF = c.U32("fvf")
	s.FaceStart = c.U32("face_start")
	s.FaceCount = c.U32("face_count")
	s.Flags = c.U32("mesh_flags")
	if s.Flags&FlagSpecular != 0 {
		copy(s.SpecularColor[:], c.Bytes("specular_color", 4))
	}
	if s.Flags&FlagMaterial != 0 {
		s.Material = str8(c, "material_name")
	} else {
		d, d1, sp, bu := textureSlots(s.FVF, s.Flags)
		if d {
			s.Diffuse = str8(c, "diffuse")
		}
		if d1 {
			s.Diffuse1 = str8(c, "diffuse_1")
		}
		if sp {
			s.Specular = str8(c, "specular_texture")
		}
		if bu {
			s.Bump = str8(c, "bump_texture")
		}
	}
	if c.Err() != nil {
		return s
	}
	switch {
	case s.Flags&FlagSubSkin != 0:
		// Real files store the bone map exactly when 0x800 is set.
		s.HasBoneMap, s.BoneMapRule = true, "0x800"
	case s.Flags&FlagSkinned != 0:
		// The original text reads a bone map under 0x10. Accept that
		// reading only when the bytes say so: no chunk starts here, and
		// one (or the end of the file) starts right after the map.
		here := c.Offset()
		if !p.chunkAt(here) {
			nb, _ := p.read(here, 1)
			if len(nb) == 1 && p.chunkAt(here+1+int64(nb[0])) {
				s.HasBoneMap, s.BoneMapRule = true, "0x10"
			} else {
				c.Fail("bone_map", "flags 0x%x: neither a chunk nor a bone map followed by a chunk starts here", s.Flags)
				return s
			}
		}
	}
	if s.HasBoneMap {
		n := c.U8("bone_map_size")
		s.BoneMap = append([]byte{}, c.Bytes("bone_map", int(n))...)
	}
	return s
}

// declared reads SBM1 and SUBM-AS2: a vertex declaration and tags, each
// ended by 0xFF, then the submesh fields.
func (p *parser) declared(c *decode.Cursor, kind Kind) *Submesh {
	s := &Submesh{Kind: kind}
	for c.Err() == nil {
		tu := c.U8("vertex_elements")
		if tu == 0xFF || c.Err() != nil {
			break
		}
		e := Element{TypeUsage: tu}
		e.UsageIndex = c.U8("usage_index")
		e.Stream = c.U8("stream_index")
		s.Elements = append(s.Elements, e)
	}
	for c.Err() == nil {
		ti := c.U8("tags")
		if ti == 0xFF || c.Err() != nil {
			break
		}
		s.Tags = append(s.Tags, Tag{Index: ti, Chunk: c.U32("tag_chunk")})
	}
	s.FaceStart = c.U32("face_start")
	s.FaceCount = c.U32("face_count")
	if kind == KindSUBMAS2 {
		s.Unknown[0] = c.U32("unknown[0]")
		s.Unknown[1] = c.U32("unknown[1]")
	}
	s.Flags = c.U32("mesh_flags")
	s.Material = str8(c, "material_name")
	return s
}

// gem3 reads a PM01 SUBM.
func (p *parser) gem3(c *decode.Cursor) *Submesh {
	s := &Submesh{Kind: KindSUBMGEM3}
	s.VertexFormat = c.U16("vertex_format")
	s.FaceStart = uint32(c.U16("face_start"))
	s.FaceCount = uint32(c.U16("face_count"))
	s.VertexStart = c.U16("vertex_start")
	s.VertexCount = c.U16("vertex_count")
	s.Flags = uint32(c.U16("mesh_flags"))
	if s.Flags&GEM3Skin != 0 {
		s.HasBoneMap, s.BoneMapRule = true, "skin"
		n := c.U8("bone_count")
		s.BoneMap = append([]byte{}, c.Bytes("bone_map", int(n))...)
	}
	s.Material = str8(c, "material_name")
	return s
}
