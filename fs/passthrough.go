package fs

import (
	"os"
	"sync"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"

	"github.com/meshfs/meshfs/internal/source"
)

// FUSE passthrough (Linux 6.9 and later, CAP_SYS_ADMIN): an open's reply names a
// backing file, which the kernel reads itself: in the open-handles mode, a
// plain file's source and a big .glb's disk-cache file (store.PassFile).

// passthroughWanted reports whether opens should ask for passthrough: in
// the open-handles mode, as root, until a read shows the kernel did not
// take it.
func (f *FS) passthroughWanted() bool {
	return f.cfg.OpenHandles && !f.cfg.NoPassthrough && os.Geteuid() == 0 && !f.passOff.Load()
}

// passthroughHandle returns a passthrough handle on file, whose content
// to size (-1: its end) is what the node shows, or nil (after closeFile)
// when state refuses; state is nil for a plain file (every open names the
// same source inode).
func (f *FS) passthroughHandle(state *passState, ver source.Version, file *os.File, size int64, st *syscall.Stat_t, closeFile func()) gofs.FileHandle {
	if state != nil && !state.Try(ver) {
		closeFile()
		return nil
	}
	f.n.OpenHandles.Add(1)
	f.n.PassthroughOpens.Add(1)
	return &handle{fsys: f, st: st, f: file, length: size, pass: true, state: state, close: closeFile}
}

// passState is one node's opens. The kernel keeps an inode in one io mode
// while files on it are open (fs/fuse/iomode.c): a passthrough open beside
// a page-cached one fails, and so does one without passthrough beside a
// passthrough one; and every passthrough open names one backing file.
type passState struct {
	mu         sync.Mutex
	ver        source.Version // of the backing file the kernel holds
	pt, cached int            // passthrough and page-cached opens
}

// Try counts an open of ver passed through, if it may be: not beside
// page-cached opens, nor beside passthrough opens of another version.
func (s *passState) Try(ver source.Version) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cached > 0 || (s.pt > 0 && !s.ver.Same(ver)) {
		return false
	}
	s.ver = ver
	s.pt++
	return true
}

// Fallback counts an open through the page cache until done, or reports
// stale beside passthrough opens: that open must be made on a new inode
// (ESTALE: the kernel looks the name up again and gets a new node).
func (s *passState) Fallback(ver source.Version) (stale bool, done func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pt > 0 {
		return true, nil
	}
	s.cached++
	return false, sync.OnceFunc(func() {
		s.mu.Lock()
		s.cached--
		s.mu.Unlock()
	})
}

// BusyOther reports whether passthrough opens of another version than ver
// are open.
func (s *passState) BusyOther(ver source.Version) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pt > 0 && !s.ver.Same(ver)
}

// Release counts the end of a passthrough open.
func (s *passState) Release() {
	s.mu.Lock()
	s.pt--
	s.mu.Unlock()
}
