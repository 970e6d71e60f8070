package source

// Version says which version of its source files an output was
// made from, and is the one place where staleness is decided: an output is
// stale when the Version of its sources now is not Same as the one it was
// made from.
//
// A file's version is its Ident: the file (device and inode), its size and
// its modification time in nanoseconds, read from a stat with FromStat (or
// Of). An output may read several files: a mesh, its companions, the
// material files and textures it names. The files besides the one it is
// named after form its Set, (path, Ident) each; a Tracker keeps the sets of
// every output source and digests them into the source's Version, so that
// the watcher invalidates every output whose set names a changed path.
//
// It knows nothing of FUSE or of file formats: decoders, exporters and the
// mount share it.

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
// of the file it is named after, and Deps, the digest (Set.Sum) of the
// other files it read, as a Tracker knows them. The same Version keys the
// output in memory and in the disk cache: an output saved by one mount is
// found by the next only if every file it read is as it was.
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

// Tracker keeps, for every output source (by path), the files besides it
// that its outputs read, and makes its Version from them: the dependency
// files of its folder (Folder: companions, animations), and the files its
// scans found (Track: material files, textures, a model's parts), whose
// identities the watcher's Changed updates.
//
// Deps digests the folder's files, and the found files too once one of
// them is not as the first scan of the source file found it: that scan
// read them as they were, so the version it was made under stands for
// them, in this mount and (through Recorded, the found set a persisted
// scan holds) in the next. A source's Version is made when it is first
// asked for a source file and again after Changed named a file of its set;
// it is the same value until then.
type Tracker struct {
	// Folder returns the dependency files of a source folder as they are
	// now (nil: none).
	Folder func(dir string) Set
	// Recorded returns the files the persisted scan of source src made
	// under version v found (nil: no disk cache).
	Recorded func(src string, v Version) (Set, bool)

	mu    sync.Mutex
	named map[string]map[string]bool // path → sources whose set names it
	srcs  map[string]*source
}

// source is what a Tracker knows of one output source.
type source struct {
	cur   Version // the version made last (zero: none)
	dirty bool    // a file of its set changed since cur was made
	// first is the set the first scan of cur's source file found (known:
	// found by a scan, or recorded by an earlier mount's); found is the
	// last scan's, its identities as last seen.
	first, found Set
	known        bool
}

func (t *Tracker) name(path, src string) {
	if t.named[path] == nil {
		t.named[path] = map[string]bool{}
	}
	t.named[path][src] = true
}

// source returns src's record, naming src's folder in its set (t.mu held).
func (t *Tracker) source(src string) *source {
	if t.named == nil {
		t.named, t.srcs = map[string]map[string]bool{}, map[string]*source{}
	}
	s := t.srcs[src]
	if s == nil {
		s = &source{}
		t.srcs[src] = s
		t.name(filepath.Dir(src), src)
	}
	return s
}

// Folders are the folders on the way to the file at p that src's own path
// does not pass: from the nearest folder holding both, exclusive, down to
// p's folder. Who may search them decides who may read p, so a change of
// one changes what src's outputs may show (the mount shows src's own).
func Folders(src, p string) []string {
	var out []string
	for d := filepath.Dir(p); !holds(d, src); d = filepath.Dir(d) {
		out = append(out, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	return out
}

// holds reports whether path p lies beneath folder d (or is d).
func holds(d, p string) bool {
	rel, err := filepath.Rel(d, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// rename makes the paths of found (and their Folders) name src instead of
// those of old (t.mu held), and reports whether they differ.
func (t *Tracker) rename(src string, old, found Set) (changed bool) {
	for _, r := range old {
		if r.Path == filepath.Dir(src) {
			continue
		}
		for _, p := range append(Folders(src, r.Path), r.Path) {
			delete(t.named[p], src)
			if len(t.named[p]) == 0 {
				delete(t.named, p)
			}
		}
	}
	changed = len(old) != len(found)
	for i := range found {
		if !changed && old[i].Path != found[i].Path {
			changed = true
		}
		t.name(found[i].Path, src)
		for _, d := range Folders(src, found[i].Path) {
			t.name(d, src)
		}
	}
	return changed
}

// Version is the version of src's outputs whose source file is id now.
func (t *Tracker) Version(src string, id Ident) Version {
	t.mu.Lock()
	s := t.source(src)
	if s.cur.Ident.Same(id) && !s.dirty {
		defer t.mu.Unlock()
		return s.cur
	}
	fresh := !s.cur.Ident.Same(id)
	t.mu.Unlock()

	var folder Set
	if t.Folder != nil {
		folder = t.Folder(filepath.Dir(src))
	}
	v := Version{Ident: id, Deps: folder.Sum()}
	var recorded Set
	known := false
	if fresh && t.Recorded != nil {
		recorded, known = t.Recorded(src, v)
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	if fresh {
		// A new source file: its set is what its first scan finds, or
		// what an earlier mount's scan of it found, as those files are now.
		s.first, s.known = recorded, known
		if known {
			now := recorded.Now()
			t.rename(src, s.found, now)
			s.found = now
		}
	}
	if s.known && s.found.Sum() != s.first.Sum() {
		v.Deps = append(slices.Clone(folder), s.found...).Sum()
	}
	s.cur, s.dirty = v, false
	return v
}

// Track records that src's outputs read the files of set (besides src's
// folder), as a scan of it just found them, replacing what an earlier scan
// found, and reports whether the paths differ from those. It changes no
// version: the outputs made with the scan are of the version asked.
func (t *Tracker) Track(src string, set Set) (changed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.source(src)
	changed = t.rename(src, s.found, set)
	s.found = slices.Clone(set)
	if !s.known {
		s.first, s.known = slices.Clone(set), true
	}
	return changed
}

// Set returns the files src's last scan found it reads.
func (t *Tracker) Set(src string) Set {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.srcs[src]; s != nil {
		return slices.Clone(s.found)
	}
	return nil
}

// Changed records that the file or folder at path changed (a file of a
// set, or the folder of a source: a file in it that outputs beside it may
// read), and returns every source whose set names it: their next Version
// is made from their files as they are now.
func (t *Tracker) Changed(path string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for src := range t.named[path] {
		t.srcs[src].restat(path)
		out = append(out, src)
	}
	slices.Sort(out)
	return out
}

// ChangedAll records that any file may have changed (events were lost).
func (t *Tracker) ChangedAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range t.srcs {
		s.restat("")
	}
}

// restat marks s for a new Version and reads again the identity of its
// found file at path (every one: path "").
func (s *source) restat(path string) {
	s.dirty = true
	for i, r := range s.found {
		if path == "" || r.Path == path {
			s.found[i].Ident, _, _ = Stat(r.Path)
		}
	}
}

// Now is the set with every file's identity as it is now (the zero Ident
// for a file gone).
func (s Set) Now() Set {
	out := make(Set, len(s))
	for i, r := range s {
		out[i].Path = r.Path
		out[i].Ident, _, _ = Stat(r.Path)
	}
	return out
}

// Still reports whether the file at path is still version id.
func Still(path string, id Ident) bool {
	now, _, err := Stat(path)
	return err == nil && now.Same(id)
}
