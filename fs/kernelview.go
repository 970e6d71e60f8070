package fs

import (
	"os"
	"sync"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"

	"github.com/meshfs/meshfs/internal/source"
)

// kernelView is what the kernel was told of one node: the version whose
// size it holds and the version whose bytes its page cache may hold (zero:
// none). The kernel keeps one of each per inode, shared by every reader:
// a node told one version's size under no_open stands for that version
// only (Pinned, set before first use), another version being served by
// another node; with an open per handle every open re-checks the version
// (Opened). The kernel's drop of what it holds (drop, the caller's) is
// scheduled beside the request, which the kernel's notification may wait
// for.
type kernelView struct {
	Pinned bool

	mu          sync.Mutex
	attr, pages source.Version
}

// MayTell reports whether Tell would succeed, recording nothing.
func (k *kernelView) MayTell(v source.Version) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.mayTell(v)
}

func (k *kernelView) mayTell(v source.Version) bool {
	return !k.Pinned || k.attr.Zero() || k.attr.Same(v)
}

// Tell records that the kernel is told v's size, if it may be: a Pinned
// node told another version's may not.
func (k *kernelView) Tell(v source.Version) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	ok := k.mayTell(v)
	if ok {
		k.attr = v
	}
	return ok
}

// Retell records that the kernel is told v's size, whatever it was told
// (a node whose every request re-reads its source).
func (k *kernelView) Retell(v source.Version) {
	k.mu.Lock()
	k.attr = v
	k.mu.Unlock()
}

// Told is the version whose size the kernel was told.
func (k *kernelView) Told() source.Version {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.attr
}

// Served records that a READ's answer gave the page cache v's bytes.
func (k *kernelView) Served(v source.Version) {
	k.mu.Lock()
	k.pages = v
	k.mu.Unlock()
}

// Opened records that an open serves v and reports whether the kernel's
// pages are v's (may be kept); drop is scheduled when the kernel holds
// another version's size.
func (k *kernelView) Opened(v source.Version, drop func()) (keep bool) {
	k.mu.Lock()
	keep = k.has(v)
	stale := !k.attr.Zero() && !k.attr.Same(v)
	k.pages, k.attr = v, v
	k.mu.Unlock()
	if stale {
		go drop()
	}
	return keep
}

func (k *kernelView) has(v source.Version) bool { return !k.pages.Zero() && k.pages.Same(v) }

// WantsPages reports whether v's bytes may be stored into the page cache
// unasked: not when it has them, nor when the node stands for another
// version.
func (k *kernelView) WantsPages(v source.Version) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return !k.has(v) && (k.attr.Zero() || k.attr.Same(v))
}

// Stored records that v's bytes were stored into the page cache, and
// schedules drop when the source is no longer v (now): a change may have
// been notified before the store.
func (k *kernelView) Stored(v, now source.Version, drop func()) {
	k.mu.Lock()
	k.pages, k.attr = v, v
	k.mu.Unlock()
	if !now.Same(v) {
		go drop()
	}
}

// FUSE passthrough (Linux 6.9, CAP_SYS_ADMIN): an open's reply names a
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
	return &fdHandle{fsys: f, st: st, f: file, length: size, pass: true, state: state, close: closeFile}
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
