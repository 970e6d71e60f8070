package vfstest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/store"
	"github.com/meshfs/meshfs/vfs"
)

// Tree is the tree of the source folder root, made within lim (nil:
// outputs.DefaultLimits) without a watcher or a disk cache, as `meshfs
// convert` makes it; closed when the test ends.
func Tree(t testing.TB, root string, lim *outputs.Limits) *vfs.FS {
	t.Helper()
	var l *outputs.Limits
	if lim != nil {
		c := *lim
		l = &c
	}
	tr, err := vfs.New(vfs.Config{Source: root, NoWatch: true, Store: store.Config{Limits: l}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.Close)
	return tr
}

// Name is the tree name of the file path beneath the tree's root.
func Name(t testing.TB, root, path string) string {
	t.Helper()
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		t.Fatalf("%s is not beneath %s (%v)", path, root, err)
	}
	if rel == "." {
		return ""
	}
	return filepath.ToSlash(rel)
}

// Mesh is the tree that shows the mesh file path, within lim, and the
// mesh's folder's name in it. The tree is that of the file system's root,
// as `meshfs convert FILE` reads a file: asset roots, materials and
// textures are found at any height above it, as outputs.Open's mesh finds
// them.
func Mesh(t testing.TB, path string, lim *outputs.Limits) (*vfs.FS, string) {
	t.Helper()
	real, err := outputs.RealPath(path)
	if err != nil {
		t.Fatal(err)
	}
	return Tree(t, "/", lim), Name(t, "/", real)
}

// Made is one entry of a mesh's folder as Folder made it.
type Made struct {
	// Name is slash-separated beneath the mesh's folder ("header.json",
	// "chunks/VERT"); a folder's ends in "/".
	Name string
	// Info is the entry's Stat once made.
	Info vfs.Info
	// Data is a file's bytes (nil for a folder).
	Data []byte
}

// Folder makes the folder name of tr as `meshfs convert` does
// (vfs.MakeFolder), reading each file whole. It returns the entries of
// the last pass in listing order, a folder before what it holds, and the
// folder's failure (MakeFolder's).
func Folder(ctx context.Context, tr vfs.Tree, name string) ([]Made, error) {
	var made []Made
	last := 0
	_, err := vfs.MakeFolder(ctx, tr, name, func(pass int, rel string, i vfs.Info, f vfs.File) error {
		if pass != last {
			made, last = nil, pass
		}
		if f == nil {
			made = append(made, Made{Name: rel + "/", Info: i})
			return nil
		}
		b, err := io.ReadAll(io.NewSectionReader(f, 0, i.Size))
		if err == nil {
			made = append(made, Made{Name: rel, Info: i, Data: b})
		}
		return err
	})
	return made, err
}

// Files is made by name, a folder's name ending in "/" with nil bytes.
func Files(made []Made) map[string][]byte {
	out := map[string][]byte{}
	for _, m := range made {
		out[m.Name] = m.Data
	}
	return out
}

// Convert writes the folder of the mesh file path into dir (created as
// needed) as `meshfs convert FILE` does: made within lim by the tree that
// shows it (Mesh, Folder), each file and folder with the mode the tree
// shows, its owner's to write, less the umask. It returns the folder's
// failure (Folder's).
func Convert(t testing.TB, path string, lim *outputs.Limits, dir string) error {
	t.Helper()
	tr, name := Mesh(t, path, lim)
	return WriteFolder(t, tr, name, dir)
}

// WriteFolder makes the folder name of tr (Folder) and writes it into
// dir as Convert says; it returns the folder's failure.
func WriteFolder(t testing.TB, tr vfs.Tree, name, dir string) error {
	t.Helper()
	ctx := context.Background()
	made, ferr := Folder(ctx, tr, name)
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	mask := os.FileMode(umask)
	info, err := tr.Stat(ctx, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	mkdir := func(p string, i vfs.Info) {
		mode := (i.Mode.Perm() | 0o700) &^ mask
		if err := os.MkdirAll(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	mkdir(dir, info)
	for _, m := range made {
		p := filepath.Join(dir, filepath.FromSlash(m.Name))
		if strings.HasSuffix(m.Name, "/") {
			mkdir(p, m.Info)
			continue
		}
		mode := (m.Info.Mode.Perm() | 0o600) &^ mask
		if err := os.WriteFile(p, m.Data, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	// The folder's mode narrowed by what the conversion found.
	if i, err := tr.Stat(ctx, name); err == nil {
		os.Chmod(dir, (i.Mode.Perm()|0o700)&^mask)
	}
	return ferr
}

// Meshes are the names of tr's mesh folders (vfs.SourceMesh) beneath
// the folder dir, found by listings alone, in lexical order: folders
// and archives are walked. A folder that cannot be listed fails the test.
func Meshes(t testing.TB, tr vfs.Tree, dir string) []string {
	t.Helper()
	var out []string
	var walk func(dir string)
	walk = func(dir string) {
		list, err := tr.ReadDir(context.Background(), dir)
		if err != nil {
			t.Fatalf("ReadDir(%q): %v", dir, err)
		}
		for _, e := range list {
			switch p := Join(dir, e.Name); e.Kind {
			case vfs.SourceMesh:
				out = append(out, p)
			case vfs.SourceFolder, vfs.SourceArchive:
				walk(p)
			}
		}
	}
	walk(dir)
	return out
}
