// Package guid is the GUID index of a UNIGINE project: it resolves the
// guid://<40 hex> references of .world, .node and .mat files to the files
// of the project's data/ folder. It knows nothing of FUSE.
//
// A GUID names a file in one of three ways, read from the project's files:
//
//   - a runtime: data/.runtimes/<first 2 hex>/<guid>.<ext>, what the editor
//     made of an imported asset. Its JSON .meta ({"asset": <source guid>,
//     "alias": <name>, "primary": 0|1}) names the source asset's GUID.
//   - an XML .meta beside a source file (<asset><guid>…</guid>…</asset>):
//     the source is the .meta's name without ".meta". Its <runtimes> list
//     names the runtimes made from it.
//   - the guid attribute of a .mat file's <material> element.
//
// Where two of these name different files for one GUID, a runtime wins over
// a .meta and a .meta over a .mat's attribute: the engine loads the runtime,
// whose name is the GUID itself, and the editor keeps an asset's GUID in its
// .meta, while a .mat copied by hand keeps the guid attribute of the one it
// was copied from. Within one way the first file in lexical path order wins
// (so the answer does not depend on the order a folder lists in) and each
// later one is recorded in Index.Errors.
package guid

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/meshfs/meshfs/decode"
)

// Kinds of resolution, as Resolve reports them.
const (
	KindRuntime = "runtime" // data/.runtimes/<2 hex>/<guid>.<ext>
	KindMeta    = "meta"    // the source beside an XML .meta whose <guid> it is
	KindMat     = "mat"     // a .mat whose guid attribute it is
	// KindAsset is a runtime whose file is absent, resolved to the source
	// asset its .meta names (an image a runtime .dds was made from).
	KindAsset = "asset"
)

// rank orders the ways a GUID names a file: the lower wins.
func rank(kind string) int {
	switch kind {
	case KindRuntime:
		return 0
	case KindMeta:
		return 1
	}
	return 2
}

const (
	// MaxMetaBytes bounds a .meta file: real ones are a few kilobytes (a
	// world's holds its editor viewports); a larger one is skipped.
	MaxMetaBytes = 1 << 20
	// MatHeadBytes is how much of a .mat is read for its guid attribute,
	// which is on the root element at the file's start.
	MatHeadBytes = 64 << 10
	// RuntimesDir is the folder of runtimes beneath a project's data root.
	RuntimesDir = ".runtimes"
)

// Index maps a project's GUIDs to its files. It is built by Scan and not
// changed after; a rescan builds a new one.
type Index struct {
	// Root is the data folder scanned.
	Root string
	// Errors are the files skipped or overruled (unreadable, unparsable,
	// too big, a duplicate GUID): never fatal to the scan.
	Errors []error
	// Metas is how many .meta files were read.
	Metas int

	entries map[string]entry  // guid -> winning claim
	assets  map[string]asset  // runtime guid -> source asset guid
	missing map[string]string // guid -> file a .meta names that the scan did not find
	// runtimes are the runtimes made from a source asset, by its GUID:
	// its .meta's list, then those whose JSON .meta names it.
	runtimes map[string][]string
	byRel    map[string]string // rel -> the GUID resolving to it
	// read are the folders walked and the files read, with their stats
	// as the scan found them (Read).
	read []decode.ProjectFile
}

type entry struct {
	rel  string // slash path beneath Root
	kind string
	from string // the file that says so: rel itself for a runtime or a .mat
}

// asset is a runtime's source asset, as the file from says.
type asset struct{ guid, from string }

// Resolve returns the file guid names (guid://<40 hex> or the bare 40 hex,
// either case) and the kind of resolution, or ok false.
func (ix *Index) Resolve(guid string) (p string, kind string, ok bool) {
	g, ok := Parse(guid)
	if !ok {
		return "", "", false
	}
	if e, ok := ix.entries[g]; ok {
		return ix.path(e.rel), e.kind, true
	}
	if a, ok := ix.assets[g]; ok {
		if e, ok := ix.entries[a.guid]; ok {
			return ix.path(e.rel), KindAsset, true
		}
	}
	return "", "", false
}

// Via returns the files (slash paths beneath Root) whose contents Resolve
// read its answer for guid from: the .meta naming a source, the .mat
// naming itself, the runtime's .meta naming its asset and the asset's
// own; none for a runtime, which is found by its name.
func (ix *Index) Via(guid string) []string {
	g, ok := Parse(guid)
	if !ok {
		return nil
	}
	var via []string
	add := func(e entry) {
		if e.kind != KindRuntime {
			via = append(via, e.from)
		}
	}
	if e, ok := ix.entries[g]; ok {
		add(e)
		return via
	}
	if a, ok := ix.assets[g]; ok {
		via = append(via, a.from)
		if e, ok := ix.entries[a.guid]; ok {
			add(e)
		}
	}
	return via
}

// AssetVia returns the file (a slash path beneath Root) that says which
// source asset the runtime guid was made from.
func (ix *Index) AssetVia(guid string) (string, bool) {
	g, ok := Parse(guid)
	if !ok {
		return "", false
	}
	a, ok := ix.assets[g]
	return a.from, ok
}

// Runtimes returns the GUIDs of the runtimes made from the source asset
// guid (an .fbx's mesh and node runtimes), as its .meta and theirs say.
func (ix *Index) Runtimes(guid string) []string {
	g, ok := Parse(guid)
	if !ok {
		return nil
	}
	return ix.runtimes[g]
}

// GUIDOf returns the GUID that resolves to the file rel (a slash path
// beneath Root), directly.
func (ix *Index) GUIDOf(rel string) (string, bool) {
	g, ok := ix.byRel[rel]
	return g, ok
}

// Read returns the folders the scan walked and the files it read (.meta,
// .mat), each with the stat it had then: a change of any of them (of a
// folder when an entry is added, removed or renamed) may change the index.
func (ix *Index) Read() []decode.ProjectFile { return ix.read }

// Asset returns the GUID of the source asset the runtime guid was made
// from, as the runtime's .meta (or the source's .meta) says.
func (ix *Index) Asset(guid string) (string, bool) {
	g, ok := Parse(guid)
	if !ok {
		return "", false
	}
	a, ok := ix.assets[g]
	return a.guid, ok
}

// Missing returns the file a .meta names for guid when the scan did not
// find that file (a source left out of a copy of the project), so a caller
// can say what is unresolved and why.
func (ix *Index) Missing(guid string) (string, bool) {
	g, ok := Parse(guid)
	if !ok {
		return "", false
	}
	rel, ok := ix.missing[g]
	if !ok {
		return "", false
	}
	return ix.path(rel), true
}

// Len is how many GUIDs resolve directly (not counting KindAsset).
func (ix *Index) Len() int { return len(ix.entries) }

func (ix *Index) path(rel string) string { return filepath.Join(ix.Root, filepath.FromSlash(rel)) }

// Parse returns the 40 lowercase hex digits of a GUID written as
// guid://<40 hex> or bare, or ok false.
func Parse(s string) (string, bool) {
	s = strings.TrimPrefix(s, "guid://")
	if len(s) != 40 {
		return "", false
	}
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			b[i] = c + 'a' - 'A'
		default:
			return "", false
		}
	}
	return string(b), true
}

// DataFolder is the name of a project's data folder, its root when no
// folder above a file holds RuntimesDir.
const DataFolder = "data"

// FindRoot returns a project's data root for a file or folder beneath it:
// the nearest folder from p upward that holds a .runtimes folder, else the
// nearest named DataFolder. It looks no higher than stop ("" for no
// bound), the folder a mount mirrors, and stats through files (following
// no final link, so no link to .runtimes).
func FindRoot(p, stop string, files decode.ProjectFiles) (string, bool) {
	p, stop = filepath.Clean(p), filepath.Clean(stop)
	named := ""
	for dir := p; ; {
		if fi, err := files.Stat(filepath.Join(dir, RuntimesDir)); err == nil && fi.IsDir() {
			return dir, true
		}
		if named == "" && filepath.Base(dir) == DataFolder {
			if fi, err := files.Stat(dir); err == nil && fi.IsDir() {
				named = dir
			}
		}
		parent := filepath.Dir(dir)
		if dir == stop || parent == dir {
			break
		}
		dir = parent
	}
	return named, named != ""
}

// Scan builds the index of the data folder root, reading it only through
// files (the caller's view of the source: no link followed out, only
// regular files opened): the folders are walked in lexical order by
// files.ReadDir, a link neither followed nor read, each file read within
// its size bound. What cannot be read or parsed is recorded in Errors;
// only a root that cannot be listed fails.
func Scan(root string, files decode.ProjectFiles) (*Index, error) {
	fi, err := files.Stat(root)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a folder", root)
	}
	s := newScanner(root, files)
	var walk func(dir string, fi fs.FileInfo)
	walk = func(dir string, fi fs.FileInfo) {
		s.ix.read = append(s.ix.read, decode.ProjectFile{Path: dir, Info: fi})
		ents, err := files.ReadDir(dir)
		if err != nil {
			s.fail(err)
			return
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			switch {
			case e.IsDir():
				if efi, err := files.Stat(p); err == nil && efi.IsDir() {
					walk(p, efi)
				}
			case e.Type().IsRegular():
				rel, err := filepath.Rel(root, p)
				if err == nil {
					s.file(filepath.ToSlash(rel))
				}
			}
		}
	}
	walk(root, fi)
	s.finish()
	return s.ix, nil
}

// scanner is the state of one Scan.
type scanner struct {
	fs    decode.ProjectFiles
	ix    *Index
	buf   []byte
	files map[string]bool // regular files seen, slash paths beneath the root
	// metaClaims are the sources XML .meta files name, checked against
	// files once the walk has seen them all.
	metaClaims []claim
	claims     map[string]entry // guid -> winner so far
}

func newScanner(root string, files decode.ProjectFiles) *scanner {
	return &scanner{
		ix:     &Index{Root: root, entries: map[string]entry{}, assets: map[string]asset{}, missing: map[string]string{}, runtimes: map[string][]string{}, byRel: map[string]string{}},
		fs:     files,
		files:  map[string]bool{},
		claims: map[string]entry{},
	}
}

type claim struct {
	guid, rel, from string
}

func (s *scanner) file(rel string) {
	s.files[rel] = true
	switch {
	case strings.HasSuffix(rel, ".meta"):
		s.meta(rel)
	case isRuntime(rel):
		s.runtime(rel)
	case strings.HasSuffix(rel, ".mat"):
		s.mat(rel)
	}
}

// isRuntime reports whether rel is beneath the root's .runtimes folder.
func isRuntime(rel string) bool { return strings.HasPrefix(rel, RuntimesDir+"/") }

// runtime indexes .runtimes/<2 hex>/<guid>.<ext>.
func (s *scanner) runtime(rel string) {
	dir, name := path.Split(strings.TrimPrefix(rel, RuntimesDir+"/"))
	g, ok := Parse(strings.SplitN(name, ".", 2)[0])
	if !ok || !strings.Contains(name, ".") {
		return // not a runtime's name: the engine would not look it up
	}
	if dir != g[:2]+"/" {
		s.fail(decode.Errorf(s.ix.path(rel), "", "folder", 0, "runtime %s is not in the folder %s/ its GUID puts it in", name, g[:2]))
		return
	}
	s.claim(g, rel, rel, KindRuntime)
}

// claim records that rel is named by g in the way kind, as the file from
// says, keeping the rule of the package comment.
func (s *scanner) claim(g, rel, from, kind string) {
	old, ok := s.claims[g]
	switch {
	case !ok || rank(kind) < rank(old.kind):
		s.claims[g] = entry{rel: rel, kind: kind, from: from}
	case old.kind == kind && old.rel != rel:
		s.fail(decode.Errorf(s.ix.path(from), "", "guid", 0, "GUID %s names %s, but %s already, which wins", g, s.ix.path(rel), s.ix.path(old.rel)))
	}
}

func (s *scanner) fail(err error) { s.ix.Errors = append(s.ix.Errors, err) }

// read reads the first up to max bytes of rel into the scanner's buffer;
// whole says whether a larger file is an error rather than cut short.
func (s *scanner) read(rel string, max int64, whole bool) ([]byte, error) {
	p := s.ix.path(rel)
	fi, err := s.fs.Stat(p)
	if err != nil {
		return nil, err
	}
	r, err := s.fs.Open(p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f := io.NewSectionReader(r, 0, r.Size())
	s.ix.read = append(s.ix.read, decode.ProjectFile{Path: s.ix.path(rel), Info: fi})
	n := fi.Size()
	if n > max {
		if whole {
			return nil, &decode.FormatError{File: s.ix.path(rel), Field: "size", Msg: fmt.Sprintf("%d bytes, more than the %d a .meta may have", n, max), Err: decode.ErrLimit}
		}
		n = max
	}
	if int64(cap(s.buf)) < n {
		s.buf = make([]byte, n)
	}
	b := s.buf[:n]
	m, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:m], nil
}

// meta reads a .meta: JSON for a runtime, XML for a source.
func (s *scanner) meta(rel string) {
	b, err := s.read(rel, MaxMetaBytes, true)
	if err != nil {
		s.fail(err)
		return
	}
	s.ix.Metas++
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		s.runtimeMeta(rel, b)
		return
	}
	s.sourceMeta(rel, b)
}

// runtimeMeta reads {"asset": <source guid>, "alias": …} beside a runtime.
func (s *scanner) runtimeMeta(rel string, b []byte) {
	name := s.ix.path(rel)
	var m struct {
		Asset string `json:"asset"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		var off int64
		if se, ok := err.(*json.SyntaxError); ok {
			off = se.Offset
		}
		s.fail(&decode.FormatError{File: name, Section: "json", Offset: off, Msg: "not a runtime's .meta", Err: err})
		return
	}
	a, ok := Parse(m.Asset)
	if !ok {
		s.fail(decode.Errorf(name, "json", "asset", 0, "%q is not a GUID", m.Asset))
		return
	}
	g, ok := Parse(strings.SplitN(path.Base(rel), ".", 2)[0])
	if !ok {
		s.fail(decode.Errorf(name, "", "name", 0, "a runtime's .meta not named <guid>.<ext>.meta"))
		return
	}
	if g != a {
		s.ix.assets[g] = asset{a, rel}
		s.addRuntime(a, g)
	}
}

// sourceMeta reads <asset><guid>…</guid><runtimes><runtime id=…/>… beside a
// source file. It reads no further than <parameters>, which the editor
// writes without escaping (a world's viewports are elements named <1>, not
// XML).
func (s *scanner) sourceMeta(rel string, b []byte) {
	name := s.ix.path(rel)
	d := xml.NewDecoder(bytes.NewReader(b))
	var (
		stack    []string
		id       string
		idOff    int64 // just after <guid>
		text     []byte
		runtimes []string
	)
	for done := false; !done; {
		tok, err := d.Token()
		if err != nil { // the loop ends at </asset>, before any EOF
			s.fail(&decode.FormatError{File: name, Section: "xml", Offset: d.InputOffset(), Msg: "not an asset's .meta", Err: err})
			return
		}
		switch t := tok.(type) {
		case xml.StartElement:
			stack = append(stack, t.Name.Local)
			where := at(stack)
			switch {
			case len(stack) == 1 && where != "asset":
				s.fail(decode.Errorf(name, "xml", "", d.InputOffset(), "root element <%s>, not <asset>", where))
				return
			case where == "asset/parameters":
				done = true
			case where == "asset/guid":
				text, idOff = text[:0], d.InputOffset()
			case where == "asset/runtimes/runtime":
				for _, a := range t.Attr {
					if a.Name.Local == "id" {
						runtimes = append(runtimes, a.Value)
					}
				}
			}
		case xml.CharData:
			if at(stack) == "asset/guid" {
				text = append(text, t...)
			}
		case xml.EndElement:
			if at(stack) == "asset/guid" {
				id = string(text)
			}
			stack = stack[:len(stack)-1]
			done = len(stack) == 0
		}
	}
	g, ok := Parse(strings.TrimSpace(id))
	if !ok {
		s.fail(decode.Errorf(name, "xml", "guid", idOff, "%q is not a GUID", id))
		return
	}
	s.metaClaims = append(s.metaClaims, claim{guid: g, rel: strings.TrimSuffix(rel, ".meta"), from: rel})
	for _, r := range runtimes {
		if rid, ok := Parse(r); ok && rid != g {
			s.addRuntime(g, rid)
			if _, ok := s.ix.assets[rid]; !ok {
				s.ix.assets[rid] = asset{g, rel}
			}
		}
	}
}

// addRuntime records that runtime rt was made from asset a, once.
func (s *scanner) addRuntime(a, rt string) {
	for _, have := range s.ix.runtimes[a] {
		if have == rt {
			return
		}
	}
	s.ix.runtimes[a] = append(s.ix.runtimes[a], rt)
}

// at is the path of the element open in a .meta, down to the depth of
// <runtime>; deeper ones are not read, and "" keeps a deep file linear.
func at(stack []string) string {
	if len(stack) > 3 {
		return ""
	}
	return strings.Join(stack, "/")
}

// mat reads the guid attribute of a .mat's <material> element.
func (s *scanner) mat(rel string) {
	b, err := s.read(rel, MatHeadBytes, false)
	if err != nil {
		s.fail(err)
		return
	}
	s.matHead(rel, b)
}

// matHead reads the guid attribute of the <material> element b starts with.
func (s *scanner) matHead(rel string, b []byte) {
	name := s.ix.path(rel)
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		if err != nil {
			s.fail(&decode.FormatError{File: name, Section: "xml", Offset: d.InputOffset(), Msg: "no <material> element", Err: err})
			return
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if se.Name.Local != "material" {
			s.fail(decode.Errorf(name, "xml", "", d.InputOffset(), "root element <%s>, not <material>", se.Name.Local))
			return
		}
		for _, a := range se.Attr {
			if a.Name.Local != "guid" {
				continue
			}
			if g, ok := Parse(a.Value); ok {
				s.claim(g, rel, rel, KindMat)
			} else {
				s.fail(decode.Errorf(name, "xml", "guid", d.InputOffset(), "%q is not a GUID", a.Value))
			}
		}
		return
	}
}

// finish settles the .meta claims, whose sources the walk has now seen or
// not, and fixes the index.
func (s *scanner) finish() {
	for _, c := range s.metaClaims {
		if s.files[c.rel] {
			s.claim(c.guid, c.rel, c.from, KindMeta)
		} else if _, ok := s.ix.missing[c.guid]; !ok {
			s.ix.missing[c.guid] = c.rel
		}
	}
	s.ix.entries = s.claims
	for g, e := range s.ix.entries {
		delete(s.ix.missing, g)
		if old, ok := s.ix.byRel[e.rel]; !ok || g < old {
			s.ix.byRel[e.rel] = g
		}
	}
}
