package vfs

// What a door that keeps nodes between requests (the mount, package fs)
// asks of the tree beside Stat, ReadDir and Open: the stat each node
// shows, a mesh folder's listing, the made files' bytes, the hidden
// .meshfs folder (MetaName) and its statistics. The door keeps only what
// it told its clients of each answer.

import (
	"context"
	"path/filepath"
	"syscall"
	"time"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
	meshstats "github.com/meshfs/meshfs/internal/store/stats"
)

// DirStat is a folder's stat made from st: a source folder's, or a mesh's
// folder made from the file st (ReadOnlyMode, searchable where readable).
func DirStat(st *syscall.Stat_t) *syscall.Stat_t {
	a := *st
	a.Mode = syscall.S_IFDIR | ReadOnlyMode(st.Mode, true)
	a.Size, a.Blocks, a.Nlink = 0, 0, 2
	return &a
}

// FileStat is the stat of a file of size bytes made from the source st:
// its owner, times and permissions, read-only.
func FileStat(st *syscall.Stat_t, size int64) *syscall.Stat_t {
	a := PlainStat(st)
	a.Size, a.Nlink, a.Blksize, a.Blocks = size, 1, 4096, (size+511)/512
	return a
}

// PlainStat is the stat of the source file st passed through: st,
// read-only.
func PlainStat(st *syscall.Stat_t) *syscall.Stat_t {
	a := *st
	a.Mode = syscall.S_IFREG | ReadOnlyMode(st.Mode, false)
	return &a
}

// Attr is the stat e shows as: a folder's for a folder, an archive and a
// mesh (DirStat), PlainStat for a file passed through, a link's as it is.
// A made file's (a PNG, a text) depends on its bytes (FileStat).
func (e *SourceEntry) Attr() *syscall.Stat_t {
	switch e.Kind {
	case SourceFolder, SourceArchive, SourceMesh:
		return DirStat(&e.Stat)
	case SourceFile:
		return PlainStat(&e.Stat)
	}
	return &e.Stat
}

// PassedStat is the stat of the source file at path passed through
// (PlainStat): of fd, its open file, if not -1, else of the file at path
// now, ESTALE once that is no longer file (Versioned).
func (t *FS) PassedStat(path string, file source.File, fd int) (*syscall.Stat_t, error) {
	var st syscall.Stat_t
	if fd != -1 {
		if err := syscall.Fstat(fd, &st); err != nil {
			return nil, err
		}
	} else if err := t.view.SysLstat(path, &st); err != nil {
		return nil, err
	} else if source.FromStat(&st).File != file {
		return nil, syscall.ESTALE
	}
	return PlainStat(&st), nil
}

// MadeFailed reports whether e, a texture's PNG that failed to be made,
// is known to fail now: NAME.EXT.error.txt takes its place in its folder's
// listing.
func (t *FS) MadeFailed(e *SourceEntry) bool {
	return e.Kind == SourcePNG && t.st.TextureFailure(e.Path, &e.Stat) != ""
}

// Listing is the mesh folder's entries (chunks: its chunks/'s) now,
// converting nothing, what they were made from, and whether they are
// final for this source version (chunks/: when it lists any). A cold
// listing of the folder starts a pass over the meshes after it in its
// source folder (Config.Ahead): a walker is probably entering them next.
func (m *Mesh) Listing(ctx context.Context, chunks bool) ([]Entry, *Listed, bool, error) {
	var files []outputs.Entry
	var l *Listed
	var err error
	warm, final := true, false
	if chunks {
		files, l, err = m.Chunks(ctx)
		final = len(files) > 0
	} else {
		files, l, warm, final, err = m.List(ctx)
	}
	if err != nil {
		return nil, nil, false, err
	}
	if !warm && m.t.ahead != nil {
		m.dir.ScanAhead(m.t.ahead, filepath.Base(m.path), m.t.st.ScanAhead)
	}
	ents := make([]Entry, len(files))
	for i, e := range files {
		ents[i] = Entry{Name: e.Name, Kind: syscall.S_IFREG, Ino: e.Ino}
		if e.Dir {
			ents[i].Kind = syscall.S_IFDIR
		}
	}
	return ents, l, final, nil
}

// Stats is what stats.json reports: the store's figures, the tree's
// sniffs and passes ahead, and m, what the door counts of itself.
func (t *FS) Stats(m meshstats.MountCounts) meshstats.Stats {
	m.Start, m.Sniffs = t.start, t.sniffer.Count()
	if t.ahead != nil {
		m.ScansAhead, m.SniffsAhead = t.ahead.Scans.Load(), t.ahead.Sniffs.Load()
	}
	return t.st.Stats(m)
}

// MetaFile is the renderer of .meshfs's file name (meshstats.MetaFile) of
// the Stats of counts, what the door counts at that moment.
func (t *FS) MetaFile(name string, counts func() meshstats.MountCounts) (func() []byte, bool) {
	return meshstats.MetaFile(name, func() meshstats.Stats { return t.Stats(counts()) })
}

// MetaList is the listing of .meshfs.
func MetaList() []Entry {
	var ents []Entry
	for i, n := range meshstats.MetaNames() {
		ents = append(ents, Entry{Name: n, Kind: syscall.S_IFREG, Ino: uint64(i + 1)})
	}
	return ents
}

// MetaStat is the stat of .meshfs (dir: the root's times) or of one of its
// files, of size bytes rendered at at: the daemon's own
// (meshstats.MetaOwner).
func (t *FS) MetaStat(dir bool, size int64, at time.Time) (*syscall.Stat_t, error) {
	var st syscall.Stat_t
	if dir {
		if err := syscall.Stat(t.source, &st); err != nil {
			return nil, err
		}
		st = *DirStat(&st)
	} else {
		st.Size, st.Nlink = size, 1
		st.Mtim = syscall.NsecToTimespec(at.UnixNano())
		st.Atim, st.Ctim = st.Mtim, st.Mtim
	}
	st.Uid, st.Gid, st.Mode = meshstats.MetaOwner(dir)
	return &st, nil
}

// StopAhead ends the passes ahead of a walker and starts no more (Close
// does it first).
func (t *FS) StopAhead() {
	if t.ahead != nil {
		t.ahead.Close()
	}
}

// Statfs is the source's file system as the tree shows it: nothing can be
// written to it (no free blocks or inodes).
func (t *FS) Statfs() (*syscall.Statfs_t, error) {
	var s syscall.Statfs_t
	err := syscall.Statfs(t.source, &s)
	s.Bfree, s.Bavail, s.Ffree = 0, 0, 0
	return &s, err
}
