package source

import (
	"errors"
	"hash/fnv"
	"io"
	"os"
	"path"
	"syscall"

	"github.com/meshfs/meshfs/internal/archive"
)

// Stats as the mount shows an archive's entries: an entry of the archive
// file A is a file or folder with A's device, owner, group and change
// time, its own size and modification time (an implicit folder's: A's),
// the permission bits both A and the entry grant (a folder searchable where
// readable), and an inode number made of A's identity (device, inode, size,
// modification time) and the entry's path. So one version of an archive
// always shows the same entries, and a changed archive shows every entry
// as a new file (FromStat differs): whatever was made from the old
// ones is stale.

// SysLstat is syscall.Lstat of p, and for a path inside an archive the
// stat of its entry (above).
func (v *Packed) SysLstat(p string, st *syscall.Stat_t) error {
	err := syscall.Lstat(p, st)
	if err != syscall.ENOTDIR {
		return err
	}
	return v.statEntry(p, st, err)
}

// SysStat is syscall.Stat of p, and for a path inside an archive the stat
// of its entry (above).
func (v *Packed) SysStat(p string, st *syscall.Stat_t) error {
	err := syscall.Stat(p, st)
	if err != syscall.ENOTDIR {
		return err
	}
	return v.statEntry(p, st, err)
}

func (v *Packed) statEntry(p string, st *syscall.Stat_t, err error) error {
	w, ok := v.locate(p, false)
	if !ok || w.rel == "" {
		return err
	}
	e, found := w.a.Lookup(w.rel)
	if !found {
		return syscall.ENOENT
	}
	ast, _ := w.afi.Sys().(*syscall.Stat_t)
	if ast == nil {
		return err
	}
	entryStat(e, path.Join(w.pre, e.Path), ast, st)
	return nil
}

// EntryStat fills st with the stat of entry e of the archive file whose
// stat is ast (the rule above).
func EntryStat(e *archive.Entry, ast, st *syscall.Stat_t) { entryStat(e, e.Path, ast, st) }

// entryStat is EntryStat of an entry at path full inside the archive file
// (beneath the archives nested in it that hold it).
func entryStat(e *archive.Entry, full string, ast, st *syscall.Stat_t) {
	*st = *ast
	h := fnv.New64a()
	var b [8]byte
	for _, v := range []uint64{ast.Dev, ast.Ino, uint64(ast.Size), uint64(ast.Mtim.Nano())} {
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		h.Write(b[:])
	}
	h.Write([]byte(full))
	st.Ino = h.Sum64() | 1<<63
	perm := uint32(e.Mode.Perm()) & ast.Mode & 0o777
	if e.IsDir() {
		st.Mode = syscall.S_IFDIR | perm | (perm&0o444)>>2
		st.Size, st.Nlink = 0, 2
	} else {
		st.Mode = syscall.S_IFREG | perm
		st.Size, st.Nlink = e.Size, 1
	}
	st.Blocks = (st.Size + 511) / 512
	if !e.Implicit() && !e.Modified.IsZero() {
		st.Mtim = syscall.NsecToTimespec(e.Modified.UnixNano())
		st.Atim = st.Mtim
	}
}

// InArchive reports whether p is an archive file (a regular file that is
// an archive by its first bytes) or a path inside one.
func (v *Packed) InArchive(p string) bool {
	fi, err := os.Lstat(p)
	if err == nil {
		if !fi.Mode().IsRegular() {
			return false
		}
		a, _, _, _ := v.Archive(p)
		return a != nil
	}
	if !errors.Is(err, syscall.ENOTDIR) {
		return false
	}
	_, _, _, _, ok := v.inArchive(p)
	return ok
}

// ReadEntry reads into p at off from the entry at path (a path inside an
// archive) while its stat (SysLstat) is one same accepts, else fails with
// syscall.ESTALE, through the entry's kept reader (Packed.Reader); it
// returns fewer bytes only at the entry's end.
func (v *Packed) ReadEntry(path string, same func(*syscall.Stat_t) bool, p []byte, off int64) (int, error) {
	var st syscall.Stat_t
	if err := v.SysLstat(path, &st); err != nil {
		return 0, err
	} else if !same(&st) {
		return 0, syscall.ESTALE
	}
	f, err := v.Reader(path)
	if err != nil || off >= f.Size() {
		return 0, err
	}
	n, err := f.ReadAt(p[:min(int64(len(p)), f.Size()-off)], off)
	if err == io.EOF {
		err = nil
	}
	return n, err
}
