package fs

import (
	"context"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/version"
)

// Listing never draws a preview (outnode's bounded preview): a
// READDIRPLUS entry of NAME.preview.png, and a LOOKUP or GETATTR of it
// within boundAfterListing of a listing of its folder (`ls -l` with
// handles: READDIR, then one LOOKUP per name), tell the kernel a bound of
// an undrawn preview. Any other lookup or stat draws it. The open (or,
// without handles, the first read) draws it and tells the kernel to
// forget the bound's attributes (not its pages: they are the picture's);
// the read that reaches the picture's end comes back short, which cuts
// the kernel's size to the bytes, so a reader to EOF gets them exactly.

// boundAfterListing is how long after a listing of a mesh folder its
// preview's lookups are taken for the listing's (`ls -l` stat'ing what
// it just listed).
const boundAfterListing = 5 * time.Second

// noteListed records that the folder was just listed.
func (m *meshDir) noteListed() { m.listed.Store(time.Now().UnixNano()) }

// listedRecently reports whether the folder was listed within
// boundAfterListing.
func (m *meshDir) listedRecently() bool {
	at := m.listed.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < boundAfterListing
}

// lookupBound answers a listing's lookup of the preview e (stat st of
// the source, version fp): its node, reused, and its size or bound
// (outnode.Output.Bound). ok is false when the node must be looked up
// otherwise (it stands for another version).
func (m *meshDir) lookupBound(ctx context.Context, e outputs.Entry, out *fuse.EntryOut, st *syscall.Stat_t, fp version.Version) (*gofs.Inode, bool) {
	fresh := m.out(e, "")
	ch, f := outputChild(&m.Inode, e.Name, fresh)
	if ch != nil && !f.Reusable(fp) {
		ch, f = nil, fresh
	}
	size, ok := f.Bound(ctx, fp)
	if !ok {
		return nil, false
	}
	defer m.fsys.shortTTL(m.parent, out, nil)
	fillFileAttr(&out.Attr, st, size)
	if ch != nil {
		return ch, true
	}
	return m.NewInode(ctx, f, gofs.StableAttr{Mode: syscall.S_IFREG}), true
}

// boundAttr is a listing's GETATTR of a bounded preview: its size or
// bound again, drawing nothing. ok is false when it must be sized.
func (o *outFile) boundAttr(ctx context.Context, out *fuse.AttrOut) (syscall.Errno, bool) {
	st, fp, err := o.m.stat()
	if err != nil {
		return errno(err), true
	}
	size, ok := o.Bound(ctx, fp)
	if !ok {
		return 0, false
	}
	fillFileAttr(&out.Attr, st, size)
	return 0, true
}

// drawn is called once a bounded preview's bytes are served. An open
// (with handles) tells the kernel to forget the bound before its reply, so
// that its reads, which begin after, see the size (a GETATTR on the
// handle) or are cut by the short read at the end: the attributes'
// notification must not come between a READ and its reply, or the kernel
// ignores the short read's size. A handle-less READ (read) notifies
// nothing for that reason: its short reply at the end cuts the size.
func (o *outFile) drawn(read bool) {
	if o.Unbound() && !read {
		o.m.fsys.notifyAttr(&o.Inode)
	}
}

// notifyAttr makes the kernel forget n's attributes, keeping its pages.
func (f *FS) notifyAttr(n *gofs.Inode) {
	f.n.Notifications.Add(1)
	n.NotifyContent(-1, 0)
}
