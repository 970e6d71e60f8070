package vfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/meshfs/meshfs/internal/source"
)

// DirTree is the Tree of a plain folder: every file its own bytes, nothing
// converted. It keeps the mount's rules for what it shows: modes without
// write bits (ReadOnlyMode), no symbolic link followed in any
// component (a link is listed with fs.ModeSymlink and cannot be opened),
// only regular files opened, and a file replaced after Open reads as
// ErrStale. It is what a door is tested on without conversions, and what
// serves a folder that is itself a meshfs mount.
type DirTree struct {
	root string
}

var _ Tree = DirTree{}

// Dir returns the Tree of the folder root (its real path is what is
// shown: a link in root's own path is resolved once, here).
func Dir(root string) (DirTree, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return DirTree{}, err
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return DirTree{}, err
	}
	return DirTree{root: abs}, nil
}

// abs is the source path of name, once name is valid.
func (d DirTree) abs(op, name string) (string, error) {
	if !validName(name) {
		return "", pathError(op, name, fs.ErrInvalid)
	}
	if name == "" {
		return d.root, nil
	}
	return d.root + "/" + name, nil
}

// Stat describes name without following a link: its folder is opened
// following none, and the entry is stat'ed in it.
func (d DirTree) Stat(ctx context.Context, name string) (Info, error) {
	info, _, err := d.stat(ctx, name)
	return info, err
}

// stat is Stat, with the identity of the version described.
func (d DirTree) stat(ctx context.Context, name string) (Info, source.Ident, error) {
	if _, err := d.abs("stat", name); err != nil {
		return Info{}, source.Ident{}, err
	}
	if err := ctx.Err(); err != nil {
		return Info{}, source.Ident{}, pathError("stat", name, err)
	}
	parent, base := d.root, "."
	if name != "" {
		i := strings.LastIndexByte(name, '/')
		parent, base = d.root+"/"+name[:max(i, 0)], name[i+1:]
		if i < 0 {
			parent = d.root
		}
	}
	dir, err := openFolder(parent)
	if err != nil {
		return Info{}, source.Ident{}, pathError("stat", name, err)
	}
	defer dir.Close()
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Info{}, source.Ident{}, pathError("stat", name, err)
	}
	return dirInfo(baseName(name), &st), identOf(&st), nil
}

// ReadDir lists the folder name, each entry stat'ed in it (a link not
// followed).
func (d DirTree) ReadDir(ctx context.Context, name string) ([]Info, error) {
	abs, err := d.abs("readdir", name)
	if err != nil {
		return nil, err
	}
	dir, err := openFolder(abs)
	if err != nil {
		return nil, pathError("readdir", name, err)
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, pathError("readdir", name, err)
	}
	slices.Sort(names)
	out := make([]Info, 0, len(names))
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			return nil, pathError("readdir", name, err)
		}
		var st unix.Stat_t
		if err := unix.Fstatat(int(dir.Fd()), n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue // gone since it was listed
		}
		out = append(out, dirInfo(n, &st))
	}
	return out, nil
}

// Open opens the regular file name, following no link; its reads fail
// with ErrStale once the file is no longer the version opened.
func (d DirTree) Open(ctx context.Context, name string) (File, error) {
	info, id, err := d.stat(ctx, name)
	if err != nil {
		return nil, err
	}
	if !info.Mode.IsRegular() {
		return nil, pathError("open", name, fmt.Errorf("%v: %w", info.Mode.Type(), fs.ErrInvalid))
	}
	abs, _ := d.abs("open", name)
	f, err := openWindow(abs, id, 0, id.Size, info)
	if err != nil {
		return nil, pathError("open", name, err)
	}
	return f, nil
}

// openFolder opens the folder abs following no link: a name through a
// link, or through a file, does not exist in the tree.
func openFolder(abs string) (*os.File, error) {
	f, err := source.OpenFolder(abs)
	if errors.Is(err, source.ErrSymlink) || errors.Is(err, syscall.ENOTDIR) {
		return nil, fmt.Errorf("%w (%w)", fs.ErrNotExist, err)
	}
	return f, err
}

// baseName is the base name of a tree name ("" for the root).
func baseName(name string) string {
	return name[strings.LastIndexByte(name, '/')+1:]
}

// dirInfo is the Info of a plain file or folder of base name name.
func dirInfo(name string, st *unix.Stat_t) Info {
	var typ fs.FileMode
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		typ = fs.ModeDir
	case unix.S_IFREG:
	case unix.S_IFLNK:
		typ = fs.ModeSymlink
	case unix.S_IFIFO:
		typ = fs.ModeNamedPipe
	case unix.S_IFSOCK:
		typ = fs.ModeSocket
	default:
		typ = fs.ModeDevice
	}
	size := st.Size
	if typ == fs.ModeDir {
		size = 0
	}
	return Info{
		Name:    name,
		Mode:    typ | fs.FileMode(ReadOnlyMode(st.Mode&0o7777, typ == fs.ModeDir)),
		Size:    size,
		ModTime: time.Unix(st.Mtim.Unix()),
		Uid:     st.Uid,
		Gid:     st.Gid,
		Version: fmt.Sprintf("%x-%x-%x-%x", st.Dev, st.Ino, st.Size, st.Mtim.Nano()),
	}
}

// identOf is the source.Ident of st.
func identOf(st *unix.Stat_t) source.Ident {
	return source.Ident{File: source.File{Dev: st.Dev, Ino: st.Ino}, Size: st.Size, MtimeNs: st.Mtim.Nano()}
}
