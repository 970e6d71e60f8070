package source

// A View is the one way export/outputs reaches the files a source
// names, and the way the mount reaches an archive's entries: a small
// read-only view of the source tree (View) in which the entries of an
// archive are files beneath the archive's own path. A texture packed in
// /x/game.pak as texture/common/a.dds is /x/game.pak/texture/common/a.dds,
// so model parts, companions (.msh.blob), materials and textures inside one
// archive resolve as they do in a loose folder. It knows nothing of FUSE or
// formats.
//
// The rules of a view:
//
//   - On disk, files are opened as package source opens them: no symbolic
//     link followed (Open), none leading out of the folder a file is named
//     beneath (OpenBeneath), regular files only, no FIFO waited on; Stat
//     follows no final link.
//   - A path one of whose components is a regular file that is an archive
//     by its first bytes (archive.Sniff), whatever its name, names what
//     lies below in that archive (package archive's listing: names that
//     would escape are not in it). An archive inside an archive is a plain
//     file, its entries not reached, unless nesting is on (SetNested,
//     nested.go).
//   - A file's version (File.Version, Stat's Read) is the disk file's own;
//     an entry's is its archive file's path and identity, so a change of
//     the archive is a change of every entry read from it, and the
//     watcher and Set see the file that really changes.
//   - An archive is listed once per version of its file (its Ident) and
//     kept open while listed; the view keeps up to maxArchives listings,
//     each charged its size (archive.Archive.MemSize) to the view's
//     Budget (SetBudget): past either, the least recently used go. With a
//     Keeper (the disk cache) listings are kept across mounts.
//
// For the mount, SysLstat and SysStat (stat.go) are the system calls with an
// entry's stat for a path inside an archive (EntryStat says what it
// holds), and ReadEntry reads an entry through a reader kept for the
// reads that follow (a deflated one resumes at a checkpoint).

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/meshfs/meshfs/internal/archive"
)

// Handle is one open source file.
type Handle interface {
	io.ReaderAt
	io.Closer
	Size() int64
	// Version is the file whose identity versions this one: the file
	// itself on disk, the archive file for an entry.
	Version() Read
}

// View reaches source files. Paths are absolute, clean and
// slash-separated as filepath gives them on Linux.
type View interface {
	// Open opens the regular file at p, following no symbolic link.
	Open(p string) (Handle, error)
	// OpenBeneath opens the regular file rel (slash-separated, local)
	// beneath the folder root: no link leading out of root followed.
	OpenBeneath(root, rel string) (Handle, error)
	// Stat describes the file or folder at p (no final link followed) and
	// gives the file that versions it.
	Stat(p string) (fs.FileInfo, Read, error)
	// ReadDir lists the folder at p (an archive file lists as the folder
	// of its entries), by name.
	ReadDir(p string) ([]fs.DirEntry, error)
}

// Disk is the view of the disk alone: archives are files.
var Disk View = disk{}

type disk struct{}

type diskFile struct {
	*os.File
	size int64
	read Read
}

func (f *diskFile) Size() int64   { return f.size }
func (f *diskFile) Version() Read { return f.read }

func fileOf(f *os.File) (Handle, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &diskFile{File: f, size: fi.Size(), read: Read{Path: f.Name(), Ident: Of(fi)}}, nil
}

func (disk) Open(p string) (Handle, error) {
	fd, st, err := OpenFD(p)
	if err != nil {
		return nil, err
	}
	// The stat Open checked the descriptor with: no second fstat.
	return &diskFile{File: os.NewFile(uintptr(fd), p), size: st.Size, read: Read{Path: p, Ident: FromStat(st)}}, nil
}

func (disk) OpenBeneath(root, rel string) (Handle, error) {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return nil, &os.PathError{Op: "open", Path: root + "/" + rel, Err: errors.New("not a path beneath its folder")}
	}
	d, err := OpenDir(root)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	f, err := d.Open(rel)
	if err != nil {
		return nil, err
	}
	// Named as the path asked for (not the folder's descriptor name).
	df, err := fileOf(f)
	if err == nil {
		df.(*diskFile).read.Path = filepath.Join(root, filepath.FromSlash(rel))
	}
	return df, err
}

func (disk) Stat(p string) (fs.FileInfo, Read, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, Read{}, err
	}
	return fi, Read{Path: p, Ident: Of(fi)}, nil
}

func (disk) ReadDir(p string) ([]fs.DirEntry, error) { return ReadDir(p) }

// NewView returns a new view as meshfs reads sources: the disk, and
// archives as folders of their entries. A deflated entry up to 1 MiB is
// inflated into memory, a bigger one read through checkpoints (package
// archive), so that the readers kept (Reader) hold little: about 3% of
// each entry and its last spans. Sizes are limited by the callers
// (outputs' --max-source-size). Each mount, tree or convert run makes its
// own (carried in outputs.Limits.View): listings, readers and budgets are
// never shared between them.
func NewView() *Packed { return New(archive.Limits{MemInflate: 1 << 20}) }

// maxArchives bounds the listings a view keeps; past it, or past its
// budget, the least recently used go (a dropped archive's file is closed
// once no reader holds it).
const maxArchives = 256

// Packed is the disk with archives as folders (NewView's type).
type Packed struct {
	limits  archive.Limits
	mu      sync.Mutex
	open    map[string]*packed
	readers map[readerKey]Handle
	keeper  Keeper
	budget  *archive.Budget
	tick    int64       // counts uses of listings (packed.used)
	nested  atomic.Bool // SetNested
	layers  layerCache  // Layers of the view's folders
	// Listed counts the archives listed from their central directory (or
	// local headers), Resumed those whose kept listing served instead.
	Listed, Resumed atomic.Int64
}

// Keeper keeps archive listings (archive.Archive.MarshalBinary) across
// mounts, by the archive file's path and identity: a remount resumes a
// listing (archive.Resume, which checks it against the file's size and
// end records) instead of reading the central directory again.
type Keeper interface {
	ArchiveListing(path string, id Ident) ([]byte, bool)
	KeepArchiveListing(path string, id Ident, listing []byte)
}

// SetKeeper makes k keep the view's listings (nil: none).
func (v *Packed) SetKeeper(k Keeper) {
	v.mu.Lock()
	v.keeper = k
	v.mu.Unlock()
}

// SetBudget charges the view's listings, and the readers of entries it
// opens, to b from now on (nil: nothing is charged; the view keeps up to
// maxArchives listings). What was charged before goes back to the budget
// it was charged to.
func (v *Packed) SetBudget(b *archive.Budget) {
	v.mu.Lock()
	v.budget, v.limits.Budget = b, b
	v.mu.Unlock()
}

// Budget is the view's budget (SetBudget).
func (v *Packed) Budget() *archive.Budget {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.budget
}

// New is a view of the disk and its archives, whose entries are read
// within limits.
func New(limits archive.Limits) *Packed {
	return &Packed{limits: limits, open: map[string]*packed{}}
}

// packed is one version of one archive file (or of an archive inside
// one: nested.go).
type packed struct {
	id     Ident // the file's version it was made for
	used   int64 // Packed.tick at its last use
	weight int64 // charged to budget
	budget *archive.Budget
	once   sync.Once
	read   Read
	fi     os.FileInfo
	a      *archive.Archive // nil: not an archive
	err    error            // the listing's (a may still hold entries)
}

// Archive returns the listed archive at p (the path of a regular file, no
// link followed, or with nesting on of an archive inside an archive) as
// its file is now, and the file's version; nil when the file is not an
// archive. The listing's error comes with whatever was listed.
func (v *Packed) Archive(p string) (*archive.Archive, Read, os.FileInfo, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		if !v.nested.Load() || !notDir(err) {
			return nil, Read{}, nil, err
		}
		if w, ok := v.locate(p, true); ok && w.depth > 0 && w.rel == "" {
			return w.a, w.read, w.afi, w.err
		}
		return nil, Read{}, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, Read{}, nil, nil
	}
	pk := v.slot(p, Of(fi), func() *packed { return &packed{} })
	pk.once.Do(func() {
		pk.load(v, p)
		v.charge(p, pk)
	})
	return pk.a, pk.read, pk.fi, pk.err
}

// slot is the listing kept under key for the file's version id, made
// anew (by fresh) when there is none or it is of another version; it
// counts as used now.
func (v *Packed) slot(key string, id Ident, fresh func() *packed) *packed {
	v.mu.Lock()
	defer v.mu.Unlock()
	pk := v.open[key]
	if pk == nil || !pk.id.Same(id) {
		if pk != nil {
			v.drop(key, pk)
		}
		for len(v.open) >= maxArchives && v.evict("") {
		}
		pk = fresh()
		pk.id = id
		v.open[key] = pk
	}
	v.tick++
	pk.used = v.tick
	return pk
}

// charge charges a listing just made to the budget, and drops the least
// recently used others while the budget is over.
func (v *Packed) charge(key string, pk *packed) {
	if pk.a == nil {
		return
	}
	n := pk.a.MemSize()
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.open[key] != pk || pk.weight != 0 {
		return // dropped while it was made
	}
	pk.weight, pk.budget = n, v.budget
	v.budget.Force(n)
	for v.budget.Used() > v.budget.Limit() && v.evict(key) {
	}
}

// evict drops the least recently used listing but the one under keep;
// false when there is none. v.mu is held.
func (v *Packed) evict(keep string) bool {
	old, oldest := "", int64(-1)
	for k, pk := range v.open {
		if k != keep && (oldest < 0 || pk.used < oldest) {
			old, oldest = k, pk.used
		}
	}
	if oldest < 0 {
		return false
	}
	v.drop(old, v.open[old])
	return true
}

// Forget drops the listings and kept entry readers of the archives at or
// beneath root, as a mount of root ends: their files are closed once no
// reader holds them, and the listings' charges go back to the budget.
func (v *Packed) Forget(root string) {
	beneath := func(p string) bool { return p == root || strings.HasPrefix(p, root+"/") }
	v.mu.Lock()
	defer v.mu.Unlock()
	for k, pk := range v.open {
		if beneath(k) {
			v.drop(k, pk)
		}
	}
	for k := range v.readers {
		if beneath(k.path) {
			delete(v.readers, k)
		}
	}
}

// drop forgets the listing under key and gives back its charge; v.mu is
// held.
func (v *Packed) drop(key string, pk *packed) {
	delete(v.open, key)
	pk.budget.Release(pk.weight)
	pk.weight = 0
}

func (pk *packed) load(v *Packed, p string) {
	f, err := Open(p)
	if err != nil {
		pk.err = err
		return
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		pk.err = err
		return
	}
	pk.read, pk.fi = Read{Path: p, Ident: Of(fi)}, fi
	var head [4]byte
	n, _ := f.ReadAt(head[:], 0)
	if !archive.Sniff(head[:n]) {
		f.Close()
		return
	}
	// The file stays open with the listing (closed with it by the
	// garbage collector).
	v.mu.Lock()
	keeper, limits := v.keeper, v.limits
	v.mu.Unlock()
	if keeper != nil {
		if b, ok := keeper.ArchiveListing(p, pk.read.Ident); ok {
			if a, err := archive.Resume(f, fi.Size(), p, limits, b); err == nil {
				v.Resumed.Add(1)
				pk.a, pk.err = a, a.Err()
				return
			}
		}
	}
	v.Listed.Add(1)
	pk.a, pk.err = archive.Open(f, fi.Size(), p, limits)
	if keeper != nil {
		if b, err := pk.a.MarshalBinary(); err == nil {
			keeper.KeepArchiveListing(p, pk.read.Ident, b)
		}
	}
}

// inArchive finds the archive holding p: the nearest component of p (p
// itself included) that is a regular file, when it is an archive, and
// with nesting on (SetNested) the archive inside it that p continues in
// (nested.go). rel is p's path inside it ("" for the archive itself).
func (v *Packed) inArchive(p string) (a *archive.Archive, rel string, read Read, afi os.FileInfo, ok bool) {
	w, ok := v.locate(p, false)
	return w.a, w.rel, w.read, w.afi, ok
}

// where is a path inside an archive file: the innermost archive holding
// it (a), its path there (rel), a's path inside the archive file (pre,
// "" for the file itself) and how many archives deep a is (depth, 0 for
// the file), the archive file's version and stat.
type where struct {
	a        *archive.Archive
	err      error // a's listing's
	rel, pre string
	depth    int
	read     Read
	afi      os.FileInfo
}

// locate is inArchive's: into also descends into p itself when it is an
// archive inside the archive (for its listing).
func (v *Packed) locate(p string, into bool) (where, bool) {
	for at := p; ; {
		fi, err := os.Lstat(at)
		if err == nil {
			if !fi.Mode().IsRegular() {
				return where{}, false
			}
			a, read, afi, lerr := v.Archive(at)
			if a == nil {
				return where{}, false
			}
			w := where{a: a, err: lerr, rel: strings.TrimPrefix(strings.TrimPrefix(p, at), "/"), read: read, afi: afi}
			v.descend(at, &w, into)
			return w, true
		}
		up := filepath.Dir(at)
		if up == at {
			return where{}, false
		}
		at = up
	}
}

// notDir reports whether err says a component of a path is a file.
func notDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

func notExist(p string) error { return &os.PathError{Op: "open", Path: p, Err: os.ErrNotExist} }

// Open is Disk's, and an entry's for a path inside an archive.
func (v *Packed) Open(p string) (Handle, error) {
	f, err := disk{}.Open(p)
	if err == nil || !notDir(err) {
		return f, err
	}
	return v.openEntry(p)
}

// OpenBeneath is Disk's, and an entry's for a path inside an archive
// (whose names never lead out of it).
func (v *Packed) OpenBeneath(root, rel string) (Handle, error) {
	f, err := disk{}.OpenBeneath(root, rel)
	if err == nil || !notDir(err) {
		return f, err
	}
	return v.openEntry(filepath.Join(root, filepath.FromSlash(rel)))
}

func (v *Packed) openEntry(p string) (Handle, error) {
	a, rel, read, _, ok := v.inArchive(p)
	if !ok {
		return nil, &os.PathError{Op: "open", Path: p, Err: syscall.ENOTDIR}
	}
	e, found := a.Lookup(rel)
	if !found || rel == "" {
		return nil, notExist(p)
	}
	if e.IsDir() {
		return nil, &os.PathError{Op: "open", Path: p, Err: ErrNotRegular}
	}
	r, err := a.Open(e)
	if err != nil {
		return nil, err
	}
	return &entryFile{Reader: r, read: read}, nil
}

type entryFile struct {
	archive.Reader
	read Read
}

func (f *entryFile) Version() Read { return f.read }

// Stat is Disk's, and an entry's for a path inside an archive.
func (v *Packed) Stat(p string) (fs.FileInfo, Read, error) {
	fi, read, err := disk{}.Stat(p)
	if err == nil || !notDir(err) {
		return fi, read, err
	}
	a, rel, read, afi, ok := v.inArchive(p)
	if !ok {
		return nil, Read{}, err
	}
	e, found := a.Lookup(rel)
	if !found {
		return nil, Read{}, notExist(p)
	}
	return EntryInfo(e, afi), read, nil
}

// ReadDir is Disk's, and an archive folder's listing for an archive file
// or a path inside one.
func (v *Packed) ReadDir(p string) ([]fs.DirEntry, error) {
	ents, err := disk{}.ReadDir(p)
	if err == nil || !notDir(err) {
		return ents, err
	}
	w, ok := v.locate(p, true)
	if !ok {
		return nil, err
	}
	if e, found := w.a.Lookup(w.rel); !found || !e.IsDir() {
		return nil, &os.PathError{Op: "readdir", Path: p, Err: syscall.ENOTDIR}
	}
	var out []fs.DirEntry
	for _, e := range w.a.ReadDir(w.rel) {
		out = append(out, fs.FileInfoToDirEntry(EntryInfo(e, w.afi)))
	}
	return out, nil
}

// EntryInfo describes an entry of the archive whose file afi describes:
// an implicit folder (and the top) takes the archive file's time.
func EntryInfo(e *archive.Entry, afi os.FileInfo) fs.FileInfo {
	t := e.Modified
	if e.Implicit() || t.IsZero() {
		t = afi.ModTime()
	}
	name := e.Name()
	if e.Path == "" {
		name = afi.Name()
	}
	return &entryInfo{name: name, size: e.Size, mode: e.Mode, mod: t}
}

type entryInfo struct {
	name string
	size int64
	mode fs.FileMode
	mod  time.Time
}

func (i *entryInfo) Name() string       { return i.name }
func (i *entryInfo) Size() int64        { return i.size }
func (i *entryInfo) Mode() fs.FileMode  { return i.mode }
func (i *entryInfo) ModTime() time.Time { return i.mod }
func (i *entryInfo) IsDir() bool        { return i.mode.IsDir() }
func (i *entryInfo) Sys() any           { return nil }

// IsArchive reports whether f is an archive by its first bytes
// (archive.Sniff).
func IsArchive(f Handle) bool {
	var head [4]byte
	n, _ := f.ReadAt(head[:], 0)
	return archive.Sniff(head[:n])
}

// maxReaders bounds the entry readers a view keeps (Reader).
const maxReaders = 16

type readerKey struct {
	path string
	arch Read
}

// Reader returns a reader of the entry at p (a path inside an archive)
// kept for the reads that follow, so that a deflated entry read piece by
// piece is inflated from its nearest checkpoint (package archive), not
// from its start on every read. The caller does not close it.
func (v *Packed) Reader(p string) (Handle, error) {
	_, _, read, _, ok := v.inArchive(p)
	if !ok {
		return nil, &os.PathError{Op: "open", Path: p, Err: syscall.ENOTDIR}
	}
	k := readerKey{p, read}
	v.mu.Lock()
	f := v.readers[k]
	v.mu.Unlock()
	if f != nil {
		return f, nil
	}
	f, err := v.openEntry(p)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if old := v.readers[k]; old != nil {
		f.Close()
		return old, nil
	}
	if v.readers == nil || len(v.readers) >= maxReaders {
		// Dropped readers are closed by the garbage collector once no
		// read holds them.
		v.readers = map[readerKey]Handle{}
	}
	v.readers[k] = f
	return f, nil
}
