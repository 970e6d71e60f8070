package outputs

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/internal/srcfile"
)

// Walk calls fn for every mesh file under root, by the mount's rule of
// what shows as a mesh folder: a regular file that a format claims (its
// first bytes sniffed), except companion files (a .msh.blob beside its
// .msh). Symbolic links are not followed and special files are never
// opened. Files come in lexical order; rel is the path relative to root,
// slash-separated ("." when root is itself a mesh file). A folder or file
// that cannot be read is handed to fn with its error and no mesh. Walk
// returns fn's first error, or root's own. A root that is a symbolic link
// to a folder is followed; no link below it is, and no folder is waited on
// (srcfile.WalkDir).
func Walk(root string, fn func(rel string, m *Mesh, err error) error) error {
	// A mesh's path is its real, absolute one (Open), so its tree is the
	// root's: asset roots are looked for beneath it.
	tree := filepath.Clean(root)
	if real, err := RealPath(root); err == nil {
		tree = real
	}
	// srcfile.WalkDir: a folder swapped for a link or a FIFO during the
	// walk fails at once, neither followed nor waited on.
	return srcfile.WalkDir(root, func(path string, de fs.DirEntry, err error) error {
		rel, rerr := filepath.Rel(root, path)
		if rerr != nil {
			rel = path
		}
		rel = filepath.ToSlash(rel)
		if err != nil {
			if path == root {
				return err
			}
			return fn(rel, nil, err)
		}
		if !de.Type().IsRegular() {
			return nil
		}
		if IsCompanion(path) {
			return nil
		}
		m, err := Open(path)
		if err != nil {
			return fn(rel, nil, err)
		}
		if m == nil {
			return nil
		}
		m.Tree = tree
		return fn(rel, m, nil)
	})
}

// IsCompanion reports whether the file at path is a companion of another
// file beside it (a .msh.blob beside its .msh): it belongs to that mesh's
// folder and has none of its own.
func IsCompanion(path string) bool {
	return formats.IsCompanion(filepath.Base(path), InFolder(filepath.Dir(path)))
}

// InFolder is the siblings function of formats.IsCompanion and
// formats.IsDependency for files in the folder dir on disk as it is now:
// whether dir holds an entry name (a link counts, not followed).
func InFolder(dir string) func(name string) bool {
	return func(name string) bool {
		_, err := os.Lstat(filepath.Join(dir, name))
		return err == nil
	}
}

// ErrorLine renders err, the failure of the source at path, on one line
// for a list of failures (.meshfs/errors.txt, `meshfs check`): name, then
// the errors separated by "; ", each without its own leading copy of
// abs (the source's path as the error names it).
func ErrorLine(name, abs string, err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(strings.TrimSpace(l), abs+": ")
	}
	return name + ": " + strings.Join(lines, "; ")
}
