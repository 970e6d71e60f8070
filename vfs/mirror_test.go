package vfs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/walk"
)

func mirrorFolder(t *testing.T, dir string) *Folder {
	t.Helper()
	return folderIn(t, source.NewView(), dir)
}

// folderIn is the Folder of dir seen through the view v.
func folderIn(t *testing.T, v *source.Packed, dir string) *Folder {
	t.Helper()
	s, err := walk.NewSniffer(v)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &Folder{Abs: dir, Sniffer: s, View: v}
}

// A mesh's source stat is reused by the requests that follow it only while
// its folder is watched, and never across a change the watcher reported.
func TestRecentStatReuse(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.gem")
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := mirrorFolder(t, dir)
	var r Recent
	size := func() int64 {
		t.Helper()
		st, err := r.Stat(d, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size
	}
	grow := func(n int) {
		t.Helper()
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Unwatched: every request stats.
	if got := size(); got != 3 {
		t.Fatalf("size %d, want 3", got)
	}
	grow(5)
	if got := size(); got != 5 {
		t.Fatalf("unwatched folder: size %d after the change, want 5", got)
	}

	// Watched: the burst shares one stat...
	d.Watched.Store(true)
	if got := size(); got != 5 {
		t.Fatalf("size %d, want 5", got)
	}
	grow(7)
	if got := size(); got != 5 {
		t.Fatalf("watched folder, no event yet: size %d, want the reused 5", got)
	}
	// ...until the watcher reports a change in the folder.
	d.Changes.Add(1)
	if got := size(); got != 7 {
		t.Fatalf("after the change event: size %d, want 7", got)
	}
	// A stat taken before an event is not reused after it.
	before := d.Now()
	st, err := r.Stat(d, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	grow(9)
	d.Changes.Add(1)
	r.Remember(st, before)
	if got := size(); got != 9 {
		t.Fatalf("stat from before the event reused: size %d, want 9", got)
	}
	// A folder whose watch failed stats every time.
	d.Unwatched.Store(true)
	grow(11)
	if got := size(); got != 11 {
		t.Fatalf("unwatched (failed watch): size %d, want 11", got)
	}
	// A removed source is an error, not a reused stat.
	d.Unwatched.Store(false)
	d.Changes.Add(1)
	os.Remove(p)
	if _, err := r.Stat(d, p, nil); err == nil {
		t.Fatal("stat of a removed source succeeded")
	}
}

// A folder's lookups reuse its listing's entry stats under the same rules.
func TestListedStatReuse(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.bin")
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := mirrorFolder(t, dir)
	if _, err := d.List(); err != nil {
		t.Fatal(err)
	}
	listedAt := d.listed.Load().at
	if err := os.WriteFile(p, make([]byte, 5), 0o644); err != nil {
		t.Fatal(err)
	}
	size := func(name string, at Moment) int64 {
		t.Helper()
		var st syscall.Stat_t
		if err := d.Lstat(name, &st, at); err != nil {
			return -1
		}
		return st.Size
	}
	if got := size("a.bin", listedAt); got != 5 {
		t.Fatalf("unwatched folder: size %d, want 5", got)
	}
	d.Watched.Store(true)
	if got := size("a.bin", listedAt); got != 3 {
		t.Fatalf("watched, same burst: size %d, want the listing's 3", got)
	}
	if got := size("a.bin", Moment{gen: listedAt.gen + 1, at: listedAt.at}); got != 5 {
		t.Fatalf("after a change event: size %d, want 5", got)
	}
	if got := size("a.bin", Moment{gen: listedAt.gen, at: listedAt.at + int64(StatReuse)}); got != 5 {
		t.Fatalf("after StatReuse: size %d, want 5", got)
	}
	if got := size("b.bin", listedAt); got != -1 {
		t.Fatalf("name not listed and absent: size %d, want an error", got)
	}
}

// A listing shows folders, plain files, links and meshes (as folders),
// hides special files, adds a texture's PNG unless a real file has its
// name, and keeps its sniffs for the next listing.
func TestList(t *testing.T) {
	dir := t.TempDir()
	gem, err := meshgen.GEM(20, 1)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("m.ply", gem)
	write("notes.txt", []byte("plain"))
	// Textures are told by their first bytes: a .dds without DDS's magic
	// and a .tga whose header is no TGA's get no PNG.
	write("wood.dds", []byte("not really a texture"))
	write("real.dds", append([]byte("DDS |"), make([]byte, 123)...))
	write("rock.tga", []byte("x"))
	write("rock.tga.png", []byte("a real file"))
	write("grass.tga", []byte{0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 4, 0, 32, 8})
	write("junk.tga", []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
	os.Mkdir(filepath.Join(dir, "b"), 0o755)
	os.Mkdir(filepath.Join(dir, "a"), 0o755)
	os.Symlink("notes.txt", filepath.Join(dir, "link"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := mirrorFolder(t, dir)
	ents, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint32{}
	for _, e := range ents {
		got[e.Name] = e.Kind
	}
	want := map[string]uint32{
		"m.ply": syscall.S_IFDIR, "notes.txt": syscall.S_IFREG, "wood.dds": syscall.S_IFREG,
		"real.dds": syscall.S_IFREG, "real.dds.png": syscall.S_IFREG, "rock.tga": syscall.S_IFREG, "rock.tga.png": syscall.S_IFREG,
		"grass.tga": syscall.S_IFREG, "grass.tga.png": syscall.S_IFREG, "junk.tga": syscall.S_IFREG,
		"a": syscall.S_IFDIR, "b": syscall.S_IFDIR, "link": syscall.S_IFLNK,
	}
	if len(got) != len(want) {
		t.Fatalf("listing %v, want %v", got, want)
	}
	for n, k := range want {
		if got[n] != k {
			t.Errorf("%s: kind %o, want %o", n, got[n], k)
		}
	}
	if last := ents[len(ents)-2:]; !strings.HasSuffix(last[0].Name, ".png") || !strings.HasSuffix(last[1].Name, ".png") {
		t.Errorf("the PNGs are not listed last: %v", ents)
	}
	var sub []string
	for _, n := range []string{"a", "b"} {
		sub = append(sub, d.Subdirs().After(n, 5)...)
	}
	if len(sub) != 1 || !slices.Contains([]string{"a", "b"}, sub[0]) {
		t.Errorf("subfolders not kept: %v", sub)
	}
	// The second listing sniffs nothing: the file versions are the same.
	n := d.Sniffer.Count()
	if _, err := d.List(); err != nil {
		t.Fatal(err)
	}
	if d.Sniffer.Count() != n {
		t.Errorf("relisting sniffed %d files again", d.Sniffer.Count()-n)
	}
	var st syscall.Stat_t
	if err := d.Lstat("m.ply", &st, d.Now()); err != nil {
		t.Fatal(err)
	}
	if k, f, _ := d.Kind("m.ply", &st, func(string) bool { return true }); k != KindMesh || f == nil {
		t.Errorf("m.ply: kind %d format %v, want a mesh", k, f)
	}
}

func TestReadOnlyMode(t *testing.T) {
	for _, c := range []struct {
		perm uint32
		dir  bool
		want uint32
	}{{0o755, false, 0o444}, {0o644, true, 0o555}, {0o640, true, 0o550}, {0o000, true, 0}, {0o4777, false, 0o444}} {
		if got := ReadOnlyMode(c.perm, c.dir); got != c.want {
			t.Errorf("ReadOnlyMode(%o, %v) = %o, want %o", c.perm, c.dir, got, c.want)
		}
	}
}

func TestPNGSource(t *testing.T) {
	for name, want := range map[string]string{"wood.dds.png": "wood.dds", "a.TGA.png": "a.TGA", "photo.jpg.png": "", "wood.dds": "", "x.png": ""} {
		if got := PNGSource(name); got != want {
			t.Errorf("PNGSource(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestVersioned(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.ply")
	os.WriteFile(p, []byte("one"), 0o644)
	id, st, err := source.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	var tr source.Tracker
	if got, v, err := Versioned(st, id.File, p, &tr); err != nil || got != st || !v.Same(tr.Version(p, id)) {
		t.Fatalf("the same file: %v, %v", v, err)
	}
	if _, _, err := Versioned(st, source.File{Dev: 1, Ino: 2}, p, &tr); err != syscall.ESTALE {
		t.Fatalf("a replaced file: %v, want ESTALE", err)
	}
}

// A change names the entry and its PNG, bumps the change count, and tells
// a companion from a plain file.
func TestChanged(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "door.msh"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "door.msh.blob"), nil, 0o644)
	d := mirrorFolder(t, dir)
	names, dep := d.Changed("wood.dds")
	if !slices.Equal(names, []string{"wood.dds", "wood.dds.png"}) || dep || d.Changes.Load() != 1 {
		t.Fatalf("wood.dds: %v %v, count %d", names, dep, d.Changes.Load())
	}
	if names, dep := d.Changed("door.msh.blob"); !slices.Equal(names, []string{"door.msh.blob"}) || !dep {
		t.Fatalf("a companion: %v %v", names, dep)
	}
}

func TestRenarrowed(t *testing.T) {
	v := source.Version{Ident: source.Ident{File: source.File{Dev: 1, Ino: 2}, Size: 3}}
	before := &syscall.Stat_t{Mode: syscall.S_IFREG | 0o644, Size: 3}
	now := &syscall.Stat_t{Mode: syscall.S_IFREG | 0o600, Size: 3}
	if got := Renarrowed(before, v, now, v); got.Mode != syscall.S_IFREG|0o600 || got.Size != 3 || before.Mode != syscall.S_IFREG|0o644 {
		t.Fatalf("same version: mode %o (the stat before: %o)", got.Mode, before.Mode)
	}
	w := v
	w.Size++
	if got := Renarrowed(before, v, now, w); got != before {
		t.Fatal("narrowed by the stat of another version")
	}
}
