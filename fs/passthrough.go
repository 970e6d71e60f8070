package fs

// FUSE passthrough (Linux ≥ 6.9, CAP_SYS_ADMIN): an open's reply names a
// backing file and the kernel reads that file itself. In the open-handles
// mode a plain file is passed through to its source and a big .glb to its
// disk-cache file (store.PassFile); passState keeps the
// kernel's rule of one backing file per inode.

import (
	"os"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"

	"github.com/meshfs/meshfs/internal/source"
)

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
func (f *FS) passthroughHandle(state *passState, ver source.Version, file *os.File, size int64, st *syscall.Stat_t, closeFile func()) gofs.FileHandle {
	if state != nil && !state.Try(ver) {
		closeFile()
		return nil
	}
	f.n.OpenHandles.Add(1)
	f.n.PassthroughOpens.Add(1)
	return &handle{fsys: f, st: st, f: file, length: size, pass: true, state: state, close: closeFile}
}
