package fs

import (
	"context"
	"os"
	"path/filepath"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/srcfd"
	"github.com/meshfs/meshfs/vfs"
)

// statsDirName is the hidden folder at the root holding stats.json
// (vfs.MetaName). It is found by name only and never listed.
const statsDirName = vfs.MetaName

// srcID is what a node mirrors (vfs.SourceID): a lookup reuses the existing
// node only while it is the same (the root's is zero).
type srcID = vfs.SourceID

type sourced interface{ id() srcID }

// srcNode is what every node that mirrors a source entry holds: its inode,
// the file system, and the entry it stands for.
type srcNode struct {
	gofs.Inode
	fsys  *FS
	ident srcID
}

func (n *srcNode) id() srcID { return n.ident }

// fillDirAttr describes a source folder or a mesh folder made from the
// source file st.
func fillDirAttr(a *fuse.Attr, st *syscall.Stat_t) {
	a.FromStat(st)
	a.Mode = syscall.S_IFDIR | vfs.ReadOnlyMode(st.Mode, true)
	a.Size = 0
	a.Blocks = 0
	a.Nlink = 2
}

// fillFileAttr describes a file of size bytes derived from source st (its
// owner and times).
func fillFileAttr(a *fuse.Attr, st *syscall.Stat_t, size int64) {
	a.FromStat(st)
	a.Mode = syscall.S_IFREG | vfs.ReadOnlyMode(st.Mode, false)
	a.Size = uint64(size)
	a.Nlink = 1
	a.Blksize = 4096
	a.Blocks = (uint64(size) + 511) / 512
}

// dirNode mirrors one source folder (its listing and stat policy:
// vfs.Folder).
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
	if err := d.dir.Stat(&st); err != nil {
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

func (d *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	d.fsys.touch()
	d.fsys.watchDir(d)
	if d.IsRoot() && name == vfs.MetaName {
		return d.lookupStats(ctx, out)
	}
	e, err := d.fsys.tree.SourceLookup(d.dir, name)
	if err != nil {
		return nil, gofs.ToErrno(err)
	}
	st, id := &e.Stat, e.ID()
	var node gofs.InodeEmbedder
	var mode uint32
	switch e.Kind {
	case vfs.SourcePNG, vfs.SourceText:
		return d.lookupMade(ctx, name, &e, out)
	case vfs.SourceFolder, vfs.SourceArchive:
		fillDirAttr(&out.Attr, st)
		node, mode = d.fsys.newDirNode(e.Path, id), syscall.S_IFDIR
	case vfs.SourceMesh:
		// A regular file (a mesh is never a link): this Lstat is the Stat
		// the listing and lookups that follow need (vfs.FS.Mesh).
		fillDirAttr(&out.Attr, st)
		node, mode = d.newMeshDir(&e), syscall.S_IFDIR
	case vfs.SourceLink:
		out.Attr.FromStat(st)
		node, mode = &linkNode{srcNode{fsys: d.fsys, ident: id}, e.Path}, syscall.S_IFLNK
	default:
		out.Attr.FromStat(st)
		out.Attr.Mode = syscall.S_IFREG | vfs.ReadOnlyMode(st.Mode, false)
		node, mode = &passFile{srcNode{fsys: d.fsys, ident: id}, e.Path, e.Packed}, syscall.S_IFREG
	}
	d.fsys.shortTTL(d, out, nil)
	if ch := d.sameChild(name, id); ch != nil {
		switch n := ch.Operations().(type) {
		case *dirNode:
			d.fsys.watchDir(n)
		case *meshDir:
			n.src.Remember(st, e.At)
		}
		return ch, 0
	}
	ch := d.NewInode(ctx, node, gofs.StableAttr{Mode: mode})
	if dn, ok := node.(*dirNode); ok {
		d.fsys.watchDir(dn)
	}
	return ch, 0
}

// sameChild is d's child node called name when it mirrors id still.
func (d *dirNode) sameChild(name string, id srcID) *gofs.Inode {
	if ch := d.GetChild(name); ch != nil {
		if s, ok := ch.Operations().(sourced); ok && s.id() == id {
			return ch
		}
	}
	return nil
}

func (d *dirNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	d.fsys.touch()
	// After this listing (its own sniffs first): the next folders'.
	defer d.fsys.listAhead(d)
	d.fsys.watchDir(d)
	ents, err := d.fsys.tree.List(d.dir)
	if err != nil {
		return nil, errno(err)
	}
	list := make([]fuse.DirEntry, len(ents))
	for i, e := range ents {
		list[i] = fuse.DirEntry{Name: e.Name, Mode: e.Kind, Ino: e.Ino}
	}
	return gofs.NewListDirStream(list), 0
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
// demand, never copied into memory. An archive's entry (packed) is read
// with source.Packed.ReadEntry (a deflated one resumes at a checkpoint).
type passFile struct {
	srcNode
	abs    string
	packed bool // an archive's entry
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
	var st syscall.Stat_t
	var err error
	if h, ok := fh.(*fdHandle); ok {
		err = syscall.Fstat(int(h.f.Fd()), &st)
	} else {
		err = p.fsys.view.SysLstat(p.abs, &st)
		if err == nil && !p.same(&st) {
			// Replaced: see meshDir.stat.
			return syscall.ESTALE
		}
	}
	if err != nil {
		return gofs.ToErrno(err)
	}
	out.Attr.FromStat(&st)
	out.Attr.Mode = syscall.S_IFREG | vfs.ReadOnlyMode(st.Mode, false)
	p.fsys.shortTTL(parentDir(&p.Inode), nil, out)
	return 0
}

func (p *passFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if p.packed {
		return nil, noFlush, 0 // read as under no_open
	}
	// Replaced since the lookup: this inode is the old file's, whose
	// readers may hold its size (vfs.Versioned); ESTALE.
	f, err := source.OpenSame(p.abs, p.same)
	if err != nil {
		return nil, 0, errno(err)
	}
	if p.fsys.passthroughWanted() {
		// The kernel reads the source itself: plain files as fast as
		// outside the mount.
		return p.fsys.passthroughHandle(nil, source.Version{}, f, -1, nil, func() { f.Close() }), noFlush, 0
	}
	p.fsys.n.OpenHandles.Add(1)
	// No FOPEN_KEEP_CACHE: the kernel drops this file's pages on each open,
	// as for any file whose contents we do not control.
	return &fdHandle{fsys: p.fsys, f: f, length: -1}, noFlush, 0
}

func (p *passFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if p.packed {
		n, err := p.fsys.view.ReadEntry(p.abs, p.same, dest, off)
		return fuse.ReadResultData(dest[:n]), errno(err)
	}
	// no_open: read the source itself, if it is still the file this node
	// was looked up as.
	return p.fsys.read(ctx, fh, dest, off, func() (fuse.ReadResult, syscall.Errno) {
		k := srcfd.Key{Path: p.abs, ID: source.Ident{File: p.ident.File}}
		return p.fsys.readWindow(k, p.same, dest, off, 0, -1)
	})
}

// What the mount does ahead of a walker (vfs.Folder.ScanAhead and
// ListAhead).

// scanSiblings starts a pass over the meshes of m's source folder after m.
func (f *FS) scanSiblings(m *meshDir) {
	if d := m.parent; d != nil {
		d.dir.ScanAhead(f.ahead, filepath.Base(m.src.Path()), f.st.ScanAhead)
	}
}

// listAhead sniffs ahead of a walker that has just listed d (not the root)
// for the first time. It returns at once.
func (f *FS) listAhead(d *dirNode) {
	if d.dir.Abs == f.source {
		return
	}
	if name, parent := d.Parent(); parent != nil {
		if pd, ok := parent.Operations().(*dirNode); ok {
			pd.dir.ListAhead(f.ahead, f.sniffer, d.dir, name)
		}
	}
}
