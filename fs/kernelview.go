package fs

import (
	"sync"

	"github.com/meshfs/meshfs/internal/source"
)

// What the kernel was told of one file: the
// version whose size it holds (its attributes) and the version whose bytes
// its page cache may hold (its pages), and decides from them what a request
// may tell it next and when the kernel must drop what it holds.
//
// The kernel keeps one size and one page cache per inode, shared by every
// reader. When it opens files without asking the daemon (FUSE's no_open),
// a node told one version's size stands for that version only (Pinned):
// another version is served by another node, so no read mixes two. With an
// open per handle, every open re-checks the version and the kernel is told
// to drop what it holds of another.
//
// The caller passes the function that drops the kernel's attributes and
// pages of the node, and kernelView schedules it.

// kernelView is what the kernel was told of one node. The zero kernelView is a node
// told nothing, with per-handle opens; set Pinned before first use for a
// mount whose kernel opens without asking.
type kernelView struct {
	Pinned bool

	mu        sync.Mutex
	attr      source.Version // whose size the kernel holds (zero: none)
	pages     source.Version // whose bytes its page cache may hold
	pagesSeen bool
}

// MayTell reports whether the kernel may be told v's size (Tell would
// succeed), recording nothing.
func (k *kernelView) MayTell(v source.Version) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.mayTellLocked(v)
}

func (k *kernelView) mayTellLocked(v source.Version) bool {
	return !k.Pinned || k.attr.Zero() || k.attr.Same(v)
}

// Tell records that the kernel is told v's size, and reports whether it
// may be: a Pinned node told another version's size may not.
func (k *kernelView) Tell(v source.Version) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.mayTellLocked(v) {
		return false
	}
	k.attr = v
	return true
}

// Retell records that the kernel is told v's size whatever it was told
// before (a node whose every request re-reads its source).
func (k *kernelView) Retell(v source.Version) {
	k.mu.Lock()
	k.attr = v
	k.mu.Unlock()
}

// Told is the version whose size the kernel was told (zero: none).
func (k *kernelView) Told() source.Version {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.attr
}

// Served records that the kernel's page cache gets v's bytes (a READ
// answered).
func (k *kernelView) Served(v source.Version) {
	k.mu.Lock()
	k.pages, k.pagesSeen = v, true
	k.mu.Unlock()
}

// Opened records that an open serves v and reports whether the kernel's
// pages are v's (so may be kept). When the kernel holds another version's
// size, drop (which makes it forget the node's attributes and pages) is
// scheduled beside the caller: it must not be called from within the
// request, which the kernel's notification may wait for.
func (k *kernelView) Opened(v source.Version, drop func()) (keep bool) {
	k.mu.Lock()
	keep = k.pagesSeen && k.pages.Same(v)
	stale := !k.attr.Zero() && !k.attr.Same(v)
	k.pages, k.pagesSeen, k.attr = v, true, v
	k.mu.Unlock()
	if stale {
		go drop()
	}
	return keep
}

// WantsPages reports whether v's bytes may be stored into the kernel's
// page cache unasked: not when it has them already, nor when the node
// stands for another version.
func (k *kernelView) WantsPages(v source.Version) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	have := k.pagesSeen && k.pages.Same(v)
	other := !k.attr.Zero() && !k.attr.Same(v)
	return !have && !other
}

// Stored records that v's bytes were stored into the kernel's page cache,
// and schedules drop when the source is no longer v (now): a change may
// have been notified before the store.
func (k *kernelView) Stored(v, now source.Version, drop func()) {
	k.mu.Lock()
	k.pages, k.pagesSeen, k.attr = v, true, v
	k.mu.Unlock()
	if !now.Same(v) {
		go drop()
	}
}
