package vfs

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/source"
)

// writeZip writes files (by slash path) into the ZIP at p, deflated.
func writeZip(t *testing.T, p string, files map[string][]byte) {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for name, b := range files {
		f, err := w.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: time.Date(2021, 5, 6, 7, 8, 10, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		f.Write(b)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func kinds(t *testing.T, d *Folder) map[string]uint32 {
	t.Helper()
	ents, err := d.List()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint32{}
	for _, e := range ents {
		got[e.Name] = e.Kind
	}
	return got
}

// TestArchiveFolders: a file that is an archive by its first bytes (a
// .dat as well as a .zip) lists and stats as a folder (KindArchive), a
// zip-named file that is none as a file; inside it entries are what loose
// files would be (a mesh a folder, a .dds with its PNG, a nested archive
// a plain file), with the entries' sizes and times; the archive's folder
// changes identity with the archive file; a broken one lists error.txt.
func TestArchiveFolders(t *testing.T) {
	dir := t.TempDir()
	gem, err := meshgen.GEM(20, 1)
	if err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(t.TempDir(), "inner.zip")
	writeZip(t, inner, map[string][]byte{"x.txt": []byte("x")})
	innerBytes, _ := os.ReadFile(inner)
	files := map[string][]byte{"m/a.ply": gem, "m/wood.dds": []byte("DDS "), "nested.pak": innerBytes, "notes.txt": []byte("plain")}
	writeZip(t, filepath.Join(dir, "game.dat"), files)
	os.WriteFile(filepath.Join(dir, "fake.zip"), []byte("not an archive"), 0o644)

	d := mirrorFolder(t, dir)
	got := kinds(t, d)
	if got["game.dat"] != syscall.S_IFDIR || got["fake.zip"] != syscall.S_IFREG {
		t.Fatalf("listing %v", got)
	}
	var st syscall.Stat_t
	d.Lstat("game.dat", &st, d.Now())
	if k, _, _ := d.Kind("game.dat", &st, d.InFolder()); k != KindArchive {
		t.Errorf("game.dat is kind %d", k)
	}
	if d.Packed() || d.ErrorText() != nil {
		t.Error("a loose folder is packed or has an error.txt")
	}
	first := ArchiveFile(&st)

	top := mirrorFolder(t, filepath.Join(dir, "game.dat"))
	if !top.Packed() {
		t.Error("the archive's folder is not packed")
	}
	if got := kinds(t, top); len(got) != 3 || got["m"] != syscall.S_IFDIR || got["nested.pak"] != syscall.S_IFREG || got["notes.txt"] != syscall.S_IFREG {
		t.Errorf("the archive lists %v", got)
	}
	m := mirrorFolder(t, filepath.Join(dir, "game.dat", "m"))
	if got := kinds(t, m); len(got) != 3 || got["a.ply"] != syscall.S_IFDIR || got["wood.dds"] != syscall.S_IFREG || got["wood.dds.png"] != syscall.S_IFREG {
		t.Errorf("the archive's m/ lists %v", got)
	}
	if err := top.Lstat("notes.txt", &st, top.Now()); err != nil || st.Size != 5 || st.Mode&syscall.S_IFMT != syscall.S_IFREG ||
		!time.Unix(st.Mtim.Unix()).Equal(time.Date(2021, 5, 6, 7, 8, 10, 0, time.UTC)) {
		t.Errorf("an entry's stat: %v size %d mode %o mtime %v", err, st.Size, st.Mode, time.Unix(st.Mtim.Unix()).UTC())
	}
	ino := st.Ino

	files["notes.txt"] = []byte("plain, longer")
	writeZip(t, filepath.Join(dir, "game.dat"), files)
	d.Lstat("game.dat", &st, d.Now())
	if ArchiveFile(&st) == first {
		t.Error("a rewritten archive's folder has the same identity")
	}
	if err := top.Lstat("notes.txt", &st, top.Now()); err != nil || st.Size != 13 || st.Ino == ino {
		t.Errorf("an entry of the rewritten archive: %v size %d, inode kept %v", err, st.Size, st.Ino == ino)
	}

	b, _ := os.ReadFile(filepath.Join(dir, "game.dat"))
	os.WriteFile(filepath.Join(dir, "cut.zip"), b[:len(b)-30], 0o644)
	cut := mirrorFolder(t, filepath.Join(dir, "cut.zip"))
	if got := kinds(t, cut); got["error.txt"] != syscall.S_IFREG || got["notes.txt"] != syscall.S_IFREG {
		t.Errorf("a cut archive lists %v", got)
	}
	if txt := cut.ErrorText(); !bytes.Contains(txt, []byte("recovered from local headers")) {
		t.Errorf("error.txt %q", txt)
	}
}

// TestNestedKind: an archive inside an archive lists as a plain file, and
// with nesting on (source.Packed.SetNested) as a folder of its tree, its
// mesh a mesh folder, with the error.txt of a damaged one.
func TestNestedKind(t *testing.T) {
	dir := t.TempDir()
	gem, err := meshgen.GEM(20, 1)
	if err != nil {
		t.Fatal(err)
	}
	inner := filepath.Join(t.TempDir(), "inner.zip")
	writeZip(t, inner, map[string][]byte{"m/a.ply": gem})
	b, _ := os.ReadFile(inner)
	writeZip(t, filepath.Join(dir, "outer.zip"), map[string][]byte{"inner.zip": b, "cut.zip": b[:len(b)-30]})
	top := mirrorFolder(t, filepath.Join(dir, "outer.zip"))
	if got := kinds(t, top); got["inner.zip"] != syscall.S_IFREG || got["cut.zip"] != syscall.S_IFREG {
		t.Fatalf("without nesting the outer archive lists %v", got)
	}
	nested := source.NewView()
	nested.SetNested(true)
	top = folderIn(t, nested, filepath.Join(dir, "outer.zip"))
	if got := kinds(t, top); got["inner.zip"] != syscall.S_IFDIR || got["cut.zip"] != syscall.S_IFDIR {
		t.Fatalf("with nesting the outer archive lists %v", got)
	}
	m := folderIn(t, nested, filepath.Join(dir, "outer.zip", "inner.zip", "m"))
	if got := kinds(t, m); got["a.ply"] != syscall.S_IFDIR || !m.Packed() {
		t.Errorf("the nested archive's m/ lists %v (packed %v)", got, m.Packed())
	}
	if folderIn(t, nested, filepath.Join(dir, "outer.zip", "inner.zip")).ErrorText() != nil {
		t.Error("a sound nested archive has an error.txt")
	}
	cut := folderIn(t, nested, filepath.Join(dir, "outer.zip", "cut.zip"))
	if got := kinds(t, cut); cut.ErrorText() == nil || got["error.txt"] != syscall.S_IFREG {
		t.Errorf("a cut nested archive lists %v, error.txt %q", got, cut.ErrorText())
	}
}

// TestForgedErrorText: a damaged archive holding an entry named error.txt
// lists one error.txt, the listing's real error: the entry's stat is not
// given for it (Lstat leaves it to the mount's text file).
func TestForgedErrorText(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, n := range []string{"error.txt", "notes.txt"} {
		f, err := w.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("forged: all is well"))
	}
	w.Close()
	b := buf.Bytes()
	os.WriteFile(filepath.Join(dir, "cut.zip"), b[:len(b)-30], 0o644)
	cut := mirrorFolder(t, filepath.Join(dir, "cut.zip"))
	ents, err := cut.List()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if e.Name == "error.txt" {
			n++
		}
	}
	if n != 1 || !bytes.Contains(cut.ErrorText(), []byte("recovered from local headers")) {
		t.Errorf("%d error.txt listed; error text %q", n, cut.ErrorText())
	}
	var st syscall.Stat_t
	if err := cut.Lstat("error.txt", &st, cut.Now()); err != syscall.ENOENT {
		t.Errorf("Lstat(error.txt) = %v (size %d): the archive's entry, not the listing's error", err, st.Size)
	}
	if err := cut.Lstat("notes.txt", &st, cut.Now()); err != nil {
		t.Errorf("Lstat(notes.txt): %v", err)
	}
}
