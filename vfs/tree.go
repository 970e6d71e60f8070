package vfs

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"log"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/logonce"
	"github.com/meshfs/meshfs/internal/mountpoint"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store"
	"github.com/meshfs/meshfs/internal/store/record"
	"github.com/meshfs/meshfs/internal/walk"
	"github.com/meshfs/meshfs/internal/watch"
)

// MetaName is the name the mount keeps at the root for its own
// statistics (.meshfs): a source entry of that name is never shown.
const MetaName = ".meshfs"

// Config is what one tree is made of; nothing else is read from the
// process (no package-level settings).
type Config struct {
	// Source is the folder to show.
	Source string
	// Store is what outputs are made and kept by: memory and disk caches,
	// limits, concurrency, GC pacing.
	Store store.Config
	// Log receives one line per broken mesh and per watcher problem (nil:
	// discard).
	Log *log.Logger
	// NoWatch disables the watcher: a change of a file a mesh's outputs
	// are made from besides the mesh itself (a texture, a material file)
	// is then not seen.
	NoWatch bool
	// Overlay shows a resource/ or res/ folder as the game sees it
	// (Folder.Overlay).
	Overlay bool
	// Changes, if set, is told of every change the watcher sees, which
	// waits for StartWatch to report any.
	Changes Changes
	// Ahead, if set, makes the tree work ahead of a walker that a door's
	// nodes serve (ahead.go): Mesh.Listing and List start the passes.
	Ahead *walk.Config
}

// FS is the tree of one source folder (a Tree). Close it when done.
type FS struct {
	source string
	log    *log.Logger
	cfg    Config
	// view is how the tree reaches its sources (Config.Store.Limits.View,
	// else the store's own): archives' listings and readers of this tree
	// alone, within its store's budget.
	view *source.Packed
	// sniffer remembers which format (or none) a source file version is.
	sniffer  *walk.Sniffer
	st       *store.Store
	versions source.Tracker
	watch    *watch.Watcher
	// projects are the asset projects' indexes, told of changes by the
	// watcher.
	projects *outputs.Projects
	once     *logonce.Log
	// tag folds the converter's version and limits into every output's
	// Version: other limits, other bytes.
	tag string

	mu sync.Mutex
	// folders are the source folders met, by path, each for the file it
	// was met as (a folder replaced by another gets a Folder of its own).
	folders map[string]*folder
	root    *Folder
	// watched are the folders watched (the tree's and a door's), by path,
	// for the watcher's events; changes is Config.Changes.
	watched Watched[*Folder]
	changes Changes
	// ahead runs the passes ahead of a walker (nil: Config.Ahead unset);
	// start is when the tree was made (stats.json's uptime).
	ahead *walk.Ahead
	start time.Time
}

type folder struct {
	id source.File
	f  *Folder
}

var _ Tree = (*FS)(nil)

// New makes the tree of cfg.Source; nothing is read yet but the source's
// path.
func New(cfg Config) (*FS, error) {
	src, err := mountpoint.Source(cfg.Source)
	if err != nil {
		return nil, err
	}
	lg := cfg.Log
	if lg == nil {
		lg = log.New(io.Discard, "", 0)
	}
	t := &FS{source: src, log: lg, once: logonce.New(lg), cfg: cfg, folders: map[string]*folder{}, changes: cfg.Changes, start: time.Now()}
	if cfg.Ahead != nil {
		t.ahead = walk.NewAhead(*cfg.Ahead)
	}
	// The tree's view of the sources (the caller's, else its own) is the
	// store's and the sniffer's; its projects' indexes are told of changes
	// by its watcher.
	lim := outputs.DefaultLimits
	if cfg.Store.Limits != nil {
		lim = *cfg.Store.Limits
	}
	if lim.View == nil {
		lim.View = source.NewView()
	}
	if lim.Projects == nil {
		lim.Projects = outputs.NewProjects() // one index per project for the tree
	}
	t.view, t.projects = lim.View, lim.Projects
	sc := cfg.Store
	sc.Limits = &lim
	if sc.Events == nil {
		sc.Events = events{t}
	}
	if t.st, err = store.Open(sc, src, &t.versions, lg); err != nil {
		return nil, err
	}
	if t.sniffer, err = walk.NewSniffer(t.view); err != nil {
		t.st.Close()
		return nil, err
	}
	h := fnv.New64a()
	h.Write([]byte(record.CacheVersion(cfg.Store.Build, lim)))
	t.tag = fmt.Sprintf("%x", h.Sum64())
	t.root = t.newFolder(src)
	if !cfg.NoWatch {
		if w, err := watch.New(watchHandler{t}); err != nil {
			lg.Printf("meshfs: watching %s: %v (changes are not seen as they happen)", src, err)
		} else {
			t.watch = w
			t.projects.Told() // Changed tells the project indexes too
			t.watchFolder(t.root)
			if cfg.Changes == nil {
				w.Start()
			}
		}
	}
	return t, nil
}

// Close stops the watcher and frees the caches. Files open stay readable
// only while their bytes are in memory already.
func (t *FS) Close() {
	t.StopAhead() // its scans save to the disk cache
	if t.watch != nil {
		t.watch.Close()
	}
	t.st.Close()
	t.sniffer.Close()
	t.view.Forget(t.source)
}

// View is how the tree reaches its sources: the disk, and archives as
// folders of their entries (internal/source), for this tree alone.
func (t *FS) View() *source.Packed { return t.view }

// Source is the absolute path of the folder shown.
func (t *FS) Source() string { return t.source }

// Touch records a reader's request: the store's background work (the
// pre-warmer, big saves) stands aside while readers are active. The
// tree's own Stat, ReadDir and Open touch it themselves.
func (t *FS) Touch() { t.st.Touch() }

// Projects are the asset projects' indexes of the tree's meshes, which its
// watcher tells of changes (outputs.Projects.Told).
func (t *FS) Projects() *outputs.Projects { return t.projects }

// Root is the Folder of the source folder shown at the root.
func (t *FS) Root() *Folder { return t.root }

// Prewarm converts every mesh under the source in the background, once;
// Close stops it (its progress: Stats' Prewarm).
func (t *FS) Prewarm() { t.st.Prewarm(t.sniff) }

// sniff is the format of the source file at p (stat st), or nil.
func (t *FS) sniff(p string, st *syscall.Stat_t) decode.Format {
	fm, _, _ := t.sniffer.Sniff(p, st)
	return fm
}

func (t *FS) newFolder(abs string) *Folder {
	return &Folder{Abs: abs, Sniffer: t.sniffer, View: t.view, Overlay: t.cfg.Overlay}
}

// maxFolders bounds the folders kept: past it, the tree starts over (a
// Folder made afresh stats afresh, which is never wrong).
const maxFolders = 1 << 14

// folderAt is the Folder of the source folder abs met as file id.
func (t *FS) folderAt(abs string, id source.File) *Folder {
	t.mu.Lock()
	f := t.folders[abs]
	if f == nil || f.id != id {
		if len(t.folders) >= maxFolders {
			t.folders = map[string]*folder{}
		}
		f = &folder{id: id, f: t.newFolder(abs)}
		t.folders[abs] = f
	}
	t.mu.Unlock()
	t.watchFolder(f.f)
	return f.f
}

// Kinds of node of the tree.
type kind uint8

const (
	kFolder kind = iota // a source folder or an archive
	kMesh               // a mesh file's folder of outputs
	kChunks             // a mesh folder's chunks/
	kOutput             // a file of a mesh folder, or a chunk
	kFile               // a source file passed through
	kLink               // a symbolic link, shown, never followed
	kText               // bytes known at lookup (an error.txt)
	kPNG                // a texture's PNG
)

// node is one name of the tree resolved now.
type node struct {
	kind kind
	name string
	src  SourceKind // what a source folder's entry shows as (Info.Kind)
	// st is the source's stat: the folder's, the file's, the mesh's (its
	// permissions narrowed), the texture's.
	st syscall.Stat_t
	// dir is the folder itself (kFolder), else the source folder the
	// source is in; abs the source's path; packed: inside an archive.
	dir    *Folder
	abs    string
	base   string // the source's name in dir
	packed bool
	// A mesh's folder (Mesh) and the version its outputs are made from now.
	m     *Mesh
	v     source.Version
	entry outputs.Entry
	chunk string
	text  []byte
}

// errNotDir is what a name below a file gets.
var errNotDir = fmt.Errorf("not a folder: %w", fs.ErrNotExist)

// pathError says which name an error is of, mapping ESTALE to ErrStale.
func pathError(op, name string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.ESTALE) && !errors.Is(err, ErrStale) {
		err = fmt.Errorf("%w (%v)", ErrStale, err)
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// validName reports whether name is a name of the tree (the package doc).
func validName(name string) bool {
	return name == "" || fs.ValidPath(name) && name != "." && !strings.ContainsAny(name, "\\\x00")
}

// resolve walks the tree to name.
func (t *FS) resolve(ctx context.Context, op, name string) (*node, error) {
	if !validName(name) {
		return nil, pathError(op, name, fs.ErrInvalid)
	}
	t.st.Touch()
	n := &node{kind: kFolder, src: SourceFolder, dir: t.root, abs: t.source}
	if err := t.root.Stat(&n.st); err != nil {
		return nil, pathError(op, name, err)
	}
	if name == "" {
		return n, nil
	}
	for _, elem := range strings.Split(name, "/") {
		if err := ctx.Err(); err != nil {
			return nil, pathError(op, name, err)
		}
		next, err := t.child(ctx, n, elem)
		if err != nil {
			return nil, pathError(op, name, err)
		}
		n = next
	}
	return n, nil
}

// child resolves the entry name of folder n.
func (t *FS) child(ctx context.Context, n *node, name string) (*node, error) {
	switch n.kind {
	case kFolder:
		return t.inFolder(n.dir, name)
	case kMesh:
		e, st, v, _, err := n.m.Entry(ctx, name)
		if err != nil {
			return nil, err
		}
		c := *n
		c.st, c.v = *st, v
		c.name, c.entry, c.src = name, e, 0
		if c.kind = kOutput; e.Output == outputs.OutChunks {
			c.kind = kChunks
		}
		return &c, nil
	case kChunks:
		if err := n.m.Chunk(ctx, n.v, name); err != nil {
			return nil, err
		}
		c := *n
		c.kind, c.name, c.entry, c.chunk = kOutput, name, outputs.Entry{}, name
		return &c, nil
	}
	return nil, errNotDir
}

// inFolder resolves the entry name of source folder d as every door
// shows it (SourceLookup).
func (t *FS) inFolder(d *Folder, name string) (*node, error) {
	if d == t.root && name == MetaName {
		return nil, fs.ErrNotExist
	}
	e, err := t.SourceLookup(d, name)
	if err != nil {
		return nil, err
	}
	return t.folderEntry(d, name, e)
}

// folderEntry is the node of the entry name of source folder d, which
// shows as e.
func (t *FS) folderEntry(d *Folder, name string, e SourceEntry) (*node, error) {
	var err error
	n := &node{name: name, src: e.Kind, st: e.Stat, dir: d, abs: e.Path, base: name, packed: e.Packed, text: e.Text}
	switch e.Kind {
	case SourceFolder, SourceArchive:
		n.kind, n.dir = kFolder, t.folderAt(e.Path, e.ID().File)
	case SourceMesh:
		n.kind, n.m = kMesh, t.Mesh(d, &e)
		var st *syscall.Stat_t
		if st, n.v, err = n.m.Stat(); err != nil {
			return nil, err
		}
		n.st = *st
	case SourceLink:
		n.kind = kLink
	case SourceFile:
		n.kind = kFile
	case SourcePNG:
		n.kind, n.base = kPNG, PNGSource(name)
	case SourceText:
		n.kind = kText
	}
	return n, nil
}

// Stat describes name; an output whose size needs a conversion is
// converted.
func (t *FS) Stat(ctx context.Context, name string) (Info, error) {
	n, err := t.resolve(ctx, "stat", name)
	if err != nil {
		return Info{}, err
	}
	info, err := t.info(ctx, n, false)
	return info, pathError("stat", name, err)
}

// info describes n; with cheap, converting nothing (Size -1 instead).
func (t *FS) info(ctx context.Context, n *node, cheap bool) (Info, error) {
	switch n.kind {
	case kFolder, kMesh, kChunks:
		return t.infoOf(n, fs.ModeDir, 0, t.identToken(n)), nil
	case kLink:
		i := t.infoOf(n, 0, n.st.Size, t.identToken(n))
		i.Mode = fs.ModeSymlink | fs.FileMode(n.st.Mode&0o777)
		return i, nil
	case kFile:
		return t.infoOf(n, 0, n.st.Size, t.identToken(n)), nil
	case kText:
		return t.infoOf(n, 0, int64(len(n.text)), t.identToken(n)), nil
	case kPNG:
		if cheap {
			return t.infoOf(n, 0, -1, t.identToken(n)), nil
		}
		b, err := t.png(ctx, n)
		if err != nil {
			return Info{}, err
		}
		return t.infoOf(n, 0, int64(len(b)), t.token(n.v, "png")), nil
	}
	size, scanned, ok, _ := t.st.CheapSize(ctx, n.m.mesh, n.v, n.entry, n.chunk, true)
	if !ok && n.entry.Output == outputs.OutError && n.chunk == "" {
		// Listed only when the failure is known: its text is at hand.
		b, _, err := t.st.Content(ctx, n.m.mesh, n.v, n.entry, "")
		size, ok, scanned = int64(len(b)), err == nil, true
	}
	if !ok && cheap {
		size = -1
	} else if !ok {
		data, raw, err := t.st.Content(ctx, n.m.mesh, n.v, n.entry, n.chunk)
		if err != nil {
			return Info{}, err
		}
		size, scanned = int64(len(data)), true
		if raw != nil {
			size = raw.Length
		}
	}
	if scanned {
		n.st = *n.m.Renarrowed(&n.st, n.v)
	}
	return t.infoOf(n, 0, size, t.outputToken(n)), nil
}

// png is the PNG of texture node n as it is now (Made); n takes the
// texture's stat and the PNG's version.
func (t *FS) png(ctx context.Context, n *node) ([]byte, error) {
	b, st, v, err := t.Made(ctx, &SourceEntry{Kind: SourcePNG, Path: n.abs, Stat: n.st})
	if err == nil {
		n.st, n.v = *st, v
	}
	return b, err
}

// infoOf is n's Info of the given type and size: the source's times and
// owner, its permissions read-only (ReadOnlyMode).
func (t *FS) infoOf(n *node, typ fs.FileMode, size int64, ver string) Info {
	return Info{
		Name:    n.name,
		Mode:    typ | fs.FileMode(ReadOnlyMode(n.st.Mode, typ == fs.ModeDir)),
		Size:    size,
		ModTime: time.Unix(n.st.Mtim.Unix()),
		Uid:     n.st.Uid,
		Gid:     n.st.Gid,
		Version: ver,
		Kind:    n.src,
	}
}

// identToken is the Version of a node whose bytes are its source's.
func (t *FS) identToken(n *node) string {
	id := source.FromStat(&n.st)
	return fmt.Sprintf("%x-%x-%x-%x", id.Dev, id.Ino, id.Size, id.MtimeNs)
}

// token is the Version of an output of source version v.
func (t *FS) token(v source.Version, output string) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x-%s-%s", v.Dev, v.Ino, v.Size, v.MtimeNs, v.Deps, t.tag, output)
}

func (t *FS) outputToken(n *node) string {
	if n.chunk != "" {
		return t.token(n.v, "chunks/"+n.chunk)
	}
	return t.token(n.v, n.entry.Name)
}

// ReadDir lists the folder name, sorted by name; it converts nothing (a
// size only a conversion can tell is -1).
func (t *FS) ReadDir(ctx context.Context, name string) ([]Info, error) {
	n, err := t.resolve(ctx, "readdir", name)
	if err != nil {
		return nil, err
	}
	list, err := t.readDir(ctx, n)
	if err != nil {
		return nil, pathError("readdir", name, err)
	}
	slices.SortFunc(list, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return list, nil
}

func (t *FS) readDir(ctx context.Context, n *node) ([]Info, error) {
	var names []string
	switch n.kind {
	case kFolder:
		return t.readFolder(ctx, n.dir)
	case kMesh:
		files, _, _, _, err := n.m.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range files {
			names = append(names, e.Name)
		}
	case kChunks:
		files, _, err := n.m.Chunks(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range files {
			names = append(names, e.Name)
		}
	default:
		return nil, errNotDir
	}
	list := make([]Info, 0, len(names))
	for _, name := range names {
		c, err := t.child(ctx, n, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone since the listing
		} else if err != nil {
			return nil, err
		}
		info, err := t.info(ctx, c, true)
		if err != nil {
			return nil, err
		}
		list = append(list, info)
	}
	return list, nil
}

// readFolder lists the source folder d: each entry as SourceLookup shows
// it, from the stat the listing took (one stat an entry).
func (t *FS) readFolder(ctx context.Context, d *Folder) ([]Info, error) {
	ents, err := t.List(d)
	if err != nil {
		return nil, err
	}
	list := make([]Info, 0, len(ents))
	for _, le := range ents {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if d == t.root && le.Name == MetaName {
			continue
		}
		e, err := t.listedEntry(d, le)
		if err == nil {
			var c *node
			if c, err = t.folderEntry(d, le.Name, e); err == nil {
				var info Info
				if info, err = t.info(ctx, c, true); err == nil {
					list = append(list, info)
					continue
				}
			}
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		// gone since the listing
	}
	return list, nil
}

// Open opens the file name: the bytes of the version of this moment.
func (t *FS) Open(ctx context.Context, name string) (File, error) {
	n, err := t.resolve(ctx, "open", name)
	if err != nil {
		return nil, err
	}
	f, err := t.open(ctx, n)
	return f, pathError("open", name, err)
}

func (t *FS) open(ctx context.Context, n *node) (File, error) {
	switch n.kind {
	case kFolder, kMesh, kChunks:
		return nil, fmt.Errorf("a folder: %w", fs.ErrInvalid)
	case kLink:
		return nil, fmt.Errorf("a symbolic link, not followed: %w", fs.ErrInvalid)
	case kText:
		info, _ := t.info(ctx, n, true)
		return &memFile{data: n.text, info: info}, nil
	case kFile:
		return t.openSource(n)
	case kPNG:
		b, err := t.png(ctx, n)
		if err != nil {
			return nil, err
		}
		return &memFile{data: b, info: t.infoOf(n, 0, int64(len(b)), t.token(n.v, "png"))}, nil
	}
	data, raw, err := t.st.Content(ctx, n.m.mesh, n.v, n.entry, n.chunk)
	if err != nil {
		return nil, err
	}
	n.st = *n.m.Renarrowed(&n.st, n.v)
	if raw == nil {
		return &memFile{data: data, info: t.infoOf(n, 0, int64(len(data)), t.outputToken(n))}, nil
	}
	info := t.infoOf(n, 0, raw.Length, t.outputToken(n))
	return openWindow(n.abs, n.v.Ident, raw.Offset, raw.Length, info)
}

// events is the tree's side of what the store finds (store.Events).
type events struct{ t *FS }

func (h events) DepsFound(mesh string, deps source.Set, changed bool) {
	h.t.DepsFound(mesh, deps, changed, func() {})
}

// DepsFound is the tree's part of a scan's finding that mesh's outputs are
// made from deps (store.Events; changed: not what the last scan found): no
// stat of the mesh's folder taken before is reused (other files narrow its
// permissions now), and the folders of deps are watched (watchDeps; failed
// is told of each one that cannot be). A door's own Events calls it first.
func (t *FS) DepsFound(mesh string, deps source.Set, changed bool, failed func()) {
	if changed {
		if d := t.watchedFolder(filepath.Dir(mesh)); d != nil {
			d.Changes.Add(1)
		}
	}
	t.watchDeps(mesh, deps, failed)
}

// watchDeps has the tree's watcher (if any) watch the folders of the
// files deps names, which mesh's outputs are made from, and those above
// them whose modes narrow the outputs (their parents report their
// changes); a folder that cannot be watched is logged once and told to
// failed.
func (t *FS) watchDeps(mesh string, deps source.Set, failed func()) {
	w, once := t.watch, t.once
	if w == nil {
		return
	}
	paths := deps.Paths()
	for _, p := range deps.Paths() {
		paths = append(paths, source.Folders(mesh, p)...)
	}
	w.AddFoldersOf(paths, func(dir string, err error) {
		failed()
		once.Printf("watch-deps:"+dir, "meshfs: watching %s, which holds textures or materials: %v (a change there is not seen)", dir, err)
	})
}

// Broken needs nothing: a tree keeps no listing a failure could outdate.
func (events) Broken(string) {}
