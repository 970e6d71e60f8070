package fs

import (
	"sync"

	"github.com/meshfs/meshfs/internal/source"
)

// passState is one node's bookkeeping for FUSE passthrough. The kernel keeps an
// inode in one io mode while files on it are open (fs/fuse/iomode.c): a
// passthrough open while a page-cached open exists fails with EIO, and any
// open without FOPEN_PASSTHROUGH while a passthrough one exists fails too.
// So an open may pass through only when no page-cached open is left, and
// one that cannot while passthrough opens exist goes to a new inode.
type passState struct {
	mu     sync.Mutex
	ver    source.Version // version of the backing file the kernel holds
	pt     int            // passthrough opens on the node
	cached int            // page-cached opens on the node
}

// Try reports whether an open of version ver may pass through,
// and if so counts it: not while page-cached opens exist, nor while
// passthrough opens of another version do (one backing file per inode).
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

// Fallback counts an open of version ver that does not pass through (it
// goes through the page cache until done is called), or reports stale when
// passthrough opens of another version are open on the node: the kernel
// requires every open of an inode open for passthrough to pass through the
// same backing file, so that open must be made on a new inode (ESTALE: the
// kernel looks the name up again, and the mount hands out a new node).
func (s *passState) Fallback(ver source.Version) (stale bool, done func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pt > 0 {
		return true, nil
	}
	s.cached++
	var once sync.Once
	return false, func() {
		once.Do(func() {
			s.mu.Lock()
			s.cached--
			s.mu.Unlock()
		})
	}
}

// BusyOther reports whether passthrough opens of a version other than ver
// are open on the node.
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
