package fs

import (
	"context"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/internal/requests"
	"github.com/meshfs/meshfs/internal/source"
	meshstats "github.com/meshfs/meshfs/internal/store/stats"
	"github.com/meshfs/meshfs/vfs"
)

// madeFile is a file made whole in memory: a texture's PNG as the texture
// is at each request (vfs.FS.Made), an error text fixed at lookup (read as
// under no_open in either mode), or a file of .meshfs (snap): rendered anew
// at each LOOKUP and open, read with direct I/O; under no_open GETATTR and
// READ serve the LOOKUP's snapshot (its mtime drops the old pages).
type madeFile struct {
	srcNode
	e    vfs.SourceEntry
	snap *requests.Snapshot // stats.json's or errors.txt's rendering
	view kernelView         // the version whose size the kernel was told (Retell)
}

var (
	_ = (gofs.NodeGetattrer)((*madeFile)(nil))
	_ = (gofs.NodeOpener)((*madeFile)(nil))
	_ = (gofs.NodeReader)((*madeFile)(nil))
)

// made fills a with the file now (a snapshot: new when fresh), its bytes
// and version.
func (t *madeFile) made(ctx context.Context, a *fuse.Attr, fresh bool) ([]byte, source.Version, syscall.Errno) {
	if t.snap != nil {
		b, at := t.snap.Take(fresh)
		st, _ := t.fsys.tree.MetaStat(false, int64(len(b)), at)
		a.FromStat(st)
		return b, source.Version{Ident: source.Ident{MtimeNs: at.UnixNano()}}, 0
	}
	b, st, v, err := t.fsys.tree.Made(ctx, &t.e)
	if err != nil {
		return nil, v, outErrno(err)
	}
	a.FromStat(vfs.FileStat(st, int64(len(b))))
	return b, v, 0
}

func (t *madeFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	h, open := fh.(*handle)
	_, v, e := t.made(ctx, &out.Attr, !open && !t.fsys.noOpen())
	if e != 0 {
		return e
	}
	t.view.Retell(v)
	if open && t.snap != nil {
		out.Size = uint64(len(h.data))
	} else if t.snap != nil {
		out.SetTimeout(uncachedAttr)
	}
	return 0
}

func (t *madeFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if t.e.Kind == vfs.SourceText {
		return nil, noFlush, 0
	}
	t.touch()
	b, v, e := t.made(ctx, &fuse.Attr{}, true)
	if e != 0 {
		return nil, 0, e
	}
	fl := keepFlags(t.view.Told().Same(v))
	if t.snap != nil {
		fl = fuse.FOPEN_DIRECT_IO
	}
	t.view.Retell(v)
	return t.fsys.memHandle(b, nil, nil), fl, 0
}

// touch counts a PNG's request as a reader's (not .meshfs's).
func (t *madeFile) touch() {
	if t.snap == nil {
		t.fsys.touch()
	}
}

// Read serves a handle, or without one the version told, never another.
func (t *madeFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if t.e.Kind == vfs.SourceText {
		return memAt(t.e.Text, dest, off)
	}
	t.touch()
	return t.fsys.read(ctx, fh, dest, off, func() (fuse.ReadResult, syscall.Errno) {
		b, v, e := t.made(ctx, &fuse.Attr{}, false)
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
// to NAME.EXT.error.txt: d's listing is dropped beside and again after
// notifyWait (a READDIRPLUS replies with the old listing after this).
func (t *madeFile) lookup(ctx context.Context, d *dirNode, a *fuse.Attr) syscall.Errno {
	_, v, e := t.made(ctx, a, true)
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

// metaDir is .meshfs at the root (vfs.MetaName), never listed.
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
	return reuse[*metaDir](ctx, &d.Inode, vfs.MetaName, nil, func() (gofs.InodeEmbedder, uint32) { return &metaDir{fsys: d.fsys}, syscall.S_IFDIR }), 0
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

// Lookup answers with a fresh snapshot, its name and size never cached.
func (s *metaDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	render, ok := s.fsys.tree.MetaFile(name, s.fsys.counts)
	if !ok {
		return nil, syscall.ENOENT
	}
	out.SetAttrTimeout(uncachedAttr)
	out.SetEntryTimeout(uncachedAttr)
	ch := reuse[*madeFile](ctx, &s.Inode, name, nil, func() (gofs.InodeEmbedder, uint32) {
		return &madeFile{srcNode: srcNode{fsys: s.fsys}, snap: &requests.Snapshot{Render: render}}, syscall.S_IFREG
	})
	ch.Operations().(*madeFile).lookup(ctx, nil, &out.Attr)
	return ch, 0
}

// Stats is the contents of .meshfs/stats.json (meshstats.Stats).
type Stats = meshstats.Stats

// Stats returns the current statistics.
func (f *FS) Stats() Stats { return f.tree.Stats(f.counts()) }

// counts is what the mount counts of itself for stats.json.
func (f *FS) counts() meshstats.MountCounts {
	m := meshstats.MountCounts{Counts: &f.n, NoOpen: f.noOpen(), Passthrough: f.passthroughWanted()}
	if f.raw != nil {
		m.Requests, m.RequestMillis = f.raw.reqs.Counts()
	}
	return m
}
