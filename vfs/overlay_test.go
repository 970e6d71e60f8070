package vfs

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/source"
)

// readAt reads the source file at p through the source view.
func readAt(t *testing.T, p string) string {
	t.Helper()
	f, err := source.NewView().Open(p)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, 0, f.Size()))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOverlayFolders: with Overlay, a resource/ folder holding a.pak and
// b.pak lists its loose entries and both archives' trees (and the
// archives themselves as folders); a name is read from the loose file
// first, then b.pak, then a.pak (checked by content), in the top folder
// and in a folder merged from all three; a mesh and a texture from a pak
// are a mesh and a texture with its PNG; a merged folder's time follows
// a rewritten archive; a folder of another name, or without Overlay,
// is not merged.
func TestOverlayFolders(t *testing.T) {
	base := t.TempDir()
	res := filepath.Join(base, "resource")
	os.MkdirAll(filepath.Join(res, "sub"), 0o755)
	os.WriteFile(filepath.Join(res, "x.txt"), []byte("loose"), 0o644)
	os.WriteFile(filepath.Join(res, "sub", "l.txt"), []byte("loose"), 0o644)
	gem, err := meshgen.GEM(20, 1)
	if err != nil {
		t.Fatal(err)
	}
	writeZip(t, filepath.Join(res, "a.pak"), map[string][]byte{
		"x.txt": []byte("a"), "y.txt": []byte("a"), "z.txt": []byte("a"), "sub/l.txt": []byte("a"), "sub/p.txt": []byte("a"), "sub/q.txt": []byte("a"),
	})
	writeZip(t, filepath.Join(res, "b.pak"), map[string][]byte{
		"x.txt": []byte("b"), "y.txt": []byte("b"), "sub/q.txt": []byte("b"), "m/a.ply": gem, "m/wood.dds": []byte("DDS "),
	})
	other := filepath.Join(base, "other")
	os.MkdirAll(other, 0o755)
	writeZip(t, filepath.Join(other, "a.pak"), map[string][]byte{"y.txt": []byte("a")})

	top := mirrorFolder(t, res)
	top.Overlay = true
	got := kinds(t, top)
	want := map[string]uint32{"x.txt": syscall.S_IFREG, "y.txt": syscall.S_IFREG, "z.txt": syscall.S_IFREG,
		"sub": syscall.S_IFDIR, "m": syscall.S_IFDIR, "a.pak": syscall.S_IFDIR, "b.pak": syscall.S_IFDIR}
	if len(got) != len(want) {
		t.Errorf("the merged resource/ lists %v", got)
	}
	for n, k := range want {
		if got[n] != k {
			t.Errorf("the merged resource/ lists %s as %o, want %o", n, got[n], k)
		}
	}
	for name, w := range map[string]string{"x.txt": "loose", "y.txt": "b", "z.txt": "a"} {
		p, packed := top.Path(name)
		if readAt(t, p) != w || packed != (w != "loose") {
			t.Errorf("%s is read from %s (packed %v): %q, want %q", name, p, packed, readAt(t, p), w)
		}
		var st syscall.Stat_t
		if err := top.Lstat(name, &st, top.Now()); err != nil || st.Size != int64(len(w)) {
			t.Errorf("%s: stat %v, size %d", name, err, st.Size)
		}
	}
	if p, _ := top.Path("sub"); p != filepath.Join(res, "sub") {
		t.Errorf("a merged folder's path is %s", p)
	}

	sub := mirrorFolder(t, filepath.Join(res, "sub"))
	sub.Overlay = true
	if got := kinds(t, sub); len(got) != 3 {
		t.Errorf("the merged sub/ lists %v", got)
	}
	for name, w := range map[string]string{"l.txt": "loose", "p.txt": "a", "q.txt": "b"} {
		if p, _ := sub.Path(name); readAt(t, p) != w {
			t.Errorf("sub/%s: %q, want %q", name, readAt(t, p), w)
		}
	}

	m := mirrorFolder(t, filepath.Join(res, "m"))
	m.Overlay = true
	if got := kinds(t, m); len(got) != 3 || got["a.ply"] != syscall.S_IFDIR || got["wood.dds.png"] != syscall.S_IFREG {
		t.Errorf("the merged m/ (only in b.pak) lists %v", got)
	}
	var st syscall.Stat_t
	if err := m.Stat(&st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		t.Errorf("the merged m/ stats %v, mode %o", err, st.Mode)
	}
	if err := m.Lstat("a.ply", &st, m.Now()); err != nil {
		t.Fatal(err)
	}
	if k, _, _ := m.Kind("a.ply", &st, m.InFolder()); k != KindMesh {
		t.Errorf("a.ply from b.pak is kind %d", k)
	}
	if p, packed := m.Path("a.ply"); p != filepath.Join(res, "b.pak", "m", "a.ply") || !packed {
		t.Errorf("a.ply is read from %s (packed %v)", p, packed)
	}
	if !m.SkipWatch() || !m.Unwatched.Load() {
		t.Error("a merged folder with no loose layer is watched, or counts as watched")
	}
	if sub.SkipWatch() || !sub.Unwatched.Load() {
		t.Error("a merged folder's loose layer is not watched, or the folder counts as watched")
	}

	later := time.Now().Add(time.Hour).Truncate(time.Second)
	os.Chtimes(filepath.Join(res, "a.pak"), later, later)
	if err := sub.Stat(&st); err != nil || st.Mtim.Sec != later.Unix() {
		t.Errorf("the merged sub/ after a.pak was rewritten: %v, time %v, want %v", err, time.Unix(st.Mtim.Unix()), later)
	}

	plain := mirrorFolder(t, res)
	if got := kinds(t, plain); got["y.txt"] != 0 || got["a.pak"] != syscall.S_IFDIR {
		t.Errorf("resource/ without Overlay lists %v", got)
	}
	o := mirrorFolder(t, other)
	o.Overlay = true
	if got := kinds(t, o); len(got) != 1 {
		t.Errorf("a folder not named resource or res is merged: %v", got)
	}
}

// TestOverlayNarrowed: a merged folder's permission bits are those every
// layer holding it grants: beside a 0600 archive, resource/ and a folder
// it shares with the loose tree are its owner's alone (as the listing
// keeps them too), while a folder only a 0644 archive holds stays
// readable by all.
func TestOverlayNarrowed(t *testing.T) {
	base := t.TempDir()
	res := filepath.Join(base, "resource")
	os.MkdirAll(filepath.Join(res, "sub"), 0o755)
	os.Chmod(res, 0o755)
	writeZip(t, filepath.Join(res, "a.pak"), map[string][]byte{"pub/p.txt": []byte("a")})
	writeZip(t, filepath.Join(res, "b.pak"), map[string][]byte{"sub/secret.txt": []byte("b")})
	os.Chmod(filepath.Join(res, "b.pak"), 0o600)

	top := mirrorFolder(t, res)
	top.Overlay = true
	var st syscall.Stat_t
	if err := top.Stat(&st); err != nil || st.Mode&0o777 != 0o500 {
		t.Errorf("resource/ beside a 0600 archive: %v, mode %o; want 500", err, st.Mode&0o777)
	}
	if err := top.Lstat("sub", &st, top.Now()); err != nil || st.Mode&0o777 != 0o500 {
		t.Errorf("sub/, in the 0600 archive too: %v, mode %o; want 500", err, st.Mode&0o777)
	}
	if err := top.Lstat("pub", &st, top.Now()); err != nil || st.Mode&0o777 != 0o555 {
		t.Errorf("pub/, in the 0644 archive alone: %v, mode %o; want 555", err, st.Mode&0o777)
	}
	if got := kinds(t, top); got["sub"] != syscall.S_IFDIR {
		t.Fatalf("listing %v", got)
	}
	if err := top.Lstat("sub", &st, top.Now()); err != nil || st.Mode&0o777 != 0o500 {
		t.Errorf("sub/ as the listing keeps it: %v, mode %o; want 500", err, st.Mode&0o777)
	}
	parent := mirrorFolder(t, base)
	parent.Overlay = true
	if err := parent.Lstat("resource", &st, parent.Now()); err != nil || st.Mode&0o777 != 0o500 {
		t.Errorf("resource/ as its parent stats it: %v, mode %o; want 500", err, st.Mode&0o777)
	}
	kinds(t, parent)
	if err := parent.Lstat("resource", &st, parent.Now()); err != nil || st.Mode&0o777 != 0o500 {
		t.Errorf("resource/ as its parent's listing keeps it: %v, mode %o; want 500", err, st.Mode&0o777)
	}
	os.Chmod(filepath.Join(res, "b.pak"), 0o644)
	if err := top.Stat(&st); err != nil || st.Mode&0o777 != 0o555 {
		t.Errorf("resource/ once the archive is 0644: %v, mode %o; want 555", err, st.Mode&0o777)
	}
}
