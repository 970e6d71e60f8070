package fs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/requests"
	"github.com/meshfs/meshfs/internal/source"
)

// A mesh folder and its chunks/ are listed from one source version's
// scan, so while the source is watched the kernel keeps their listings
// (FOPEN_CACHE_DIR) until a change drops them (invalidateNode).

var (
	_ = (gofs.NodeOpendirHandler)((*meshDir)(nil))
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

func (m *meshDir) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	m.fsys.touch()
	list, final, snap, e := m.listing(ctx)
	if e != 0 {
		return nil, 0, e
	}
	h := &listHandle{Listing: requests.Listing[fuse.DirEntry]{List: list}, m: m, snap: snap}
	if snap != nil && m.fsys.noOpen() && !m.chunks {
		// At the listing's second end, in a request of its own: the
		// kernel has made an inode of every entry answered.
		h.AtEnd = func() { m.pushHeader(snap) }
	}
	if final && m.fsys.tree.Watching() {
		return h, fuse.FOPEN_CACHE_DIR, 0
	}
	return h, 0, 0
}

// plainLookup is a mesh folder's READDIRPLUS answer: header.json and
// chunks/ from snap (the listing's stat and scan; nil: none), and the
// outputs whose sizes are known without converting (in memory or in the
// disk cache's index); never error.txt, whose text may need the
// conversions.
func (m *meshDir) plainLookup(ctx context.Context, name string, out *fuse.EntryOut, snap *listedScan) (*gofs.Inode, syscall.Errno) {
	if m.chunks {
		return m.plainChunk(ctx, name, out, snap)
	}
	if snap != nil && name == outputs.HeaderName {
		if size, ok := m.src.KnownSize(snap.Listed, true, ""); ok {
			snap.header = lookupKnown(ctx, &m.Inode, name, m.out(outputs.Entry{}, ""), out, snap.Stat, snap.Version, size)
			return snap.header, 0
		}
	}
	if snap != nil && name == outputs.ChunksDir && len(snap.Scan.Chunks) > 0 {
		return m.chunksNode(ctx, snap.Stat, out), 0
	}
	if name == outputs.HeaderName || name == outputs.ChunksDir {
		return m.Lookup(ctx, name, out)
	}
	ent, ok := m.src.Outputs().Entry(name)
	if !ok || !ent.Converted() {
		return nil, notCheap
	}
	return lookupOutput(ctx, &m.Inode, name, m.out(ent, ""), out, true)
}

// plainChunk is chunks/' READDIRPLUS answer: raw chunks (sized by the
// chunk table), loaded chunks a persisted scan sizes, and loaded chunks in
// memory.
func (m *meshDir) plainChunk(ctx context.Context, name string, out *fuse.EntryOut, snap *listedScan) (*gofs.Inode, syscall.Errno) {
	if snap != nil {
		if size, ok := m.src.KnownSize(snap.Listed, false, name); ok {
			return lookupKnown(ctx, &m.Inode, name, m.out(outputs.Entry{}, name), out, snap.Stat, snap.Version, size), 0
		}
	}
	if err := m.src.ChunkCheap(ctx, name); err != nil {
		return nil, replaced(errno(err))
	}
	return m.Lookup(ctx, name, out)
}

// pushHeader stores header.json's bytes in the kernel's page cache
// (FUSE_NOTIFY_STORE) after a cold listing, so a walker reading it next
// sends no READ; only under no_open (the kernel keeps pages across
// opens), and as Output.Push allows. Nothing is held: the store waits for
// a page a READ of the file may lock, whose answer asks the tree.
func (m *meshDir) pushHeader(snap *listedScan) {
	if snap.header == nil {
		return
	}
	of, ok := snap.header.Operations().(*Output)
	if !ok {
		return
	}
	now := func() (source.Version, bool) {
		_, v, err := m.stat()
		return v, err == nil
	}
	write := func(b []byte) bool { return of.WriteCache(0, b) == 0 }
	if of.Push(snap.Version, snap.Scan, now, write, func() { m.fsys.notifyContent(&of.Inode) }) {
		m.fsys.n.HeaderPushes.Add(1)
	}
}
