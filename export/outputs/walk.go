package outputs

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/meshfs/meshfs/decode/formats"
)

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
