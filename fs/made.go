package fs

import (
	"context"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/internal/source"
	meshstats "github.com/meshfs/meshfs/internal/store/stats"
	"github.com/meshfs/meshfs/vfs"
)

// madeFile is a source folder's file made whole in memory (vfs.FS.Made):
// a texture's NAME.EXT.png as the texture is at each request, or an error
// text fixed at lookup (an archive's error.txt, a texture's
// NAME.EXT.error.txt), read as under no_open in either mode.
type madeFile struct {
	srcNode
	e    vfs.SourceEntry
	view kernelView // the PNG whose size the kernel was told (Retell)
}

var (
	_ = (gofs.NodeGetattrer)((*madeFile)(nil))
	_ = (gofs.NodeOpener)((*madeFile)(nil))
	_ = (gofs.NodeReader)((*madeFile)(nil))
)

// made fills a with the file as it is now and returns its bytes and version.
func (t *madeFile) made(ctx context.Context, a *fuse.Attr) ([]byte, source.Version, syscall.Errno) {
	b, st, v, err := t.fsys.tree.Made(ctx, &t.e)
	if err != nil {
		return nil, v, outErrno(err)
	}
	a.FromStat(vfs.FileStat(st, int64(len(b))))
	return b, v, 0
}

func (t *madeFile) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	_, v, e := t.made(ctx, &out.Attr)
	if e == 0 {
		t.view.Retell(v)
	}
	return e
}

func (t *madeFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if t.e.Kind == vfs.SourceText {
		return nil, noFlush, 0
	}
	t.fsys.touch()
	b, v, e := t.made(ctx, &fuse.Attr{})
	if e != 0 {
		return nil, 0, e
	}
	keep := t.view.Told().Same(v)
	t.view.Retell(v)
	return t.fsys.memHandle(b, nil, nil), keepFlags(keep), 0
}

// Read serves a handle's bytes, or without one (no_open) the bytes of the
// version whose size the kernel was told, never another's.
func (t *madeFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if t.e.Kind == vfs.SourceText {
		return memAt(t.e.Text, dest, off)
	}
	t.fsys.touch()
	return t.fsys.read(ctx, fh, dest, off, func() (fuse.ReadResult, syscall.Errno) {
		b, v, e := t.made(ctx, &fuse.Attr{})
		if e == 0 && !t.view.Told().Same(v) {
			e = syscall.ESTALE
		}
		if e != 0 {
			return nil, e
		}
		return memAt(b, dest, off)
	})
}

// lookup answers a LOOKUP of t in d. A PNG found to fail leaves its place
// to NAME.EXT.error.txt: the kernel's listing of d is dropped beside (the
// LOOKUP holds d) and again after notifyWait (a READDIRPLUS whose lookup
// this is replies with the old listing after it, which the kernel keeps).
func (t *madeFile) lookup(ctx context.Context, d *dirNode, a *fuse.Attr) syscall.Errno {
	_, v, e := t.made(ctx, a)
	if e != 0 {
		if t.fsys.tree.MadeFailed(&t.e) {
			drop := func() { t.fsys.notifyContent(&d.Inode) }
			beside(drop, func() {})
			time.AfterFunc(notifyWait, drop)
		}
		return e
	}
	t.view.Retell(v)
	return 0
}

// metaDir is .meshfs at the root (vfs.MetaName): found by name only, never
// listed.
type metaDir struct {
	gofs.Inode
	fsys *FS
}

var (
	_ = (gofs.NodeLookuper)((*metaDir)(nil))
	_ = (gofs.NodeReaddirer)((*metaDir)(nil))
	_ = (gofs.NodeGetattrer)((*metaDir)(nil))
)

func (d *dirNode) lookupMeta(ctx context.Context, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	st, err := d.fsys.tree.MetaStat(true, 0, time.Time{})
	if err != nil {
		return nil, gofs.ToErrno(err)
	}
	out.Attr.FromStat(st)
	if ch := d.GetChild(vfs.MetaName); ch != nil {
		if _, ok := ch.Operations().(*metaDir); ok {
			return ch, 0
		}
	}
	return d.NewInode(ctx, &metaDir{fsys: d.fsys}, gofs.StableAttr{Mode: syscall.S_IFDIR}), 0
}

func (s *metaDir) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	st, err := s.fsys.tree.MetaStat(true, 0, time.Time{})
	if err != nil {
		return gofs.ToErrno(err)
	}
	out.Attr.FromStat(st)
	return 0
}

func (s *metaDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	return gofs.NewListDirStream(dirEntries(vfs.MetaList())), 0
}

// Lookup answers with a fresh snapshot, its size and name never cached:
// every open by path asks LOOKUP (metaFile).
func (s *metaDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	render, ok := s.fsys.tree.MetaFile(name, s.fsys.counts)
	if !ok {
		return nil, syscall.ENOENT
	}
	out.SetAttrTimeout(uncachedAttr)
	out.SetEntryTimeout(uncachedAttr)
	ch := s.GetChild(name)
	if mf, ok := opsOf[*metaFile](ch); ok {
		mf.fill(&out.Attr, true) // the snapshot reads will serve
		return ch, 0
	}
	mf := &metaFile{fsys: s.fsys, snap: statsSnapshot{Render: render}}
	mf.fill(&out.Attr, true)
	return s.NewInode(ctx, mf, gofs.StableAttr{Mode: syscall.S_IFREG}), 0
}

// metaFile is stats.json or errors.txt: a fresh snapshot on every open,
// read with direct I/O (its size changes between snapshots). Under no_open
// a snapshot is taken at each LOOKUP and GETATTR and READ serve it: a
// reader sees one snapshot whole (every read asks GETATTR: the attributes
// are never cached either), and the next opener's new mtime makes the
// kernel drop the old pages (AUTO_INVAL_DATA).
type metaFile struct {
	gofs.Inode
	fsys *FS
	snap statsSnapshot
}

var (
	_ = (gofs.NodeOpener)((*metaFile)(nil))
	_ = (gofs.NodeGetattrer)((*metaFile)(nil))
	_ = (gofs.NodeReader)((*metaFile)(nil))
)

// fill describes the snapshot: a new one when fresh, else the last one.
func (s *metaFile) fill(a *fuse.Attr, fresh bool) {
	b, at := s.snap.Take(fresh)
	st, _ := s.fsys.tree.MetaStat(false, int64(len(b)), at)
	a.FromStat(st)
}

// Getattr: with handles every GETATTR is a new snapshot; under no_open,
// the LOOKUP's.
func (s *metaFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if h, ok := fh.(*handle); ok {
		s.fill(&out.Attr, false)
		out.Size = uint64(len(h.data))
		return 0
	}
	s.fill(&out.Attr, !s.fsys.noOpen())
	out.SetTimeout(uncachedAttr)
	return 0
}

func (s *metaFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	return s.fsys.memHandle(s.snap.Render(), nil, nil), fuse.FOPEN_DIRECT_IO, 0
}

func (s *metaFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return s.fsys.read(ctx, fh, dest, off, func() (fuse.ReadResult, syscall.Errno) { return memAt(s.snap.Last(), dest, off) })
}

// Stats is the contents of .meshfs/stats.json (meshstats.Stats).
type Stats = meshstats.Stats

// Stats returns the current statistics.
func (f *FS) Stats() Stats { return f.tree.Stats(f.counts()) }

// counts is what the mount counts of itself for stats.json.
func (f *FS) counts() meshstats.MountCounts {
	m := meshstats.MountCounts{Counts: &f.n, NoOpen: f.noOpen(), Passthrough: f.passthroughWanted()}
	if f.raw != nil {
		m.Requests, m.RequestMillis = f.raw.reqs.Counts(), f.raw.reqs.Millis()
	}
	return m
}
