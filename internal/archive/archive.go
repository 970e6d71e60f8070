package archive

import (
	"bufio"
	"cmp"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/meshfs/meshfs/decode"
)

// Record signatures and fixed lengths (APPNOTE 4.3).
const (
	sigLocal   = 0x04034b50
	sigCentral = 0x02014b50
	sigEnd     = 0x06054b50
	sigEnd64   = 0x06064b50
	sigLoc64   = 0x07064b50

	lenLocal   = 30
	lenCentral = 46
	lenEnd     = 22
	lenEnd64   = 56
	lenLoc64   = 20
	maxComment = 0xffff
)

// Methods accepted.
const (
	Store   uint16 = 0
	Deflate uint16 = 8
)

// maxRatio bounds what a deflate stream can expand to: a length-258 match
// costs at least two bits, so 1032 bytes of output per byte of input.
const maxRatio = 1032

// Limits bound the reading of entries.
type Limits struct {
	// MaxInflate refuses deflated entries declaring more bytes (meshfs's
	// --max-source-size). 0 means no limit.
	MaxInflate int64
	// MemInflate is the largest entry inflated into memory; bigger ones go
	// to an unlinked file in SpillDir. With SpillDir empty every entry is
	// inflated into memory.
	MemInflate int64
	SpillDir   string
	// Budget is charged what readers of entries read through checkpoints
	// keep (nil: nothing is charged; each reader still keeps at most
	// maxCheckpoints and keptSpans spans).
	Budget *Budget
}

// DefaultLimits are meshfs's default --max-source-size, and memory for
// entries up to 16 MiB.
var DefaultLimits = Limits{MaxInflate: 256 << 20, MemInflate: 16 << 20}

// Entry is a file or folder of an archive.
type Entry struct {
	Path           string // slash-separated, clean, relative to the archive's top
	Size           int64  // uncompressed
	CompressedSize int64
	Method         uint16
	CRC32          uint32
	Modified       time.Time   // UTC; zero for an implicit folder
	Mode           fs.FileMode // fs.ModeDir for a folder; permission bits without write bits
	Offset         int64       // of the local header in the archive file; -1 for an implicit folder
	end            int64       // where the entry's data must end by: the next header or the central directory
}

// Name is the entry's base name.
func (e *Entry) Name() string { _, b := splitPath(e.Path); return b }

// IsDir reports whether the entry is a folder.
func (e *Entry) IsDir() bool { return e.Mode.IsDir() }

// Implicit reports whether the folder is only named by others' paths.
func (e *Entry) Implicit() bool { return e.Offset < 0 }

// Fingerprint identifies a version of an archive file: its size, the CRC-64
// of its last bytes (where the end records lie) and that of its central
// directory.
type Fingerprint struct {
	Size int64
	Tail uint64
	Dir  uint64
}

func (f Fingerprint) String() string { return fmt.Sprintf("%d-%016x-%016x", f.Size, f.Tail, f.Dir) }

var crcTable = crc64.MakeTable(crc64.ECMA)

// Archive is the listing of an archive file and the way to its entries.
type Archive struct {
	name    string
	r       io.ReaderAt
	limits  Limits
	fp      Fingerprint
	dataEnd int64   // where the entries' area ends: the central directory's start
	entries []Entry // by (folder, base name): a folder's children are adjacent
	root    Entry
	errs    []string
	err     error
}

// Sniff reports whether a file whose first bytes are head is an archive.
func Sniff(head []byte) bool {
	return len(head) >= 4 && (le32(head) == sigLocal || le32(head) == sigEnd)
}

// Open lists the archive file r of size bytes, called name in errors. It
// always returns an Archive, holding whatever could be listed; the error,
// also given by Archive.Err, says what was refused or could not be read.
func Open(r io.ReaderAt, size int64, name string, limits Limits) (*Archive, error) {
	a := &Archive{name: name, r: r, limits: limits, root: Entry{Mode: fs.ModeDir | 0o555, Offset: -1}}
	a.fp.Size = size
	if size < 0 {
		a.refuse(a.errorf("", "size", 0, "negative size %d", size))
		return a, a.Err()
	}
	recs, err := a.readCentral(r, size)
	if err != nil {
		a.refuse(err)
		if len(recs) == 0 {
			rec, rerr := a.recover(r, size)
			if rerr != nil {
				a.refuse(rerr)
			}
			a.refuse(fmt.Errorf("%d entries recovered from local headers", len(rec)))
			recs = rec
		}
	}
	a.build(a.admit(recs))
	return a, a.Err()
}

// Name is the archive's name as errors give it.
func (a *Archive) Name() string { return a.name }

// Fingerprint identifies the archive version listed.
func (a *Archive) Fingerprint() Fingerprint { return a.fp }

// Err is everything refused or unreadable while listing, one error per
// line; nil for a sound archive.
func (a *Archive) Err() error {
	if len(a.errs) == 0 {
		return nil
	}
	if a.err == nil {
		a.err = &ListError{Archive: a.name, Problems: a.errs}
	}
	return a.err
}

// ListError lists what was refused or unreadable in an archive.
type ListError struct {
	Archive  string
	Problems []string
}

func (e *ListError) Error() string {
	return e.Archive + ": " + strings.Join(e.Problems, "\n"+e.Archive+": ")
}

// maxProblems bounds the problems kept: a hostile archive of a million bad
// entries gives a bounded error.
const maxProblems = 1000

func (a *Archive) refuse(err error) {
	a.err = nil
	switch {
	case len(a.errs) < maxProblems:
		s := err.Error()
		s = strings.TrimPrefix(s, a.name+": ")
		a.errs = append(a.errs, s)
	case len(a.errs) == maxProblems:
		a.errs = append(a.errs, "more problems not shown")
	}
}

func (a *Archive) errorf(section, field string, off int64, format string, args ...any) error {
	return decode.Errorf(a.name, section, field, off, format, args...)
}

// record is one entry as the central directory (or a local header) gives it.
type record struct {
	at      int64 // where the record is, for errors
	raw     []byte
	extra   []byte
	flags   uint16
	method  uint16
	madeBy  uint16
	dosTime uint16
	dosDate uint16
	extAttr uint32
	crc     uint32
	csize   int64
	usize   int64
	off     int64 // local header, in the archive file
}

// readCentral finds the end records and parses the central directory. It
// returns nil records when there is no directory to read at all.
func (a *Archive) readCentral(r io.ReaderAt, size int64) ([]record, error) {
	tailLen := min(size, lenEnd+maxComment)
	tail := make([]byte, tailLen)
	if _, err := r.ReadAt(tail, size-tailLen); err != nil && err != io.EOF {
		return nil, a.errorf("end of central directory", "", size-tailLen, "cannot read: %v", err)
	}
	a.fp.Tail = crc64.Checksum(tail, crcTable)
	p := -1
	for i := len(tail) - lenEnd; i >= 0; i-- {
		if le32(tail[i:]) == sigEnd && i+lenEnd+int(le16(tail[i+20:])) <= len(tail) {
			p = i
			break
		}
	}
	if p < 0 {
		return nil, a.errorf("end of central directory", "signature", size-tailLen, "no end of central directory record (truncated, or not a ZIP archive)")
	}
	endAt := size - tailLen + int64(p)
	e := tail[p:]
	disk, cdDisk := le16(e[4:]), le16(e[6:])
	count, cdSize, cdOff := int64(le16(e[10:])), int64(le32(e[12:])), int64(le32(e[16:]))
	cdEnd := endAt
	if endAt >= lenLoc64 {
		var loc [lenLoc64]byte
		if _, err := r.ReadAt(loc[:], endAt-lenLoc64); err == nil && le32(loc[:]) == sigLoc64 {
			locAt := endAt - lenLoc64
			e64At, err := a.findEnd64(r, locAt, int64(le64(loc[8:])))
			if err != nil {
				return nil, err
			}
			var e64 [lenEnd64]byte
			if _, err := r.ReadAt(e64[:], e64At); err != nil {
				return nil, a.errorf("zip64 end of central directory", "", e64At, "cannot read: %v", err)
			}
			disk, cdDisk = uint16(min(le32(e64[16:]), 0xffff)), uint16(min(le32(e64[20:]), 0xffff))
			c, s, o := le64(e64[32:]), le64(e64[40:]), le64(e64[48:])
			if c > uint64(size) || s > uint64(size) || o > uint64(size) {
				return nil, a.errorf("zip64 end of central directory", "size", e64At, "count %d, size %d or offset %d beyond the file's %d bytes", c, s, o, size)
			}
			count, cdSize, cdOff, cdEnd = int64(c), int64(s), int64(o), e64At
		}
	}
	if disk != 0 || cdDisk != 0 {
		return nil, a.errorf("end of central directory", "disk", endAt, "the archive spans several disks (disk %d, directory on %d)", disk, cdDisk)
	}
	if cdSize > cdEnd {
		return nil, a.errorf("end of central directory", "directory size", endAt, "a central directory of %d bytes does not fit before offset %d", cdSize, cdEnd)
	}
	// The directory starts where its size says, before the end records, or
	// where its offset says when something lies between (base offset 0).
	cdStart := cdEnd - cdSize
	if cdOff != cdStart && cdOff+cdSize <= cdEnd {
		var sig [4]byte
		if _, err := r.ReadAt(sig[:], cdStart); err != nil || le32(sig[:]) != sigCentral {
			cdStart = cdOff
		}
	}
	base := cdStart - cdOff
	if base < 0 {
		return nil, a.errorf("end of central directory", "directory offset", endAt, "the central directory's offset %d lies past where it can start (%d)", cdOff, cdStart)
	}
	a.dataEnd = cdStart
	if count > cdSize/lenCentral {
		a.refuse(a.errorf("end of central directory", "entry count", endAt, "%d entries cannot fit in a central directory of %d bytes", count, cdSize))
		count = cdSize / lenCentral
	}
	cd := make([]byte, cdSize)
	if _, err := r.ReadAt(cd, cdStart); err != nil && !(err == io.EOF && cdStart+cdSize <= size) {
		return nil, a.errorf("central directory", "", cdStart, "cannot read: %v", err)
	}
	a.fp.Dir = crc64.Checksum(cd, crcTable)
	recs := make([]record, 0, count)
	at, seen := 0, 0
	for ; seen < int(count) || at < len(cd); seen++ {
		off := cdStart + int64(at)
		if len(cd)-at < lenCentral || le32(cd[at:]) != sigCentral {
			if seen < int(count) || len(cd)-at >= 4 && le32(cd[at:]) == sigCentral {
				return recs, a.errorf("central directory", "entry", off, "entry %d of %d is missing or has a bad signature", seen+1, count)
			}
			break // trailing bytes that are no record (a digital signature, padding)
		}
		h := cd[at:]
		n, m, k := int(le16(h[28:])), int(le16(h[30:])), int(le16(h[32:]))
		if lenCentral+n+m+k > len(h) {
			return recs, a.errorf("central directory", "name length", off, "entry %d's name, extra field and comment (%d bytes) run past the directory's end", seen+1, n+m+k)
		}
		rec := record{
			at: off, flags: le16(h[8:]), method: le16(h[10:]), madeBy: le16(h[4:]),
			dosTime: le16(h[12:]), dosDate: le16(h[14:]), crc: le32(h[16:]),
			csize: int64(le32(h[20:])), usize: int64(le32(h[24:])),
			extAttr: le32(h[38:]), off: int64(le32(h[42:])),
			raw: h[lenCentral : lenCentral+n], extra: h[lenCentral+n : lenCentral+n+m],
		}
		if le16(h[34:]) != 0 && le16(h[34:]) != 0xffff {
			a.refuse(a.errorf("central directory", "disk", off, "entry %q starts on disk %d", rec.raw, le16(h[34:])))
			at += lenCentral + n + m + k
			continue
		}
		if err := zip64Fields(&rec); err != nil {
			a.refuse(a.errorf("central directory", "zip64 extra field", off, "entry %q: %v", rec.raw, err))
			at += lenCentral + n + m + k
			continue
		}
		rec.off += base
		recs = append(recs, rec)
		at += lenCentral + n + m + k
	}
	if seen != int(count) {
		a.refuse(a.errorf("central directory", "entry count", cdStart, "the end record claims %d entries, the directory holds %d", count, seen))
	}
	return recs, nil
}

// findEnd64 finds the ZIP64 end record the locator at locAt points to (at
// off from the start of the archive), or right before the locator.
func (a *Archive) findEnd64(r io.ReaderAt, locAt, off int64) (int64, error) {
	var sig [4]byte
	for _, at := range []int64{off, locAt - lenEnd64} {
		if at >= 0 && at+lenEnd64 <= locAt {
			if _, err := r.ReadAt(sig[:], at); err == nil && le32(sig[:]) == sigEnd64 {
				return at, nil
			}
		}
	}
	return 0, a.errorf("zip64 end of central directory", "signature", off, "no zip64 end record where the locator points")
}

// zip64Fields replaces a record's saturated sizes and offset with those of
// its ZIP64 extra field, in the order the specification gives.
func zip64Fields(rec *record) error {
	if rec.usize != 0xffffffff && rec.csize != 0xffffffff && rec.off != 0xffffffff {
		return nil
	}
	f := extraField(rec.extra, 0x0001)
	for _, v := range []*int64{&rec.usize, &rec.csize, &rec.off} {
		if *v != 0xffffffff {
			continue
		}
		if len(f) < 8 {
			return errors.New("a saturated size or offset has no 64-bit value")
		}
		u := le64(f)
		if u > 1<<62 {
			return fmt.Errorf("value %d out of range", u)
		}
		*v, f = int64(u), f[8:]
	}
	return nil
}

// recover lists an archive with no central directory from its local
// headers, from the start, until one does not parse or gives no sizes.
func (a *Archive) recover(r io.ReaderAt, size int64) ([]record, error) {
	var recs []record
	var at int64
	var rs rescan
	hdr := make([]byte, lenLocal)
	a.dataEnd = 0
	for at+lenLocal <= size {
		if _, err := r.ReadAt(hdr, at); err != nil {
			return recs, a.errorf("local header", "", at, "cannot read: %v", err)
		}
		if le32(hdr) != sigLocal {
			if le32(hdr) == sigCentral {
				return recs, nil
			}
			return recs, a.errorf("local header", "signature", at, "no local header where entry %d should start", len(recs)+1)
		}
		n, m := int64(le16(hdr[26:])), int64(le16(hdr[28:]))
		if at+lenLocal+n+m > size {
			return recs, a.errorf("local header", "name length", at, "the name and extra field run past the end of the file")
		}
		ne := make([]byte, n+m)
		if _, err := r.ReadAt(ne, at+lenLocal); err != nil {
			return recs, a.errorf("local header", "", at, "cannot read: %v", err)
		}
		rec := record{
			at: at, off: at, flags: le16(hdr[6:]), method: le16(hdr[8:]), dosTime: le16(hdr[10:]), dosDate: le16(hdr[12:]),
			crc: le32(hdr[14:]), csize: int64(le32(hdr[18:])), usize: int64(le32(hdr[22:])), raw: ne[:n], extra: ne[n:],
		}
		if err := zip64Fields(&rec); err != nil {
			return recs, a.errorf("local header", "zip64 extra field", at, "%v", err)
		}
		var desc int64
		if rec.flags&flagDescriptor != 0 {
			var err error
			if desc, err = a.descriptor(r, &rec, at+lenLocal+n+m, size, &rs); err != nil {
				return recs, err
			}
		}
		end := at + lenLocal + n + m + rec.csize + desc
		if end > size {
			return recs, a.errorf("local header", "compressed size", at, "entry %q's %d bytes run past the end of the file", rec.raw, rec.csize)
		}
		recs = append(recs, rec)
		at = end
		a.dataEnd = end
	}
	return recs, nil
}

// sigDescriptor optionally starts a data descriptor.
const sigDescriptor = 0x08074b50

// descriptor finds, for recover, where the data of an entry whose sizes
// are in a data descriptor ends, and reads the descriptor there: a deflated
// entry is inflated (within Limits.MaxInflate) to find its end, a stored
// one's descriptor is looked for by its signature and a size that matches
// the distance. It fills rec's sizes and CRC and returns the descriptor's
// length.
func (a *Archive) descriptor(r io.ReaderAt, rec *record, data, size int64, rs *rescan) (int64, error) {
	wide := extraField(rec.extra, 0x0001) != nil // ZIP64: 8-byte sizes
	read := func(at int64) (crc uint32, csize, usize, n int64, ok bool) {
		var d [24]byte
		k, _ := r.ReadAt(d[:], at)
		b := d[:k]
		if len(b) >= 4 && le32(b) == sigDescriptor {
			b, n = b[4:], 4
		}
		if wide && len(b) >= 20 {
			return le32(b), int64(min(le64(b[4:]), 1<<62)), int64(min(le64(b[12:]), 1<<62)), n + 20, true
		}
		if !wide && len(b) >= 12 {
			return le32(b), int64(le32(b[4:])), int64(le32(b[8:])), n + 12, true
		}
		return 0, 0, 0, 0, false
	}
	fail := func(format string, args ...any) (int64, error) {
		return 0, a.errorf("local header", "data descriptor", rec.at, "entry %q: "+format+": listing stops there", append([]any{rec.raw}, args...)...)
	}
	switch rec.method {
	case Deflate:
		cr := rs.reader(io.NewSectionReader(r, data, size-data))
		limit := a.limits.MaxInflate
		if limit <= 0 {
			limit = 1<<63 - 1
		}
		usize, err := io.CopyBuffer(io.Discard, io.LimitReader(rs.fr, limit), rs.buf)
		if err != nil {
			return fail("the deflate data does not inflate: %v", err)
		}
		if n, _ := rs.fr.Read(rs.buf[:1]); n > 0 {
			return fail("inflates to more than the %d bytes allowed", limit)
		}
		crc, csize, declared, n, ok := read(data + cr.n)
		if !ok || csize != cr.n || declared != usize {
			return fail("no descriptor after %d bytes of deflate data inflating to %d", cr.n, usize)
		}
		rec.crc, rec.csize, rec.usize = crc, csize, usize
		return n, nil
	case Store:
		buf := rs.buffer()
		for at := data; at < size; at += int64(len(buf)) - 3 {
			k, _ := r.ReadAt(buf, at)
			for i := 0; i+4 <= k; i++ {
				if le32(buf[i:]) != sigDescriptor {
					continue
				}
				q := at + int64(i)
				if crc, csize, usize, n, ok := read(q); ok && csize == q-data && usize == csize {
					rec.crc, rec.csize, rec.usize = crc, csize, usize
					return n, nil
				}
			}
			if k < len(buf) {
				break
			}
		}
		return fail("no data descriptor found")
	}
	return fail("method %d", rec.method)
}

// rescan holds what recover reuses from one entry to the next: a flate
// reader, its input and a buffer.
type rescan struct {
	cr  countingReader
	fr  io.ReadCloser
	buf []byte
}

func (rs *rescan) buffer() []byte {
	if rs.buf == nil {
		rs.buf = make([]byte, 64<<10)
	}
	return rs.buf
}

// reader points the flate reader at src, counting from 0.
func (rs *rescan) reader(src io.Reader) *countingReader {
	rs.buffer()
	if rs.cr.r == nil {
		rs.cr.r = bufio.NewReader(src)
	} else {
		rs.cr.r.Reset(src)
	}
	rs.cr.n = 0
	if rs.fr == nil {
		rs.fr = flate.NewReader(&rs.cr)
	} else {
		rs.fr.(flate.Resetter).Reset(&rs.cr, nil)
	}
	return &rs.cr
}

// countingReader counts the bytes read through it; it is an io.ByteReader,
// so that compress/flate reads no further than its stream's last byte.
type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

// Flag bits.
const (
	flagEncrypted       = 1 << 0
	flagDescriptor      = 1 << 3
	flagStrongEncrypted = 1<<6 | 1<<13 // strong encryption; local header values masked
)

// Hosts of "version made by" whose attributes are Unix modes.
const (
	hostUnix = 3
	hostOSX  = 19
)

// Unix file types (st_mode).
const (
	sIFMT  = 0xf000
	sIFREG = 0x8000
	sIFDIR = 0x4000
)

// admit turns records into entries, refusing those the package refuses one
// by one and those that overlap an entry before them.
func (a *Archive) admit(recs []record) []Entry {
	out := make([]Entry, 0, len(recs))
	for i := range recs {
		rec := &recs[i]
		e, err := a.entry(rec)
		if err != nil {
			a.refuse(err)
			continue
		}
		out = append(out, e)
	}
	// Spans by offset: an entry whose header lies inside an earlier span is
	// refused; the others end where the next kept one starts.
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return out[order[i]].Offset < out[order[j]].Offset })
	keep := make([]bool, len(out))
	var reach int64
	var reacher = -1
	prev := -1
	for _, i := range order {
		e := &out[i]
		if e.Offset < reach {
			a.refuse(a.errorf("entry "+quote(e.Path), "local header offset", e.Offset, "overlaps entry %s (offset %d to %d)", quote(out[reacher].Path), out[reacher].Offset, reach))
			continue
		}
		if prev >= 0 {
			out[prev].end = e.Offset
		}
		keep[i], prev = true, i
		reach, reacher = e.end, i // end holds the span's end until the next one is known
	}
	if prev >= 0 {
		out[prev].end = a.dataEnd
	}
	kept := out[:0]
	for i := range out {
		if keep[i] {
			kept = append(kept, out[i])
		}
	}
	return kept
}

// quote quotes an entry's name in errors.
func quote(s string) string { return fmt.Sprintf("%q", s) }

// entry checks one record and makes its entry; end is set to the end of
// the span the entry takes at least.
func (a *Archive) entry(rec *record) (Entry, error) {
	var p string // the clean name, once known
	fail := func(field string, format string, args ...any) (Entry, error) {
		section := "entry " + quote(string(rec.raw))
		if p != "" {
			section = "entry " + quote(p)
		}
		return Entry{}, a.errorf(section, field, rec.at, format, args...)
	}
	name, err := decodeName(rec.raw, rec.flags, rec.extra)
	if err != nil {
		return fail("name", "%v", err)
	}
	clean, dir, err := cleanName(name)
	if err != nil {
		return fail("name", "%v: refused", err)
	}
	p = clean
	if rec.flags&(flagEncrypted|flagStrongEncrypted) != 0 {
		return fail("flags", "encrypted entries are refused")
	}
	if rec.method != Store && rec.method != Deflate {
		return fail("method", "compression method %d is not supported (stored and deflated are)", rec.method)
	}
	e := Entry{Path: p, Size: rec.usize, CompressedSize: rec.csize, Method: rec.method, CRC32: rec.crc, Offset: rec.off}
	e.Modified = modTime(rec)
	mode, err := modeOf(rec, dir)
	if err != nil {
		return fail("external attributes", "%v", err)
	}
	e.Mode = mode
	if e.IsDir() && (e.Size != 0 || e.CompressedSize > 2) {
		return fail("uncompressed size", "a folder entry holds %d bytes", e.Size)
	}
	switch {
	case rec.method == Store && rec.usize != rec.csize:
		return fail("compressed size", "a stored entry's sizes differ (%d compressed, %d not)", rec.csize, rec.usize)
	case rec.method == Deflate && rec.usize > rec.csize*maxRatio+64:
		return fail("uncompressed size", "%d bytes declared from %d deflated: more than deflate can express", rec.usize, rec.csize)
	}
	e.end = rec.off + lenLocal + int64(len(rec.raw)) + rec.csize
	if rec.off < 0 || e.end > a.dataEnd {
		return fail("local header offset", "the entry's header and %d bytes of data at offset %d run past the entries' area (%d bytes)", rec.csize, rec.off, a.dataEnd)
	}
	return e, nil
}

// modeOf is an entry's mode by the package's rule.
func modeOf(rec *record, dir bool) (fs.FileMode, error) {
	if h := rec.madeBy >> 8; (h == hostUnix || h == hostOSX) && rec.extAttr>>16 != 0 {
		m := rec.extAttr >> 16
		perm := fs.FileMode(m & 0o555)
		switch m & sIFMT {
		case sIFDIR:
			return fs.ModeDir | perm, nil
		case sIFREG, 0:
			if dir {
				return fs.ModeDir | perm, nil
			}
			return perm, nil
		default:
			return 0, fmt.Errorf("a special file (type 0%o) is refused", m&sIFMT)
		}
	}
	if dir || rec.extAttr&0x10 != 0 {
		return fs.ModeDir | 0o555, nil
	}
	return 0o444, nil
}

// modTime is an entry's time by the package's rule.
func modTime(rec *record) time.Time {
	if f := extraField(rec.extra, 0x5455); len(f) >= 5 && f[0]&1 != 0 {
		return time.Unix(int64(int32(le32(f[1:]))), 0).UTC()
	}
	if f := extraField(rec.extra, 0x000a); len(f) >= 4 {
		for f = f[4:]; len(f) >= 4; {
			tag, n := le16(f), int(le16(f[2:]))
			f = f[4:]
			if n > len(f) {
				break
			}
			if tag == 1 && n >= 8 {
				const epochDiff = 116444736000000000 // 1601 to 1970, in 100 ns
				t := int64(le64(f))
				if t >= epochDiff {
					return time.Unix(0, 0).Add(time.Duration(t-epochDiff) * 100).UTC()
				}
			}
			f = f[n:]
		}
	}
	d, t := rec.dosDate, rec.dosTime
	return time.Date(int(d>>9)+1980, time.Month(d>>5&0xf), int(d&0x1f), int(t>>11), int(t>>5&0x3f), int(t&0x1f)*2, 0, time.UTC)
}

// cmpPath orders tree paths by folder, then base name.
func cmpPath(a, b string) int {
	da, ba := splitPath(a)
	db, bb := splitPath(b)
	return cmp.Or(strings.Compare(da, db), strings.Compare(ba, bb))
}

// build makes the tree from admitted entries, in their order: the first of
// two of the same path wins, a file where a folder is (or the reverse)
// loses, and folders only named by paths are added.
func (a *Archive) build(es []Entry) {
	// A slot is an entry of the tree while it is made: es[src], or an
	// implicit folder (src < 0); cut is where its base name starts.
	type slot struct {
		path     string
		cut, src int32
	}
	slots := make([]slot, 0, len(es)+len(es)/4)
	add := func(p string, src int) {
		if len(slots) == cap(slots) {
			slots = slices.Grow(slots, len(slots)) // doubling: the garbage left stays below the result
		}
		slots = append(slots, slot{p, int32(strings.LastIndexByte(p, '/') + 1), int32(src)})
	}
	byPath := make(map[string]int, cap(slots))
	isDir := func(i int) bool { return slots[i].src < 0 || es[slots[i].src].IsDir() }
	var missing []string
	for k := range es {
		e := &es[k]
		clash := ""
		if i, seen := byPath[e.Path]; seen {
			switch {
			case isDir(i) && e.IsDir():
				if slots[i].src < 0 {
					slots[i].src = int32(k) // the folder's own entry gives its time and mode
				}
				continue
			case isDir(i) != e.IsDir():
				clash = "a file and a folder of the same name"
			default:
				clash = "duplicate of an earlier entry"
			}
		}
		missing = missing[:0]
		for p := parent(e.Path); clash == "" && p != ""; p = parent(p) {
			if i, seen := byPath[p]; seen {
				if !isDir(i) {
					clash = "its folder " + quote(p) + " is a file"
				}
				break // every folder above a listed one is listed
			}
			missing = append(missing, p)
		}
		if clash != "" {
			a.refuse(a.errorf("entry "+quote(e.Path), "name", e.Offset, "%s: refused", clash))
			continue
		}
		byPath[e.Path] = len(slots)
		add(e.Path, k)
		for _, p := range missing {
			byPath[p] = len(slots)
			add(p, -1)
		}
	}
	// By folder, then base name (cmpPath): a folder's entries are adjacent.
	bySlot := func(x, y slot) int {
		return cmp.Or(strings.Compare(x.path[:max(x.cut-1, 0)], y.path[:max(y.cut-1, 0)]), strings.Compare(x.path[x.cut:], y.path[y.cut:]))
	}
	if !slices.IsSortedFunc(slots, bySlot) { // a kept listing is in order already
		slices.SortFunc(slots, bySlot)
	}
	a.entries = make([]Entry, len(slots))
	for i, s := range slots {
		if s.src >= 0 {
			a.entries[i] = es[s.src]
		} else {
			a.entries[i] = Entry{Path: s.path, Mode: fs.ModeDir | 0o555, Offset: -1}
		}
	}
}

// parent is a tree path's folder, "" at the top.
func parent(p string) string { d, _ := splitPath(p); return d }

// MemSize is about what the listing holds in memory, in bytes: its
// entries, their paths and its errors.
func (a *Archive) MemSize() int64 {
	n := int64(unsafe.Sizeof(*a)) + int64(cap(a.entries))*int64(unsafe.Sizeof(Entry{}))
	for i := range a.entries {
		n += int64(len(a.entries[i].Path))
	}
	for _, s := range a.errs {
		n += int64(len(s)) + 16
	}
	return n
}

// Len is the number of entries, folders included.
func (a *Archive) Len() int { return len(a.entries) }

// Lookup finds the entry at p ("" or "." is the top folder).
func (a *Archive) Lookup(p string) (*Entry, bool) {
	if p == "" || p == "." {
		return &a.root, true
	}
	i, ok := slices.BinarySearchFunc(a.entries, p, func(e Entry, p string) int { return cmpPath(e.Path, p) })
	if !ok {
		return nil, false
	}
	return &a.entries[i], true
}

// ReadDir lists the folder at p ("" is the top), by name.
func (a *Archive) ReadDir(p string) []*Entry {
	if p == "." {
		p = ""
	}
	i := sort.Search(len(a.entries), func(i int) bool {
		d, _ := splitPath(a.entries[i].Path)
		return d >= p
	})
	var out []*Entry
	for ; i < len(a.entries); i++ {
		if d, _ := splitPath(a.entries[i].Path); d != p {
			break
		}
		out = append(out, &a.entries[i])
	}
	return out
}

// Walk calls fn for every entry, folders before their contents, each
// folder's entries by name; it stops at fn's first error.
func (a *Archive) Walk(fn func(e *Entry) error) error {
	var walk func(p string) error
	walk = func(p string) error {
		for _, e := range a.ReadDir(p) {
			if err := fn(e); err != nil {
				return err
			}
			if e.IsDir() {
				if err := walk(e.Path); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk("")
}
