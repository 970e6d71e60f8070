// Package vfstest compares trees (vfs.Tree) in tests: a folder read with
// the os package (what a program sees of a mount, or of what convert
// wrote), and a whole tree walked into a snapshot, entry by entry and byte
// for byte.
package vfstest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/meshfs/meshfs/vfs"
)

// OS is the folder dir as a Tree read with the os package: names are
// Lstat'ed (a link is not followed), files opened with os.Open. Versions
// are not known (Info.Version is "").
func OS(dir string) vfs.Tree { return osTree{dir} }

type osTree struct{ dir string }

func (m osTree) path(name string) string { return filepath.Join(m.dir, filepath.FromSlash(name)) }

func infoOf(fi iofs.FileInfo) vfs.Info {
	st := fi.Sys().(*syscall.Stat_t)
	return vfs.Info{Name: fi.Name(), Mode: fi.Mode(), Size: fi.Size(), ModTime: fi.ModTime(), Uid: st.Uid, Gid: st.Gid}
}

func (m osTree) Stat(_ context.Context, name string) (vfs.Info, error) {
	fi, err := os.Lstat(m.path(name))
	if err != nil {
		return vfs.Info{}, err
	}
	i := infoOf(fi)
	if name == "" {
		i.Name = ""
	}
	return i, nil
}

func (m osTree) ReadDir(ctx context.Context, name string) ([]vfs.Info, error) {
	ents, err := os.ReadDir(m.path(name))
	if err != nil {
		return nil, err
	}
	var list []vfs.Info
	for _, e := range ents {
		i, err := m.Stat(ctx, Join(name, e.Name()))
		if err != nil {
			return nil, err
		}
		list = append(list, i)
	}
	return list, nil
}

type osFile struct {
	*os.File
	info vfs.Info
}

func (f osFile) Info() vfs.Info { return f.info }

func (m osTree) Open(_ context.Context, name string) (vfs.File, error) {
	f, err := os.Open(m.path(name))
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return osFile{f, infoOf(fi)}, nil
}

// Join is the tree name of the entry elem of the folder dir.
func Join(dir, elem string) string {
	if dir == "" {
		return elem
	}
	return dir + "/" + elem
}

// Entry is one entry of a tree as Snapshot found it.
type Entry struct {
	// Info is Stat's.
	Info vfs.Info
	// Sum is the SHA-256 of a regular file's bytes, in hex.
	Sum string
	// Err is Stat's or the read's error: Info and Sum are then not known.
	Err error
}

// Snapshot walks the whole tree: every entry's Stat and every regular
// file's bytes, by name. A folder that cannot be listed fails the test;
// an entry that cannot be stat'ed or read is recorded with its error. A
// file whose bytes are not as many as its Stat says fails the test.
func Snapshot(t testing.TB, tr vfs.Tree) map[string]Entry {
	t.Helper()
	ctx := context.Background()
	out := map[string]Entry{}
	var walk func(dir string)
	walk = func(dir string) {
		list, err := tr.ReadDir(ctx, dir)
		if err != nil {
			t.Fatalf("ReadDir(%q): %v", dir, err)
		}
		for _, e := range list {
			p := Join(dir, e.Name)
			i, err := tr.Stat(ctx, p)
			if err != nil {
				out[p] = Entry{Err: err}
				continue
			}
			en := Entry{Info: i}
			switch {
			case i.IsDir():
				walk(p)
			case i.Mode.IsRegular():
				b, err := ReadAll(tr, p)
				if err != nil {
					out[p] = Entry{Err: err}
					continue
				}
				if int64(len(b)) != i.Size {
					t.Errorf("%s: %d bytes read, Stat says %d", p, len(b), i.Size)
				}
				en.Sum = fmt.Sprintf("%x", sha256.Sum256(b))
			}
			out[p] = en
		}
	}
	walk("")
	return out
}

// ReadAll reads the file name of tr whole.
func ReadAll(tr vfs.Tree, name string) ([]byte, error) {
	f, err := tr.Open(context.Background(), name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.NewSectionReader(f, 0, 1<<40))
}

// Lines renders a snapshot as the lines that are compared: line gives an
// entry's, "" leaving the entry out.
func Lines(s map[string]Entry, line func(name string, e Entry) string) map[string]string {
	out := map[string]string{}
	for p, e := range s {
		if l := line(p, e); l != "" {
			out[p] = l
		}
	}
	return out
}

// Agree fails the test where the two trees' lines (named an and bn)
// differ, or when both are empty.
func Agree(t testing.TB, an string, a map[string]string, bn string, b map[string]string) {
	t.Helper()
	var names []string
	for p := range a {
		names = append(names, p)
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			names = append(names, p)
		}
	}
	slices.Sort(names)
	bad := 0
	for _, p := range names {
		if a[p] != b[p] {
			if bad++; bad <= 20 {
				t.Errorf("%s:\n  %s: %q\n  %s: %q", p, an, a[p], bn, b[p])
			}
		}
	}
	if bad > 20 {
		t.Errorf("... %d entries differ in all", bad)
	}
	if len(a) == 0 {
		t.Errorf("empty trees")
	}
	t.Logf("%d entries agree", len(names)-bad)
}
