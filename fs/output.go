package fs

import (
	"context"
	"syscall"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store"
)

// Output is one file of a mesh folder as the mount shows it: its entry of
// the folder table (or a chunk of chunks/), what the kernel was told of it
// (View, Pass), and the answer each request about it gets for a source
// version. A node of the mount holds one and translates its answers.
type Output struct {
	Mesh  *outputs.Mesh
	Entry outputs.Entry // zero: header.json answered from a listing, or a chunk
	Chunk string        // a chunk's name under chunks/
	// View is what the kernel was told of the node; Pinned (the kernel
	// opens without asking) it stands for the version of the first size
	// told.
	View kernelView
	Pass passState // the .glb's passthrough opens

	s *store.Store
}

// New is a fresh node's Output of entry e of m's folder (or of chunk), made
// by s, pinned when the kernel opens files without asking.
func NewOutput(s *store.Store, m *outputs.Mesh, e outputs.Entry, chunk string, pinned bool) *Output {
	return &Output{Mesh: m, Entry: e, Chunk: chunk, View: kernelView{Pinned: pinned}, s: s}
}

// IsGLB reports whether o is the folder's NAME.glb.
func (o *Output) IsGLB() bool { return o.Chunk == "" && o.Entry.Output == outputs.OutGLB }

// Reusable reports whether a node holding o may answer a lookup for
// source version v: not when it stands for another version (View.MayTell),
// nor a .glb whose inode is passed through to another version's file that
// is still open (a version needs an inode of its own then).
func (o *Output) Reusable(v source.Version) bool {
	return o.View.MayTell(v) && !(o.IsGLB() && o.Pass.BusyOther(v))
}

// Content is o's bytes for version v (a raw chunk: its window of the
// source instead).
func (o *Output) Content(ctx context.Context, v source.Version) (data []byte, raw *decode.Chunk, err error) {
	return o.s.Content(ctx, o.Mesh, v, o.Entry, o.Chunk)
}

// Size is the size the kernel is told of o for version v, recorded in the
// View. scanned is set when a scan or a conversion made it (the source's
// permissions shown may have narrowed meanwhile). With cheapOnly a
// geometry output converts nothing: its size comes from memory or the disk
// cache, else store.ErrNotCheap. A node that stands for another version
// converts nothing: it tells the size of the version it stands for while
// memory holds that version's bytes (Serve then serves them: a reader whose open
// came before the kernel heard of the change reads that version whole),
// else ESTALE (a path walk then looks the name up again: a new node).
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
	}
	if !o.View.Tell(v) {
		return 0, false, syscall.ESTALE
	}
	if raw != nil {
		return raw.Length, true, nil
	}
	return int64(len(data)), true, nil
}

// toldSize is the size of the version the node stands for while memory
// holds its bytes, else ESTALE.
func (o *Output) toldSize() (int64, bool, error) {
	if data, ok := o.s.InMemory(o.Mesh, o.View.Told(), o.Entry); ok {
		return int64(len(data)), false, nil
	}
	return 0, false, syscall.ESTALE
}

// Serve is what a READ without a handle gets when the source is version v:
// v's bytes (or raw chunk window) when the node may show v, else the bytes
// of the version whose size the kernel was told while memory still holds
// them (a geometry output read moments ago), else ESTALE. The reader's
// earlier pages, held by the kernel or already returned, are of the version
// told, so bytes of another one would splice two versions into one read.
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
	data, ok := o.s.InMemory(o.Mesh, o.View.Told(), o.Entry)
	if !ok {
		return nil, nil, syscall.ESTALE
	}
	return data, nil, nil
}

// Push stores header.json's bytes of listing scan r (of version v) into
// the kernel's page cache with write, when they may be pushed (Pushable),
// the source is still v (now), and the kernel does not hold them already
// nor stands the node for another version; it reports whether it did.
// drop is scheduled when the source changed meanwhile: the watcher's
// invalidation may have come before the store.
func (o *Output) Push(v source.Version, r *store.ScanResult, now func() (source.Version, bool), write func([]byte) bool, drop func()) bool {
	data, ok := o.s.Pushable(o.Mesh, v, r)
	if !ok {
		return false
	}
	if cur, ok := now(); !ok || !cur.Same(v) || !o.View.WantsPages(v) {
		return false
	}
	if !write(data) {
		return false
	}
	cur, _ := now()
	o.View.Stored(v, cur, drop)
	return true
}
