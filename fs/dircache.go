package fs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/internal/requests"
)

// A mesh folder and its chunks/ are listed from one source version's
// scan, so while the source is watched the kernel keeps their listings
// (FOPEN_CACHE_DIR) until a change drops them (invalidateNode).

var (
	_ = (gofs.FileReaddirenter)((*listHandle)(nil))
	_ = (gofs.FileSeekdirer)((*listHandle)(nil))
	_ = (gofs.FileLookuper)((*listHandle)(nil))
)

// listHandle serves one listing made at open; go-fuse numbers its
// entries from 1 (Seekdir).
type listHandle struct {
	requests.Listing[fuse.DirEntry]
	m    *meshDir
	snap *listedScan // what the listing was made from
}

// Lookup answers the entry just listed for READDIRPLUS; an errno leaves
// it a plain dirent, which the kernel looks up itself when asked.
func (h *listHandle) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return h.m.plainLookup(ctx, name, out, h.snap)
}

func (h *listHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	e, first, ok := h.Next()
	if first {
		h.m.fsys.n.Listings.Add(1)
	}
	if !ok {
		return nil, 0
	}
	return &e, 0
}

func (h *listHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	h.Seek(off)
	return 0
}
