package fs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/srcfd"
	"github.com/meshfs/meshfs/internal/srcfile"
	"github.com/meshfs/meshfs/internal/version"
	"github.com/meshfs/meshfs/internal/walk"
)

// statsDirName is the hidden folder at the root holding stats.json. It is
// found by name only and never listed.
const statsDirName = ".meshfs"

// srcID is what a node mirrors: the kind of node and the source file's
// identity. A lookup reuses the existing node only when both still match, so
// a file replaced by another (or turned from plain file into mesh) gets a
// fresh node and the kernel a fresh inode.
type srcID struct {
	kind uint32 // S_IFDIR, S_IFREG, S_IFLNK, or kindMesh
	version.File
}

const kindMesh = 1

// kindPNG is the srcID kind of a texture's PNG (texpng.go).
const kindPNG = 2

type sourced interface{ id() srcID }

// roNode answers every modifying operation with EROFS. The mount is also
// read-only in the kernel ("ro"), which normally answers first.
type roNode struct{ gofs.Inode }

var (
	_ = (gofs.NodeSetattrer)((*roNode)(nil))
	_ = (gofs.NodeSetxattrer)((*roNode)(nil))
	_ = (gofs.NodeRemovexattrer)((*roNode)(nil))
)

func (*roNode) Setattr(context.Context, gofs.FileHandle, *fuse.SetAttrIn, *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}
func (*roNode) Setxattr(context.Context, string, []byte, uint32) syscall.Errno { return syscall.EROFS }
func (*roNode) Removexattr(context.Context, string) syscall.Errno              { return syscall.EROFS }

// roDir adds the directory-modifying operations.
type roDir struct{ roNode }

var (
	_ = (gofs.NodeMkdirer)((*roDir)(nil))
	_ = (gofs.NodeMknoder)((*roDir)(nil))
	_ = (gofs.NodeCreater)((*roDir)(nil))
	_ = (gofs.NodeUnlinker)((*roDir)(nil))
	_ = (gofs.NodeRmdirer)((*roDir)(nil))
	_ = (gofs.NodeRenamer)((*roDir)(nil))
	_ = (gofs.NodeSymlinker)((*roDir)(nil))
	_ = (gofs.NodeLinker)((*roDir)(nil))
)

func (*roDir) Mkdir(context.Context, string, uint32, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}
func (*roDir) Mknod(context.Context, string, uint32, uint32, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}
func (*roDir) Create(context.Context, string, uint32, uint32, *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EROFS
}
func (*roDir) Unlink(context.Context, string) syscall.Errno { return syscall.EROFS }
func (*roDir) Rmdir(context.Context, string) syscall.Errno  { return syscall.EROFS }
func (*roDir) Rename(context.Context, string, gofs.InodeEmbedder, string, uint32) syscall.Errno {
	return syscall.EROFS
}
func (*roDir) Symlink(context.Context, string, string, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}
func (*roDir) Link(context.Context, gofs.InodeEmbedder, string, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

// readOnlyMode strips write bits (and, for files, execute bits) from a
// source mode: the mount never offers what it cannot do.
func readOnlyMode(perm uint32, dir bool) uint32 {
	perm &= 0o777 &^ 0o222
	if dir {
		// A folder made from a file is searchable wherever it is readable.
		perm |= (perm & 0o444) >> 2
	} else {
		perm &^= 0o111
	}
	return perm
}

// fillDirAttr describes a source folder or a mesh folder made from the
// source file st.
func fillDirAttr(a *fuse.Attr, st *syscall.Stat_t) {
	a.FromStat(st)
	a.Mode = syscall.S_IFDIR | readOnlyMode(st.Mode, true)
	a.Size = 0
	a.Blocks = 0
	a.Nlink = 2
}

// fillFileAttr describes a file of size bytes derived from source st (its
// owner and times).
func fillFileAttr(a *fuse.Attr, st *syscall.Stat_t, size int64) {
	a.FromStat(st)
	a.Mode = syscall.S_IFREG | readOnlyMode(st.Mode, false)
	a.Size = uint64(size)
	a.Nlink = 1
	a.Blksize = 4096
	a.Blocks = (uint64(size) + 511) / 512
}

// dirNode mirrors one source folder.
type dirNode struct {
	roDir
	fsys    *FS
	abs     string
	ident   srcID
	watched atomic.Bool
	// unwatched is set when watching this folder failed (see shortTTL).
	unwatched atomic.Bool
	// changes counts the changes the watcher reported here (any name):
	// a mesh's stat is reused only within one count (meshDir.sourceStat).
	changes atomic.Uint64
	// listed is the stats of the last listing's entries, which the
	// READDIRPLUS lookups that follow it reuse (see statReuse).
	listed atomic.Pointer[listedStats]
	// scanningAhead is set while a pass scans this folder's meshes ahead
	// of a walker (ahead.go).
	scanningAhead atomic.Bool
	// listedAhead is set by the first listing, which starts a pass that
	// sniffs the folders after this one (ahead.go); subdirs is the
	// last listing's source folders, in its order.
	listedAhead atomic.Bool
	subdirs     atomic.Pointer[walk.FolderOrder]
}

var (
	_ = (gofs.NodeLookuper)((*dirNode)(nil))
	_ = (gofs.NodeReaddirer)((*dirNode)(nil))
	_ = (gofs.NodeGetattrer)((*dirNode)(nil))
	_ = (gofs.NodeStatfser)((*dirNode)(nil))
)

func (d *dirNode) id() srcID { return d.ident }

func (d *dirNode) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	var st syscall.Stat_t
	if err := syscall.Stat(d.abs, &st); err != nil {
		return gofs.ToErrno(err)
	}
	fillDirAttr(&out.Attr, &st)
	d.fsys.shortTTL(parentDir(&d.Inode), nil, out)
	return 0
}

// parentDir is the source folder node n was looked up in (nil for the
// root or a node already forgotten by its parent).
func parentDir(n *gofs.Inode) *dirNode {
	_, p := n.Parent()
	if p == nil {
		return nil
	}
	d, _ := p.Operations().(*dirNode)
	return d
}

func (d *dirNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	var s syscall.Statfs_t
	if err := syscall.Statfs(d.fsys.source, &s); err != nil {
		return gofs.ToErrno(err)
	}
	out.FromStatfsT(&s)
	// Nothing can be written here.
	out.Bfree, out.Bavail, out.Ffree = 0, 0, 0
	return 0
}

// entryKind decides what the source entry name (stat st) shows as: a folder,
// a plain file, a symlink, a mesh folder (with its format), or nothing
// (hidden companions, sockets, devices). known is false when a regular
// file could not be sniffed (shown as a plain file for now).
func (d *dirNode) entryKind(name string, st *syscall.Stat_t, siblings func(string) bool) (kind uint32, f decode.Format, known bool) {
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return syscall.S_IFDIR, nil, true
	case syscall.S_IFLNK:
		return syscall.S_IFLNK, nil, true
	case syscall.S_IFREG:
		if formats.IsCompanion(name, siblings) {
			return 0, nil, true
		}
		f, known := d.sniff(name, st)
		if f != nil {
			return kindMesh, f, known
		}
		return syscall.S_IFREG, nil, known
	}
	return 0, nil, true
}

// sniff returns the format of the regular file name (stat st) in d, or nil,
// and whether that is known: the last listing's answer for the same version
// of the file, else the file system's (walk.Sniffer). The listing keeps the
// answers of all its entries, however many: relisting a folder bigger than
// the sniff cache sniffs only what changed.
func (d *dirNode) sniff(name string, st *syscall.Stat_t) (decode.Format, bool) {
	if l := d.listed.Load(); l != nil {
		if fm, ok := l.formats[name]; ok {
			if ps := l.st[name]; ps != nil && version.FromStat(ps).Same(version.FromStat(st)) {
				return fm, true
			}
		}
	}
	fm, _, known := d.fsys.sniffer.Sniff(filepath.Join(d.abs, name), st)
	return fm, known
}

// sniff returns the format of the source file at path, or nil.
func (f *FS) sniff(path string, st *syscall.Stat_t) decode.Format {
	fm, _, _ := f.sniffer.Sniff(path, st)
	return fm
}

// listedStats are a listing's entry stats, taken from nanotime at while the
// folder's change count was gen, and the formats (nil: none) of its
// regular files whose sniff is known, for the next listing (dirNode.sniff).
type listedStats struct {
	at      int64
	gen     uint64
	st      map[string]*syscall.Stat_t
	formats map[string]decode.Format
}

// lstat is Lstat of the entry name, or its stat from a listing made within
// statReuse while the folder is watched and saw no change since (the
// lookups of a READDIRPLUS follow its listing at once).
func (d *dirNode) lstat(name string, st *syscall.Stat_t, gen uint64, now int64) error {
	if d.watched.Load() && !d.unwatched.Load() {
		if l := d.listed.Load(); l != nil && l.gen == gen && now-l.at >= 0 && now-l.at < int64(statReuse) {
			if s := l.st[name]; s != nil {
				*st = *s
				return nil
			}
		}
	}
	return syscall.Lstat(filepath.Join(d.abs, name), st)
}

func (d *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	d.fsys.touch()
	d.fsys.watchDir(d)
	if d.IsRoot() && name == statsDirName {
		return d.lookupStats(ctx, out)
	}
	p := filepath.Join(d.abs, name)
	gen, now := d.changes.Load(), time.Now().UnixNano()
	var st syscall.Stat_t
	if err := d.lstat(name, &st, gen, now); err != nil {
		if src := pngSource(name); src != "" && errors.Is(err, syscall.ENOENT) {
			return d.lookupPNG(ctx, name, src, out)
		}
		return nil, gofs.ToErrno(err)
	}
	kind, format, _ := d.entryKind(name, &st, formats.InFolder(d.abs))
	if kind == 0 {
		return nil, syscall.ENOENT
	}
	id := srcID{kind: kind, File: version.FromStat(&st).File}
	var node gofs.InodeEmbedder
	var mode uint32
	switch kind {
	case syscall.S_IFDIR:
		fillDirAttr(&out.Attr, &st)
		node, mode = &dirNode{fsys: d.fsys, abs: p, ident: id}, syscall.S_IFDIR
	case kindMesh:
		md := d.newMeshDir(name, &st, format)
		narrowAccess(md.mesh, &st, d.fsys.depPaths(p))
		fillDirAttr(&out.Attr, &st)
		// A regular file (a mesh is never a link): this Lstat is the Stat
		// the listing and lookups that follow need.
		md.remember(&st, gen, now)
		node, mode = md, syscall.S_IFDIR
	case syscall.S_IFLNK:
		out.Attr.FromStat(&st)
		node, mode = &linkNode{fsys: d.fsys, abs: p, ident: id}, syscall.S_IFLNK
	default:
		out.Attr.FromStat(&st)
		out.Attr.Mode = syscall.S_IFREG | readOnlyMode(st.Mode, false)
		node, mode = &passFile{fsys: d.fsys, abs: p, ident: id}, syscall.S_IFREG
	}
	d.fsys.shortTTL(d, out, nil)
	if ch := d.GetChild(name); ch != nil {
		if s, ok := ch.Operations().(sourced); ok && s.id() == id {
			switch n := ch.Operations().(type) {
			case *dirNode:
				d.fsys.watchDir(n)
			case *meshDir:
				n.remember(&st, gen, now)
			}
			return ch, 0
		}
	}
	ch := d.NewInode(ctx, node, gofs.StableAttr{Mode: mode})
	if dn, ok := node.(*dirNode); ok {
		d.fsys.watchDir(dn)
	}
	return ch, 0
}

func (d *dirNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	d.fsys.touch()
	// After this listing (its own sniffs first): the next folders'.
	defer d.fsys.listAhead(d)
	d.fsys.watchDir(d)
	f, err := srcfile.OpenFolder(d.abs)
	if err != nil {
		return nil, errno(err)
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil && len(ents) == 0 {
		return nil, gofs.ToErrno(err)
	}
	names := make(map[string]bool, len(ents))
	for _, e := range ents {
		names[e.Name()] = true
	}
	siblings := func(n string) bool { return names[n] }
	// What each entry shows as needs its stat and, for a file not seen
	// before, a sniff: an open and a read of its first bytes, from the
	// disk when the walk is cold. Done one after the other they made the
	// first listing of a folder of 100 meshes take about 8 ms; several at
	// once keep the disk's queue busy instead (sniffs are cached, so a
	// warm listing only stats).
	kinds := make([]fuse.DirEntry, len(ents))
	stats := make([]syscall.Stat_t, len(ents))
	fmts := make([]decode.Format, len(ents))
	known := make([]bool, len(ents))
	gen, now := d.changes.Load(), time.Now().UnixNano()
	entry := func(i int) {
		name := ents[i].Name()
		st := &stats[i]
		if err := syscall.Lstat(filepath.Join(d.abs, name), st); err != nil {
			return // gone since the listing: kind 0, left out
		}
		kind, fm, ok := d.entryKind(name, st, siblings)
		if kind == kindMesh || kind == syscall.S_IFREG {
			fmts[i], known[i] = fm, ok
		}
		if kind == kindMesh {
			kind = syscall.S_IFDIR
		}
		kinds[i] = fuse.DirEntry{Name: name, Mode: kind, Ino: st.Ino}
	}
	decode.ForEach(len(ents), min(listWorkers, len(ents)/walk.PerWorker), entry)
	list := kinds[:0]
	listed := &listedStats{at: now, gen: gen, st: make(map[string]*syscall.Stat_t, len(ents)),
		formats: map[string]decode.Format{}}
	var subdirs *walk.FolderOrder
	var pngs []fuse.DirEntry // texture PNGs (texpng.go)
	for i, e := range kinds {
		if e.Mode != 0 {
			list = append(list, e)
			listed.st[e.Name] = &stats[i]
			if known[i] {
				listed.formats[e.Name] = fmts[i]
			}
			if stats[i].Mode&syscall.S_IFMT == syscall.S_IFDIR {
				subdirs = subdirs.Add(e.Name)
			}
			if e.Mode == syscall.S_IFREG && outputs.ShowsPNG(e.Name) && !names[e.Name+outputs.PNGSuffix] {
				pngs = append(pngs, fuse.DirEntry{Name: e.Name + outputs.PNGSuffix, Mode: syscall.S_IFREG})
			}
		}
	}
	list = append(list, pngs...) // after the loop: list shares kinds' array
	d.listed.Store(listed)
	d.subdirs.Store(subdirs)
	return gofs.NewListDirStream(list), 0
}

// A source folder's entries are sized up by up to listWorkers goroutines,
// one per walk.PerWorker entries.
const listWorkers = 8

// linkNode mirrors a symbolic link as it is.
type linkNode struct {
	roNode
	fsys  *FS
	abs   string
	ident srcID
}

var (
	_ = (gofs.NodeReadlinker)((*linkNode)(nil))
	_ = (gofs.NodeGetattrer)((*linkNode)(nil))
)

func (l *linkNode) id() srcID { return l.ident }

func (l *linkNode) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	t, err := os.Readlink(l.abs)
	if err != nil {
		return nil, gofs.ToErrno(err)
	}
	return []byte(t), 0
}

func (l *linkNode) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	var st syscall.Stat_t
	if err := syscall.Lstat(l.abs, &st); err != nil {
		return gofs.ToErrno(err)
	}
	out.Attr.FromStat(&st)
	l.fsys.shortTTL(parentDir(&l.Inode), nil, out)
	return 0
}

// passFile is a source file that is not a mesh: read from the source on
// demand, never copied into memory.
type passFile struct {
	roNode
	fsys  *FS
	abs   string
	ident srcID
}

var (
	_ = (gofs.NodeOpener)((*passFile)(nil))
	_ = (gofs.NodeGetattrer)((*passFile)(nil))
	_ = (gofs.NodeReader)((*passFile)(nil))
)

func (p *passFile) id() srcID { return p.ident }

// same reports whether st is the file this node was looked up as.
func (p *passFile) same(st *syscall.Stat_t) bool {
	return version.FromStat(st).File == p.ident.File
}

func (p *passFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	var st syscall.Stat_t
	var err error
	if h, ok := fh.(*fdHandle); ok {
		err = syscall.Fstat(int(h.f.Fd()), &st)
	} else if h, ok := fh.(*passHandle); ok {
		err = syscall.Fstat(int(h.f.Fd()), &st)
	} else {
		err = syscall.Lstat(p.abs, &st)
		if err == nil && !p.same(&st) {
			// Replaced: see meshDir.stat.
			return syscall.ESTALE
		}
	}
	if err != nil {
		return gofs.ToErrno(err)
	}
	out.Attr.FromStat(&st)
	out.Attr.Mode = syscall.S_IFREG | readOnlyMode(st.Mode, false)
	p.fsys.shortTTL(parentDir(&p.Inode), nil, out)
	return 0
}

func (p *passFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if flags&writeFlags != 0 {
		return nil, 0, syscall.EROFS
	}
	f, err := srcfile.Open(p.abs)
	if err != nil {
		return nil, 0, errno(err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil || !p.same(&st) {
		// Replaced since the lookup: this inode is the old file's, whose
		// readers may hold its size (see meshDir.stat). ESTALE makes the
		// kernel look the name up again.
		f.Close()
		return nil, 0, syscall.ESTALE
	}
	if p.fsys.passthroughWanted() {
		// The kernel reads the source itself: plain files as fast as
		// outside the mount.
		return p.fsys.passthroughHandle(nil, version.Version{}, f, -1, nil, func() { f.Close() }), noFlush, 0
	}
	p.fsys.openHandles.Add(1)
	// No FOPEN_KEEP_CACHE: the kernel drops this file's pages on each open,
	// as for any file whose contents we do not control.
	return &fdHandle{fsys: p.fsys, f: f, length: -1}, noFlush, 0
}

func (p *passFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if h, ok := fh.(*passHandle); ok {
		return h.Read(ctx, dest, off)
	}
	h, ok := fh.(*fdHandle)
	if !ok {
		if fh == nil && p.fsys.noOpen() {
			// no_open: read the source itself, if it is still the file
			// this node was looked up as.
			k := srcfd.Key{Path: p.abs, ID: version.Ident{File: p.ident.File}}
			return p.fsys.readWindow(k, p.same, dest, off, 0, -1)
		}
		return nil, syscall.EBADF
	}
	return h.Read(ctx, dest, off)
}

// fdHandle reads a window of an open source file: the whole file for a pass-
// through file, [base, base+length) for a raw chunk.
type fdHandle struct {
	fsys   *FS
	st     *syscall.Stat_t // the source's stat at open (outputs only)
	f      *os.File
	base   int64
	length int64 // -1: to the end of the file
	closed atomic.Bool
}

var (
	_ = (gofs.FileReader)((*fdHandle)(nil))
	_ = (gofs.FileReleaser)((*fdHandle)(nil))
)

func (h *fdHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off < 0 {
		return nil, syscall.EINVAL
	}
	n := int64(len(dest))
	if h.length >= 0 {
		if off >= h.length {
			return memResult(nil), 0
		}
		n = min(n, h.length-off)
	}
	return fdResult(int(h.f.Fd()), h.base+off, int(n), dest)
}

func (h *fdHandle) Release(ctx context.Context) syscall.Errno {
	if h.closed.CompareAndSwap(false, true) {
		h.fsys.openHandles.Add(-1)
		h.f.Close()
	}
	return 0
}

// bytesHandle serves bytes held in memory (a converted output).
type bytesHandle struct {
	fsys     *FS
	st       *syscall.Stat_t // the source's stat when the bytes were made
	data     []byte
	released atomic.Bool
	// done, if set, is called once on release (kernelview.Passthrough.Fallback).
	done func()
}

var (
	_ = (gofs.FileReader)((*bytesHandle)(nil))
	_ = (gofs.FileReleaser)((*bytesHandle)(nil))
)

func (h *bytesHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off < 0 {
		return nil, syscall.EINVAL
	}
	if off >= int64(len(h.data)) {
		return memResult(nil), 0
	}
	end := min(off+int64(len(dest)), int64(len(h.data)))
	return memResult(h.data[off:end]), 0
}

func (h *bytesHandle) Release(ctx context.Context) syscall.Errno {
	if h.released.CompareAndSwap(false, true) {
		h.fsys.openHandles.Add(-1)
		if h.done != nil {
			h.done()
		}
	}
	return 0
}
