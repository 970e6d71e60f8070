package source

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// writeZip writes files (by slash path) to p, stored and deflated in
// turn, in the order given.
func writeZip(t *testing.T, p string, names []string, files map[string][]byte) {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for i, n := range names {
		m := zip.Store
		if i%2 == 1 {
			m = zip.Deflate
		}
		f, err := w.CreateHeader(&zip.FileHeader{Name: n, Method: m, Modified: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		f.Write(files[n])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, f Handle) []byte {
	t.Helper()
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, 0, f.Size()))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPackedView: paths below an archive (named game.dat: by magic, not
// name) reach its entries through every method, versioned by the archive
// file; an archive inside it is a plain file; a rewritten archive is
// listed again.
func TestPackedView(t *testing.T) {
	dir := t.TempDir()
	inner := filepath.Join(dir, "inner.zip")
	writeZip(t, inner, []string{"x.txt"}, map[string][]byte{"x.txt": []byte("x")})
	innerBytes, _ := os.ReadFile(inner)
	files := map[string][]byte{
		"texture/common/a.dds": bytes.Repeat([]byte("a"), 5000),
		"texture/b.dds":        []byte("bb"),
		"nested.pak":           innerBytes,
	}
	pak := filepath.Join(dir, "game.dat")
	writeZip(t, pak, []string{"texture/common/a.dds", "texture/b.dds", "nested.pak"}, files)
	os.WriteFile(filepath.Join(dir, "loose.txt"), []byte("loose"), 0o644)
	v := NewView()

	for rel, want := range files {
		f, err := v.Open(pak + "/" + rel)
		if err != nil {
			t.Fatalf("Open %s: %v", rel, err)
		}
		if got := f.Version(); got.Path != pak || got.Size != int64(len(mustRead(t, pak))) {
			t.Errorf("%s: version %+v, want the archive's", rel, got)
		}
		if b := readAll(t, f); !bytes.Equal(b, want) {
			t.Errorf("%s: %d bytes, want %d", rel, len(b), len(want))
		}
	}
	f, err := v.OpenBeneath(pak+"/texture", "common/a.dds")
	if err != nil || f.Size() != 5000 {
		t.Fatalf("OpenBeneath: %v", err)
	}
	f.Close()
	if f, err := v.OpenBeneath(dir, "loose.txt"); err != nil || string(readAll(t, f)) != "loose" {
		t.Errorf("a loose file beneath its folder: %v", err)
	}
	if _, err := v.Open(pak + "/nested.pak/x.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an entry of a nested archive: %v, want not found (a nested archive is a file)", err)
	}
	if _, err := v.Open(pak + "/texture/missing.dds"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing entry: %v", err)
	}
	if _, err := v.Open(pak + "/texture"); err == nil {
		t.Error("a folder of the archive opened as a file")
	}
	fi, read, err := v.Stat(pak + "/texture/b.dds")
	if err != nil || fi.Size() != 2 || fi.IsDir() || read.Path != pak || !fi.ModTime().Equal(time.Date(2020, 1, 2, 3, 4, 4, 0, time.UTC)) && !fi.ModTime().Equal(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("Stat: %v %v %+v", fi, err, read)
	}
	if fi, _, err := v.Stat(pak + "/texture"); err != nil || !fi.IsDir() {
		t.Errorf("Stat of a folder: %v %v", fi, err)
	}
	ents, err := v.ReadDir(pak)
	if err != nil || len(ents) != 2 || ents[0].Name() != "nested.pak" || ents[1].Name() != "texture" || !ents[1].IsDir() {
		t.Errorf("ReadDir of the archive: %v %v", ents, err)
	}
	if ents, err := v.ReadDir(pak + "/texture/common"); err != nil || len(ents) != 1 || ents[0].Name() != "a.dds" {
		t.Errorf("ReadDir inside: %v %v", ents, err)
	}
	if _, err := Disk.Open(pak + "/texture/b.dds"); err == nil {
		t.Error("Disk reached an entry")
	}

	// A new version of the archive is listed again.
	files["texture/b.dds"] = []byte("new bytes")
	writeZip(t, pak, []string{"texture/b.dds"}, files)
	os.Chtimes(pak, time.Now(), time.Now().Add(time.Hour))
	if f, err := v.Open(pak + "/texture/b.dds"); err != nil || string(readAll(t, f)) != "new bytes" {
		t.Errorf("after a rewrite: %v", err)
	}
	if _, err := v.Open(pak + "/texture/common/a.dds"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an entry the new version lacks: %v", err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReadEntry: reads at random offsets of a deflated entry bigger than
// what is inflated into memory (read through checkpoints) give its bytes,
// through one kept reader; a stat the caller does not accept is ESTALE.
func TestReadEntry(t *testing.T) {
	dir := t.TempDir()
	big := make([]byte, 3<<20+12345)
	for i := range big {
		big[i] = byte(i*7 + i/1000)
	}
	pak := filepath.Join(dir, "big.zip")
	writeZip(t, pak, []string{"s.txt", "big.bin"}, map[string][]byte{"s.txt": []byte("small"), "big.bin": big})
	p := pak + "/big.bin"
	v := NewView()
	all := func(*syscall.Stat_t) bool { return true }
	for _, off := range []int64{3 << 20, 0, 1<<20 + 17, int64(len(big)) - 100, 2 << 20} {
		buf := make([]byte, 4096)
		n, err := v.ReadEntry(p, all, buf, off)
		want := big[off:min(off+4096, int64(len(big)))]
		if err != nil || !bytes.Equal(buf[:n], want) {
			t.Fatalf("at %d: %d bytes, %v", off, n, err)
		}
	}
	if n, err := v.ReadEntry(p, all, make([]byte, 10), int64(len(big))); n != 0 || err != nil {
		t.Errorf("at the end: %d, %v", n, err)
	}
	f1, _ := v.Reader(p)
	f2, _ := v.Reader(p)
	if f1 != f2 {
		t.Error("the entry's reader is not kept")
	}
	if _, err := v.ReadEntry(p, func(*syscall.Stat_t) bool { return false }, make([]byte, 10), 0); !errors.Is(err, syscall.ESTALE) {
		t.Errorf("a stat not accepted: %v", err)
	}
}

type mapKeeper map[string][]byte

func (k mapKeeper) key(p string, id Ident) string { return fmt.Sprint(p, id) }
func (k mapKeeper) ArchiveListing(p string, id Ident) ([]byte, bool) {
	b, ok := k[k.key(p, id)]
	return b, ok
}
func (k mapKeeper) KeepArchiveListing(p string, id Ident, b []byte) { k[k.key(p, id)] = b }

// TestKeptListing: a second view with the first's keeper (a remount)
// resumes the kept listing instead of reading the central directory, and
// reads the same entries; a rewritten archive is listed again.
func TestKeptListing(t *testing.T) {
	dir := t.TempDir()
	pak := filepath.Join(dir, "a.pak")
	writeZip(t, pak, []string{"x/a.txt", "b.txt"}, map[string][]byte{"x/a.txt": []byte("aaa"), "b.txt": []byte("bb")})
	k := mapKeeper{}
	first := NewView()
	first.SetKeeper(k)
	if f, err := first.Open(pak + "/x/a.txt"); err != nil || string(readAll(t, f)) != "aaa" {
		t.Fatal(err)
	}
	second := NewView()
	second.SetKeeper(k)
	if f, err := second.Open(pak + "/x/a.txt"); err != nil || string(readAll(t, f)) != "aaa" {
		t.Fatal(err)
	}
	if ents, err := second.ReadDir(pak); err != nil || len(ents) != 2 {
		t.Errorf("the resumed listing: %v %v", ents, err)
	}
	if first.Listed.Load() != 1 || second.Listed.Load() != 0 || second.Resumed.Load() != 1 {
		t.Errorf("listed %d then %d, resumed %d", first.Listed.Load(), second.Listed.Load(), second.Resumed.Load())
	}
	writeZip(t, pak, []string{"b.txt"}, map[string][]byte{"b.txt": []byte("new")})
	os.Chtimes(pak, time.Now(), time.Now().Add(time.Hour))
	third := NewView()
	third.SetKeeper(k)
	if f, err := third.Open(pak + "/b.txt"); err != nil || string(readAll(t, f)) != "new" || third.Listed.Load() != 1 {
		t.Errorf("a rewritten archive: %v, listed %d", err, third.Listed.Load())
	}
}
