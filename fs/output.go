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

// Output is the node of one file of a mesh folder (m: nil outside a
// mount): its entry of the folder table (zero: header.json answered from a
// listing, or a chunk of chunks/), what the kernel was told of it (View,
// pinned under no_open; Pass: the .glb's passthrough opens).
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

// NewOutput is the Output of entry e (or chunk) of m, made by s.
func NewOutput(s *store.Store, m *outputs.Mesh, e outputs.Entry, chunk string, pinned bool) *Output {
	return &Output{Mesh: m, Entry: e, Chunk: chunk, View: kernelView{Pinned: pinned}, s: s}
}

// IsGLB reports whether o is the folder's NAME.glb.
func (o *Output) IsGLB() bool { return o.Chunk == "" && o.Entry.Output == outputs.OutGLB }

// Reusable reports whether o may answer a lookup for version v: not when it
// stands for another, nor a .glb passed through to another's file still open.
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
// A node standing for another version tells its size while memory holds
// its bytes, else ESTALE.
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
// o may show v, else the told version's while memory holds them, else
// ESTALE (never two versions in one reader's pages).
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

// Push writes header.json's bytes of listing scan r (version v) into the
// kernel's pages when the store allows it (Pushable), the source is still v
// (now) and the kernel holds no pages; drop is scheduled on a change meanwhile.
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
