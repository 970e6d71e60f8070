package source

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/meshfs/meshfs/internal/archive"
)

// TestNestedArchives: an archive six deep (each level's zip holding x.txt
// and the next, stored and deflated in turn) is reached only with nesting
// on, MaxNesting levels below the file and no further; entries read,
// stat (an inode of their whole path: x.txt differs at each level) and
// list through each level, and the nested archive's folder has its
// listing (Archive, Descends); off again, a nested archive is a file.
func TestNestedArchives(t *testing.T) {
	dir := t.TempDir()
	var b []byte
	for lvl := 6; lvl >= 0; lvl-- {
		files := map[string][]byte{"x.txt": []byte(strings.Repeat("x", lvl+1))}
		names := []string{"x.txt"}
		if b != nil {
			files["in/next.zip"] = b
			names = append(names, "in/next.zip")
		}
		p := filepath.Join(dir, "l.zip")
		writeZip(t, p, names, files)
		var err error
		if b, err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	v := New(archive.Limits{MemInflate: 1 << 20})
	top := filepath.Join(dir, "l.zip")
	at := func(n int) string { return top + strings.Repeat("/in/next.zip", n) }
	if _, err := v.ReadDir(at(1)); err == nil || v.Descends(at(1)) {
		t.Fatal("a nested archive lists with nesting off")
	}
	v.SetNested(true)
	defer v.SetNested(false)
	inos := map[uint64]bool{}
	for n := 0; n <= 6; n++ {
		f, err := v.Open(at(n) + "/x.txt")
		reach := n <= MaxNesting
		if reach != (err == nil) {
			t.Fatalf("level %d: open %v", n, err)
		}
		if !reach {
			if _, err := v.ReadDir(at(n)); err == nil {
				t.Errorf("level %d lists", n)
			}
			if v.Descends(at(n)) {
				t.Errorf("level %d descends", n)
			}
			continue
		}
		if got := string(readAll(t, f)); got != strings.Repeat("x", n+1) {
			t.Errorf("level %d: x.txt %q", n, got)
		}
		if n > 0 {
			if !v.Descends(at(n)) {
				t.Errorf("level %d does not descend", n)
			}
			if a, read, _, err := v.Archive(at(n)); a == nil || err != nil || read.Path != top {
				t.Errorf("level %d: Archive %v, %v, versioned by %s", n, a, err, read.Path)
			}
			if fi, _, err := v.Stat(at(n)); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("level %d: the nested archive stats %v, %v", n, fi, err)
			}
		}
		ents, err := v.ReadDir(at(n))
		if err != nil || len(ents) < 1 || ents[0].Name() != "in" && ents[0].Name() != "x.txt" {
			t.Errorf("level %d lists %v, %v", n, ents, err)
		}
		var st syscall.Stat_t
		if n > 0 {
			err := v.SysLstat(at(n)+"/x.txt", &st)
			if err != nil || st.Size != int64(n+1) || inos[st.Ino] {
				t.Errorf("level %d: x.txt stats %v, size %d, inode seen %v", n, err, st.Size, inos[st.Ino])
			}
			inos[st.Ino] = true
		}
	}
}

// TestNestedBounded: a nested archive declaring more than the view's
// MaxInflate stays a plain file (not listed, nothing below it reached),
// and a nested entry that only looks like an archive is a folder of
// nothing with the reason as its listing's error.
func TestNestedBounded(t *testing.T) {
	dir := t.TempDir()
	inner := filepath.Join(dir, "inner.zip")
	writeZip(t, inner, []string{"x.txt"}, map[string][]byte{"x.txt": []byte(strings.Repeat("x", 200))})
	b, _ := os.ReadFile(inner)
	outer := filepath.Join(dir, "outer.zip")
	writeZip(t, outer, []string{"big.zip", "fake.zip"}, map[string][]byte{"big.zip": b, "fake.zip": []byte("PK\x03\x04 and nothing after")})
	v := New(archive.Limits{MaxInflate: int64(len(b)) - 1})
	v.SetNested(true)
	if v.Descends(outer+"/big.zip") || v.Descends(outer+"/nope.zip") {
		t.Error("an archive over MaxInflate, or a missing one, descends")
	}
	if _, err := v.Open(outer + "/big.zip/x.txt"); err == nil {
		t.Error("an entry below an archive over MaxInflate opens")
	}
	if f, err := v.Open(outer + "/big.zip"); err != nil || f.Size() != int64(len(b)) {
		t.Errorf("the big archive as a file: %v", err)
	}
	if !v.Descends(outer + "/fake.zip") {
		t.Fatal("an entry that is an archive by its first bytes does not descend")
	}
	ents, err := v.ReadDir(outer + "/fake.zip")
	a, _, _, lerr := v.Archive(outer + "/fake.zip")
	if err != nil || len(ents) != 0 || a == nil || lerr == nil {
		t.Errorf("the fake archive lists %v (%v), its listing's error %v", ents, err, lerr)
	}
}

// TestNestedThroughCheckpoints: a nested archive in a deflated entry
// bigger than MemInflate (read through checkpoints) lists, and its 3 MiB
// entry reads back whole and at an offset.
func TestNestedThroughCheckpoints(t *testing.T) {
	dir := t.TempDir()
	big := make([]byte, 3<<20)
	for i, x := 0, uint32(1); i < len(big); i++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		big[i] = byte(x)
	}
	inner := filepath.Join(dir, "inner.zip")
	writeZip(t, inner, []string{"big.bin"}, map[string][]byte{"big.bin": big})
	b, _ := os.ReadFile(inner)
	outer := filepath.Join(dir, "outer.zip")
	writeZip(t, outer, []string{"a.txt", "inner.zip"}, map[string][]byte{"a.txt": []byte("a"), "inner.zip": b})
	v := New(archive.Limits{MemInflate: 1 << 20})
	v.SetNested(true)
	f, err := v.Open(outer + "/inner.zip/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 4096)
	if _, err := f.ReadAt(p, 2<<20); err != nil || string(p) != string(big[2<<20:2<<20+4096]) {
		t.Errorf("a read at 2 MiB: %v", err)
	}
	if got := readAll(t, f); string(got) != string(big) {
		t.Errorf("big.bin reads %d bytes, not the %d written", len(got), len(big))
	}
}
