package fs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
)

// Mesh folders and their chunks/ are listed from the structure scan of one
// source version, so the kernel may keep their listings (FOPEN_CACHE_DIR)
// and a second walk of the tree (grep -r, ls -lR) reads no folder from the
// daemon. A change of the source drops the listing with the rest of the
// node's cache (invalidateNode notifies every node below the mesh folder).
// Without the watcher nothing would drop it, so listings are cached only
// while the source is watched.

var _ = (gofs.NodeOpendirHandler)((*meshDir)(nil))

// listHandle serves one listing made at open (listing).
type listHandle struct {
	listing[fuse.DirEntry]
	fsys *FS
	// plain answers an entry of a READDIRPLUS (see plainLookup) from snap,
	// what the listing was made from.
	plain func(ctx context.Context, name string, out *fuse.EntryOut, snap *listedScan) (*gofs.Inode, syscall.Errno)
	snap  *listedScan
}

var (
	_ = (gofs.FileReaddirenter)((*listHandle)(nil))
	_ = (gofs.FileSeekdirer)((*listHandle)(nil))
	_ = (gofs.FileLookuper)((*listHandle)(nil))
)

// Lookup answers the entry just listed for READDIRPLUS. An errno leaves
// the entry a plain dirent (node id 0: the kernel takes no attributes from
// it and looks the name up itself when asked).
func (h *listHandle) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return h.plain(ctx, name, out, h.snap)
}

// notCheap is the errno of a READDIRPLUS entry left for a LOOKUP: its
// attributes would cost a conversion or a decompression.
const notCheap = syscall.EAGAIN

// plainLookup is the READDIRPLUS answer of a mesh folder: header.json and
// chunks/ (from the scan the listing made), and the geometry outputs whose
// sizes are known without converting (in memory, or in the disk cache's
// index: a remount's `ls -lR`). error.txt is never answered: its text may
// need the conversions.
//
// snap is the listing's source stat and scan (nil: none), which header.json
// and chunks/ are answered from.
func (m *meshDir) plainLookup(ctx context.Context, name string, out *fuse.EntryOut, snap *listedScan) (*gofs.Inode, syscall.Errno) {
	if m.chunks {
		return m.plainChunk(ctx, name, out, snap)
	}
	if snap != nil && name == outputs.HeaderName {
		if size, ok := m.src.KnownSize(snap.Listed, true, ""); ok {
			ch := lookupKnown(ctx, &m.Inode, name, m.out(outputs.Entry{}, ""), out, snap.Stat, snap.Version, size)
			snap.header = ch
			return ch, 0
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
	// One stat and one look at the caches: the size if it is known,
	// notCheap if it would take a conversion.
	return lookupOutput(ctx, &m.Inode, name, m.out(ent, ""), out, true)
}

// plainChunk is the READDIRPLUS answer of chunks/: raw chunks (their
// sizes are in the chunk table), loaded chunks whose size a persisted scan
// records, and loaded chunks already in memory. snap is the listing's
// source stat and scan (nil: none).
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

func (h *listHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	e, first, ok := h.Next()
	if first {
		h.fsys.n.Listings.Add(1)
	}
	if !ok {
		return nil, 0
	}
	return &e, 0
}

// Seekdir: go-fuse numbers entries 1, 2, ... (offset i resumes after the
// i-th entry).
func (h *listHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	h.Seek(off)
	return 0
}

// cacheDir is the open flag of a listing the kernel may keep.
func (f *FS) cacheDir(keep bool) uint32 {
	if keep && f.tree.Watching() {
		return fuse.FOPEN_CACHE_DIR
	}
	return 0
}

func (m *meshDir) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	m.fsys.touch()
	list, final, snap, e := m.listing(ctx)
	if e != 0 {
		return nil, 0, e
	}
	h := &listHandle{listing: listing[fuse.DirEntry]{List: list}, fsys: m.fsys, plain: m.plainLookup, snap: snap}
	if snap != nil && m.fsys.noOpen() && !m.chunks {
		h.AtEnd = func() { m.pushHeader(snap) }
	}
	return h, m.fsys.cacheDir(final), 0
}

// pushHeader stores header.json's bytes in the kernel's page cache
// (FUSE_NOTIFY_STORE) at the end of a cold listing of the mesh folder, so
// that a walker reading it next (grep -r) is answered from that cache
// instead of sending a READ: of the 5 round trips a cold grep made per mesh
// (2 listings of the folder, 2 of chunks/, 1 READ), the READ is the one
// whose answer is known already. Only under no_open (the kernel keeps the
// pages across opens), and only as Output.Push allows.
func (m *meshDir) pushHeader(snap *listedScan) {
	if snap.header == nil {
		return
	}
	of, ok := snap.header.Operations().(*Output)
	if !ok {
		return
	}
	now := func() (source.Version, bool) {
		_, fp, err := m.stat()
		return fp, err == nil
	}
	// The store waits for the lock of a page a READ of this file may hold
	// in flight, and that READ's answer asks the view: nothing is held.
	// It fails without an inode for it (an entry without attributes).
	write := func(b []byte) bool { return of.WriteCache(0, b) == 0 }
	if of.Push(snap.Version, snap.Scan, now, write, func() { m.fsys.notifyContent(&of.Inode) }) {
		m.fsys.n.HeaderPushes.Add(1)
	}
}
