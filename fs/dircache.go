package fs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Mesh folders and their chunks/ are listed from the structure scan of one
// source version, so the kernel may keep their listings (FOPEN_CACHE_DIR)
// and a second walk of the tree (grep -r, ls -lR) reads no folder from the
// daemon. A change of the source drops the listing with the rest of the
// node's cache (invalidateNode notifies every node below the mesh folder).
// Without the watcher nothing would drop it, so listings are cached only
// while the source is watched.

var (
	_ = (gofs.NodeOpendirHandler)((*meshDir)(nil))
	_ = (gofs.NodeOpendirHandler)((*chunksDir)(nil))
)

// listHandle serves one listing made at open.
type listHandle struct {
	fsys *FS
	list []fuse.DirEntry
	next int
	read bool
}

var (
	_ = (gofs.FileReaddirenter)((*listHandle)(nil))
	_ = (gofs.FileSeekdirer)((*listHandle)(nil))
)

func (h *listHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if !h.read {
		// The kernel asked for the entries: its cache did not serve them.
		h.read = true
		h.fsys.listings.Add(1)
	}
	if h.next >= len(h.list) {
		return nil, 0
	}
	e := h.list[h.next]
	h.next++
	return &e, 0
}

// Seekdir: go-fuse numbers entries 1, 2, ... (offset i resumes after the
// i-th entry).
func (h *listHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	h.next = int(min(off, uint64(len(h.list))))
	return 0
}

// cacheDir is the open flag of a listing the kernel may keep.
func (f *FS) cacheDir(keep bool) uint32 {
	if keep && f.watch != nil {
		return fuse.FOPEN_CACHE_DIR
	}
	return 0
}

func (m *meshDir) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	m.fsys.touch()
	list, final, e := m.listing(ctx)
	if e != 0 {
		return nil, 0, e
	}
	return &listHandle{fsys: m.fsys, list: list}, m.fsys.cacheDir(final), 0
}

func (c *chunksDir) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	c.m.fsys.touch()
	list, e := c.listing(ctx)
	if e != 0 {
		return nil, 0, e
	}
	// A replaced source lists nothing here; not worth keeping.
	return &listHandle{fsys: c.m.fsys, list: list}, c.m.fsys.cacheDir(len(list) > 0), 0
}
