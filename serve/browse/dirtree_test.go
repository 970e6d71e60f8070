package browse

import (
	"context"

	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/meshfs/meshfs/vfs"
)

// dirTree is a vfs.Tree over a plain folder, for tests: every file passes
// through, with the name rules of the vfs contract. A file whose name ends
// in one of unknown has size -1 in ReadDir, as an output whose size needs a
// conversion has in the real tree.
type dirTree struct {
	root    *os.Root
	unknown []string
}

var _ vfs.Tree = (*dirTree)(nil)

func newDirTree(dir string, unknown ...string) (*dirTree, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &dirTree{root: r, unknown: unknown}, nil
}

// local is the os.Root name of the tree name, or fs.ErrInvalid.
func local(name string) (string, error) {
	if name == "" {
		return ".", nil
	}
	if !fs.ValidPath(name) || strings.ContainsAny(name, "\\\x00") {
		return "", fmt.Errorf("%q: %w", name, fs.ErrInvalid)
	}
	return name, nil
}

func infoOf(name string, fi fs.FileInfo) vfs.Info {
	i := vfs.Info{Name: name, Mode: fi.Mode() &^ 0o222, Size: fi.Size(), ModTime: fi.ModTime()}
	if fi.IsDir() {
		i.Size = 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		i.Uid, i.Gid = st.Uid, st.Gid
		i.Version = fmt.Sprintf("%x-%x-%x", st.Ino, fi.ModTime().UnixNano(), fi.Size())
	}
	return i
}

func base(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

func (t *dirTree) Stat(ctx context.Context, name string) (vfs.Info, error) {
	p, err := local(name)
	if err != nil {
		return vfs.Info{}, err
	}
	fi, err := t.root.Stat(p)
	if err != nil {
		return vfs.Info{}, err
	}
	return infoOf(base(name), fi), nil
}

// open opens the tree name in the folder.
func (t *dirTree) open(name string) (*os.File, error) {
	p, err := local(name)
	if err != nil {
		return nil, err
	}
	return t.root.Open(p)
}

func (t *dirTree) ReadDir(ctx context.Context, name string) ([]vfs.Info, error) {
	f, err := t.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var out []vfs.Info
	for _, de := range des {
		fi, err := de.Info()
		if err != nil {
			return nil, err
		}
		i := infoOf(de.Name(), fi)
		for _, u := range t.unknown {
			if !fi.IsDir() && strings.HasSuffix(de.Name(), u) {
				i.Size = -1
			}
		}
		out = append(out, i)
	}
	// os.File.ReadDir returns directory order; the contract sorts by name.
	slices.SortFunc(out, func(a, b vfs.Info) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

type dirFile struct {
	*os.File
	info vfs.Info
}

func (f dirFile) Info() vfs.Info { return f.info }

func (t *dirTree) Open(ctx context.Context, name string) (vfs.File, error) {
	f, err := t.open(name)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.IsDir() {
		err = fmt.Errorf("%s: is a folder: %w", name, fs.ErrInvalid)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return dirFile{f, infoOf(base(name), fi)}, nil
}
