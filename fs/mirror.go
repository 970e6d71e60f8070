package fs

import (
	"context"
	"os"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/srcfd"
	"github.com/meshfs/meshfs/vfs"
)

// statsDirName is the hidden folder at the root holding stats.json.
const statsDirName = vfs.MetaName

// srcID is what a node mirrors (vfs.SourceID).
type srcID = vfs.SourceID

type sourced interface{ id() srcID }

// srcNode is what every node that mirrors a source entry holds.
type srcNode struct {
	gofs.Inode
	fsys  *FS
	ident srcID
}

func (n *srcNode) id() srcID { return n.ident }

// attr answers a GETATTR of n with st, under the timeouts of n's folder.
func (n *srcNode) attr(out *fuse.AttrOut, st *syscall.Stat_t, err error) syscall.Errno {
	if err != nil {
		return gofs.ToErrno(err)
	}
	out.Attr.FromStat(st)
	n.fsys.shortTTL(parentDir(&n.Inode), nil, out)
	return 0
}

// opsOf is n's node as a T (false for a nil n).
func opsOf[T any](n *gofs.Inode) (T, bool) {
	var t T
	if n == nil {
		return t, false
	}
	t, ok := n.Operations().(T)
	return t, ok
}

// reuse is parent's child called name while it is a T that same accepts
// (nil: any T), else a new child made by mk.
func reuse[T any](ctx context.Context, parent *gofs.Inode, name string, same func(T) bool, mk func() (gofs.InodeEmbedder, uint32)) *gofs.Inode {
	ch := parent.GetChild(name)
	if t, ok := opsOf[T](ch); ok && (same == nil || same(t)) {
		return ch
	}
	n, mode := mk()
	return parent.NewInode(ctx, n, gofs.StableAttr{Mode: mode})
}

// dirEntries is a listing as the kernel gets it.
func dirEntries(ents []vfs.Entry) []fuse.DirEntry {
	list := make([]fuse.DirEntry, len(ents))
	for i, e := range ents {
		list[i] = fuse.DirEntry{Name: e.Name, Mode: e.Kind, Ino: e.Ino}
	}
	return list
}

// dirNode mirrors one source folder (vfs.Folder).
type dirNode struct {
	srcNode
	dir *vfs.Folder
}

var (
	_ = (gofs.NodeLookuper)((*dirNode)(nil))
	_ = (gofs.NodeReaddirer)((*dirNode)(nil))
	_ = (gofs.NodeGetattrer)((*dirNode)(nil))
	_ = (gofs.NodeStatfser)((*dirNode)(nil))
)

func (d *dirNode) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	var st syscall.Stat_t
	err := d.dir.Stat(&st)
	return d.attr(out, vfs.DirStat(&st), err)
}

// parentDir is the source folder node n was looked up in, or nil.
func parentDir(n *gofs.Inode) *dirNode {
	_, p := n.Parent()
	d, _ := opsOf[*dirNode](p)
	return d
}

func (d *dirNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	s, err := d.fsys.tree.Statfs()
	out.FromStatfsT(s)
	return gofs.ToErrno(err)
}

// Lookup answers with the node of what the entry shows as
// (vfs.FS.SourceLookup), kept while it mirrors the same srcID.
func (d *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	f := d.fsys
	f.touch()
	f.watchDir(d)
	if d.IsRoot() && name == vfs.MetaName {
		return d.lookupMeta(ctx, out)
	}
	e, err := f.tree.SourceLookup(d.dir, name)
	if err != nil {
		return nil, gofs.ToErrno(err)
	}
	id := e.ID()
	sn := func() srcNode { return srcNode{fsys: f, ident: id} }
	var node gofs.InodeEmbedder
	mode := uint32(syscall.S_IFREG)
	out.Attr.FromStat(e.Attr())
	switch e.Kind {
	case vfs.SourcePNG, vfs.SourceText:
		t := &madeFile{srcNode: sn(), e: e}
		if errno := t.lookup(ctx, d, &out.Attr); errno != 0 {
			return nil, errno
		} else if e.Kind == vfs.SourceText {
			return d.NewInode(ctx, t, gofs.StableAttr{Mode: mode}), 0 // its text is this lookup's
		}
		node = t
	case vfs.SourceFolder, vfs.SourceArchive:
		node, mode = &dirNode{srcNode: sn(), dir: f.tree.SubFolder(d.dir, name, &e)}, syscall.S_IFDIR
	case vfs.SourceMesh:
		node, mode = &meshDir{srcNode: sn(), parent: d, src: f.tree.Mesh(d.dir, &e)}, syscall.S_IFDIR
	case vfs.SourceLink:
		node, mode = &linkNode{sn(), e.Path}, syscall.S_IFLNK
	default:
		node = &passFile{sn(), e.Path, e.Packed}
	}
	f.shortTTL(d, out, nil)
	ch := reuse(ctx, &d.Inode, name, func(s sourced) bool { return s.id() == id }, func() (gofs.InodeEmbedder, uint32) { return node, mode })
	switch n := ch.Operations().(type) {
	case *dirNode:
		f.watchDir(n)
	case *meshDir:
		n.src.Remember(&e.Stat, e.At)
	case *madeFile:
		n.view.Retell(node.(*madeFile).view.Told())
	}
	return ch, 0
}

func (d *dirNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	d.fsys.touch()
	d.fsys.watchDir(d)
	ents, err := d.fsys.tree.List(d.dir)
	if err != nil {
		return nil, errno(err)
	}
	return gofs.NewListDirStream(dirEntries(ents)), 0
}

// linkNode mirrors a symbolic link as it is.
type linkNode struct {
	srcNode
	abs string
}

var (
	_ = (gofs.NodeReadlinker)((*linkNode)(nil))
	_ = (gofs.NodeGetattrer)((*linkNode)(nil))
)

func (l *linkNode) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	t, err := os.Readlink(l.abs)
	return []byte(t), gofs.ToErrno(err)
}

func (l *linkNode) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	var st syscall.Stat_t
	err := syscall.Lstat(l.abs, &st)
	return l.attr(out, &st, err)
}

// passFile is a source file that is not a mesh (packed: an archive's entry).
type passFile struct {
	srcNode
	abs    string
	packed bool
}

var (
	_ = (gofs.NodeOpener)((*passFile)(nil))
	_ = (gofs.NodeGetattrer)((*passFile)(nil))
	_ = (gofs.NodeReader)((*passFile)(nil))
)

// same reports whether st is the file this node was looked up as.
func (p *passFile) same(st *syscall.Stat_t) bool {
	return source.FromStat(st).File == p.ident.File
}

func (p *passFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	fd := -1
	if h, ok := fh.(*handle); ok && h.f != nil {
		fd = int(h.f.Fd())
	}
	st, err := p.fsys.tree.PassedStat(p.abs, p.ident.File, fd)
	return p.attr(out, st, err)
}

// Open opens the file looked up (ESTALE once replaced, vfs.Versioned),
// passed through where it can be; the kernel drops its pages on each open.
func (p *passFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if p.packed {
		return nil, noFlush, 0 // read as under no_open
	}
	f, err := source.OpenSame(p.abs, p.same)
	if err != nil {
		return nil, 0, errno(err)
	}
	if p.fsys.passthroughWanted() {
		return p.fsys.passthroughHandle(nil, source.Version{}, f, -1, nil, func() { f.Close() }), noFlush, 0
	}
	p.fsys.n.OpenHandles.Add(1)
	return &handle{fsys: p.fsys, f: f, length: -1}, noFlush, 0
}

func (p *passFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if p.packed {
		n, err := p.fsys.view.ReadEntry(p.abs, p.same, dest, off)
		return fuse.ReadResultData(dest[:n]), errno(err)
	}
	return p.fsys.read(ctx, fh, dest, off, func() (fuse.ReadResult, syscall.Errno) {
		k := srcfd.Key{Path: p.abs, ID: source.Ident{File: p.ident.File}}
		return p.fsys.readWindow(k, p.same, dest, off, 0, -1)
	})
}
