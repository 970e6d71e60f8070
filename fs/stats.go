package fs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	meshstats "github.com/meshfs/meshfs/internal/store/stats"
)

// Stats is the contents of .meshfs/stats.json (meshstats.Stats).
type Stats = meshstats.Stats

// Stats returns the current statistics.
func (f *FS) Stats() Stats {
	m := meshstats.MountCounts{Counts: &f.n, Start: f.start, NoOpen: f.noOpen(), Passthrough: f.passthroughWanted(),
		Sniffs: f.sniffer.Count(), ScansAhead: f.ahead.Scans.Load(), SniffsAhead: f.ahead.Sniffs.Load()}
	if f.raw != nil {
		m.Requests, m.RequestMillis = f.raw.reqs.Counts()
	}
	return f.st.Stats(m)
}

// lookupStats returns the hidden .meshfs folder.
func (d *dirNode) lookupStats(ctx context.Context, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	var st syscall.Stat_t
	if err := syscall.Stat(d.dir.Abs, &st); err != nil {
		return nil, gofs.ToErrno(err)
	}
	fillDirAttr(&out.Attr, &st)
	daemonOnly(&out.Attr)
	if ch := d.GetChild(statsDirName); ch != nil {
		if _, ok := ch.Operations().(*statsDir); ok {
			return ch, 0
		}
	}
	return d.NewInode(ctx, &statsDir{fsys: d.fsys}, gofs.StableAttr{Mode: syscall.S_IFDIR}), 0
}

// daemonOnly gives a of .meshfs or a file in it to the daemon's user
// (meshstats.MetaOwner).
func daemonOnly(a *fuse.Attr) {
	a.Uid, a.Gid, a.Mode = meshstats.MetaOwner(a.Mode&syscall.S_IFMT == syscall.S_IFDIR)
}

// statsDir is .meshfs: it holds stats.json and errors.txt.
type statsDir struct {
	gofs.Inode
	fsys *FS
}

var (
	_ = (gofs.NodeLookuper)((*statsDir)(nil))
	_ = (gofs.NodeReaddirer)((*statsDir)(nil))
	_ = (gofs.NodeGetattrer)((*statsDir)(nil))
)

func (s *statsDir) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = syscall.S_IFDIR
	daemonOnly(&out.Attr)
	out.Nlink = 2
	return 0
}

func (s *statsDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	list := make([]fuse.DirEntry, len(meshstats.MetaNames()))
	for i, n := range meshstats.MetaNames() {
		list[i] = fuse.DirEntry{Name: n, Mode: syscall.S_IFREG, Ino: uint64(i + 1)}
	}
	return gofs.NewListDirStream(list), 0
}

func (s *statsDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	render, ok := meshstats.MetaFile(name, s.fsys.Stats)
	if !ok {
		return nil, syscall.ENOENT
	}
	// The contents change with every read: never cache the size, nor the
	// name (so that every open asks LOOKUP: see statsFile).
	out.SetAttrTimeout(uncachedAttr)
	out.SetEntryTimeout(uncachedAttr)
	if ch := s.GetChild(name); ch != nil {
		if sf, ok := ch.Operations().(*statsFile); ok {
			sf.fill(&out.Attr, true) // the node reads will serve
			return ch, 0
		}
	}
	sf := &statsFile{fsys: s.fsys, snap: statsSnapshot{Render: render}}
	sf.fill(&out.Attr, true)
	return s.NewInode(ctx, sf, gofs.StableAttr{Mode: syscall.S_IFREG}), 0
}

// statsFile is stats.json or errors.txt: a fresh snapshot on every open, served with
// direct I/O because its size changes between snapshots.
//
// Under no_open there is no open, and the kernel keeps pages. A snapshot is
// then taken at each LOOKUP, which the kernel sends on every open by path
// (the name is never cached), and GETATTR and READ serve that snapshot: a
// reader that reads in several calls (each asks GETATTR: the attributes
// are never cached either) sees one snapshot whole, and the next opener's
// snapshot has a new mtime, which makes the kernel drop the old pages
// (AUTO_INVAL_DATA). Two openers at the same moment may share one.
type statsFile struct {
	gofs.Inode
	fsys *FS
	snap statsSnapshot // renders the file's contents now
}

var (
	_ = (gofs.NodeOpener)((*statsFile)(nil))
	_ = (gofs.NodeGetattrer)((*statsFile)(nil))
	_ = (gofs.NodeReader)((*statsFile)(nil))
)

// fill describes the snapshot: a new one when fresh, else the current one.
func (s *statsFile) fill(a *fuse.Attr, fresh bool) {
	b, at := s.snap.Take(fresh)
	a.Mode = syscall.S_IFREG
	daemonOnly(a)
	a.Size = uint64(len(b))
	a.Nlink = 1
	a.SetTimes(&at, &at, &at)
}

func (s *statsFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if h, ok := fh.(*bytesHandle); ok {
		s.fill(&out.Attr, false)
		out.Size = uint64(len(h.data))
		return 0
	}
	// With handles, every GETATTR is a new snapshot (as it always was);
	// without, the LOOKUP's (see statsFile).
	s.fill(&out.Attr, !s.fsys.noOpen())
	out.SetTimeout(uncachedAttr)
	return 0
}

func (s *statsFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	s.fsys.n.OpenHandles.Add(1)
	return &bytesHandle{fsys: s.fsys, data: s.snap.Render()}, fuse.FOPEN_DIRECT_IO, 0
}

func (s *statsFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return s.fsys.read(ctx, fh, dest, off, func() (fuse.ReadResult, syscall.Errno) { return memAt(s.snap.Last(), dest, off) })
}
