package source

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

func TestIdentOfAStat(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a")
	if err := os.WriteFile(p, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	id, st, err := Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if !Of(fi).Same(id) || !FromStat(st).Same(id) {
		t.Fatalf("Of %+v, FromStat %+v, Stat %+v: not one version", Of(fi), FromStat(st), id)
	}
	if id.Ino == 0 || id.Size != 3 || id.MtimeNs != fi.ModTime().UnixNano() {
		t.Fatalf("ident %+v of a 3-byte file", id)
	}
	// Each field alone makes another version.
	for _, change := range []func(*Ident){
		func(i *Ident) { i.Dev++ }, func(i *Ident) { i.Ino++ },
		func(i *Ident) { i.Size++ }, func(i *Ident) { i.MtimeNs++ },
	} {
		o := id
		change(&o)
		if o.Same(id) || (Version{Ident: o}).Same(Version{Ident: id}) {
			t.Fatalf("%+v and %+v compare the same", o, id)
		}
	}
	// Written in place with the same size: the mtime tells.
	if err := os.WriteFile(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Second)
	os.Chtimes(p, later, later)
	now, _, _ := Stat(p)
	if now.Same(id) || now.File != id.File {
		t.Fatalf("rewritten in place: %+v, was %+v", now, id)
	}
	if _, _, err := Stat(filepath.Join(dir, "gone")); err == nil {
		t.Fatal("stat of a missing file succeeded")
	}
	var zero syscall.Stat_t
	if !(Version{Ident: FromStat(&zero)}).Zero() {
		t.Fatal("a zero stat is not the zero version")
	}
}

func TestSetSum(t *testing.T) {
	a := Read{Path: "/t/a.dds", Ident: Ident{File: File{1, 2}, Size: 3, MtimeNs: 4}}
	b := Read{Path: "/t/b.mtl", Ident: Ident{File: File{1, 5}, Size: 6, MtimeNs: 7}}
	if (Set{}).Sum() != 0 {
		t.Fatal("empty set sums to non-zero")
	}
	if (Set{a, b}).Sum() != (Set{b, a}).Sum() {
		t.Fatal("sum depends on order")
	}
	base := (Set{a, b}).Sum()
	for _, change := range []func(*Read){
		func(r *Read) { r.Path += "x" }, func(r *Read) { r.Dev++ }, func(r *Read) { r.Ino++ },
		func(r *Read) { r.Size++ }, func(r *Read) { r.MtimeNs++ },
	} {
		c := b
		change(&c)
		if (Set{a, c}).Sum() == base {
			t.Fatalf("changed %+v: same sum", c)
		}
	}
	if (Set{a}).Sum() == base {
		t.Fatal("a file less: same sum")
	}
}

// writeRead writes data to path and returns the file as a Read.
func writeRead(t *testing.T, path, data string) Read {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	id, _, err := Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return Read{Path: path, Ident: id}
}

func TestTrackerDigestsTheSet(t *testing.T) {
	var tr Tracker
	dir := t.TempDir()
	id := Ident{File: File{1, 1}, Size: 10}
	m1, m2, other := "/src/a/m1.ply", "/src/a/m2.ply", "/src/b/o.ply"
	v1 := tr.Version(m1, id)
	tr.Version(m2, id)
	vo := tr.Version(other, id)
	if v1.Deps != 0 {
		t.Fatalf("fresh source: %+v", v1)
	}
	tex := writeRead(t, filepath.Join(dir, "wood.dds"), "one")
	if !tr.Track(m1, Set{tex}) {
		t.Fatal("first set found: not a change of paths")
	}
	if tr.Track(m1, Set{tex}) {
		t.Fatal("same paths again: reported changed")
	}
	// Tracking is no change of version: the outputs made while the scan
	// found the set are of the version asked.
	if !tr.Version(m1, id).Same(v1) {
		t.Fatal("tracking a set changed the version")
	}
	// A change reported of a file as it was (a touch of nothing, lost
	// events): the same version.
	if got := tr.Changed(tex.Path); len(got) != 1 || got[0] != m1 {
		t.Fatalf("texture changed: %v, want [%s]", got, m1)
	}
	tr.ChangedAll()
	if !tr.Version(m1, id).Same(v1) || !tr.Version(other, id).Same(vo) {
		t.Fatal("a change that changed no file made another version")
	}
	writeRead(t, tex.Path, "two!")
	tr.Changed(tex.Path)
	v2 := tr.Version(m1, id)
	if v2.Same(v1) {
		t.Fatal("a file of the set changed: same version")
	}
	if !tr.Version(other, id).Same(vo) {
		t.Fatal("a source not naming it changed version")
	}
	// A file of the folder (a companion, an animation): every source there.
	if got := tr.Changed("/src/a"); len(got) != 2 || got[0] != m1 || got[1] != m2 {
		t.Fatalf("folder changed: %v", got)
	}
	if !tr.Version(m1, id).Same(v2) {
		t.Fatal("a folder without dependency files changed the version")
	}
	// A set no longer naming the texture is not changed by it.
	tr.Track(m1, nil)
	before := tr.Version(m1, id)
	if got := tr.Changed(tex.Path); len(got) != 0 {
		t.Fatalf("texture dropped from the set still names %v", got)
	}
	if !tr.Version(m1, id).Same(before) {
		t.Fatal("changed by a file it no longer reads")
	}
	if len(tr.Set(m1)) != 0 {
		t.Fatal("set kept")
	}
	// Its folder stays named after the set is cleared.
	if got := tr.Changed("/src/a"); len(got) != 2 {
		t.Fatalf("folder of a cleared set: %v", got)
	}
}

// The folder's dependency files are in every version made there.
func TestTrackerFolder(t *testing.T) {
	dir := t.TempDir()
	anim := writeRead(t, filepath.Join(dir, "walk.anim"), "a")
	var tr Tracker
	tr.Folder = func(d string) Set {
		if d != dir {
			t.Errorf("folder of %s asked", d)
		}
		return Set{anim}
	}
	m := filepath.Join(dir, "m.mesh")
	id := Ident{File: File{1, 2}, Size: 3}
	v := tr.Version(m, id)
	if v.Deps != (Set{anim}).Sum() {
		t.Fatalf("deps %x, want the folder's %x", v.Deps, (Set{anim}).Sum())
	}
	anim = writeRead(t, anim.Path, "bb")
	tr.Changed(dir)
	if w := tr.Version(m, id); w.Same(v) || w.Deps != (Set{anim}).Sum() {
		t.Fatal("a changed animation file of the folder left the version")
	}
}

// A new mount learns a source's set from the scan an earlier mount
// persisted: the same version while those files are as that scan found
// them, another once one changed (so nothing saved before is served).
func TestTrackerRecorded(t *testing.T) {
	dir := t.TempDir()
	tex := writeRead(t, filepath.Join(dir, "wood.dds"), "one")
	src, id := "/src/m.ply", Ident{File: File{1, 3}, Size: 3}
	recorded := func(s string, v Version) (Set, bool) {
		if s != src || v.Ident != id {
			t.Errorf("record of %s %+v asked", s, v)
		}
		return Set{tex}, true
	}
	var earlier Tracker
	v1 := earlier.Version(src, id)
	earlier.Track(src, Set{tex})
	next := Tracker{Recorded: recorded}
	if v := next.Version(src, id); !v.Same(v1) {
		t.Fatalf("a remount over unchanged files: %+v, the first mount's %+v", v, v1)
	}
	if len(next.Set(src)) != 1 || len(next.Changed(tex.Path)) != 1 {
		t.Fatal("the recorded set is not tracked")
	}
	writeRead(t, tex.Path, "changed while unmounted")
	later := Tracker{Recorded: recorded}
	if v := later.Version(src, id); v.Same(v1) {
		t.Fatal("a remount after a texture changed: the version its outputs were saved under")
	}
}

func TestIdentOfReplacedFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	a := Of(fi)
	// Replaced by rename: same size and mtime, another inode.
	q := p + ".new"
	os.WriteFile(q, []byte("xyz"), 0o644)
	os.Chtimes(q, fi.ModTime(), fi.ModTime())
	os.Rename(q, p)
	fi2, _ := os.Stat(p)
	if b := Of(fi2); b.Same(a) || b.File == a.File {
		t.Fatalf("replaced file has the same ident %+v", b)
	}
}

func TestSetUnchanged(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tex.dds")
	if err := os.WriteFile(p, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	id, _, err := Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	s := Set{{Path: p, Ident: id}}
	if !s.Unchanged() || !(Set{}).Unchanged() {
		t.Fatal("an unchanged set is stale")
	}
	if err := os.WriteFile(p, []byte("two!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s.Unchanged() {
		t.Fatal("a rewritten file left its set unchanged")
	}
	os.Remove(p)
	if s.Unchanged() {
		t.Fatal("a removed file left its set unchanged")
	}
}

// TestFoldersNamed: the folders on the way to a found file that the
// source's own path does not pass are named by the source's set, so a
// change of one (a chmod) makes its next version; the folders it shares
// with the source, and an unfound file's, are not.
func TestFoldersNamed(t *testing.T) {
	src := "/t/res/models/model/a.mdl"
	tex := "/t/res/textures/fixture/a.dds"
	if got, want := Folders(src, tex), []string{"/t/res/textures/fixture", "/t/res/textures"}; !slices.Equal(got, want) {
		t.Errorf("Folders = %v, want %v", got, want)
	}
	if got := Folders(src, "/t/res/models/model/b.lua"); len(got) != 0 {
		t.Errorf("Folders of a file beside the source = %v, want none", got)
	}
	var tr Tracker
	tr.Track(src, Set{{Path: tex}})
	for _, p := range []string{"/t/res/textures/fixture", "/t/res/textures", tex} {
		if got := tr.Changed(p); !slices.Equal(got, []string{src}) {
			t.Errorf("Changed(%s) = %v, want the model", p, got)
		}
	}
	for _, p := range []string{"/t/res", "/t"} {
		if got := tr.Changed(p); len(got) != 0 {
			t.Errorf("Changed(%s) = %v, want none (the source's own folders)", p, got)
		}
	}
	tr.Track(src, nil)
	if got := tr.Changed("/t/res/textures"); len(got) != 0 {
		t.Errorf("after a scan that found nothing, Changed = %v, want none", got)
	}
}
