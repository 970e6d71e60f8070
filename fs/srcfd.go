package fs

import (
	"container/list"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/internal/srcfile"
	"github.com/meshfs/meshfs/internal/version"
)

// Under no_open a READ of a plain file or a raw chunk comes without a
// handle, so the daemon needs a descriptor of the source for it. Opening
// one per READ (open, fstat, close) cost about 25 µs of daemon CPU per
// 128 KiB request on the test machine: a cold read of a 256 MiB plain file
// (the kernel's pages dropped, the source's not) ran at 0.7 GB/s against
// 1.1 GB/s through a handle. srcFDs keeps the last few open instead and
// replies by splicing from them: 1.2 GB/s, as a handle's (best of 5, noisy).
//
// A descriptor is found by the source version it was opened for (srcKey):
// a plain file by its inode, which is what its node shows, as a handle
// would (a file replaced by another is another node, so another key; one
// written in place is read as it is now); a raw chunk also by size and
// mtime, since its offsets come from that version's chunk table. At most
// maxSrcFDs stay open, and at most a quarter of the process's descriptor
// limit (srcFDLimit), so that a low limit (ulimit -n 64) leaves the rest to
// conversions, handles and the disk cache; an open that fails for want of
// descriptors (EMFILE, ENFILE) closes every idle one kept here and tries
// once more. Each may hold a deleted file's space until it is evicted or
// the mount closes.
const maxSrcFDs = 64

// srcFDLimit is how many source descriptors may stay open under a
// descriptor limit of nofile: maxSrcFDs, at most a quarter of nofile, and
// at least one.
func srcFDLimit(nofile uint64) int {
	return int(max(1, min(maxSrcFDs, nofile/4)))
}

type srcKey struct {
	path string
	id   version.Ident // of a plain file, its File only: any version of the inode
}

// srcFD is one open source descriptor. refs counts the replies still to
// be spliced from it; it is closed once evicted (or the cache closed) and
// no reply needs it.
type srcFD struct {
	key     srcKey
	fd      int
	refs    int
	evicted bool
	elem    *list.Element
}

type srcFDs struct {
	max    int // descriptors kept at most (srcFDLimit)
	mu     sync.Mutex
	byKey  map[srcKey]*srcFD
	lru    list.List // front: most recently used
	closed bool
	opens  atomic.Int64 // descriptors opened (for tests and stats)
}

// newSrcFDs returns an empty cache sized for the process's descriptor
// limit now.
func newSrcFDs() *srcFDs {
	var lim syscall.Rlimit
	nofile := uint64(maxSrcFDs * 4)
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		nofile = lim.Cur
	}
	return &srcFDs{max: srcFDLimit(nofile), byKey: map[srcKey]*srcFD{}}
}

// get returns a referenced descriptor of k, opening it (and checking with
// same that the file opened is k's version) on a miss.
func (c *srcFDs) get(k srcKey, same func(*syscall.Stat_t) bool) (*srcFD, syscall.Errno) {
	c.mu.Lock()
	if e := c.byKey[k]; e != nil {
		e.refs++
		c.lru.MoveToFront(e.elem)
		c.mu.Unlock()
		return e, 0
	}
	c.mu.Unlock()

	fd, st, err := srcfile.OpenFD(k.path)
	if (errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)) && c.closeIdle() > 0 {
		// Out of descriptors: those kept here for later reads go first.
		fd, st, err = srcfile.OpenFD(k.path)
	}
	if err != nil {
		return nil, errno(err)
	}
	if !same(st) {
		// Replaced since the lookup (or changed since the scan): ESTALE
		// makes the kernel look the name up again.
		syscall.Close(fd)
		return nil, syscall.ESTALE
	}
	c.opens.Add(1)
	e := &srcFD{key: k, fd: fd, refs: 1}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		e.evicted = true
		return e, 0
	}
	if old := c.byKey[k]; old != nil {
		// Opened twice at once: keep the first, this one goes with its
		// reply.
		e.evicted = true
		return e, 0
	}
	c.byKey[k] = e
	e.elem = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		c.evictLocked(c.lru.Back().Value.(*srcFD))
	}
	return e, 0
}

func (c *srcFDs) evictLocked(e *srcFD) {
	c.lru.Remove(e.elem)
	delete(c.byKey, e.key)
	e.evicted = true
	if e.refs == 0 {
		syscall.Close(e.fd)
	}
}

// closeIdle evicts every kept descriptor and returns how many no reply
// needed (those are closed now; the others as their replies go).
func (c *srcFDs) closeIdle() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for c.lru.Len() > 0 {
		e := c.lru.Back().Value.(*srcFD)
		if e.refs == 0 {
			n++
		}
		c.evictLocked(e)
	}
	return n
}

func (c *srcFDs) release(e *srcFD) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.refs--
	if e.refs == 0 && e.evicted {
		syscall.Close(e.fd)
	}
}

// close closes every descriptor no reply needs (the others as their
// replies go).
func (c *srcFDs) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for c.lru.Len() > 0 {
		c.evictLocked(c.lru.Back().Value.(*srcFD))
	}
}

// readWindow replies to a READ of [base+off, base+length) of k's file
// (length -1: to its end), at most len(dest) bytes; dest is the request's
// buffer, read into when the reply is too big to splice (readresult.go).
func (c *srcFDs) readWindow(k srcKey, same func(*syscall.Stat_t) bool, dest []byte, off, base, length int64) (fuse.ReadResult, syscall.Errno) {
	if off < 0 {
		return nil, syscall.EINVAL
	}
	n := int64(len(dest))
	if length >= 0 {
		if off >= length {
			return memResult(nil), 0
		}
		n = min(n, length-off)
	}
	e, errno := c.get(k, same)
	if errno != 0 {
		return nil, errno
	}
	if !spliceFits(int(n)) {
		// Too big to splice (see readresult.go): read it here.
		defer c.release(e)
		return fdResult(e.fd, base+off, int(n), dest)
	}
	r := &fileResult{c: c, e: e, off: base + off, size: int(n)}
	// go-fuse skips Done for a request the kernel interrupted: the cleanup
	// releases the descriptor then, once the reply is dropped (never while
	// a splice may still use it: the request holds r until then).
	r.cleanup = runtime.AddCleanup(r, func(e *srcFD) { c.release(e) }, e)
	return r, 0
}

// fileResult is a read reply spliced from a window of a source descriptor,
// released once the reply is sent (Done).
type fileResult struct {
	c       *srcFDs
	e       *srcFD
	off     int64
	size    int
	cleanup runtime.Cleanup
	done    atomic.Bool
}

// Seekable lets go-fuse splice the window straight from the file.
func (r *fileResult) Seekable() (fd uintptr, off int64, sz int) {
	return uintptr(r.e.fd), r.off, r.size
}

// Bytes reads the window when the reply cannot be spliced.
func (r *fileResult) Bytes(buf []byte) ([]byte, fuse.Status) {
	if len(buf) < r.size {
		buf = make([]byte, r.size)
	}
	got, err := preadFull(r.e.fd, buf[:r.size], r.off)
	if err != nil {
		return nil, fuse.ToStatus(err)
	}
	return buf[:got], fuse.OK
}

func (r *fileResult) Size() int { return r.size }

func (r *fileResult) Done() {
	if r.done.CompareAndSwap(false, true) {
		r.cleanup.Stop()
		r.c.release(r.e)
	}
}
