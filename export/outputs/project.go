package outputs

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/internal/version"
)

// Projects: a format that names files through an index of their project
// (decode.ProjectIndexer: UNIGINE GUIDs) gets the index of the project a
// file is in from Limits.Projects, which keeps one per project root and
// index kind for a run (a mount, a convert; nil: each conversion builds
// its own). An index is built once and used while every file and folder
// it was made from (decode.ProjectIndex.Read) stats as it did: each use
// stats them (a few thousand lstat calls for a few thousand .meta files,
// no reading), and one that changed, or a folder that gained or lost an
// entry, builds it again.
//
// A conversion's version set holds the files its answers came from
// (Resolve's via: the .meta naming a GUID's file), not the whole index:
// a .meta changed in place re-makes the outputs that used it; every
// other .meta change re-makes only the index.

// Projects keeps the project indexes of one run. The zero value is not
// usable: NewProjects makes one.
type Projects struct {
	mu sync.Mutex
	m  map[projectKey]*projectEntry
}

type projectKey struct{ kind, root string }

type projectEntry struct {
	mu    sync.Mutex
	ix    decode.ProjectIndex
	read  []Dep // as ix.Read gave them
	scans int
}

// NewProjects returns an empty set of project indexes.
func NewProjects() *Projects { return &Projects{m: map[projectKey]*projectEntry{}} }

// Scans reports how many times the index of the project at root (of the
// indexer's kind) has been built.
func (p *Projects) Scans(pi decode.ProjectIndexer, root string) int {
	p.mu.Lock()
	e := p.m[projectKey{pi.ProjectKind(), root}]
	p.mu.Unlock()
	if e == nil {
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.scans
}

// index returns the index of the project at root, built when there is
// none or it is stale.
func (p *Projects) index(pi decode.ProjectIndexer, root string) (decode.ProjectIndex, error) {
	k := projectKey{pi.ProjectKind(), root}
	p.mu.Lock()
	e := p.m[k]
	if e == nil {
		e = &projectEntry{}
		p.m[k] = e
	}
	p.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ix != nil && unchanged(e.read) {
		return e.ix, nil
	}
	ix, err := pi.IndexProject(root)
	if err != nil {
		e.ix, e.read = nil, nil
		return nil, err
	}
	read := make([]Dep, 0, len(ix.Read()))
	for _, f := range ix.Read() {
		read = append(read, depOf(f.Path, f.Info))
	}
	e.ix, e.read = ix, read
	e.scans++
	return ix, nil
}

// unchanged reports whether every file of ds stats (not following a
// link) as it did.
func unchanged(ds []Dep) bool {
	for _, d := range ds {
		fi, err := os.Lstat(d.Path)
		if err != nil || version.Of(fi) != d.Ident {
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
	root, ok := pi.ProjectRoot(filepath.Dir(m.Path), m.Tree)
	if !ok {
		return nil
	}
	ps := m.Limits.Projects
	if ps == nil {
		ps = NewProjects()
	}
	ix, err := ps.index(pi, root)
	if err != nil {
		return nil
	}
	if rec == nil {
		return ix
	}
	return recording{ix, rec}
}

// projectRoot is the root of the project m's file is in, or "".
func (m *Mesh) projectRoot() string {
	pi, ok := m.Format.(decode.ProjectIndexer)
	if !ok || m.mem != nil {
		return ""
	}
	root, _ := pi.ProjectRoot(filepath.Dir(m.Path), m.Tree)
	return root
}

// recording is a project index whose answers add the files they came
// from to a conversion's reads.
type recording struct {
	decode.ProjectIndex
	rec *reads
}

func (r recording) Resolve(ref string) (string, []string, string, bool) {
	rel, via, why, ok := r.ProjectIndex.Resolve(ref)
	var paths []string
	for _, v := range via {
		paths = append(paths, filepath.Join(r.Root(), filepath.FromSlash(v)))
	}
	for _, d := range statDeps(paths) {
		r.rec.add(d)
	}
	return rel, via, why, ok
}
