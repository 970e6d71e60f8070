package fs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store"
)

// Output is one file of a mesh folder as the mount shows it: its entry of
// the folder table (zero: header.json answered from a listing, or a chunk
// of chunks/), what the kernel was told of it (View: Pinned, when the
// kernel opens without asking, it stands for the version of the first size
// told; Pass: the .glb's passthrough opens), and the answer each request
// gets for a source version. It is the output's node too (its folder's, m:
// nil outside a mount).
type Output struct {
	gofs.Inode
	m     *meshDir
	Mesh  *outputs.Mesh
	Entry outputs.Entry
	Chunk string
	View  kernelView
	Pass  passState

	s *store.Store
}

// NewOutput is a fresh node's Output of entry e of m's folder (or of
// chunk), made by s, pinned when the kernel opens files without asking.
func NewOutput(s *store.Store, m *outputs.Mesh, e outputs.Entry, chunk string, pinned bool) *Output {
	return &Output{Mesh: m, Entry: e, Chunk: chunk, View: kernelView{Pinned: pinned}, s: s}
}

// IsGLB reports whether o is the folder's NAME.glb.
func (o *Output) IsGLB() bool { return o.Chunk == "" && o.Entry.Output == outputs.OutGLB }

// Reusable reports whether o's node may answer a lookup for version v: not
// when it stands for another version, nor a .glb passed through to another
// version's file still open (a version needs an inode of its own then).
func (o *Output) Reusable(v source.Version) bool {
	return o.View.MayTell(v) && !(o.IsGLB() && o.Pass.BusyOther(v))
}

// Content is o's bytes for version v (a raw chunk: its window instead).
func (o *Output) Content(ctx context.Context, v source.Version) (data []byte, raw *decode.Chunk, err error) {
	return o.s.Content(ctx, o.Mesh, v, o.Entry, o.Chunk)
}

// Size is the size the kernel is told of o for version v, recorded in
// View; scanned when a scan or a conversion made it (the permissions shown
// may have narrowed). With cheapOnly nothing converts (store.ErrNotCheap).
// A node standing for another version tells that version's size while
// memory holds its bytes (Serve serves them), else ESTALE: a path walk then
// looks the name up again.
func (o *Output) Size(ctx context.Context, v source.Version, cheapOnly bool) (size int64, scanned bool, err error) {
	size, scanned, ok, costly := o.s.CheapSize(ctx, o.Mesh, v, o.Entry, o.Chunk, cheapOnly)
	switch {
	case ok && !o.View.Tell(v):
		return o.toldSize()
	case ok:
		return size, scanned, nil
	case costly:
		return 0, false, store.ErrNotCheap
	case !o.View.MayTell(v):
		return o.toldSize()
	}
	data, raw, err := o.Content(ctx, v)
	if err != nil {
		return 0, false, err
	} else if !o.View.Tell(v) {
		return 0, false, syscall.ESTALE
	} else if raw != nil {
		return raw.Length, true, nil
	}
	return int64(len(data)), true, nil
}

// toldSize is the size of the version told while memory holds its bytes.
func (o *Output) toldSize() (int64, bool, error) {
	if data, ok := o.s.InMemory(o.Mesh, o.View.Told(), o.Entry); ok {
		return int64(len(data)), false, nil
	}
	return 0, false, syscall.ESTALE
}

// Serve is what a READ without a handle gets for version v: v's bytes when
// the node may show v, else those of the version told while memory holds
// them, else ESTALE. The reader's earlier pages are of the version told:
// another version's bytes would splice two into one read.
func (o *Output) Serve(ctx context.Context, v source.Version) (data []byte, raw *decode.Chunk, err error) {
	if o.View.MayTell(v) {
		data, raw, err := o.Content(ctx, v)
		if err != nil {
			return nil, nil, err
		}
		if o.View.Tell(v) {
			o.View.Served(v)
			return data, raw, nil
		}
	}
	if data, ok := o.s.InMemory(o.Mesh, o.View.Told(), o.Entry); ok {
		return data, nil, nil
	}
	return nil, nil, syscall.ESTALE
}

// Push stores header.json's bytes of listing scan r (version v) into the
// kernel's page cache with write when the store allows it (Pushable), the
// source is still v (now) and the kernel holds neither them nor another
// version; drop is scheduled when the source changed meanwhile.
func (o *Output) Push(v source.Version, r *store.ScanResult, now func() (source.Version, bool), write func([]byte) bool, drop func()) bool {
	data, ok := o.s.Pushable(o.Mesh, v, r)
	if !ok {
		return false
	}
	if cur, ok := now(); !ok || !cur.Same(v) || !o.View.WantsPages(v) || !write(data) {
		return false
	}
	cur, _ := now()
	o.View.Stored(v, cur, drop)
	return true
}
