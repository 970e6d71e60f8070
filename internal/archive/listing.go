package archive

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/crc64"
	"io"
	"io/fs"
	"slices"
	"time"
)

// listingMagic starts a listing; its last byte is the listing's version.
const listingMagic = "MFSZ\x01"

// MarshalBinary gives the listing: the fingerprint, the problems found and
// every entry in the tree's order, names sharing their prefix with the one
// before,
// then a CRC-32 of it all.
func (a *Archive) MarshalBinary() ([]byte, error) {
	b := []byte(listingMagic)
	b = binary.AppendUvarint(b, uint64(a.fp.Size))
	b = binary.LittleEndian.AppendUint64(b, a.fp.Tail)
	b = binary.LittleEndian.AppendUint64(b, a.fp.Dir)
	b = binary.AppendUvarint(b, uint64(a.dataEnd))
	b = binary.AppendUvarint(b, uint64(len(a.errs)))
	for _, s := range a.errs {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(len(a.entries)))
	prev := ""
	for i := range a.entries {
		e := &a.entries[i]
		common := 0
		for common < len(prev) && common < len(e.Path) && prev[common] == e.Path[common] {
			common++
		}
		b = binary.AppendUvarint(b, uint64(common))
		b = binary.AppendUvarint(b, uint64(len(e.Path)-common))
		b = append(b, e.Path[common:]...)
		prev = e.Path
		kind := byte(0)
		switch {
		case e.Implicit():
			b = append(b, 2) // nothing more: an implicit folder is its name
			continue
		case e.IsDir():
			kind = 1
		}
		b = append(b, kind)
		b = binary.AppendUvarint(b, uint64(e.Mode.Perm()))
		b = binary.AppendUvarint(b, uint64(e.Method))
		for _, v := range []int64{e.Size, e.CompressedSize, e.Offset, e.end} {
			b = binary.AppendUvarint(b, uint64(v))
		}
		b = binary.LittleEndian.AppendUint32(b, e.CRC32)
		b = binary.AppendVarint(b, e.Modified.Unix())
		b = binary.AppendUvarint(b, uint64(e.Modified.Nanosecond()))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b)), nil
}

// errListing is wrapped by every error about a listing that does not decode.
var errListing = errors.New("not a listing of this version, or damaged")

// listingReader reads a listing's fields, failing once on the first bad one.
type listingReader struct {
	b   []byte
	err error
}

func (r *listingReader) uvarint(max uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > max {
		r.err = errListing
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *listingReader) bytes(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errListing
		return nil
	}
	s := r.b[:n]
	r.b = r.b[n:]
	return s
}

// UnmarshalBinary reads a listing MarshalBinary gave, checking every entry
// as Open would: a damaged listing is an error, never a wrong tree. The
// archive then has no file to read entries from (Resume gives it one).
func (a *Archive) UnmarshalBinary(data []byte) error {
	if len(data) < len(listingMagic)+4 || string(data[:len(listingMagic)]) != listingMagic {
		return errListing
	}
	body := data[:len(data)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(data[len(body):]) {
		return fmt.Errorf("%w: checksum", errListing)
	}
	r := &listingReader{b: body[len(listingMagic):]}
	const maxInt = 1<<63 - 1
	fp := Fingerprint{Size: int64(r.uvarint(maxInt))}
	if t := r.bytes(16); t != nil {
		fp.Tail, fp.Dir = binary.LittleEndian.Uint64(t), binary.LittleEndian.Uint64(t[8:])
	}
	dataEnd := int64(r.uvarint(uint64(fp.Size)))
	var errs []string
	for n := r.uvarint(uint64(len(r.b))); n > 0 && r.err == nil; n-- {
		errs = append(errs, string(r.bytes(r.uvarint(uint64(len(r.b))))))
	}
	count := r.uvarint(uint64(len(r.b)) / 3) // an entry takes at least 3 bytes
	es := make([]Entry, 0, count)
	prev := ""
	for ; count > 0 && r.err == nil; count-- {
		common := r.uvarint(uint64(len(prev)))
		p := prev[:common] + string(r.bytes(r.uvarint(maxPath)))
		prev = p
		kind := r.bytes(1)
		if r.err == nil && kind[0] == 2 {
			if c, dir, err := cleanName(p + "/"); err != nil || c != p || !dir {
				r.err = fmt.Errorf("%w: entry %q", errListing, p)
				break
			}
			es = append(es, Entry{Path: p, Mode: fs.ModeDir | 0o555, Offset: -1})
			continue
		}
		e := Entry{Path: p, Mode: fs.FileMode(r.uvarint(0o555)), Method: uint16(r.uvarint(uint64(Deflate)))}
		e.Size, e.CompressedSize = int64(r.uvarint(maxInt)), int64(r.uvarint(uint64(fp.Size)))
		e.Offset, e.end = int64(r.uvarint(uint64(fp.Size))), int64(r.uvarint(uint64(fp.Size)))
		if c := r.bytes(4); c != nil {
			e.CRC32 = binary.LittleEndian.Uint32(c)
		}
		if r.err == nil {
			v, n := binary.Varint(r.b)
			if n <= 0 {
				r.err = errListing
			} else {
				r.b = r.b[n:]
				e.Modified = time.Unix(v, int64(r.uvarint(999999999))).UTC()
			}
		}
		if r.err != nil {
			break
		}
		name := p
		if kind[0] == 1 {
			e.Mode |= fs.ModeDir
			name += "/"
		} else if kind[0] != 0 {
			r.err = errListing
			break
		}
		if c, dir, err := cleanName(name); err != nil || c != p || dir != e.IsDir() || !sound(&e, dataEnd) {
			r.err = fmt.Errorf("%w: entry %q", errListing, p)
			break
		}
		es = append(es, e)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errListing
	}
	if r.err != nil {
		return r.err
	}
	spans := make([]int, 0, len(es))
	for i := range es {
		if !es[i].Implicit() {
			spans = append(spans, i)
		}
	}
	slices.SortFunc(spans, func(x, y int) int { return cmp.Compare(es[x].Offset, es[y].Offset) })
	for i := 1; i < len(spans); i++ {
		if p, q := &es[spans[i-1]], &es[spans[i]]; q.Offset < p.end {
			return fmt.Errorf("%w: entries %q and %q overlap", errListing, p.Path, q.Path)
		}
	}
	b := &Archive{name: a.name, fp: fp, dataEnd: dataEnd, errs: errs, root: Entry{Mode: fs.ModeDir | 0o555, Offset: -1}}
	b.build(es)
	if len(b.errs) != len(errs) {
		return fmt.Errorf("%w: %s", errListing, b.errs[len(errs)])
	}
	a.fp, a.dataEnd, a.errs, a.err, a.entries, a.root = b.fp, b.dataEnd, b.errs, nil, b.entries, b.root
	return nil
}

// sound checks an entry's sizes and span as admit does.
func sound(e *Entry, dataEnd int64) bool {
	switch {
	case e.Method == Store && e.Size != e.CompressedSize,
		e.Method == Deflate && e.Size > e.CompressedSize*maxRatio+64,
		e.Method != Store && e.Method != Deflate,
		e.IsDir() && e.Size != 0:
		return false
	}
	return e.Offset+lenLocal+e.CompressedSize <= e.end && e.end <= dataEnd
}

// Resume is Open from a listing MarshalBinary gave for the file r of size
// bytes: the size and the file's last bytes (its end records) must be
// those the listing was made from, else the listing is refused and the
// caller lists the archive again. A rewrite that keeps both but changes the
// central directory is not seen: callers key listings on the file's
// identity (device, inode, size, time) too.
func Resume(r io.ReaderAt, size int64, name string, limits Limits, listing []byte) (*Archive, error) {
	a := &Archive{name: name, r: r, limits: limits}
	if err := a.UnmarshalBinary(listing); err != nil {
		return nil, err
	}
	if a.fp.Size != size {
		return nil, fmt.Errorf("%s: the listing is of a file of %d bytes, not %d", name, a.fp.Size, size)
	}
	tailLen := min(size, lenEnd+maxComment)
	tail := make([]byte, tailLen)
	if _, err := r.ReadAt(tail, size-tailLen); err != nil && err != io.EOF {
		return nil, err
	}
	if crc64.Checksum(tail, crcTable) != a.fp.Tail {
		return nil, fmt.Errorf("%s: the file's end records are not those the listing was made from", name)
	}
	return a, nil
}
