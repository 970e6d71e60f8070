package store

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A cache folder is meshfs's own: Prepare creates it (or adopts an empty
// one) and marks it with MarkerName and a CACHEDIR.TAG, and refuses a folder
// holding anything else. Inside it the cache deletes only names of its own
// patterns (an entry name in data/, an entry name with a temporary suffix
// in tmp/), so a file someone put there survives every cleanup.

// MarkerName is the file whose first line (markerLine) marks a folder as a
// meshfs cache folder.
const MarkerName = "meshfs-cache"

// markerLine is the marker's first line: the marker's own version. A
// folder is ours when its marker's first line starts with markerPrefix.
const (
	markerPrefix = "meshfs-cache "
	markerLine   = markerPrefix + "1"
	markerText   = markerLine + "\nThis folder is meshfs's cache (meshfs mount --cache-dir). meshfs deletes only\n" +
		"files it wrote here; the folder may be removed whole while no meshfs uses it.\n"
)

// TagName is the cache directory tag (https://bford.info/cachedir/) that
// tells backup tools to skip the folder.
const TagName = "CACHEDIR.TAG"

const tagText = "Signature: 8a477f597d28d172789f06886806bc55\n" +
	"# This file is a cache directory tag created by meshfs.\n" +
	"# For information about cache directory tags, see https://bford.info/cachedir/\n"

// ErrNotCache is returned by Check, Prepare and Open for an existing folder
// that meshfs did not make: it is left untouched.
var ErrNotCache = errors.New("not a meshfs cache folder")

// CheckCacheDir reports whether dir may serve as a cache folder, changing nothing:
// it may be missing, empty, marked (MarkerName), or an unmarked cache of an
// earlier meshfs laid out exactly as this package writes one (lock, index,
// index.tmp, data/ of entry files, tmp/ of temporary files, nothing else).
// Any other folder fails with an error wrapping ErrNotCache that names an
// entry meshfs did not write.
func CheckCacheDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("disk cache: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("disk cache %s: %w: it is not a directory", dir, ErrNotCache)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("disk cache: %w", err)
	}
	if len(ents) == 0 || marked(dir) {
		return nil
	}
	if foreign := unmarkedForeign(dir, ents); foreign != "" {
		return fmt.Errorf("disk cache %s: %w: it holds %s, which meshfs did not write, and no %s marker; "+
			"give --cache-dir a new or empty folder (meshfs deletes files in its cache folder)",
			dir, ErrNotCache, foreign, MarkerName)
	}
	return nil
}

// PrepareCacheDir makes dir a cache folder as Check allows: a missing one is
// created (mode 0700), an empty one or an earlier meshfs's unmarked cache
// is marked. A folder Check refuses is not touched.
func PrepareCacheDir(dir string) error {
	if err := CheckCacheDir(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("disk cache: %w", err)
	}
	// The marker first: a folder holding only a tag would be refused.
	if !marked(dir) {
		if err := writeNew(filepath.Join(dir, MarkerName), markerText); err != nil {
			return fmt.Errorf("disk cache: marking %s: %w", dir, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, TagName)); errors.Is(err, fs.ErrNotExist) {
		if err := writeNew(filepath.Join(dir, TagName), tagText); err != nil {
			return fmt.Errorf("disk cache: %w", err)
		}
	}
	return nil
}

// writeNew creates the file p holding text; an existing p is an error.
func writeNew(p, text string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// marked reports whether dir holds meshfs's marker: a regular file whose
// first line starts with markerPrefix.
func marked(dir string) bool {
	return firstLineHas(filepath.Join(dir, MarkerName), markerPrefix)
}

// firstLineHas reports whether p is a regular file (not a link) whose
// first line starts with prefix.
func firstLineHas(p, prefix string) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, len(prefix))
	_, err = bufio.NewReader(f).Read(b)
	return err == nil && string(b) == prefix
}

// unmarkedForeign returns the first entry of the unmarked folder dir (whose
// entries are ents) that an earlier meshfs would not have written there,
// quoted, or "" when the folder is exactly such a cache.
func unmarkedForeign(dir string, ents []os.DirEntry) string {
	layoutPrefix, _, _ := strings.Cut(layoutVersion, " ")
	for _, e := range ents {
		name, p := e.Name(), filepath.Join(dir, e.Name())
		ok := false
		switch name {
		case "lock", "index.tmp":
			ok = e.Type().IsRegular()
		case "index":
			ok = e.Type().IsRegular() && firstLineHas(p, layoutPrefix+" ")
		case "data", "tmp":
			if !e.IsDir() {
				break
			}
			sub, err := os.ReadDir(p)
			if err != nil {
				return fmt.Sprintf("%q (%v)", p, err)
			}
			own := validName
			if name == "tmp" {
				own = isTempName
			}
			for _, s := range sub {
				if !s.Type().IsRegular() || !own(s.Name()) {
					return fmt.Sprintf("%q", filepath.Join(p, s.Name()))
				}
			}
			ok = true
		}
		if !ok {
			return fmt.Sprintf("%q", p)
		}
	}
	return ""
}

// tempSuffix is what writeTemp's os.CreateTemp pattern puts after an entry
// name: a dot, then the random part.
const tempSuffix = ".*"

// isTempName reports whether s is a name writeTemp makes: an entry name, a
// dot and decimal digits (os.CreateTemp's random part).
func isTempName(s string) bool {
	if len(s) < 42 || !validName(s[:40]) || s[40] != '.' {
		return false
	}
	for _, r := range s[41:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
