package decodetest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/meshfs/meshfs/decode"
)

// DirFiles is the disk beneath the folder Root as decode.Files, for tests
// and generators (the mount and convert read through their source view):
// paths are absolute; nothing outside Root is reached (os.Root), a final
// link is not followed, only regular files are opened and never waited on.
// A folder holds no archives.
type DirFiles struct{ Root string }

var _ decode.Files = DirFiles{}

// rel is p beneath Root, or an error.
func (d DirFiles) rel(p string) (string, error) {
	rel, err := filepath.Rel(d.Root, p)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", &fs.PathError{Op: "open", Path: p, Err: fmt.Errorf("not beneath %s", d.Root)}
	}
	return rel, nil
}

func (d DirFiles) root(p string) (*os.Root, string, error) {
	rel, err := d.rel(p)
	if err != nil {
		return nil, "", err
	}
	r, err := os.OpenRoot(d.Root)
	return r, rel, err
}

// Stat implements decode.ProjectFiles.
func (d DirFiles) Stat(p string) (fs.FileInfo, error) {
	r, rel, err := d.root(p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Lstat(rel)
}

// ReadDir implements decode.ProjectFiles.
func (d DirFiles) ReadDir(p string) ([]fs.DirEntry, error) {
	r, rel, err := d.root(p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return fs.ReadDir(r.FS(), filepath.ToSlash(rel))
}

// Open implements decode.ProjectFiles.
func (d DirFiles) Open(p string) (decode.ProjectReader, error) {
	r, rel, err := d.root(p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if fi, err := r.Lstat(rel); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fmt.Errorf("not a regular file")}
	}
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: p, Err: fmt.Errorf("not a regular file")}
	}
	return dirFile{f, fi.Size()}, nil
}

// Layers implements decode.Files: no archives, so root alone.
func (d DirFiles) Layers(root string) []string { return []string{root} }

type dirFile struct {
	*os.File
	size int64
}

func (f dirFile) Size() int64 { return f.size }
