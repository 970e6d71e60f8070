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
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/srcfd"
	"github.com/meshfs/meshfs/vfs"
)

// meshDir is a source mesh file shown as a folder of its outputs: the
// tree's folder (vfs.Mesh: what it holds, its stat and version), with what
// the kernel was told of it. Listing it and reading header.json or chunks/
// use the structure scan only; the geometry outputs are converted on their
// first stat or open. The same type is the folder's chunks/ (chunks set):
// the chunk table's entries, from the same scan.
type meshDir struct {
	srcNode
	parent *dirNode
	src    *vfs.Mesh
	chunks bool
}

// Listings are served from a handle made at open (dircache.go).
var (
	_ = (gofs.NodeLookuper)((*meshDir)(nil))
	_ = (gofs.NodeGetattrer)((*meshDir)(nil))
)

// stat returns the source's stat and version now (vfs.Mesh.Stat: ESTALE
// once replaced).
func (m *meshDir) stat() (*syscall.Stat_t, source.Version, error) { return m.src.Stat() }

func (m *meshDir) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	// No identity check (m.stat's ESTALE): a folder has no size to go
	// stale, and a reader holding the old folder open (grep -r, find)
	// fstats it and could not recover from ESTALE.
	st, err := m.src.SourceStat()
	if err != nil {
		return errno(err)
	}
	fillDirAttr(&out.Attr, st)
	m.fsys.shortTTL(m.parent, nil, out)
	return 0
}

// hooks is the mount's side of what the store finds (store.Events).
type hooks struct{ f *FS }

// Broken tells the kernel that the folder changed shape (a conversion
// just failed and its failure is cached): error.txt is in it, the geometry
// outputs are not, and header.json carries the error. The kernel may keep
// a listing of this folder made before (always, under no_opendir),
// entries for those names and header.json's size and pages. m may be a
// node the kernel never saw (the pre-warmer's): the node it knows under
// the mesh's name is notified, if any.
//
// The listing is dropped before returning, so that the reader who saw the
// failure sees error.txt when it lists next; its invalidation takes no lock
// a request here could hold (LOOKUP holds the folder's, READ a page of
// another inode) but, should one ever wait, the request goes on
// (beside). The names' entry invalidations lock the folder,
// which a LOOKUP in it holds: beside.
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
// path, or nil.
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
	m, _ := n.Operations().(*meshDir)
	return m
}

// listing is the folder's entries, whether they are final for this source
// version (store.Listing; chunks/: when it lists any), and what they were
// made from. A replaced source lists nothing (ESTALE).
func (m *meshDir) listing(ctx context.Context) ([]fuse.DirEntry, bool, *listedScan, syscall.Errno) {
	var files []outputs.Entry
	var l *vfs.Listed
	var warm, final bool
	var err error
	if m.chunks {
		files, l, err = m.src.Chunks(ctx)
		warm, final = true, len(files) > 0
	} else {
		files, l, warm, final, err = m.src.List(ctx)
	}
	if errors.Is(err, syscall.ESTALE) {
		return nil, false, nil, 0
	} else if err != nil {
		return nil, false, nil, errno(err)
	}
	if !warm {
		// A walker is probably entering this folder's siblings next.
		m.fsys.scanSiblings(m)
	}
	return dirEntries(files), final, &listedScan{Listed: l}, 0
}

// dirEntries lists files of the folder table.
func dirEntries(files []outputs.Entry) []fuse.DirEntry {
	list := make([]fuse.DirEntry, len(files))
	for i, e := range files {
		mode := uint32(syscall.S_IFREG)
		if e.Dir {
			mode = syscall.S_IFDIR
		}
		list[i] = fuse.DirEntry{Name: e.Name, Mode: mode, Ino: e.Ino}
	}
	return list
}

// listedScan is what a listing was made from (vfs.Listed). The
// READDIRPLUS lookups that follow the listing in the same request answer
// from it instead of stat'ing and looking the scan up again for every
// entry (chunks/ has one entry per chunk).
type listedScan struct {
	*vfs.Listed
	// header is header.json's node when the lookups answered it.
	header *gofs.Inode
}

// noNegative is the entry timeout of an ENOENT the kernel must not keep
// (go-fuse then answers the error itself, which the kernel never caches).
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

// lookupOutput sizes an output (converting it if need be, unless cheapOnly:
// then a geometry output whose size is not known yet answers notCheap) and
// returns its node, reusing the existing one; the errno is the folder's
// (replaced).
func lookupOutput(ctx context.Context, parent *gofs.Inode, name string, f *outFile, out *fuse.EntryOut, cheapOnly bool) (*gofs.Inode, syscall.Errno) {
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
		// Changed since the check above, or since the stat the folder
		// remembered (the watcher's event may not have come yet): a fresh
		// stat, and a node for this version.
		f.m.src.Forget()
		ch, f = nil, fresh
		e = f.getattr(ctx, &a, cheapOnly)
	}
	if e != 0 {
		return nil, replaced(e)
	}
	out.Attr = a.Attr
	if ch != nil {
		return ch, 0
	}
	return parent.NewInode(ctx, f, gofs.StableAttr{Mode: syscall.S_IFREG}), 0
}

// outputChild returns parent's existing output node called name and its
// outFile, or (nil, f) when there is none.
func outputChild(parent *gofs.Inode, name string, f *outFile) (*gofs.Inode, *outFile) {
	if ch := parent.GetChild(name); ch != nil {
		if of, ok := ch.Operations().(*outFile); ok {
			return ch, of
		}
	}
	return nil, f
}

// lookupKnown is lookupOutput for an output other than the .glb whose
// size the caller knows for source version fp (stat st).
func lookupKnown(ctx context.Context, parent *gofs.Inode, name string, f *outFile, out *fuse.EntryOut, st *syscall.Stat_t, fp source.Version, size int64) *gofs.Inode {
	defer f.m.fsys.shortTTL(f.m.parent, out, nil)
	fresh := f
	ch, f := outputChild(parent, name, f)
	fillFileAttr(&out.Attr, st, size)
	if !f.View.Tell(fp) {
		// The node stands for another version of the source.
		ch, f = nil, fresh
		f.View.Tell(fp)
	}
	if ch != nil {
		return ch
	}
	return parent.NewInode(ctx, f, gofs.StableAttr{Mode: syscall.S_IFREG})
}

// chunksNode answers a lookup of chunks/ (stat st of the source): its
// node, reused.
func (m *meshDir) chunksNode(ctx context.Context, st *syscall.Stat_t, out *fuse.EntryOut) *gofs.Inode {
	fillDirAttr(&out.Attr, st)
	m.fsys.shortTTL(m.parent, out, nil)
	if ch := m.GetChild(outputs.ChunksDir); ch != nil {
		return ch
	}
	c := &meshDir{srcNode: srcNode{fsys: m.fsys, ident: m.ident}, parent: m.parent, src: m.src, chunks: true}
	return m.NewInode(ctx, c, gofs.StableAttr{Mode: syscall.S_IFDIR})
}

// outFile is one output file of a mesh (Output).
type outFile struct {
	gofs.Inode
	m *meshDir
	*Output
}

var (
	_ = (gofs.NodeOpener)((*outFile)(nil))
	_ = (gofs.NodeGetattrer)((*outFile)(nil))
	_ = (gofs.NodeReader)((*outFile)(nil))
)

// out is a new node for one output of m: its entry in the folder table
// (none for header.json's answer from a listing, and chunks), or a chunk's
// name.
func (m *meshDir) out(ent outputs.Entry, chunk string) *outFile {
	return &outFile{m: m, Output: NewOutput(m.fsys.st, m.src.Outputs(), ent, chunk, m.fsys.noOpen())}
}

func (o *outFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	defer o.m.fsys.shortTTL(o.m.parent, nil, out)
	if h, ok := fh.(servedHandle); ok {
		st, size := h.served()
		fillFileAttr(&out.Attr, st, size)
		return 0
	}
	return o.getattr(ctx, out, false)
}

// servedHandle is an open output: the source's stat and the size it serves.
type servedHandle interface {
	served() (*syscall.Stat_t, int64)
}

func (h *bytesHandle) served() (*syscall.Stat_t, int64) { return h.st, int64(len(h.data)) }
func (h *fdHandle) served() (*syscall.Stat_t, int64)    { return h.st, h.length }

// getattr sizes the output without a handle (Output.Size); with
// cheapOnly, converting nothing (notCheap instead: plainLookup).
func (o *outFile) getattr(ctx context.Context, out *fuse.AttrOut, cheapOnly bool) syscall.Errno {
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
	fillFileAttr(&out.Attr, st, size)
	return 0
}

func (o *outFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	o.m.fsys.touch()
	ptNode := o.IsGLB() && o.m.fsys.passthroughWanted() && o.m.fsys.cfg.Store.DiskCache != nil
	if ptNode {
		if fh, fp, ok := o.openPassthrough(ctx); ok {
			o.opened(fp)
			return fh, noFlush, 0
		}
	}
	st, fp, err := o.m.stat()
	if err != nil {
		return nil, 0, outErrno(err)
	}
	data, raw, err := o.Content(ctx, fp)
	if err != nil {
		return nil, 0, outErrno(err)
	}
	var done func()
	if ptNode {
		// Not passed through: see passState for why the io mode matters.
		var stale bool
		if stale, done = o.Pass.Fallback(fp); stale {
			return nil, 0, syscall.ESTALE
		}
	}
	var fh gofs.FileHandle = &bytesHandle{fsys: o.m.fsys, data: data, st: st, done: done}
	if raw != nil {
		// Replaced between the scan and the open: its chunk table is not
		// this file's. ESTALE makes the kernel walk the path again (EAGAIN
		// reached the reader); that open sees the new version.
		f, err := o.m.src.OpenRaw(fp)
		if err != nil {
			return nil, 0, errno(err)
		}
		fh = &fdHandle{fsys: o.m.fsys, f: f, base: raw.Offset, length: raw.Length, st: st}
	}
	o.m.fsys.n.OpenHandles.Add(1)
	return fh, keepFlags(o.opened(fp)), 0
}

// keepFlags are the open flags of an output: FOPEN_KEEP_CACHE when the
// kernel's pages are of the version opened (warm reads never reach the
// daemon), else none, so the kernel drops the pages of another version.
func keepFlags(keep bool) uint32 {
	if keep {
		return fuse.FOPEN_KEEP_CACHE | noFlush
	}
	return noFlush
}

// opened records that an open serves version fp and reports whether the
// kernel's pages of the file are of that version (so may be kept).
// The kernel may still hold the old size; it must not cut or pad the new
// bytes by it, so the view drops it.
func (o *outFile) opened(fp source.Version) (keep bool) {
	return o.View.Opened(fp, func() { o.m.fsys.notifyContent(&o.Inode) })
}

// openPassthrough opens the .glb on its disk-cache file for the kernel's
// passthrough (store.PassFile). ok is false when this open must be served
// by the daemon: no such file, or another version passed through and
// still open.
func (o *outFile) openPassthrough(ctx context.Context) (fh gofs.FileHandle, fp source.Version, ok bool) {
	st, fp, err := o.m.stat()
	if err != nil {
		return nil, fp, false
	}
	h, size, ok := o.m.fsys.st.PassFile(ctx, o.m.src.Outputs(), fp)
	if !ok {
		return nil, fp, false
	}
	fh = o.m.fsys.passthroughHandle(&o.Pass, fp, h.File, size, st, func() { h.Close() })
	return fh, fp, fh != nil
}

// noFlush spares the kernel's FLUSH on every close of a read-only file (a
// round trip per file grep reads; nothing here has anything to flush).
const noFlush = fuse.FOPEN_NOFLUSH

var _ = (gofs.NodeFlusher)((*outFile)(nil))

// Flush only counts: with noFlush the kernel should not ask.
func (o *outFile) Flush(ctx context.Context, fh gofs.FileHandle) syscall.Errno {
	o.m.fsys.n.Flushes.Add(1)
	return 0
}

func (o *outFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	o.m.fsys.touch()
	return o.m.fsys.read(ctx, fh, dest, off, func() (fuse.ReadResult, syscall.Errno) { return o.readNoHandle(ctx, dest, off) })
}

// readNoHandle serves a READ without a handle (no_open): the bytes
// Output.Serve gives for the source version of this moment, the whole
// request from that one version.
func (o *outFile) readNoHandle(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
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
	}
	if raw == nil {
		return memAt(data, dest, off)
	}
	// A raw chunk: read its window of the source, checking that the file
	// opened is the version whose chunk table says where the window is.
	k := srcfd.Key{Path: o.m.src.Path(), ID: fp.Ident}
	return o.m.fsys.readWindow(k, func(st *syscall.Stat_t) bool {
		return source.FromStat(st).Same(k.ID)
	}, dest, off, raw.Offset, raw.Length)
}

// Dependencies: the files besides its own a mesh's outputs read, which
// the tree keeps (source.Tracker); the kernel forgets what it holds of
// every mesh whose set names a changed path.

// DepsFound records that mesh's outputs are made from deps (which the
// tracker was told; changed: not the last scan's), watching their folders.
func (h hooks) DepsFound(mesh string, deps source.Set, changed bool) {
	f := h.f
	f.tree.DepsFound(mesh, deps, changed, func() { f.n.WatchErrors.Add(1) })
	if !changed {
		return
	}
	// Its permissions are narrowed by other files now: the kernel may hold
	// attributes of the folder's files from before: drop them (from
	// another goroutine: this runs within a request, which the kernel's
	// notification may wait for).
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
