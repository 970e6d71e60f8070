package fs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/export/outputs"
)

// A mesh's source stat is reused by the requests that follow it only while
// its folder is watched, and never across a change the watcher reported.
func TestSourceStatReuse(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.gem")
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := &dirNode{abs: dir}
	m := &meshDir{parent: d, abs: p, mesh: outputs.New(p, fakeFormat{})}
	size := func() int64 {
		t.Helper()
		st, err := m.sourceStat()
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
	d.watched.Store(true)
	if got := size(); got != 5 {
		t.Fatalf("size %d, want 5", got)
	}
	grow(7)
	if got := size(); got != 5 {
		t.Fatalf("watched folder, no event yet: size %d, want the reused 5", got)
	}
	// ...until the watcher reports a change in the folder.
	d.changes.Add(1)
	if got := size(); got != 7 {
		t.Fatalf("after the change event: size %d, want 7", got)
	}
	// A stat taken before an event (remember with the old count) is not
	// reused after it.
	st, err := m.sourceStat()
	if err != nil {
		t.Fatal(err)
	}
	old := d.changes.Load()
	grow(9)
	d.changes.Add(1)
	m.remember(st, old, m.recent.Load().at)
	if got := size(); got != 9 {
		t.Fatalf("stat from before the event reused: size %d, want 9", got)
	}
	// A folder whose watch failed stats every time.
	d.unwatched.Store(true)
	grow(11)
	if got := size(); got != 11 {
		t.Fatalf("unwatched (failed watch): size %d, want 11", got)
	}
	// A removed source is an error, not a reused stat.
	d.unwatched.Store(false)
	d.changes.Add(1)
	os.Remove(p)
	if _, err := m.sourceStat(); err == nil {
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
	d := &dirNode{abs: dir}
	var listedSt syscall.Stat_t
	if err := syscall.Lstat(p, &listedSt); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixNano()
	d.listed.Store(&listedStats{at: now, gen: 0, st: map[string]*syscall.Stat_t{"a.bin": &listedSt}})
	if err := os.WriteFile(p, make([]byte, 5), 0o644); err != nil {
		t.Fatal(err)
	}
	size := func(name string, gen uint64, at int64) int64 {
		t.Helper()
		var st syscall.Stat_t
		if err := d.lstat(name, &st, gen, at); err != nil {
			return -1
		}
		return st.Size
	}
	if got := size("a.bin", 0, now); got != 5 {
		t.Fatalf("unwatched folder: size %d, want 5", got)
	}
	d.watched.Store(true)
	if got := size("a.bin", 0, now); got != 3 {
		t.Fatalf("watched, same burst: size %d, want the listing's 3", got)
	}
	if got := size("a.bin", 1, now); got != 5 {
		t.Fatalf("after a change event: size %d, want 5", got)
	}
	if got := size("a.bin", 0, now+int64(statReuse)); got != 5 {
		t.Fatalf("after statReuse: size %d, want 5", got)
	}
	if got := size("b.bin", 0, now); got != -1 {
		t.Fatalf("name not listed and absent: size %d, want an error", got)
	}
}
