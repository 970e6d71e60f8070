// Package srcfd keeps a few source descriptors open for reads that come
// without a handle (the kernel's no_open), found by the source version they
// were opened for. It knows nothing of FUSE.
package srcfd

import (
	"container/list"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/meshfs/meshfs/internal/source"
)

// Under no_open a READ of a plain file or a raw chunk comes without a
// handle, so the daemon needs a descriptor of the source for it. Opening
// one per READ (open, fstat, close) cost about 25 µs of daemon CPU per
// 128 KiB request on the test machine: a cold read of a 256 MiB plain file
// (the kernel's pages dropped, the source's not) ran at 0.7 GB/s against
// 1.1 GB/s through a handle. FDs keeps the last few open instead and
// replies by splicing from them: 1.2 GB/s, as a handle's (best of 5, noisy).
//
// A descriptor is found by the source version it was opened for (Key):
// a plain file by its inode, which is what its node shows, as a handle
// would (a file replaced by another is another node, so another key; one
// written in place is read as it is now); a raw chunk also by size and
// mtime, since its offsets come from that version's chunk table. At most
// Max stay open, and at most a quarter of the process's descriptor
// limit (Limit), so that a low limit (ulimit -n 64) leaves the rest to
// conversions, handles and the disk cache; an open that fails for want of
// descriptors (EMFILE, ENFILE) closes every idle one kept here and tries
// once more. Each may hold a deleted file's space until it is evicted or
// the mount closes.
const Max = 64

// Limit is how many source descriptors may stay open under a
// descriptor limit of nofile: Max, at most a quarter of nofile, and
// at least one.
func Limit(nofile uint64) int {
	return int(max(1, min(Max, nofile/4)))
}

// Key names a descriptor: the path and the version opened.
type Key struct {
	Path string
	ID   source.Ident // of a plain file, its File only: any version of the inode
}

// FD is one open source descriptor. refs counts the replies still to
// be spliced from it; it is closed once evicted (or the cache closed) and
// no reply needs it.
type FD struct {
	key     Key
	Fd      int
	refs    int
	evicted bool
	elem    *list.Element
}

// FDs are the descriptors kept.
type FDs struct {
	max    int // descriptors kept at most (Limit)
	mu     sync.Mutex
	byKey  map[Key]*FD
	lru    list.List // front: most recently used
	closed bool
	opens  atomic.Int64 // descriptors opened (for tests and stats)
}

// New returns an empty cache sized for the process's descriptor
// limit now.
func New() *FDs {
	var lim syscall.Rlimit
	nofile := uint64(Max * 4)
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		nofile = lim.Cur
	}
	return &FDs{max: Limit(nofile), byKey: map[Key]*FD{}}
}

// Get returns a referenced descriptor of k, opening it (and checking with
// same that the file opened is k's version) on a miss.
func (c *FDs) Get(k Key, same func(*syscall.Stat_t) bool) (*FD, error) {
	c.mu.Lock()
	if e := c.byKey[k]; e != nil {
		e.refs++
		c.lru.MoveToFront(e.elem)
		c.mu.Unlock()
		return e, nil
	}
	c.mu.Unlock()

	fd, st, err := source.OpenFD(k.Path)
	if (errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)) && c.closeIdle() > 0 {
		// Out of descriptors: those kept here for later reads go first.
		fd, st, err = source.OpenFD(k.Path)
	}
	if err != nil {
		return nil, err
	}
	if !same(st) {
		// Replaced since the lookup (or changed since the scan): ESTALE
		// makes the kernel look the name up again.
		syscall.Close(fd)
		return nil, syscall.ESTALE
	}
	c.opens.Add(1)
	e := &FD{key: k, Fd: fd, refs: 1}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		e.evicted = true
		return e, nil
	}
	if old := c.byKey[k]; old != nil {
		// Opened twice at once: keep the first, this one goes with its
		// reply.
		e.evicted = true
		return e, nil
	}
	c.byKey[k] = e
	e.elem = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		c.evictLocked(c.lru.Back().Value.(*FD))
	}
	return e, nil
}

func (c *FDs) evictLocked(e *FD) {
	c.lru.Remove(e.elem)
	delete(c.byKey, e.key)
	e.evicted = true
	if e.refs == 0 {
		syscall.Close(e.Fd)
	}
}

// closeIdle evicts every kept descriptor and returns how many no reply
// needed (those are closed now; the others as their replies go).
func (c *FDs) closeIdle() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for c.lru.Len() > 0 {
		e := c.lru.Back().Value.(*FD)
		if e.refs == 0 {
			n++
		}
		c.evictLocked(e)
	}
	return n
}

func (c *FDs) Release(e *FD) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.refs--
	if e.refs == 0 && e.evicted {
		syscall.Close(e.Fd)
	}
}

// Window is Len bytes at Off of a kept descriptor, a reply to be spliced
// from it, holding a reference to it until Done, or until the Window is
// dropped without Done (a reply whose request was interrupted).
type Window struct {
	Fd      int
	Off     int64
	Len     int
	c       *FDs
	e       *FD
	cleanup runtime.Cleanup
	done    atomic.Bool
}

// Window returns a window of k's descriptor (Get) at off, n bytes long.
func (c *FDs) Window(k Key, same func(*syscall.Stat_t) bool, off int64, n int) (*Window, error) {
	e, err := c.Get(k, same)
	if err != nil {
		return nil, err
	}
	w := &Window{Fd: e.Fd, Off: off, Len: n, c: c, e: e}
	w.cleanup = runtime.AddCleanup(w, c.Release, e)
	return w, nil
}

// Read reads the window into buf (grown when short): fewer bytes when
// the file shrank.
func (w *Window) Read(buf []byte) ([]byte, error) {
	if len(buf) < w.Len {
		buf = make([]byte, w.Len)
	}
	got, err := source.PreadFull(w.Fd, buf[:w.Len], w.Off)
	if err != nil {
		return nil, err
	}
	return buf[:got], nil
}

// Done releases the window's descriptor, once.
func (w *Window) Done() {
	if w.done.CompareAndSwap(false, true) {
		w.cleanup.Stop()
		w.c.Release(w.e)
	}
}

// Close closes every descriptor no reply needs (the others as their
// replies go).
func (c *FDs) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for c.lru.Len() > 0 {
		c.evictLocked(c.lru.Back().Value.(*FD))
	}
}

// Cap is how many descriptors may stay open.
func (c *FDs) Cap() int { return c.max }

// Kept is how many descriptors are open now.
func (c *FDs) Kept() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Opens is how many descriptors were opened.
func (c *FDs) Opens() int64 { return c.opens.Load() }
