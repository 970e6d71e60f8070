package fs

import (
	"os"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/hanwen/go-fuse/v2/splice"

	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/srcfd"
)

// A READ's reply: bytes in memory as a slice list (one writev: go-fuse
// would try to splice any other kind, and log each reply too big for a
// pipe); a file's window spliced when it fits in a pipe, else read into
// the request's buffer.

func memResult(b []byte) fuse.ReadResult { return fuse.ReadResultVector([][]byte{b}) }

// memAt replies to a READ of dest's size at off of data.
func memAt(data, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n, e := span(dest, off, int64(len(data)))
	if e != 0 || n == 0 {
		return noBytes(e)
	}
	return memResult(data[off : off+int64(n)]), 0
}

// noBytes replies with nothing: errno e, or the end of the file.
func noBytes(e syscall.Errno) (fuse.ReadResult, syscall.Errno) {
	if e != 0 {
		return nil, e
	}
	return memResult(nil), 0
}

// span is source.Span for a READ into dest.
func span(dest []byte, off, length int64) (int, syscall.Errno) {
	return source.Span(len(dest), off, length)
}

// spliceFits reports whether go-fuse's pipe holds an n-byte reply: its
// 16-byte header, the data and a page.
func spliceFits(n int) bool { return n+16+os.Getpagesize() <= splice.MaxPipeSize() }

// fdResult replies with n bytes of fd at off (fewer if the file shrank);
// dest is the request's buffer.
func fdResult(fd int, off int64, n int, dest []byte) (fuse.ReadResult, syscall.Errno) {
	if spliceFits(n) {
		return fuse.ReadResultFd(uintptr(fd), off, n), 0
	}
	if len(dest) < n {
		dest = make([]byte, n)
	}
	got, err := source.PreadFull(fd, dest[:n], off)
	if err != nil {
		return nil, gofs.ToErrno(err)
	}
	return memResult(dest[:got]), 0
}

// readWindow replies to a READ without a handle (no_open) of [base+off,
// base+length) of k's file (length -1: to its end) from a kept source
// descriptor.
func (f *FS) readWindow(k srcfd.Key, same func(*syscall.Stat_t) bool, dest []byte, off, base, length int64) (fuse.ReadResult, syscall.Errno) {
	n, en := span(dest, off, length)
	if en != 0 || n == 0 {
		return noBytes(en)
	}
	w, err := f.srcFDs.Window(k, same, base+off, n)
	if err != nil {
		return nil, errno(err)
	}
	if !spliceFits(n) {
		defer w.Done()
		return fdResult(w.Fd, w.Off, n, dest)
	}
	return fileResult{w}, 0
}

// fileResult is a reply spliced from a window, which go-fuse releases
// (Done) once it is sent; an interrupted request's is released once
// dropped.
type fileResult struct{ *srcfd.Window }

func (r fileResult) Seekable() (fd uintptr, off int64, sz int) { return uintptr(r.Fd), r.Off, r.Len }
func (r fileResult) Size() int                                 { return r.Len }

func (r fileResult) Bytes(buf []byte) ([]byte, fuse.Status) {
	b, err := r.Read(buf)
	return b, fuse.ToStatus(err)
}
