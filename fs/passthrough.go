package fs

// FUSE passthrough (Linux ≥ 6.9, CAP_SYS_ADMIN): an open's reply names a
// backing file and the kernel reads that file itself. In the open-handles
// mode a plain file is passed through to its source and a big .glb to its
// disk-cache file (store.PassFile); passState keeps the
// kernel's rule of one backing file per inode.

import (
	"context"
	"os"
	"sync/atomic"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/internal/version"
)

// passHandle is an open file whose whole content is f. The kernel reads f
// itself when it took the passthrough; otherwise (not root, an old kernel,
// a backing file it refused) reads reach Read, which splices from f, and
// the file system stops asking for passthrough.
type passHandle struct {
	fsys   *FS
	st     *syscall.Stat_t // the source's stat at open (outputs only)
	f      *os.File
	size   int64      // -1: to the end of f (a plain file, read live)
	state  *passState // nil: any open may pass through (a plain file)
	close  func()     // closes f (and unpins its disk-cache entry)
	closed atomic.Bool
}

var (
	_ = (gofs.FileReader)((*passHandle)(nil))
	_ = (gofs.FileReleaser)((*passHandle)(nil))
	_ = (gofs.FilePassthroughFder)((*passHandle)(nil))
)

func (h *passHandle) PassthroughFd() (int, bool) { return int(h.f.Fd()), true }

func (h *passHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if h.fsys.passOff.CompareAndSwap(false, true) {
		h.fsys.log.Printf("meshfs: the kernel does not pass files through (needs Linux ≥ 6.9 and root); serving reads from the daemon")
	}
	n, e := span(dest, off, h.size)
	if e != 0 || n == 0 {
		return noBytes(e)
	}
	return fdResult(int(h.f.Fd()), off, n, dest)
}

func (h *passHandle) Release(ctx context.Context) syscall.Errno {
	if h.closed.CompareAndSwap(false, true) {
		h.fsys.n.OpenHandles.Add(-1)
		if h.state != nil {
			h.state.Release()
		}
		h.close()
	}
	return 0
}

// passthroughWanted reports whether opens should ask for passthrough: only
// in the open-handles mode (no open, no backing file), only as root (the
// kernel's BACKING_OPEN needs CAP_SYS_ADMIN), and only until a read shows
// the kernel did not take it.
func (f *FS) passthroughWanted() bool {
	return f.cfg.OpenHandles && !f.cfg.NoPassthrough && os.Geteuid() == 0 && !f.passOff.Load()
}

// passthroughHandle returns a passthrough handle on file, whose whole
// content (to size; -1: to its end) is what the node shows, or nil when
// this open may not ask for passthrough (then it calls closeFile). state is
// the node's bookkeeping (nil for a plain file: every open of the node
// names the same source inode).
func (f *FS) passthroughHandle(state *passState, ver version.Version, file *os.File, size int64, st *syscall.Stat_t, closeFile func()) gofs.FileHandle {
	if state != nil && !state.Try(ver) {
		closeFile()
		return nil
	}
	f.n.OpenHandles.Add(1)
	f.n.PassthroughOpens.Add(1)
	return &passHandle{fsys: f, st: st, f: file, size: size, state: state, close: closeFile}
}
