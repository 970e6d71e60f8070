package source

// Open (and Dir) is the one way meshfs opens a source file or a file a
// source names, for the mount, `convert` and every decoder alike. It keeps
// three rules:
//
//   - Only regular files are opened. Every open is O_NONBLOCK, so a FIFO or
//     a device never blocks it, and the descriptor is then checked with
//     fstat: a rename that swaps a special file in after any earlier stat
//     is caught on what was actually opened.
//   - Nothing is followed that meshfs was not asked to follow. Open follows
//     no symbolic link in any component of a path (the mount's paths are
//     real paths beneath its resolved source folder, `convert` resolves the
//     paths a user names once); Dir.Open resolves a file a mesh names
//     beneath the mesh's folder, never out of it.
//   - Folders are opened with O_DIRECTORY|O_NONBLOCK, so a folder swapped
//     for a FIFO fails instead of blocking.
//
// It knows nothing of FUSE or formats, so decoders, exporters and the mount
// share it.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNotRegular is wrapped by the error for a file that is not a regular
// file (a FIFO, a device, a socket, a folder).
var ErrNotRegular = errors.New("not a regular file")

// ErrSymlink is wrapped by the error for a path that would follow a
// symbolic link meshfs was not asked to follow.
var ErrSymlink = errors.New("a symbolic link, not followed")

// noOpenat2 is set when the kernel lacks openat2 (ENOSYS, or EPERM from a
// seccomp filter that does not know it); the opens then fall back to
// O_NOFOLLOW on the last component. Tests set it to check the fallback.
var noOpenat2 atomic.Bool

func init() {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC})
	if err == nil {
		unix.Close(fd)
	} else if err == unix.ENOSYS || err == unix.EPERM {
		noOpenat2.Store(true)
	}
}

// kindError says what a non-regular file is.
type kindError struct{ kind string }

func (e *kindError) Error() string        { return fmt.Sprintf("%v (%s)", ErrNotRegular, e.kind) }
func (e *kindError) Is(target error) bool { return target == ErrNotRegular }

// kind names the file type of mode.
func kind(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFIFO:
		return "fifo"
	case syscall.S_IFCHR:
		return "character device"
	case syscall.S_IFBLK:
		return "block device"
	case syscall.S_IFSOCK:
		return "socket"
	case syscall.S_IFDIR:
		return "directory"
	case syscall.S_IFLNK:
		return "symbolic link"
	}
	return fmt.Sprintf("mode %#o", mode&syscall.S_IFMT)
}

const (
	fileFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY
	dirFlags  = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_DIRECTORY
)

// openat opens path relative to dirfd (or AT_FDCWD) with flags, resolving
// it with resolve (RESOLVE_* flags) where the kernel has openat2, and
// otherwise with O_NOFOLLOW on the last component.
func openat(dirfd int, path string, flags int, resolve uint64) (int, error) {
	if !noOpenat2.Load() {
		fd, err := unix.Openat2(dirfd, path, &unix.OpenHow{Flags: uint64(flags), Resolve: resolve})
		if err != unix.ENOSYS {
			return fd, symlinkErr(err, resolve)
		}
		noOpenat2.Store(true)
	}
	for {
		fd, err := unix.Openat(dirfd, path, flags|unix.O_NOFOLLOW, 0)
		if err == unix.EINTR {
			continue
		}
		return fd, symlinkErr(err, unix.RESOLVE_NO_SYMLINKS)
	}
}

// symlinkErr names what ELOOP and EXDEV mean under the resolve flags used.
func symlinkErr(err error, resolve uint64) error {
	switch {
	case err == unix.ELOOP && resolve&unix.RESOLVE_NO_SYMLINKS != 0:
		return ErrSymlink
	case err == unix.EXDEV && resolve&unix.RESOLVE_BENEATH != 0:
		return fmt.Errorf("%w: it leads out of its folder", ErrSymlink)
	case err == unix.ELOOP && resolve&unix.RESOLVE_NO_MAGICLINKS != 0:
		return fmt.Errorf("%w: a /proc link", ErrSymlink)
	}
	return err
}

// regular fstats fd and closes it unless it is a regular file; it clears
// O_NONBLOCK, which a regular file does not need.
func regular(fd int) (*syscall.Stat_t, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		unix.Close(fd)
		return &st, &kindError{kind(st.Mode)}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &st, nil
}

// OpenFD opens the regular file at path, following no symbolic link in
// any of its components, and returns its descriptor and stat. A file that
// is not regular gives an error wrapping ErrNotRegular and, for the
// caller's checks, its stat.
func OpenFD(path string) (int, *syscall.Stat_t, error) {
	fd, err := openat(unix.AT_FDCWD, path, fileFlags, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return -1, nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	st, err := regular(fd)
	if err != nil {
		return -1, st, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, st, nil
}

// Open opens the regular file at path for reading, following no symbolic
// link in any of its components.
func Open(path string) (*os.File, error) {
	fd, _, err := OpenFD(path)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// OpenSame is Open of a file that must be the one same accepts (its stat
// on the descriptor opened), else syscall.ESTALE: the file was replaced
// since its caller looked it up.
func OpenSame(path string, same func(*syscall.Stat_t) bool) (*os.File, error) {
	fd, st, err := OpenFD(path)
	if err != nil {
		return nil, err
	}
	if !same(st) {
		syscall.Close(fd)
		return nil, syscall.ESTALE
	}
	return os.NewFile(uintptr(fd), path), nil
}

// Dir is an open folder that files are opened beneath.
type Dir struct {
	f *os.File
}

// OpenDir opens the folder at path to open files beneath it, following no
// symbolic link in any component of path.
func OpenDir(path string) (*Dir, error) {
	fd, err := openat(unix.AT_FDCWD, path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{f: os.NewFile(uintptr(fd), path)}, nil
}

// Close closes the folder.
func (d *Dir) Close() error { return d.f.Close() }

// Open opens the regular file called name beneath the folder: a symbolic
// link that leads out of the folder is not followed, nor is a /proc link.
// Where the kernel lacks openat2 no symbolic link is followed, and name
// must be a single file name.
func (d *Dir) Open(name string) (*os.File, error) {
	path := d.f.Name() + "/" + name
	if name == "" || strings.HasPrefix(name, "/") {
		return nil, &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("%q is not a name beneath the folder", name)}
	}
	if strings.Contains(name, "/") && noOpenat2.Load() {
		// O_NOFOLLOW guards only the last component.
		return nil, &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("%q: a path beneath a folder needs openat2, which this kernel lacks", name)}
	}
	fd, err := openat(int(d.f.Fd()), name, fileFlags, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if _, err := regular(fd); err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// OpenFolder opens the folder at path for listing, following no symbolic
// link in any of its components; a FIFO swapped in for it fails at once.
func OpenFolder(path string) (*os.File, error) {
	fd, err := openat(unix.AT_FDCWD, path, dirFlags, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// ReadDir lists the folder at path as os.ReadDir does (sorted by name),
// opening it with OpenFolder.
func ReadDir(path string) ([]fs.DirEntry, error) {
	f, err := OpenFolder(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}

// WalkDir walks the tree at root as filepath.WalkDir does (lexical order,
// fn's SkipDir and SkipAll, a folder's read error handed to fn), with two
// differences: a root that is a symbolic link to a folder is followed (a
// folder a user named), and every folder below it is opened beneath its
// parent's descriptor with neither a link followed nor a wait on a FIFO,
// so one swapped in for a folder during the walk fails at once.
func WalkDir(root string, fn fs.WalkDirFunc) error {
	var err error
	if fi, serr := os.Stat(root); serr == nil && fi.IsDir() {
		open := func() (*os.File, error) {
			fd, err := unix.Open(root, dirFlags, 0)
			if err != nil {
				return nil, &os.PathError{Op: "open", Path: root, Err: err}
			}
			return os.NewFile(uintptr(fd), root), nil
		}
		err = walkDir(root, fs.FileInfoToDirEntry(fi), open, fn)
	} else if fi, lerr := os.Lstat(root); lerr != nil {
		err = fn(root, nil, lerr)
	} else {
		err = walkDir(root, fs.FileInfoToDirEntry(fi), nil, fn)
	}
	if err == fs.SkipDir || err == fs.SkipAll {
		return nil
	}
	return err
}

// walkDir is filepath.WalkDir's walkDir, reading a folder through open.
func walkDir(path string, d fs.DirEntry, open func() (*os.File, error), fn fs.WalkDirFunc) error {
	if err := fn(path, d, nil); err != nil || !d.IsDir() {
		if err == fs.SkipDir && d.IsDir() {
			err = nil
		}
		return err
	}
	dir, err := open()
	var ents []fs.DirEntry
	if err == nil {
		defer dir.Close()
		ents, err = dir.ReadDir(-1)
		slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	}
	if err != nil {
		if err = fn(path, d, err); err != nil {
			if err == fs.SkipDir {
				err = nil
			}
			return err
		}
	}
	for _, e := range ents {
		name, p := e.Name(), filepath.Join(path, e.Name())
		open := func() (*os.File, error) {
			fd, err := openat(int(dir.Fd()), name, dirFlags, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
			if err != nil {
				return nil, &os.PathError{Op: "open", Path: p, Err: err}
			}
			return os.NewFile(uintptr(fd), p), nil
		}
		if err := walkDir(p, e, open, fn); err != nil {
			if err == fs.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}
