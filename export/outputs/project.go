package outputs

import (
	"io/fs"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/internal/source"
)

// Projects: a format that names files through an index of their project
// (decode.ProjectIndexer: UNIGINE GUIDs) gets the index of the project a
// file is in from Limits.Projects, which keeps one per project root and
// index kind for a run (a mount, a convert; nil: each conversion builds
// its own). An index is used while it is fresh, and built again when it
// is not. Where a watcher tells every change (Told: the mount's), a
// change of any file or folder beneath the project's root (Changed) makes
// it stale, and a use stats nothing. Otherwise each use stats the
// project's folders (a file added, removed or renamed changes its
// folder), and each answer stats the files it came from (Resolve's via:
// the .meta naming a GUID's file), which must stat as they did when the
// index read them; what this does not see is a file edited in place that
// the answer did not come from (a .meta made to name a GUID that resolved
// to nothing), until a folder of the project changes. Either way a
// project of thousands of .meta files is not read again for each use.
// A watcher tells only of the folders it watches (the mount's: those
// listed and those of outputs' files), so in a mount the same file edited
// in a folder never listed is seen once that folder is.
//
// A conversion's version set holds the files its answers came from, not
// the whole index: a .meta or .mat changed in place re-makes the outputs
// that used it; every other change re-makes only the index.

// Projects keeps the project indexes of one run. The zero value is not
// usable: NewProjects makes one.
type Projects struct {
	mu   sync.Mutex
	m    map[projectKey]*projectEntry
	told atomic.Bool
}

// Told says that from now on every change of a file or folder beneath a
// project is told through Changed, so that the indexes are trusted until
// then.
func (p *Projects) Told() {
	if p != nil {
		p.told.Store(true)
	}
}

// Changed records that the file or folder at path changed (appeared, was
// removed): the index of each project it lies in is stale.
func (p *Projects) Changed(path string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	var es []*projectEntry
	for k, e := range p.m {
		if within(k.root, path) {
			es = append(es, e)
		}
	}
	p.mu.Unlock()
	for _, e := range es {
		e.mu.Lock()
		e.stale = true
		e.mu.Unlock()
	}
}

type projectKey struct{ kind, root string }

type projectEntry struct {
	p     *Projects
	mu    sync.Mutex
	stale bool // told of a change since ix was built
	ix    decode.ProjectIndex
	dirs  []Dep                   // the folders ix.Read gave
	files map[string]source.Ident // the files it gave, by path
	scans int
}

// NewProjects returns an empty set of project indexes.
func NewProjects() *Projects { return &Projects{m: map[projectKey]*projectEntry{}} }

// Scans reports how many times the index of the project at root (of the
// indexer's kind) has been built.
func (p *Projects) Scans(pi decode.ProjectIndexer, root string) int {
	e := p.entry(pi, root)
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.scans
}

func (p *Projects) entry(pi decode.ProjectIndexer, root string) *projectEntry {
	k := projectKey{pi.ProjectKind(), root}
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.m[k]
	if e == nil {
		e = &projectEntry{p: p}
		p.m[k] = e
	}
	return e
}

// index returns the entry's index, built when there is none, when a
// folder changed, or when it is stale (not nil: an answer of it came from
// a file that changed since; one built since is kept).
func (e *projectEntry) index(v source.View, pi decode.ProjectIndexer, root string, stale decode.ProjectIndex) (decode.ProjectIndex, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ix != nil && e.ix != stale && (e.p.told.Load() && !e.stale || !e.p.told.Load() && unchanged(v, e.dirs)) {
		return e.ix, nil
	}
	e.stale = false // before the scan: a change during it is told again
	ix, err := pi.IndexProject(root, viewFiles{v})
	if err != nil {
		e.ix, e.dirs, e.files = nil, nil, nil
		return nil, err
	}
	e.ix, e.dirs, e.files = ix, nil, map[string]source.Ident{}
	for _, f := range ix.Read() {
		d := depOf(f.Path, f.Info)
		if f.Info.IsDir() {
			e.dirs = append(e.dirs, d)
		} else {
			e.files[d.Path] = d.Ident
		}
	}
	e.scans++
	return ix, nil
}

// fresh reports whether the files via (slash paths beneath the index's
// root) stat as they did when the entry's index read them; a file it did
// not read is fresh while the folders are (a runtime, found by name).
func (e *projectEntry) fresh(v source.View, ix decode.ProjectIndex, via []string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ix != ix {
		return false
	}
	if e.p.told.Load() {
		return !e.stale
	}
	for _, rel := range via {
		p := filepath.Join(ix.Root(), filepath.FromSlash(rel))
		id, ok := e.files[p]
		if !ok {
			continue
		}
		fi, _, err := v.Stat(p)
		if err != nil || source.Of(fi) != id {
			return false
		}
	}
	return true
}

// viewFiles is a source view (internal/source) as decode.Files: an archive's
// project indexes as a loose one, an engine's asset root is found in it.
type viewFiles struct{ v source.View }

func (f viewFiles) Stat(p string) (fs.FileInfo, error) {
	fi, _, err := f.v.Stat(p)
	return fi, err
}

func (f viewFiles) ReadDir(p string) ([]fs.DirEntry, error) { return f.v.ReadDir(p) }

func (f viewFiles) Open(p string) (decode.ProjectReader, error) { return f.v.Open(p) }

func (f viewFiles) Layers(root string) []string { return source.Layers(f.v, root) }

// unchanged reports whether every file of ds stats (not following a
// link) as it did, through the view v.
func unchanged(v source.View, ds []Dep) bool {
	for _, d := range ds {
		fi, _, err := v.Stat(d.Path)
		if err != nil || source.Of(fi) != d.Ident {
			return false
		}
	}
	return true
}

// project returns the index of the project m's file is in when its
// format names files through one, else nil. rec, when set, records the
// files each answer came from as the conversion's reads.
func (m *Mesh) project(rec *reads) decode.ProjectIndex {
	pi, ok := m.Format.(decode.ProjectIndexer)
	if !ok || m.mem != nil {
		return nil
	}
	v := m.Limits.view()
	root, ok := pi.ProjectRoot(filepath.Dir(m.Path), m.Tree, viewFiles{v})
	if !ok {
		return nil
	}
	ps := m.Limits.Projects
	if ps == nil {
		ps = NewProjects()
	}
	e := ps.entry(pi, root)
	ix, err := e.index(v, pi, root, nil)
	if err != nil {
		return nil
	}
	return &checked{ix: ix, e: e, v: v, pi: pi, root: root, rec: rec}
}

// checked is a project index whose answers are checked against the files
// they came from (the index built again, once, when one changed) and,
// with rec set, added to a conversion's reads.
type checked struct {
	mu   sync.Mutex
	ix   decode.ProjectIndex
	e    *projectEntry
	v    source.View // the sources it reads through (Limits.View)
	pi   decode.ProjectIndexer
	root string
	rec  *reads
}

func (c *checked) Root() string { return c.root }

func (c *checked) Read() []decode.ProjectFile { return c.current().Read() }

func (c *checked) current() decode.ProjectIndex {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ix
}

// answer runs ask on the index, and again on one built afresh when the
// files it answered from changed; it records those files.
func (c *checked) answer(ask func(decode.ProjectIndex) []string) {
	ix := c.current()
	via := ask(ix)
	if !c.e.fresh(c.v, ix, via) {
		if nix, err := c.e.index(c.v, c.pi, c.root, ix); err == nil {
			c.mu.Lock()
			c.ix = nix
			c.mu.Unlock()
			via = ask(nix)
		}
	}
	if c.rec == nil {
		return
	}
	var paths []string
	for _, v := range via {
		paths = append(paths, filepath.Join(c.root, filepath.FromSlash(v)))
	}
	for _, d := range statDeps(c.v, paths) {
		c.rec.add(d)
	}
}

func (c *checked) Resolve(ref string) (rel string, via []string, why string, ok bool) {
	c.answer(func(ix decode.ProjectIndex) []string {
		rel, via, why, ok = ix.Resolve(ref)
		return via
	})
	return rel, via, why, ok
}

// MeshMaterials is decode.MeshMaterials when the index has it.
func (c *checked) MeshMaterials(rel string) (by map[string]string, via []string) {
	c.answer(func(ix decode.ProjectIndex) []string {
		by, via = nil, nil
		if mm, ok := ix.(decode.MeshMaterials); ok {
			by, via = mm.MeshMaterials(rel)
		}
		return via
	})
	return by, via
}
