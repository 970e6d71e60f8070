package vfs

import (
	"context"
	"io/fs"
	"os"
	"slices"
	"syscall"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store"
)

// Mesh is a mesh file shown as a folder of its outputs, as a door keeps it
// between requests (in the manner of rclone's vfs.Dir): the source file
// it was met as, its outputs (outputs.Mesh, made by the tree's store) and
// the last stat a burst of requests shares (Recent). The tree's own
// Stat, ReadDir and Open resolve a mesh's names through one, and so does
// every mesh folder node of the mount (package fs), which keeps only what
// the kernel was told beside it. Its methods are safe for concurrent use.
type Mesh struct {
	t    *FS
	dir  *Folder // the source folder the mesh is in
	path string
	file source.File // the source file it was met as
	mesh *outputs.Mesh
	// recent is the source's last stat, shared by a burst's requests.
	recent Recent
}

// Mesh is the folder of source entry e (a SourceMesh) of source folder d,
// whose stat, taken at e.At, stands for the requests that follow.
func (t *FS) Mesh(d *Folder, e *SourceEntry) *Mesh {
	m := &Mesh{t: t, dir: d, path: e.Path, file: source.FromStat(&e.Stat).File, mesh: e.Mesh}
	m.Remember(&e.Stat, e.At)
	return m
}

// Path is the source file's path.
func (m *Mesh) Path() string { return m.path }

// Outputs is what the folder holds and how each file is made.
func (m *Mesh) Outputs() *outputs.Mesh { return m.mesh }

// Remember keeps st, a stat of the source taken at moment at (a lookup's
// or a listing's), for the requests that follow (Recent).
func (m *Mesh) Remember(st *syscall.Stat_t, at Moment) { m.recent.Remember(st, at) }

// Forget drops the stat kept: the next request stats the source.
func (m *Mesh) Forget() { m.recent.Forget() }

// SourceStat stats the source, or reuses a stat of the same burst
// (Recent), its permissions narrowed by the files its outputs are
// made from (Narrow). It is the folder's stat whatever the file
// at the path is now.
func (m *Mesh) SourceStat() (*syscall.Stat_t, error) {
	return m.recent.Stat(m.dir, m.path, func(st *syscall.Stat_t) {
		Narrow(m.mesh, st, m.t.versions.Set(m.path).Paths())
	})
}

// Stat returns the source's stat and the version of its outputs now, or
// ESTALE once the source is no longer the file the folder was met as
// (Versioned).
func (m *Mesh) Stat() (*syscall.Stat_t, source.Version, error) {
	st, err := m.SourceStat()
	if err != nil {
		return nil, source.Version{}, err
	}
	return Versioned(st, m.file, m.path, &m.t.versions)
}

// Renarrowed is st, the source's stat for version v taken before a scan or
// a conversion, with the permissions of the source as they are now when
// it is still v (Renarrowed): what the work found may narrow them.
func (m *Mesh) Renarrowed(st *syscall.Stat_t, v source.Version) *syscall.Stat_t {
	if now, nv, err := m.Stat(); err == nil {
		return Renarrowed(st, v, now, nv)
	}
	return st
}

// Listed is what a listing of the folder or of its chunks/ was made from:
// the source's stat, its version and that version's scan. Entries looked
// up right after the listing are answered from it (KnownSize).
type Listed struct {
	Stat    *syscall.Stat_t
	Version source.Version
	Scan    *store.ScanResult
}

// List is the folder's entries now (store.Listing: converting nothing),
// what they were made from, whether the scan was in memory already (warm)
// and whether the listing is final for this version.
func (m *Mesh) List(ctx context.Context) (files []outputs.Entry, l *Listed, warm, final bool, err error) {
	st, v, err := m.Stat()
	if err != nil {
		return nil, nil, false, false, err
	}
	files, r, warm, final, err := m.t.st.Listing(ctx, m.mesh, v)
	if err != nil {
		return nil, nil, warm, false, err
	}
	return files, &Listed{Stat: st, Version: v, Scan: r}, warm, final, nil
}

// Chunks is chunks/'s entries now and what they were made from.
func (m *Mesh) Chunks(ctx context.Context) ([]outputs.Entry, *Listed, error) {
	st, v, err := m.Stat()
	if err != nil {
		return nil, nil, err
	}
	r, err := m.t.st.Scan(ctx, m.mesh, v)
	if err != nil {
		return nil, nil, err
	}
	return outputs.ChunkEntries(r.Chunks), &Listed{Stat: st, Version: v, Scan: r}, nil
}

// Entry is the folder's entry name as the folder holds it now, known
// without converting (store.Holds), with the stat and version it was found
// for: fs.ErrNotExist when it is not there; keep is then false when the
// absence may end without any change of a source (a mesh that converts
// after all). A Stat error (ESTALE) is returned as it is.
func (m *Mesh) Entry(ctx context.Context, name string) (e outputs.Entry, st *syscall.Stat_t, v source.Version, keep bool, err error) {
	e, ok := m.mesh.Entry(name)
	if !ok {
		return e, nil, v, true, fs.ErrNotExist
	}
	if st, v, err = m.Stat(); err != nil {
		return e, nil, v, true, err
	}
	holds, keep, err := m.t.st.Holds(ctx, m.mesh, v, e)
	if err == nil && !holds {
		err = fs.ErrNotExist
	}
	return e, st, v, keep, err
}

// Chunk reports (nil) whether chunks/ of version v holds name, else
// fs.ErrNotExist.
func (m *Mesh) Chunk(ctx context.Context, v source.Version, name string) error {
	r, err := m.t.st.Scan(ctx, m.mesh, v)
	if err != nil {
		return err
	} else if !slices.Contains(r.Chunks, name) {
		return fs.ErrNotExist
	}
	return nil
}

// KnownSize is the size of header.json (header) or of chunk, known from
// listing l without converting or loading anything (store.KnownSizeIn).
func (m *Mesh) KnownSize(l *Listed, header bool, chunk string) (int64, bool) {
	return m.t.st.KnownSizeIn(m.mesh, l.Scan, l.Version, header, chunk)
}

// ChunkCheap reports (nil) whether the size of chunk name of the source as
// it is now is known without loading it (store.ChunkCheap; a Stat error
// as it is).
func (m *Mesh) ChunkCheap(ctx context.Context, name string) error {
	_, v, err := m.Stat()
	if err != nil {
		return err
	}
	return m.t.st.ChunkCheap(ctx, m.mesh, v, name)
}

// OpenRaw opens the source for a raw chunk's window when it is still
// version v: ESTALE when it was replaced since (the chunk table is not
// this file's).
func (m *Mesh) OpenRaw(v source.Version) (*os.File, error) {
	return source.OpenSame(m.path, func(st *syscall.Stat_t) bool { return source.FromStat(st).Same(v.Ident) })
}
