package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"syscall"

	"github.com/meshfs/meshfs/internal/source"
)

// memFile is bytes made once (an output, a PNG, an error text): it reads
// the version it was opened as whatever happens to the source.
type memFile struct {
	data []byte
	info Info
}

func (f *memFile) Info() Info   { return f.info }
func (f *memFile) Close() error { return nil }

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read at %d: %w", off, errors.ErrUnsupported)
	}
	if off >= int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// windowFile is the window [base, base+length) of a source file (the
// whole file: length -1), read while the file is the version opened,
// else ErrStale: the source's bytes are not kept.
type windowFile struct {
	f      *os.File
	id     source.Ident
	base   int64
	length int64
	info   Info
	closed atomic.Bool
}

// openWindow opens the window of the source file at path when it is
// still version id (else ErrStale).
func openWindow(path string, id source.Ident, base, length int64, info Info) (*windowFile, error) {
	f, err := source.OpenSame(path, func(st *syscall.Stat_t) bool { return source.FromStat(st).Same(id) })
	if err != nil {
		return nil, err
	}
	return &windowFile{f: f, id: id, base: base, length: length, info: info}, nil
}

func (f *windowFile) Info() Info { return f.info }

func (f *windowFile) Close() error {
	if f.closed.CompareAndSwap(false, true) {
		return f.f.Close()
	}
	return nil
}

func (f *windowFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: read at %d: %w", f.f.Name(), off, errors.ErrUnsupported)
	}
	size := f.info.Size
	if off >= size {
		return 0, io.EOF
	}
	want := p[:min(int64(len(p)), size-off)]
	n, err := f.f.ReadAt(want, f.base+off)
	if err == io.EOF && n == len(want) {
		err = nil
	}
	var st syscall.Stat_t
	if serr := syscall.Fstat(int(f.f.Fd()), &st); serr != nil {
		return 0, serr
	} else if !source.FromStat(&st).Same(f.id) {
		return 0, fmt.Errorf("%s: %w", f.f.Name(), ErrStale)
	}
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

// entryFile is an archive's entry, read while the archive is the version
// opened (source.Packed.ReadEntry, through the tree's view), else
// ErrStale.
type entryFile struct {
	view *source.Packed
	path string
	id   source.Ident
	info Info
}

func (f *entryFile) Info() Info   { return f.info }
func (f *entryFile) Close() error { return nil }

func (f *entryFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: read at %d: %w", f.path, off, errors.ErrUnsupported)
	}
	if off >= f.info.Size {
		return 0, io.EOF
	}
	read := 0
	for read < len(p) && off < f.info.Size {
		n, err := f.view.ReadEntry(f.path, func(st *syscall.Stat_t) bool { return source.FromStat(st).Same(f.id) }, p[read:], off)
		read, off = read+n, off+int64(n)
		if errors.Is(err, syscall.ESTALE) {
			return read, fmt.Errorf("%s: %w", f.path, ErrStale)
		} else if err != nil {
			return read, err
		} else if n == 0 {
			break
		}
	}
	if read < len(p) {
		return read, io.EOF
	}
	return read, nil
}

// openSource opens the source file of n, passed through.
func (t *FS) openSource(n *node) (File, error) {
	info := t.infoOf(n, 0, n.st.Size, t.identToken(n))
	id := source.FromStat(&n.st)
	if n.packed {
		return &entryFile{view: t.view, path: n.abs, id: id, info: info}, nil
	}
	return openWindow(n.abs, id, 0, n.st.Size, info)
}
