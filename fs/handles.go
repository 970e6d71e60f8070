package fs

import (
	"context"
	"os"
	"sync/atomic"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// handle is an open file: bytes held in memory (data), or the window
// [base, base+length) of f (length -1: to its end), which with pass the
// kernel reads itself (passthrough.go: a READ that reaches Read shows it
// did not, and the mount stops asking).
type handle struct {
	fsys         *FS
	st           *syscall.Stat_t // the source's stat at open (outputs only)
	data         []byte
	f            *os.File
	base, length int64
	pass         bool
	state        *passState // the node's passthrough opens (nil: not counted)
	close        func()     // called once on release (closes f; nil: f.Close)
	closed       atomic.Bool
}

var (
	_ = (gofs.FileReader)((*handle)(nil))
	_ = (gofs.FileReleaser)((*handle)(nil))
	_ = (gofs.FilePassthroughFder)((*handle)(nil))
)

// memHandle is an open of data, made from the source st, counted open.
func (f *FS) memHandle(data []byte, st *syscall.Stat_t, done func()) *handle {
	f.n.OpenHandles.Add(1)
	return &handle{fsys: f, data: data, st: st, length: int64(len(data)), close: done}
}

func (h *handle) PassthroughFd() (int, bool) {
	if h.f == nil {
		return -1, false
	}
	return int(h.f.Fd()), h.pass
}

func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if h.f == nil {
		return memAt(h.data, dest, off)
	}
	if h.pass && h.fsys.passOff.CompareAndSwap(false, true) {
		h.fsys.log.Printf("meshfs: the kernel does not pass files through (needs Linux ≥ 6.9 and root); serving reads from the daemon")
	}
	n, e := span(dest, off, h.length)
	if e != 0 || n == 0 {
		return noBytes(e)
	}
	return fdResult(int(h.f.Fd()), h.base+off, n, dest)
}

func (h *handle) Release(ctx context.Context) syscall.Errno {
	if h.closed.CompareAndSwap(false, true) {
		h.fsys.n.OpenHandles.Add(-1)
		if h.state != nil {
			h.state.Release()
		}
		if h.close != nil {
			h.close()
		} else if h.f != nil {
			h.f.Close()
		}
	}
	return 0
}

// read serves a READ through its handle fh, or without one (no_open) by
// noHandle; a READ without a handle in the open-handles mode is EBADF.
func (f *FS) read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64, noHandle func() (fuse.ReadResult, syscall.Errno)) (fuse.ReadResult, syscall.Errno) {
	if h, ok := fh.(gofs.FileReader); ok {
		return h.Read(ctx, dest, off)
	} else if fh == nil && f.noOpen() {
		return noHandle()
	}
	return nil, syscall.EBADF
}
