package archive

import (
	"compress/flate"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/meshfs/meshfs/decode"
)

// Reader reads one entry's bytes at any offset. Reads are safe from several
// goroutines at once.
type Reader interface {
	io.ReaderAt
	Size() int64
	Close() error
}

// stored is a stored entry: a window of the archive file.
type stored struct{ *io.SectionReader }

func (stored) Close() error { return nil }

// Open checks the entry's local header and returns a reader of its bytes
// (the package documentation, Reading, says how each method is served).
func (a *Archive) Open(e *Entry) (Reader, error) {
	if e.IsDir() {
		return nil, a.errorf("entry "+quote(e.Path), "", e.Offset, "is a folder")
	}
	off, err := a.dataOffset(e)
	if err != nil {
		return nil, err
	}
	src := io.NewSectionReader(a.r, off, e.CompressedSize)
	if e.Method == Store {
		return stored{src}, nil
	}
	if max := a.limits.MaxInflate; max > 0 && e.Size > max {
		return nil, a.limitError(e, max)
	}
	if a.limits.SpillDir == "" && e.Size > a.limits.MemInflate {
		mem := &charges{b: a.limits.Budget}
		c := &checkpointed{x: newIndexed(src, e.Size, e.CRC32, mem), fallback: func() Reader {
			return &inflater{size: e.Size, st: a.stream(e, src, off)}
		}}
		// A reader dropped unclosed (a view's readers are) gives its
		// charges back when collected.
		runtime.AddCleanup(c, (*charges).releaseAll, mem)
		return c, nil
	}
	z := &inflater{size: e.Size, st: a.stream(e, src, off)}
	if a.limits.SpillDir != "" && e.Size > a.limits.MemInflate {
		f, err := os.CreateTemp(a.limits.SpillDir, ".meshfs-inflate-*")
		if err != nil {
			return nil, err
		}
		os.Remove(f.Name()) // unlinked: the file goes with its descriptor
		z.file = f
	}
	return z, nil
}

func (a *Archive) limitError(e *Entry, max int64) error {
	return &decode.FormatError{File: a.name, Section: "entry " + quote(e.Path), Field: "uncompressed size", Offset: e.Offset,
		Msg: fmt.Sprintf("%d bytes declared, more than the limit of %d bytes inflated", e.Size, max), Err: decode.ErrLimit}
}

// ReadFile returns the whole entry, its CRC-32 checked; an entry of more
// than max bytes (max > 0) is refused with decode.ErrLimit, unread.
func (a *Archive) ReadFile(e *Entry, max int64) ([]byte, error) {
	if max > 0 && e.Size > max {
		return nil, a.limitError(e, max)
	}
	if e.IsDir() {
		return nil, a.errorf("entry "+quote(e.Path), "", e.Offset, "is a folder")
	}
	off, err := a.dataOffset(e)
	if err != nil {
		return nil, err
	}
	src := io.NewSectionReader(a.r, off, e.CompressedSize)
	b := make([]byte, e.Size)
	if e.Method == Store {
		if _, err := src.ReadAt(b, 0); err != nil && len(b) > 0 {
			return nil, a.errorf("entry "+quote(e.Path), "data", off, "cannot read: %v", err)
		}
		if c := crc32.ChecksumIEEE(b); c != e.CRC32 {
			return nil, a.errorf("entry "+quote(e.Path), "crc-32", e.Offset, "the data's CRC-32 is %08x, the directory says %08x", c, e.CRC32)
		}
		return b, nil
	}
	st := a.stream(e, src, off)
	defer st.close()
	for n := 0; ; {
		k, err := st.read(b[n:])
		n += k
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Head returns the first n bytes of the entry (fewer when it is shorter),
// inflating no more than those.
func (a *Archive) Head(e *Entry, n int) ([]byte, error) {
	if e.IsDir() {
		return nil, a.errorf("entry "+quote(e.Path), "", e.Offset, "is a folder")
	}
	off, err := a.dataOffset(e)
	if err != nil {
		return nil, err
	}
	src := io.NewSectionReader(a.r, off, e.CompressedSize)
	b := make([]byte, min(int64(n), e.Size))
	if e.Method == Store {
		_, err = src.ReadAt(b, 0)
		if err == io.EOF && len(b) == 0 {
			err = nil
		}
		return b, err
	}
	st := a.stream(e, src, off)
	defer st.close()
	k, err := st.read(b)
	if err == io.EOF {
		err = nil
	}
	return b[:k], err
}

// dataOffset checks the entry's local header and returns where its data
// starts.
func (a *Archive) dataOffset(e *Entry) (int64, error) {
	section := "entry " + quote(e.Path)
	var h [lenLocal]byte
	if _, err := a.r.ReadAt(h[:], e.Offset); err != nil {
		return 0, a.errorf(section, "local header", e.Offset, "cannot read: %v", err)
	}
	if le32(h[:]) != sigLocal {
		return 0, a.errorf(section, "local header", e.Offset, "no local header signature")
	}
	if m := le16(h[8:]); m != e.Method {
		return 0, a.errorf(section, "method", e.Offset, "the local header says method %d, the directory %d", m, e.Method)
	}
	if le16(h[6:])&(flagEncrypted|flagStrongEncrypted) != 0 {
		return 0, a.errorf(section, "flags", e.Offset, "the local header says the entry is encrypted")
	}
	data := e.Offset + lenLocal + int64(le16(h[26:])) + int64(le16(h[28:]))
	if data+e.CompressedSize > e.end {
		return 0, a.errorf(section, "compressed size", e.Offset, "%d bytes of data from offset %d run past the next entry or the central directory (offset %d)", e.CompressedSize, data, e.end)
	}
	return data, nil
}

// stream inflates one entry in order, stopping at its declared size, and
// checks its end and CRC-32 there.
type stream struct {
	a       *Archive
	e       *Entry
	data    int64 // where the entry's data starts, for errors
	src     *io.SectionReader
	fr      io.ReadCloser
	crc     hash.Hash32
	n, size int64
}

// flateReaders are inflaters (with their 32 KiB windows) for reuse.
var flateReaders sync.Pool

func (a *Archive) stream(e *Entry, src *io.SectionReader, data int64) *stream {
	fr, _ := flateReaders.Get().(io.ReadCloser)
	if fr == nil {
		fr = flate.NewReader(src)
	} else {
		fr.(flate.Resetter).Reset(src, nil)
	}
	return &stream{a: a, e: e, data: data, src: src, fr: fr, crc: crc32.NewIEEE(), size: e.Size}
}

func (s *stream) fail(field, format string, args ...any) error {
	return s.a.errorf("entry "+quote(s.e.Path), field, s.data, format, args...)
}

// read fills p with the next bytes, at most up to the declared size; it
// returns io.EOF once the whole entry is read and checked.
func (s *stream) read(p []byte) (int, error) {
	p = p[:min(int64(len(p)), s.size-s.n)]
	k, err := io.ReadFull(s.fr, p)
	s.crc.Write(p[:k])
	s.n += int64(k)
	if err != nil {
		var ce flate.CorruptInputError
		if errors.As(err, &ce) {
			return k, s.fail("data", "corrupt deflate data at byte %d of the compressed data, after %d bytes inflated", int64(ce), s.n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return k, s.fail("uncompressed size", "inflates to %d bytes, the directory declares %d", s.n, s.size)
		}
		return k, s.fail("data", "cannot inflate after %d bytes: %v", s.n, err)
	}
	if s.n < s.size {
		return k, nil
	}
	var one [1]byte
	if m, err := io.ReadFull(s.fr, one[:]); m > 0 {
		return k, s.fail("uncompressed size", "inflates to more than the %d bytes the directory declares", s.size)
	} else if err != io.EOF {
		return k, s.fail("data", "the deflate stream does not end after the declared %d bytes: %v", s.size, err)
	}
	if c := s.crc.Sum32(); c != s.e.CRC32 {
		return k, s.fail("crc-32", "the data's CRC-32 is %08x, the directory says %08x", c, s.e.CRC32)
	}
	return k, io.EOF
}

func (s *stream) close() {
	if s.fr == nil {
		return
	}
	s.fr.Close()
	flateReaders.Put(s.fr)
	s.fr = nil
}

// fillChunk is how far ahead of a read an inflater inflates.
const fillChunk = 256 << 10

// inflater serves random reads of a deflated entry from the bytes
// inflated so far, held in memory or in an unlinked file.
type inflater struct {
	size int64
	mu   sync.Mutex
	st   *stream // nil once the entry is inflated whole
	done int64   // bytes inflated
	mem  []byte
	file *os.File
	err  error // once set, every read fails
}

func (z *inflater) Size() int64 { return z.size }

func (z *inflater) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= z.size {
		return 0, io.EOF
	}
	want := min(off+int64(len(p)), z.size)
	z.mu.Lock()
	if z.done < want && z.err == nil {
		z.fill(min(z.size, (want+fillChunk-1)/fillChunk*fillChunk))
	}
	mem, err := z.mem, z.err
	z.mu.Unlock()
	if err != nil {
		return 0, err
	}
	var n int
	if z.file != nil {
		n, err = z.file.ReadAt(p[:want-off], off)
		if err != nil {
			return n, err
		}
	} else {
		n = copy(p[:want-off], mem[off:want])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// fill inflates up to target bytes; z.mu is held.
func (z *inflater) fill(target int64) {
	if z.file == nil {
		if int64(cap(z.mem)) < target {
			grown := make([]byte, z.done, min(z.size, max(target, 2*int64(cap(z.mem)))))
			copy(grown, z.mem)
			z.mem = grown
		}
		for z.done < target {
			k, err := z.st.read(z.mem[z.done:target])
			z.done += int64(k)
			z.mem = z.mem[:z.done]
			if z.end(err) {
				return
			}
		}
		return
	}
	buf := make([]byte, min(fillChunk, target-z.done))
	for z.done < target {
		k, err := z.st.read(buf[:min(int64(len(buf)), target-z.done)])
		if _, werr := z.file.WriteAt(buf[:k], z.done); werr != nil && err == nil {
			err = werr
		}
		z.done += int64(k)
		if z.end(err) {
			return
		}
	}
}

// end handles the stream's error: the entry whole and sound, or damaged.
func (z *inflater) end(err error) bool {
	if err == nil {
		return false
	}
	z.st.close()
	z.st = nil
	if err != io.EOF {
		z.err = err
	}
	return true
}

func (z *inflater) Close() error {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.st != nil {
		z.st.close()
		z.st = nil
	}
	if z.err == nil {
		z.err = errors.New("read of a closed entry")
	}
	z.mem = nil
	if z.file != nil {
		return z.file.Close()
	}
	return nil
}
