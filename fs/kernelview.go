package fs

import (
	"sync"

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
