package fs

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/requests"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/srcfd"
	"github.com/meshfs/meshfs/vfs"
)

// meshDir is a mesh file shown as a folder of its outputs (vfs.Mesh), or
// with chunks set its chunks/, listed from a handle made at open.
type meshDir struct {
	srcNode
	parent *dirNode
	src    *vfs.Mesh
	chunks bool
}

var (
	_ = (gofs.NodeLookuper)((*meshDir)(nil))
	_ = (gofs.NodeGetattrer)((*meshDir)(nil))
	_ = (gofs.NodeOpendirHandler)((*meshDir)(nil))
)

// stat is the source's stat and version now (ESTALE once replaced).
func (m *meshDir) stat() (*syscall.Stat_t, source.Version, error) { return m.src.Stat() }

// Getattr does not check the source's identity: a folder has no size to go
// stale, and a reader holding it open (grep -r) could not recover from ESTALE.
func (m *meshDir) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	st, err := m.src.SourceStat()
	if err != nil {
		return errno(err)
	}
	out.Attr.FromStat(vfs.DirStat(st))
	m.fsys.shortTTL(m.parent, nil, out)
	return 0
}

// listing is the folder's entries (vfs.Mesh.Listing; none once replaced),
// whether they are final for this version, and what they were made from.
func (m *meshDir) listing(ctx context.Context) ([]fuse.DirEntry, bool, *listedScan, syscall.Errno) {
	ents, l, final, err := m.src.Listing(ctx, m.chunks)
	if errors.Is(err, syscall.ESTALE) {
		return nil, false, nil, 0
	} else if err != nil {
		return nil, false, nil, errno(err)
	}
	return dirEntries(ents), final, &listedScan{Listed: l}, 0
}

// listedScan is what a listing was made from, for the READDIRPLUS lookups
// after it; header is header.json's node when they answered it.
type listedScan struct {
	*vfs.Listed
	header *gofs.Inode
}

// noNegative is the entry timeout of an ENOENT the kernel must not keep.
const noNegative = time.Nanosecond

func (m *meshDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if m.chunks {
		return lookupOutput(ctx, &m.Inode, name, m.out(outputs.Entry{}, name), out, false)
	}
	m.fsys.touch()
	e, st, _, keep, err := m.src.Entry(ctx, name)
	if err != nil {
		if !keep {
			out.SetEntryTimeout(noNegative)
		}
		return nil, replaced(errno(err))
	}
	if e.Output == outputs.OutChunks {
		return m.chunksNode(ctx, st, out), 0
	}
	return lookupOutput(ctx, &m.Inode, name, m.out(e, ""), out, false)
}

// lookupOutput sizes an output (cheapOnly: converting nothing, notCheap
// instead) and returns its node, kept while Output.Reusable; the errno is
// the folder's (replaced).
func lookupOutput(ctx context.Context, parent *gofs.Inode, name string, f *Output, out *fuse.EntryOut, cheapOnly bool) (*gofs.Inode, syscall.Errno) {
	defer f.m.fsys.shortTTL(f.m.parent, out, nil)
	fresh := f
	ch, f := outputChild(parent, name, f)
	if ch != nil {
		if _, fp, err := f.m.stat(); err == nil && !f.Reusable(fp) {
			ch, f = nil, fresh
		}
	}
	var a fuse.AttrOut
	e := f.getattr(ctx, &a, cheapOnly)
	if e == syscall.ESTALE && f.m.fsys.noOpen() {
		// Changed since the stat the folder kept (its event may be on its
		// way): a fresh stat, and a node for this version.
		f.m.src.Forget()
		ch, f = nil, fresh
		e = f.getattr(ctx, &a, cheapOnly)
	}
	if e != 0 {
		return nil, replaced(e)
	}
	out.Attr = a.Attr
	if ch == nil {
		ch = parent.NewInode(ctx, f, gofs.StableAttr{Mode: syscall.S_IFREG})
	}
	return ch, 0
}

// outputChild is parent's output node called name, or (nil, f).
func outputChild(parent *gofs.Inode, name string, f *Output) (*gofs.Inode, *Output) {
	ch := parent.GetChild(name)
	if of, ok := opsOf[*Output](ch); ok {
		return ch, of
	}
	return nil, f
}

// lookupKnown is lookupOutput for an output other than the .glb whose
// size is known for source version fp (stat st).
func lookupKnown(ctx context.Context, parent *gofs.Inode, name string, f *Output, out *fuse.EntryOut, st *syscall.Stat_t, fp source.Version, size int64) *gofs.Inode {
	defer f.m.fsys.shortTTL(f.m.parent, out, nil)
	out.Attr.FromStat(vfs.FileStat(st, size))
	return reuse(ctx, parent, name, func(o *Output) bool { return o.View.Tell(fp) }, func() (gofs.InodeEmbedder, uint32) {
		f.View.Tell(fp)
		return f, syscall.S_IFREG
	})
}

// chunksNode answers a lookup of chunks/ (source stat st) with its node.
func (m *meshDir) chunksNode(ctx context.Context, st *syscall.Stat_t, out *fuse.EntryOut) *gofs.Inode {
	out.Attr.FromStat(vfs.DirStat(st))
	m.fsys.shortTTL(m.parent, out, nil)
	return reuse[*meshDir](ctx, &m.Inode, outputs.ChunksDir, nil, func() (gofs.InodeEmbedder, uint32) {
		return &meshDir{srcNode: srcNode{fsys: m.fsys, ident: m.ident}, parent: m.parent, src: m.src, chunks: true}, syscall.S_IFDIR
	})
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
// outputs sized without converting; never error.txt.
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

// plainChunk is chunks/' READDIRPLUS answer: the chunks a scan sizes or
// memory holds.
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
// (FUSE_NOTIFY_STORE) after a cold listing, under no_open, as Output.Push
// allows, holding nothing (a READ of the file may lock the page).
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

var (
	_ = (gofs.NodeOpener)((*Output)(nil))
	_ = (gofs.NodeGetattrer)((*Output)(nil))
	_ = (gofs.NodeReader)((*Output)(nil))
	_ = (gofs.NodeFlusher)((*Output)(nil))
)

// out is a new node for m's output ent or chunk.
func (m *meshDir) out(ent outputs.Entry, chunk string) *Output {
	o := NewOutput(m.fsys.st, m.src.Outputs(), ent, chunk, m.fsys.noOpen())
	o.m = m
	return o
}

func (o *Output) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	defer o.m.fsys.shortTTL(o.m.parent, nil, out)
	if h, ok := fh.(*handle); ok { // what it serves
		out.Attr.FromStat(vfs.FileStat(h.st, h.length))
		return 0
	}
	return o.getattr(ctx, out, false)
}

// getattr sizes the output without a handle (Output.Size).
func (o *Output) getattr(ctx context.Context, out *fuse.AttrOut, cheapOnly bool) syscall.Errno {
	o.m.fsys.touch()
	st, fp, err := o.m.stat()
	if err != nil {
		return errno(err)
	}
	size, scanned, err := o.Size(ctx, fp, cheapOnly)
	if err != nil {
		return outErrno(err)
	}
	if scanned {
		st = o.m.src.Renarrowed(st, fp)
	}
	out.Attr.FromStat(vfs.FileStat(st, size))
	return 0
}

// Open opens the output: a .glb passed through to its disk-cache file where
// it can be (passState), else its bytes in memory or a raw chunk's window
// of the source (ESTALE once replaced: the chunk table is not the file's).
func (o *Output) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	f := o.m.fsys
	f.touch()
	ptNode := o.IsGLB() && f.passthroughWanted() && f.cfg.Store.DiskCache != nil
	st, fp, err := o.m.stat()
	if err != nil {
		return nil, 0, outErrno(err)
	}
	if ptNode {
		if h, size, ok := f.st.PassFile(ctx, o.Mesh, fp); ok {
			if fh := f.passthroughHandle(&o.Pass, fp, h.File, size, st, func() { h.Close() }); fh != nil {
				o.opened(fp)
				return fh, noFlush, 0
			}
		}
	}
	data, raw, err := o.Content(ctx, fp)
	if err != nil {
		return nil, 0, outErrno(err)
	}
	var done func()
	if ptNode {
		var stale bool
		if stale, done = o.Pass.Fallback(fp); stale {
			return nil, 0, syscall.ESTALE
		}
	}
	fh := &handle{fsys: f, data: data, st: st, length: int64(len(data)), close: done}
	if raw != nil {
		if fh.f, err = o.m.src.OpenRaw(fp); err != nil {
			return nil, 0, errno(err)
		}
		fh.data, fh.base, fh.length = nil, raw.Offset, raw.Length
	}
	f.n.OpenHandles.Add(1)
	return fh, keepFlags(o.opened(fp)), 0
}

// keepFlags are the open flags of a file whose kernel pages are of the
// version opened (keep: FOPEN_KEEP_CACHE), else none: the kernel drops them.
func keepFlags(keep bool) uint32 {
	if keep {
		return fuse.FOPEN_KEEP_CACHE | noFlush
	}
	return noFlush
}

// opened records that an open serves version fp and reports whether the
// kernel's pages are of it (kernelView.Opened).
func (o *Output) opened(fp source.Version) (keep bool) {
	return o.View.Opened(fp, func() { o.m.fsys.notifyContent(&o.Inode) })
}

// noFlush spares the kernel's FLUSH on every close of a read-only file.
const noFlush = fuse.FOPEN_NOFLUSH

// Flush only counts: with noFlush the kernel should not ask.
func (o *Output) Flush(ctx context.Context, fh gofs.FileHandle) syscall.Errno {
	o.m.fsys.n.Flushes.Add(1)
	return 0
}

// Read serves a handle, or without one what Output.Serve gives for the
// source version now, the whole request from it.
func (o *Output) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	f := o.m.fsys
	f.touch()
	return f.read(ctx, fh, dest, off, func() (fuse.ReadResult, syscall.Errno) {
		if off < 0 {
			return nil, syscall.EINVAL
		}
		_, fp, err := o.m.stat()
		if err != nil {
			return nil, outErrno(err)
		}
		data, raw, err := o.Serve(ctx, fp)
		if err != nil {
			return nil, outErrno(err)
		} else if raw == nil {
			return memAt(data, dest, off)
		}
		// A raw chunk: its window of the version whose chunk table placed it.
		k := srcfd.Key{Path: o.m.src.Path(), ID: fp.Ident}
		return f.readWindow(k, func(st *syscall.Stat_t) bool { return source.FromStat(st).Same(k.ID) }, dest, off, raw.Offset, raw.Length)
	})
}

// hooks is the mount's side of what the store finds (store.Events).
type hooks struct{ f *FS }

// Broken tells the kernel that path's folder changed shape (a conversion
// failed): error.txt in, the geometry outputs out, header.json carrying the
// error. The listing is dropped before returning, so that the reader who
// saw the failure sees error.txt next, beside the request (watch.go);
// the names' entries after it (NotifyEntry locks the folder a LOOKUP holds).
func (h hooks) Broken(path string) {
	f := h.f
	live := f.meshAt(path)
	if live == nil {
		return
	}
	beside(func() { f.notifyContent(&live.Inode) }, func() {
		if hdr := live.GetChild(outputs.HeaderName); hdr != nil {
			f.notifyContent(hdr)
		}
		for _, e := range live.src.Outputs().Entries() {
			if e.ChangedByFailure() {
				f.n.Notifications.Add(1)
				live.NotifyEntry(e.Name)
			}
		}
	})
}

// meshAt is the mesh folder node the kernel knows for the source file at
// path (not the pre-warmer's), or nil.
func (f *FS) meshAt(path string) *meshDir {
	rel, err := filepath.Rel(f.source, path)
	if err != nil || !filepath.IsLocal(rel) {
		return nil
	}
	n := &f.root.Inode
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		if n = n.GetChild(name); n == nil {
			return nil
		}
	}
	m, _ := opsOf[*meshDir](n)
	return m
}

// DepsFound has the tree record that mesh's outputs are made from deps
// (vfs.FS.DepsFound); changed, the kernel drops the attributes of the
// folder's files, whose permissions other files narrow now (from another
// goroutine: the notification may wait for the request this runs in).
func (h hooks) DepsFound(mesh string, deps source.Set, changed bool) {
	f := h.f
	f.tree.DepsFound(mesh, deps, changed, func() { f.n.WatchErrors.Add(1) })
	if !changed {
		return
	}
	if d, ok := f.dirs.At(filepath.Dir(mesh)); ok {
		if n := d.GetChild(filepath.Base(mesh)); n != nil {
			go func() {
				f.notifyContent(n)
				for _, ch := range n.Children() {
					f.notifyContent(ch)
				}
			}()
		}
	}
}
