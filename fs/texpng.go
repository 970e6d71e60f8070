package fs

import (
	"context"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/vfs"
)

// Texture PNGs: beside every texture file meshfs decodes (a .dds, a .tga
// whose first bytes are one: walk.Sniffer.ShowsPNG) the mount shows
// NAME.EXT.png, the texture as the .glb files embed it, so that image
// viewers and file managers show it and the OBJ material libraries can
// name it. The texture itself passes through
// unchanged; a real file of the PNG's name wins. A PNG is made once per
// texture version (the cache's key: the texture's path and fingerprint)
// and shares its decoding with the meshes that embed it. It shows its
// texture's owner and mode.

// A texture whose PNG failed to be made shows NAME.EXT.error.txt, the
// error, in its PNG's place (as a broken mesh's folder shows error.txt),
// once the failure is known: the request that found it got EIO. The
// failure is listed in .meshfs/errors.txt too.

// madeFile is a source folder's file whose bytes are made whole
// (vfs.FS.Made): a texture's NAME.EXT.png, or an error text fixed at lookup
// (an archive's error.txt, a texture's NAME.EXT.error.txt).
type madeFile struct {
	srcNode
	e vfs.SourceEntry
	// view is what the kernel was told of a PNG: the PNG of the texture
	// as it is at each request (kernelView.Retell).
	view kernelView
}

var (
	_ = (gofs.NodeGetattrer)((*madeFile)(nil))
	_ = (gofs.NodeOpener)((*madeFile)(nil))
	_ = (gofs.NodeReader)((*madeFile)(nil))
)

// text reports whether t is an error text: its bytes are read as under
// no_open in either mode.
func (t *madeFile) text() bool { return t.e.Kind == vfs.SourceText }

// produce returns the file's bytes as they are now, and its stat.
func (t *madeFile) produce(ctx context.Context) ([]byte, *syscall.Stat_t, source.Version, syscall.Errno) {
	b, st, fp, err := t.fsys.tree.Made(ctx, &t.e)
	return b, st, fp, outErrno(err)
}

// attr fills a with the file's attributes as it is now, the version the
// kernel is then told of.
func (t *madeFile) attr(ctx context.Context, a *fuse.Attr) syscall.Errno {
	b, st, fp, e := t.produce(ctx)
	if e == 0 {
		fillFileAttr(a, st, int64(len(b)))
		t.view.Retell(fp)
	}
	return e
}

func (t *madeFile) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	return t.attr(ctx, &out.Attr)
}

func (t *madeFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if t.text() {
		return nil, noFlush, 0
	}
	t.fsys.touch()
	b, st, fp, e := t.produce(ctx)
	if e != 0 {
		return nil, 0, e
	}
	keep := t.view.Told().Same(fp)
	t.view.Retell(fp)
	t.fsys.n.OpenHandles.Add(1)
	return &bytesHandle{fsys: t.fsys, data: b, st: st}, keepFlags(keep), 0
}

// Read serves a handle's bytes, or without one (no_open) the bytes of the
// version the kernel was told the size of, never another's.
func (t *madeFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if t.text() {
		return memAt(t.e.Text, dest, off)
	}
	t.fsys.touch()
	return t.fsys.read(ctx, fh, dest, off, func() (fuse.ReadResult, syscall.Errno) {
		b, _, fp, e := t.produce(ctx)
		if e == 0 && !t.view.Told().Same(fp) {
			e = syscall.ESTALE
		}
		if e != 0 {
			return nil, e
		}
		return memAt(b, dest, off)
	})
}

// lookupMade looks up name, the made file e in d (vfs.SourcePNG or
// vfs.SourceText; a text's node is never reused).
func (d *dirNode) lookupMade(ctx context.Context, name string, e *vfs.SourceEntry, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	id := e.ID()
	node := &madeFile{srcNode: srcNode{fsys: d.fsys, ident: id}, e: *e}
	if e := node.attr(ctx, &out.Attr); e != 0 {
		if d.fsys.st.TextureFailure(node.e.Path, &node.e.Stat) != "" {
			// NAME.EXT.error.txt takes the PNG's place: the kernel's
			// listing of the folder is dropped, beside (this LOOKUP
			// holds the folder), and once more after NotifyWait: a
			// READDIRPLUS whose lookup this is replies with the old
			// listing after it, which the kernel then keeps.
			drop := func() { d.fsys.notifyContent(&d.Inode) }
			beside(drop, func() {})
			time.AfterFunc(notifyWait, drop)
		}
		return nil, e
	}
	if node.text() {
		return d.NewInode(ctx, node, gofs.StableAttr{Mode: syscall.S_IFREG}), 0
	}
	d.fsys.shortTTL(d, out, nil)
	if ch := d.sameChild(name, id); ch != nil {
		if old, ok := ch.Operations().(*madeFile); ok {
			old.view.Retell(node.view.Told())
		}
		return ch, 0
	}
	return d.NewInode(ctx, node, gofs.StableAttr{Mode: syscall.S_IFREG}), 0
}
