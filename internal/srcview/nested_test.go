package srcview

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
			Default.SetNested(true)
			err := Lstat(at(n)+"/x.txt", &st)
			Default.SetNested(false)
			if err != nil || st.Size != int64(n+1) || inos[st.Ino] {
				t.Errorf("level %d: x.txt stats %v, size %d, inode seen %v", n, err, st.Size, inos[st.Ino])
			}
			inos[st.Ino] = true
		}
	}
}
