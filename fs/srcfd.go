package fs

// Under no_open a READ of a plain file or a raw chunk comes without a
// handle: it is answered from a source descriptor kept by package srcfd,
// spliced from it when the reply fits in a pipe.

import (
	"runtime"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/srcfd"
)

// readWindow replies to a READ of [base+off, base+length) of k's file
// (length -1: to its end), at most len(dest) bytes; dest is the request's
// buffer, read into when the reply is too big to splice (readresult.go).
func (f *FS) readWindow(k srcfd.Key, same func(*syscall.Stat_t) bool, dest []byte, off, base, length int64) (fuse.ReadResult, syscall.Errno) {
	c := f.srcFDs
	n, en := span(dest, off, length)
	if en != 0 || n == 0 {
		return noBytes(en)
	}
	e, err := c.Get(k, same)
	if err != nil {
		return nil, errno(err)
	}
	if !spliceFits(n) {
		// Too big to splice (see readresult.go): read it here.
		defer c.Release(e)
		return fdResult(e.Fd, base+off, n, dest)
	}
	r := &fileResult{c: c, e: e, off: base + off, size: n}
	// go-fuse skips Done for a request the kernel interrupted: the cleanup
	// releases the descriptor then, once the reply is dropped (never while
	// a splice may still use it: the request holds r until then).
	r.cleanup = runtime.AddCleanup(r, func(e *srcfd.FD) { c.Release(e) }, e)
	return r, 0
}

// fileResult is a read reply spliced from a window of a source descriptor,
// released once the reply is sent (Done).
type fileResult struct {
	c       *srcfd.FDs
	e       *srcfd.FD
	off     int64
	size    int
	cleanup runtime.Cleanup
	done    atomic.Bool
}

// Seekable lets go-fuse splice the window straight from the file.
func (r *fileResult) Seekable() (fd uintptr, off int64, sz int) {
	return uintptr(r.e.Fd), r.off, r.size
}

// Bytes reads the window when the reply cannot be spliced.
func (r *fileResult) Bytes(buf []byte) ([]byte, fuse.Status) {
	if len(buf) < r.size {
		buf = make([]byte, r.size)
	}
	got, err := source.PreadFull(r.e.Fd, buf[:r.size], r.off)
	if err != nil {
		return nil, fuse.ToStatus(err)
	}
	return buf[:got], fuse.OK
}

func (r *fileResult) Size() int { return r.size }

func (r *fileResult) Done() {
	if r.done.CompareAndSwap(false, true) {
		r.cleanup.Stop()
		r.c.Release(r.e)
	}
}
