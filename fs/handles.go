package fs

import (
	"context"
	"os"
	"sync/atomic"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// The two kinds of open file: bytes held in memory (a made output, a
// texture's PNG, a stats snapshot) and a window of an open file (a source
// passed through unchanged, a raw chunk of its source, a .glb's disk-cache
// file handed to the kernel's passthrough).

// fdHandle reads [base, base+length) of f (length -1: to its end). With
// pass it asks the kernel to read f itself (passthrough.go); a read that
// reaches Read then shows the kernel did not take it, and the file system
// stops asking.
type fdHandle struct {
	fsys   *FS
	st     *syscall.Stat_t // the source's stat at open (outputs only)
	f      *os.File
	base   int64
	length int64
	pass   bool
	state  *passState // the node's passthrough opens (nil: not counted)
	close  func()     // closes f (and unpins its disk-cache entry); nil: f.Close
	closed atomic.Bool
}

var (
	_ = (gofs.FileReader)((*fdHandle)(nil))
	_ = (gofs.FileReleaser)((*fdHandle)(nil))
	_ = (gofs.FilePassthroughFder)((*fdHandle)(nil))
)

func (h *fdHandle) PassthroughFd() (int, bool) { return int(h.f.Fd()), h.pass }

func (h *fdHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if h.pass && h.fsys.passOff.CompareAndSwap(false, true) {
		h.fsys.log.Printf("meshfs: the kernel does not pass files through (needs Linux ≥ 6.9 and root); serving reads from the daemon")
	}
	n, e := span(dest, off, h.length)
	if e != 0 || n == 0 {
		return noBytes(e)
	}
	return fdResult(int(h.f.Fd()), h.base+off, n, dest)
}

func (h *fdHandle) Release(ctx context.Context) syscall.Errno {
	if h.closed.CompareAndSwap(false, true) {
		h.fsys.n.OpenHandles.Add(-1)
		if h.state != nil {
			h.state.Release()
		}
		if h.close != nil {
			h.close()
		} else {
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

// bytesHandle serves bytes held in memory.
type bytesHandle struct {
	fsys     *FS
	st       *syscall.Stat_t // the source's stat when the bytes were made
	data     []byte
	released atomic.Bool
	// done, if set, is called once on release (passState.Fallback).
	done func()
}

var (
	_ = (gofs.FileReader)((*bytesHandle)(nil))
	_ = (gofs.FileReleaser)((*bytesHandle)(nil))
)

func (h *bytesHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return memAt(h.data, dest, off)
}

func (h *bytesHandle) Release(ctx context.Context) syscall.Errno {
	if h.released.CompareAndSwap(false, true) {
		h.fsys.n.OpenHandles.Add(-1)
		if h.done != nil {
			h.done()
		}
	}
	return 0
}
