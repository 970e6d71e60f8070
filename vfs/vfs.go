// Package vfs is the tree meshfs shows, apart from any door to it: a source
// folder mirrored, each mesh or model file a folder of its outputs, every
// other file passed through. The FUSE mount (package fs), `meshfs serve`
// (package serve), `convert` and the pictures are each a small adapter over
// a Tree, in the manner of rclone's vfs.
//
// Names are slash-separated paths relative to the tree's root: "" is the
// root, "a/b.ply/b.glb" an output of the mesh a/b.ply. A name holding a ".."
// or "." element, a backslash or a NUL, or starting or ending with "/", is
// invalid and gets fs.ErrInvalid; it never reaches the source.
//
// Errors are Go values, never errno: they wrap fs.ErrNotExist,
// fs.ErrPermission, fs.ErrInvalid or ErrStale where one of those is what
// happened (errors.Is), and otherwise say what failed (a conversion's error
// names the file, offset and field). What the kernel was told, and errno
// mapping, stay in package fs.
//
// A door that keeps nodes between requests (the mount) asks the tree the
// rest (door.go): what a source folder's entry shows as (SourceLookup,
// List), a mesh folder (Mesh), the stat each node shows (DirStat,
// FileStat, SourceEntry.Attr), the made files (Made) and the hidden
// .meshfs folder (MetaFile, Stats); the tree then works ahead of the
// walker it serves (Config.Ahead).
package vfs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"
)

// ErrStale is the error of a read whose version's bytes are no longer to
// be had: the source changed after the File was opened and memory no longer
// holds the bytes of the version it stood for. Open the name again.
var ErrStale = errors.New("vfs: the source changed since it was opened")

// Info describes one entry of a Tree.
type Info struct {
	// Name is the entry's base name ("" for the root).
	Name string
	// Mode is fs.ModeDir for a folder, 0 for a regular file, with the
	// permission bits the mount shows: the source's without write bits,
	// narrowed by every file an output was made from (DESIGN.md,
	// Permissions).
	Mode fs.FileMode
	// Size is the exact size in bytes of a file (0 for a folder). In a
	// ReadDir entry it is -1 when only a conversion can tell it; Stat
	// always tells it.
	Size int64
	// ModTime is the source's modification time.
	ModTime time.Time
	// Uid and Gid are the source's owner and group.
	Uid, Gid uint32
	// Version is an opaque token that differs whenever the entry's bytes
	// may differ (the source version an output is made from, a plain file's
	// identity): an HTTP ETag. It is the same for the same bytes of the
	// same source version, in this process and, where the disk cache holds
	// them, the next.
	Version string
	// Kind is what an entry of a source folder shows as (SourceMesh,
	// SourceFile: passed through, …; the root: SourceFolder); 0 for what a
	// mesh's folder holds (its outputs, chunks/ and its chunks).
	Kind SourceKind
}

// IsDir reports whether the entry is a folder.
func (i Info) IsDir() bool { return i.Mode.IsDir() }

// A File is one version of a file's bytes, open for reading at any offset
// by any number of goroutines. Close releases what holds the bytes.
type File interface {
	io.ReaderAt
	io.Closer
	// Info is the file's Info as opened (its exact Size and Version).
	Info() Info
}

// Tree is the read side every door uses. Its methods are safe for
// concurrent use. ReadDir converts nothing; Stat and Open of an output
// whose size or bytes need a conversion convert it, once for all callers,
// within the tree's limits, and return when ctx ends.
type Tree interface {
	// Stat describes name.
	Stat(ctx context.Context, name string) (Info, error)
	// ReadDir lists the folder name, sorted by name.
	ReadDir(ctx context.Context, name string) ([]Info, error)
	// Open opens the file name for reading.
	Open(ctx context.Context, name string) (File, error)
}
