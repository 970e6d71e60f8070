// Package version says which version of its source files an output was
// made from, and is the one place where staleness is decided: an output is
// stale when the Version of its sources now is not Same as the one it was
// made from.
//
// A file's version is its Ident: the file (device and inode), its size and
// its modification time in nanoseconds, read from a stat with FromStat (or
// Of). An output may read several files: a mesh, its companions, the
// material files and textures it names. The files besides the one it is
// named after form its Set, (path, Ident) each; a Tracker keeps the sets of
// every output source and numbers the changes of their files, so that the
// watcher invalidates every output whose set names a changed path.
//
// It knows nothing of FUSE or of file formats: decoders, exporters and the
// mount share it.
package version

import (
	"crypto/sha256"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
)

// File names one file whatever its contents: its device and inode, as
// os.SameFile compares them. A node of the mount stands for one File.
type File struct {
	Dev, Ino uint64
}

// Ident identifies one version of one file. The zero Ident is no file.
type Ident struct {
	File
	Size    int64
	MtimeNs int64
}

// FromStat is the Ident of the file st describes.
func FromStat(st *syscall.Stat_t) Ident {
	return Ident{File: File{Dev: uint64(st.Dev), Ino: st.Ino}, Size: st.Size, MtimeNs: st.Mtim.Nano()}
}

// Of is the Ident of the file fi describes (FromStat of its stat; without
// one, its size and modification time only).
func Of(fi os.FileInfo) Ident {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return FromStat(st)
	}
	return Ident{Size: fi.Size(), MtimeNs: fi.ModTime().UnixNano()}
}

// Stat stats the file at path (following no final link: a source is a
// regular file) and returns its Ident and stat.
func Stat(path string) (Ident, *syscall.Stat_t, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return Ident{}, nil, err
	}
	return FromStat(&st), &st, nil
}

// Same reports whether a and b are one version of one file.
func (a Ident) Same(b Ident) bool { return a == b }

// Version is the version of the sources an output was made from: the Ident
// of the file it is named after, and Deps, the state of its Set (the other
// files it read). Within one mount Deps counts the changes a Tracker saw to
// the set's files, since the set is known only once the output's scan has
// read it; a key that outlives the process (the disk cache's) holds the
// set's digest (Set.Sum) instead.
type Version struct {
	Ident
	Deps uint64
}

// Same reports whether v and w are one version: the only comparison that
// decides staleness.
func (v Version) Same(w Version) bool { return v.Ident.Same(w.Ident) && v.Deps == w.Deps }

// Zero reports whether v is the zero Version (nothing told, nothing read).
func (v Version) Zero() bool { return v.Same(Version{}) }

// Read is one file an output read, as it was.
type Read struct {
	Path string
	Ident
}

// Set is the files an output read besides the one it is named after.
type Set []Read

// Unchanged reports whether every file of the set is the version it was
// (Ident.Same on a stat of each now).
func (s Set) Unchanged() bool {
	for _, r := range s {
		id, _, err := Stat(r.Path)
		if err != nil || !id.Same(r.Ident) {
			return false
		}
	}
	return true
}

// Paths are the paths of the set's files.
func (s Set) Paths() []string {
	out := make([]string, len(s))
	for i, r := range s {
		out[i] = r.Path
	}
	return out
}

// Sum digests the set, in path order, for keys that outlive the process:
// any change of a file of it (or of its paths) changes the sum. The empty
// set sums to 0.
func (s Set) Sum() uint64 {
	if len(s) == 0 {
		return 0
	}
	s = slices.Clone(s)
	slices.SortFunc(s, func(a, b Read) int {
		switch {
		case a.Path < b.Path:
			return -1
		case a.Path > b.Path:
			return 1
		}
		return 0
	})
	h := sha256.New()
	var num [8]byte
	u := func(v uint64) {
		binary.LittleEndian.PutUint64(num[:], v)
		h.Write(num[:])
	}
	for _, r := range s {
		u(uint64(len(r.Path)))
		io.WriteString(h, r.Path)
		u(r.Dev)
		u(r.Ino)
		u(uint64(r.Size))
		u(uint64(r.MtimeNs))
	}
	return binary.LittleEndian.Uint64(h.Sum(nil))
}

// Tracker keeps, for every output source (by path), the paths of the other
// files its outputs read: the folder it is in (whose companion and
// animation files its outputs may read) and the files its last scan found
// (Track). Changed, called for every changed path, counts a change for every
// source whose set names it; Version reads the count into Deps.
type Tracker struct {
	mu    sync.Mutex
	named map[string]map[string]bool // path → sources whose set names it
	sets  map[string]Set             // source → the files its last scan found
	gen   map[string]uint64          // source → changes seen
}

func (t *Tracker) init() {
	if t.named == nil {
		t.named, t.sets, t.gen = map[string]map[string]bool{}, map[string]Set{}, map[string]uint64{}
	}
}

func (t *Tracker) name(path, src string) {
	if t.named[path] == nil {
		t.named[path] = map[string]bool{}
	}
	t.named[path][src] = true
}

// register names src's folder in src's set (t.mu held).
func (t *Tracker) register(src string) {
	t.init()
	if _, ok := t.gen[src]; !ok {
		t.gen[src] = 0
		t.name(filepath.Dir(src), src)
	}
}

// Version is the version of src's outputs whose source file is id now.
func (t *Tracker) Version(src string, id Ident) Version {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.register(src)
	return Version{Ident: id, Deps: t.gen[src]}
}

// Track records that src's outputs read the files of set (besides src's
// folder), replacing what an earlier scan found, and reports whether the
// paths differ from those.
func (t *Tracker) Track(src string, set Set) (changed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.register(src)
	old := t.sets[src]
	for _, r := range old {
		if r.Path == filepath.Dir(src) {
			continue
		}
		delete(t.named[r.Path], src)
		if len(t.named[r.Path]) == 0 {
			delete(t.named, r.Path)
		}
	}
	changed = len(old) != len(set)
	for i := range set {
		if !changed && old[i].Path != set[i].Path {
			changed = true
		}
		t.name(set[i].Path, src)
	}
	if len(set) == 0 {
		delete(t.sets, src)
	} else {
		t.sets[src] = slices.Clone(set)
	}
	return changed
}

// Set returns the files src's last scan found it reads.
func (t *Tracker) Set(src string) Set {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.sets[src])
}

// Changed counts a change for every source whose set names path (a file
// of a set, or the folder of a source: a file in it that outputs beside it
// may read changed) and returns them.
func (t *Tracker) Changed(path string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for src := range t.named[path] {
		t.gen[src]++
		out = append(out, src)
	}
	slices.Sort(out)
	return out
}

// ChangedAll counts a change for every source (events were lost).
func (t *Tracker) ChangedAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for src := range t.gen {
		t.gen[src]++
	}
}

// Still reports whether the file at path is still version id.
func Still(path string, id Ident) bool {
	now, _, err := Stat(path)
	return err == nil && now.Same(id)
}
