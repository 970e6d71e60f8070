package vfs

// A source folder as the tree shows it (Folder):
// what each entry shows as (a folder, a plain file, a link, a mesh folder,
// a texture's PNG, or nothing), the folder's listing, and the stats that
// the requests of one burst share.
//
// Stat reuse: the requests of one burst (a walker's listing, the
// READDIRPLUS lookups that follow it, a mesh folder's lookup, listing and
// outputs) would stat the same source files again and again. A stat stands
// for the next requests for StatReuse, and only while the folder is watched,
// so a change within it is also pushed to the kernel: the reuse only spares
// the stats of requests already on their way, it does not delay a change.
// Any change the watcher reports in the folder bumps its change count
// (Folder.Changes): a stat taken before the bump (so possibly before the
// change) is never reused after it.

import (
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/walk"
)

// StatReuse is how long a source stat stands for the next requests.
const StatReuse = 200 * time.Millisecond

// Kinds of entry besides the file types (syscall.S_IFDIR, S_IFREG,
// S_IFLNK); 0 is an entry not shown (hidden companions, sockets, devices).
const (
	KindMesh    = 1 // a mesh file, shown as a folder of its outputs
	KindArchive = 3 // an archive, shown as a folder of its tree (archive.go)
)

// Folder is one source folder the mount shows.
type Folder struct {
	Abs     string
	Sniffer *walk.Sniffer
	// View is how the folder's sources are reached (the tree's view: an
	// archive's entries as files beneath its path).
	View *source.Packed
	// Watched is set once the watcher watches the folder, Unwatched when
	// watching it failed.
	Watched, Unwatched atomic.Bool
	// Changes counts the changes the watcher reported here (any name).
	Changes atomic.Uint64
	// ScanningAhead is set while a pass scans this folder's meshes ahead
	// of a walker; ListedAhead by the first listing, which starts a pass
	// that sniffs the folders after this one (package walk).
	ScanningAhead, ListedAhead atomic.Bool
	// Overlay makes a resource/ or res/ folder holding archives, and
	// every folder beneath it, show the game's view (overlay.go).
	Overlay bool

	// parent and name are where a door met the folder (FS.SubFolder).
	parent *Folder
	name   string

	listed  atomic.Pointer[listed]
	subdirs atomic.Pointer[walk.FolderOrder]
	packed  atomic.Int32 // Packed: 0 not known yet, 1 yes, 2 no
}

// Moment is when a stat is taken: the folder's change count and the time.
type Moment struct {
	gen uint64
	at  int64
}

// Now is the moment of a stat about to be taken in d.
func (d *Folder) Now() Moment { return Moment{gen: d.Changes.Load(), at: time.Now().UnixNano()} }

// reusable reports whether a stat taken at then may stand for one at now.
func (d *Folder) reusable(then, now Moment) bool {
	return d.Watched.Load() && !d.Unwatched.Load() && then.gen == now.gen &&
		now.at-then.at >= 0 && now.at-then.at < int64(StatReuse)
}

// listed are a listing's entry stats, taken at a moment, and the formats
// (nil: none) of its regular files whose sniff is known, for the next
// listing (Folder.sniff).
type listed struct {
	at       Moment
	st       map[string]*syscall.Stat_t
	formats  map[string]decode.Format
	archives map[string]bool // of those without a format, the archives
}

// Lstat is Lstat of the entry name at moment now, or its stat from a
// listing that may stand for it (the lookups of a READDIRPLUS follow its
// listing at once).
func (d *Folder) Lstat(name string, st *syscall.Stat_t, now Moment) error {
	if name == outputs.ErrorName && d.ErrorText() != nil {
		return syscall.ENOENT // the listing's error.txt, not an entry of that name
	}
	if l := d.listed.Load(); l != nil && d.reusable(l.at, now) {
		if s := l.st[name]; s != nil {
			*st = *s
			return nil
		}
	}
	_, _, err := d.lookup(name, st)
	return err
}

// Kind decides what the source entry name (stat st) shows as, with its
// format for a mesh. known is false when a regular file could not be
// sniffed (shown as a plain file for now).
func (d *Folder) Kind(name string, st *syscall.Stat_t, siblings func(string) bool) (kind uint32, f decode.Format, known bool) {
	p, packed := d.Path(name)
	return d.kindAt(p, packed, name, st, siblings)
}

// kindAt is Kind of the entry name read from p (packed: inside an archive).
func (d *Folder) kindAt(p string, packed bool, name string, st *syscall.Stat_t, siblings func(string) bool) (kind uint32, f decode.Format, known bool) {
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return syscall.S_IFDIR, nil, true
	case syscall.S_IFLNK:
		return syscall.S_IFLNK, nil, true
	case syscall.S_IFREG:
		if formats.IsCompanion(name, siblings) {
			return 0, nil, true
		}
		f, archive, known := d.sniff(p, name, st)
		if f != nil {
			return KindMesh, f, known
		}
		if archive && (!packed || d.View.Descends(p)) {
			return KindArchive, nil, true
		}
		return syscall.S_IFREG, nil, known
	}
	return 0, nil, true
}

// MeshFormat returns the format of entry name (stat st) and whether it is
// a mesh (Kind).
func (d *Folder) MeshFormat(name string, st *syscall.Stat_t, siblings func(string) bool) (decode.Format, bool) {
	kind, format, _ := d.Kind(name, st, siblings)
	return format, kind == KindMesh
}

// sniff returns the format of the regular file name (at p, stat st), or nil, and
// whether that is known: the last listing's answer for the same version of
// the file, else the sniffer's. The listing keeps the answers of all its
// entries, however many: relisting a folder bigger than the sniff cache
// sniffs only what changed.
func (d *Folder) sniff(p, name string, st *syscall.Stat_t) (fm decode.Format, archive, known bool) {
	if l := d.listed.Load(); l != nil {
		if fm, ok := l.formats[name]; ok {
			if ps := l.st[name]; ps != nil && source.FromStat(ps).Same(source.FromStat(st)) {
				return fm, l.archives[name], true
			}
		}
	}
	fm, archive, _, known = d.Sniffer.SniffArchive(p, st)
	return fm, archive, known
}

// Entry is one entry of a folder's listing; Kind is its file type (a
// mesh's is S_IFDIR) and Ino the source's inode number (0 for a PNG).
// Stat is the source entry's stat as the listing took it (what Lstat gives
// at that moment), At when; nil for a PNG and an archive's error.txt.
type Entry struct {
	Name string
	Kind uint32
	Ino  uint64
	Stat *syscall.Stat_t
	At   Moment
}

// listWorkers bounds the goroutines that size up a listing's entries, one
// per walk.PerWorker entries: each entry not seen before needs a sniff (an
// open and a read of its first bytes, from the disk when the walk is
// cold), and several at once keep the disk's queue busy.
const listWorkers = 8

// List is the folder's listing: every source entry shown, then the PNGs of
// its textures (a file named as one whose first bytes are one:
// walk.Sniffer.ShowsPNG; unless a real file has the PNG's name). It keeps the
// entries' stats and sniffs for the requests that follow (Lstat, Kind) and
// the order of its subfolders (Subdirs).
func (d *Folder) List() ([]Entry, error) {
	ents, dirs, err := d.readDir()
	if err != nil && len(ents) == 0 {
		return nil, err
	}
	names := make(map[string]bool, len(ents))
	for _, e := range ents {
		names[e.Name()] = true
	}
	siblings := func(n string) bool { return names[n] }
	kinds := make([]Entry, len(ents))
	stats := make([]syscall.Stat_t, len(ents))
	fmts := make([]decode.Format, len(ents))
	known := make([]bool, len(ents))
	archs := make([]bool, len(ents))
	pngs := make([]bool, len(ents))
	now := d.Now()
	entry := func(i int) {
		name := ents[i].Name()
		st := &stats[i]
		dir, packed := d.Abs, d.Packed()
		if dirs != nil {
			dir = dirs[i]
			packed = dir != d.Abs
		}
		p := filepath.Join(dir, name)
		if err := d.View.SysLstat(p, st); err != nil {
			return // gone since the listing: kind 0, left out
		}
		if st.Mode&syscall.S_IFMT == syscall.S_IFDIR && (dirs != nil || d.Overlay && mergesAt(p)) {
			// A merged folder's stat is its layers' (statLayers).
			if _, _, err := d.lookup(name, st); err != nil {
				return
			}
		}
		kind, fm, ok := d.kindAt(p, packed, name, st, siblings)
		if kind == KindMesh || kind == syscall.S_IFREG || kind == KindArchive {
			fmts[i], known[i], archs[i] = fm, ok, kind == KindArchive
		}
		if kind == syscall.S_IFREG && outputs.ShowsPNG(name) {
			pngs[i] = d.Sniffer.ShowsPNG(p, st)
		}
		if kind == KindMesh || kind == KindArchive {
			kind = syscall.S_IFDIR
		}
		kinds[i] = Entry{Name: name, Kind: kind, Ino: st.Ino}
	}
	decode.ForEach(len(ents), min(listWorkers, len(ents)/walk.PerWorker), entry)
	list := kinds[:0]
	l := &listed{at: now, st: make(map[string]*syscall.Stat_t, len(ents)), formats: map[string]decode.Format{}, archives: map[string]bool{}}
	var subdirs *walk.FolderOrder
	var pngEnts []Entry
	for i, e := range kinds {
		if e.Kind == 0 {
			continue
		}
		e.Stat, e.At = &stats[i], now
		list = append(list, e)
		l.st[e.Name] = &stats[i]
		if known[i] {
			l.formats[e.Name] = fmts[i]
		}
		if archs[i] {
			l.archives[e.Name] = true
		}
		if stats[i].Mode&syscall.S_IFMT == syscall.S_IFDIR {
			subdirs = subdirs.Add(e.Name)
		}
		if pngs[i] && !names[e.Name+outputs.PNGSuffix] {
			pngEnts = append(pngEnts, Entry{Name: e.Name + outputs.PNGSuffix, Kind: syscall.S_IFREG})
		}
	}
	list = append(list, pngEnts...) // after the loop: list shares kinds' array
	if d.ErrorText() != nil {
		// The listing's error wins over an entry of that name: a damaged
		// archive could otherwise show an error.txt of its own instead.
		list = slices.DeleteFunc(list, func(e Entry) bool { return e.Name == outputs.ErrorName })
		delete(l.st, outputs.ErrorName)
		list = append(list, Entry{Name: outputs.ErrorName, Kind: syscall.S_IFREG})
	}
	d.listed.Store(l)
	d.subdirs.Store(subdirs)
	return list, nil
}

// Changed counts a change of the entry name (or its appearance, or its
// removal: no stat taken before is reused) and returns the names it makes
// stale in the folder, name and its texture's PNG; dep is set when name is
// a file the meshes beside it may read (a companion or an animation file:
// formats.IsDependency), whose outputs are then stale too.
func (d *Folder) Changed(name string) (names []string, dep bool) {
	d.Changes.Add(1)
	names = []string{name}
	if outputs.ShowsPNG(name) {
		names = append(names, name+outputs.PNGSuffix)
	}
	return names, formats.IsDependency(name, outputs.InFolder(d.Abs))
}

// Subdirs is the last listing's subfolders, in its order (nil: not listed).
func (d *Folder) Subdirs() *walk.FolderOrder { return d.subdirs.Load() }

// Recent is the last stat of one source file of folder D (a mesh), which
// the requests of a burst share (the package doc's stat reuse).
type Recent struct {
	last atomic.Pointer[recentStat]
}

type recentStat struct {
	st syscall.Stat_t
	at Moment
}

// Stat stats the source at abs in d, or reuses a stat that may stand for
// it. narrow, if set, adjusts a fresh stat (permissions) before it is kept.
func (r *Recent) Stat(d *Folder, abs string, narrow func(*syscall.Stat_t)) (*syscall.Stat_t, error) {
	now := d.Now()
	if p := r.last.Load(); p != nil && d.reusable(p.at, now) {
		st := p.st
		return &st, nil
	}
	var st syscall.Stat_t
	if err := d.View.SysStat(abs, &st); err != nil {
		return nil, err
	}
	if narrow != nil {
		narrow(&st)
	}
	if d.Watched.Load() && !d.Unwatched.Load() {
		r.Remember(&st, now)
	}
	return &st, nil
}

// Remember keeps st, taken at moment at, for Stat.
func (r *Recent) Remember(st *syscall.Stat_t, at Moment) {
	r.last.Store(&recentStat{st: *st, at: at})
}

// Forget drops the stat kept: the next Stat stats the source.
func (r *Recent) Forget() { r.last.Store(nil) }

// Versioned returns st, a stat of the source at path, with the version of
// its outputs now (tr's), or ESTALE when it is no longer file: the source
// was replaced (a new file renamed over it, or deleted and written again).
// A node and its outputs' inodes stand for the old file, whose readers may
// still hold handles of its size: the kernel keeps one size per inode, so
// serving the new file there would cut their reads short (and fault their
// mappings). ESTALE makes the kernel look the name up again, which gives
// the new file fresh nodes.
func Versioned(st *syscall.Stat_t, file source.File, path string, tr *source.Tracker) (*syscall.Stat_t, source.Version, error) {
	id := source.FromStat(st)
	if id.File != file {
		return nil, source.Version{}, syscall.ESTALE
	}
	return st, tr.Version(path, id), nil
}

// Renarrowed returns st, the source's stat for version v taken before a
// scan, with the permission bits of now, its stat since, when the source
// is still v (nv): the scan may have found files the outputs are made from,
// and the first stat of an output must already show their narrowing.
func Renarrowed(st *syscall.Stat_t, v source.Version, now *syscall.Stat_t, nv source.Version) *syscall.Stat_t {
	if !nv.Same(v) {
		return st
	}
	out := *st
	out.Mode = out.Mode&^0o777 | now.Mode&0o777
	return &out
}

// Narrow sets the permission bits of st, the stat of mesh's source file, to
// those its folder and outputs show: the source's, narrowed by every file
// the outputs are made from (outputs.Narrow): its companions, and deps, the
// material files and textures its last scan found, so that nobody reads
// through an output what they could not read from its sources (each
// stat'ed as outputs.StatAccess does).
func Narrow(mesh *outputs.Mesh, st *syscall.Stat_t, deps []string) {
	srcs := append(mesh.Sources(), deps...)
	if len(srcs) < 2 {
		return
	}
	files := mesh.StatAccess([]outputs.Access{{Uid: st.Uid, Gid: st.Gid, Perm: st.Mode}}, srcs[1:]...)
	st.Mode = st.Mode&^0o777 | outputs.Narrow(files...).Perm
}

// ReadOnlyMode strips write bits (and, for files, execute bits) from a
// source mode: the mount never offers what it cannot do. A folder made from
// a file (a mesh folder) is searchable wherever it is readable.
func ReadOnlyMode(perm uint32, dir bool) uint32 {
	perm &= 0o777 &^ 0o222
	if dir {
		perm |= (perm & 0o444) >> 2
	} else {
		perm &^= 0o111
	}
	return perm
}

// TextureErrorSuffix ends the name of the file that stands beside a
// texture in place of its PNG when that failed (NAME.EXT.error.txt).
const TextureErrorSuffix = ".error.txt"

// ErrorSource returns the texture whose error file is called name, or "".
func ErrorSource(name string) string {
	base, ok := strings.CutSuffix(name, TextureErrorSuffix)
	if !ok || !outputs.ShowsPNG(base) {
		return ""
	}
	return base
}

// PNGSource returns the texture whose PNG is called name, or "".
func PNGSource(name string) string {
	base, ok := strings.CutSuffix(name, outputs.PNGSuffix)
	if !ok || !outputs.ShowsPNG(base) {
		return ""
	}
	return base
}
