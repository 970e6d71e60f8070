package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/meshfs/meshfs/internal/source"
)

func diskKeyOf(i int) diskKey {
	return diskKey{Path: fmt.Sprintf("/src/m%d.ply", i), Version: ver(1, uint64(100+i), 10, 5, 0), Output: "glb"}
}

func openDiskT(t *testing.T, dir string, max int64) *DiskCache {
	t.Helper()
	c, err := OpenDiskCache(dir, max, "v1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func payload(i, n int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, n) }

func TestPutGetAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	c := openDiskT(t, dir, 1<<20)
	parts := [][]byte{[]byte("obj bytes"), []byte("mtl")}
	if err := c.putParts(diskKeyOf(1), parts); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.get(diskKeyOf(2)); ok {
		t.Fatal("a key never put is a hit")
	}
	c.Close()

	c = openDiskT(t, dir, 1<<20)
	sizes, ok := c.sizes(diskKeyOf(1))
	if !ok || len(sizes) != 2 || sizes[0] != 9 || sizes[1] != 3 {
		t.Fatalf("sizes after reopen: %v %v", sizes, ok)
	}
	got, ok := c.get(diskKeyOf(1))
	if !ok || !bytes.Equal(got[0], parts[0]) || !bytes.Equal(got[1], parts[1]) {
		t.Fatalf("get after reopen: %q %v", got, ok)
	}
	// Another version string (converter or options) misses.
	c.Close()
	c2, err := OpenDiskCache(dir, 1<<20, "v2")
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, ok := c2.sizes(diskKeyOf(1)); ok {
		t.Fatal("an entry of another converter version is a hit")
	}
	// Each field of the key matters.
	k := diskKeyOf(1)
	for _, mod := range []func(*diskKey){
		func(k *diskKey) { k.Path += "x" }, func(k *diskKey) { k.Dev++ }, func(k *diskKey) { k.Ino++ },
		func(k *diskKey) { k.Size++ }, func(k *diskKey) { k.MtimeNs++ }, func(k *diskKey) { k.Deps++ }, func(k *diskKey) { k.Output = "obj" },
	} {
		k2 := k
		mod(&k2)
		if c.name(k2) == c.name(k) {
			t.Errorf("key %+v names the same entry as %+v", k2, k)
		}
	}
}

func TestLRUEviction(t *testing.T) {
	dir := t.TempDir()
	c := openDiskT(t, dir, 1000)
	for i := 0; i < 3; i++ {
		if err := c.putParts(diskKeyOf(i), [][]byte{payload(i, 300)}); err != nil {
			t.Fatal(err)
		}
	}
	c.get(diskKeyOf(0)) // 0 is now the most recently used; 1 the least
	if err := c.putParts(diskKeyOf(3), [][]byte{payload(3, 300)}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false, true, true} {
		if _, ok := c.sizes(diskKeyOf(i)); ok != want {
			t.Errorf("entry %d present = %v, want %v", i, ok, want)
		}
	}
	if s := c.stats(); s.Bytes > 1000 || s.Evictions != 1 || s.Entries != 3 {
		t.Errorf("stats %+v", s)
	}
	n, _ := os.ReadDir(filepath.Join(dir, "data"))
	if len(n) != 3 {
		t.Errorf("%d data files, want 3", len(n))
	}
	if err := c.putParts(diskKeyOf(9), [][]byte{payload(9, 1001)}); !errors.Is(err, errTooBig) {
		t.Errorf("entry over the budget: %v", err)
	}
	// The order survives a reopen: 2 is now the least recently used.
	c.Close()
	c = openDiskT(t, dir, 1000)
	if err := c.putParts(diskKeyOf(4), [][]byte{payload(4, 300)}); err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int]bool{0: true, 2: false, 3: true, 4: true} {
		if _, ok := c.sizes(diskKeyOf(i)); ok != want {
			t.Errorf("after reopen: entry %d present = %v, want %v", i, ok, want)
		}
	}
	// A smaller budget evicts on open.
	c.Close()
	c = openDiskT(t, dir, 400)
	if s := c.stats(); s.Bytes > 400 || s.Entries != 1 {
		t.Errorf("after shrinking: %+v", s)
	}
}

func TestNeverEvictPinned(t *testing.T) {
	c := openDiskT(t, t.TempDir(), 1000)
	for i := 0; i < 3; i++ {
		if err := c.putParts(diskKeyOf(i), [][]byte{payload(i, 300)}); err != nil {
			t.Fatal(err)
		}
	}
	h, ok := c.pin(diskKeyOf(0))
	if !ok {
		t.Fatal("pin")
	}
	c.get(diskKeyOf(1))
	c.get(diskKeyOf(2)) // 0, pinned, is now the least recently used
	if err := c.putParts(diskKeyOf(3), [][]byte{payload(3, 300)}); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.sizes(diskKeyOf(0)); !ok {
		t.Fatal("the pinned entry was evicted")
	}
	if _, ok := c.sizes(diskKeyOf(1)); ok {
		t.Fatal("entry 1 should have made room")
	}
	// Everything else pinned too: no room, the insert is refused.
	h2, _ := c.pin(diskKeyOf(2))
	h3, _ := c.pin(diskKeyOf(3))
	if err := c.putParts(diskKeyOf(4), [][]byte{payload(4, 300)}); !errors.Is(err, errTooBig) {
		t.Fatalf("insert with every entry pinned: %v", err)
	}
	b := make([]byte, 400)
	if n, _ := h.ReadAt(b, 0); n != 300 || !bytes.Equal(b[:n], payload(0, 300)) {
		t.Fatalf("pinned handle reads %d bytes", n)
	}
	h.Close()
	h2.Close()
	h3.Close()
	if err := c.putParts(diskKeyOf(4), [][]byte{payload(4, 300)}); err != nil {
		t.Fatalf("after unpinning: %v", err)
	}
	if _, ok := c.sizes(diskKeyOf(0)); ok {
		t.Fatal("entry 0, unpinned and least recently used, should have been evicted")
	}
}

func TestDamagedEntryDiscarded(t *testing.T) {
	for _, damage := range []struct {
		name string
		do   func(p string) error
	}{
		{"flipped", func(p string) error {
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 1
			return os.WriteFile(p, b, 0o600)
		}},
		{"short", func(p string) error { return os.Truncate(p, 10) }},
		{"long", func(p string) error {
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Write([]byte("x"))
			return err
		}},
		{"zeroed", func(p string) error { return os.WriteFile(p, make([]byte, 300), 0o600) }},
		{"missing", os.Remove},
	} {
		t.Run(damage.name, func(t *testing.T) {
			dir := t.TempDir()
			c := openDiskT(t, dir, 1<<20)
			if err := c.putParts(diskKeyOf(1), [][]byte{payload(1, 100), payload(2, 200)}); err != nil {
				t.Fatal(err)
			}
			if err := damage.do(c.path(c.name(diskKeyOf(1)))); err != nil {
				t.Fatal(err)
			}
			if got, ok := c.get(diskKeyOf(1)); ok {
				t.Fatalf("a damaged entry was served: %d parts", len(got))
			}
			if _, ok := c.sizes(diskKeyOf(1)); ok {
				t.Fatal("a damaged entry stays in the index")
			}
			if _, err := os.Stat(c.path(c.name(diskKeyOf(1)))); !os.IsNotExist(err) {
				t.Fatalf("a damaged entry's file stays: %v", err)
			}
			c.Close()
			c = openDiskT(t, dir, 1<<20)
			if _, ok := c.sizes(diskKeyOf(1)); ok {
				t.Fatal("a damaged entry comes back after reopening")
			}
		})
	}
}

func TestTornIndexAndLeftovers(t *testing.T) {
	dir := t.TempDir()
	c := openDiskT(t, dir, 1<<20)
	c.putParts(diskKeyOf(1), [][]byte{payload(1, 50)})
	c.putParts(diskKeyOf(2), [][]byte{payload(2, 50)})
	c.Close()
	// A crash mid-append, a leftover temporary file, a data file no index
	// line describes.
	f, _ := os.OpenFile(filepath.Join(dir, "index"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("put 0123")
	f.Close()
	os.WriteFile(filepath.Join(dir, "tmp", "00000000000000000000000000000000000000ee.123"), []byte("partial"), 0o600)
	stray := filepath.Join(dir, "data", "00000000000000000000000000000000000000ff")
	os.WriteFile(stray, []byte("stray"), 0o600)
	c = openDiskT(t, dir, 1<<20)
	if s := c.stats(); s.Entries != 2 || s.Bytes != 100 {
		t.Fatalf("after reopen: %+v", s)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Error("stray data file kept")
	}
	if n, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(n) != 0 {
		t.Error("temporary file kept")
	}
	if got, ok := c.get(diskKeyOf(2)); !ok || !bytes.Equal(got[0], payload(2, 50)) {
		t.Fatal("entry lost")
	}
}

func TestAtomicPut(t *testing.T) {
	// Readers racing a writer that replaces one key see one whole version
	// or the other, never a mix or a partial file.
	c := openDiskT(t, t.TempDir(), 1<<24)
	versions := [][]byte{payload(0, 1<<16), payload(1, 1<<16)}
	c.putParts(diskKeyOf(1), [][]byte{versions[0]})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, ok := c.get(diskKeyOf(1))
				if !ok {
					t.Error("entry missing while being replaced")
					return
				}
				if !bytes.Equal(got[0], versions[0]) && !bytes.Equal(got[0], versions[1]) {
					t.Error("read a mix of two versions")
					return
				}
			}
		}()
	}
	for i := 0; i < 200; i++ {
		if err := c.putParts(diskKeyOf(1), [][]byte{versions[i%2]}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if s := c.stats(); s.Damaged != 0 || s.Entries != 1 || s.Bytes != 1<<16 {
		t.Fatalf("stats %+v", s)
	}
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	c := openDiskT(t, dir, 1<<20)
	if _, err := OpenDiskCache(dir, 1<<20, "v1"); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open of a held folder: %v", err)
	}
	c.Close()
	c2, err := OpenDiskCache(dir, 1<<20, "v1")
	if err != nil {
		t.Fatalf("open after the holder closed: %v", err)
	}
	c2.Close()
}

func TestHandleVerify(t *testing.T) {
	c, err := OpenDiskCache(t.TempDir(), 1<<20, "v1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	k := diskKey{Path: "a.ply", Output: "glb"}
	if err := c.putParts(k, [][]byte{[]byte("0123456789")}); err != nil {
		t.Fatal(err)
	}
	h, ok := c.pin(k)
	if !ok {
		t.Fatal("entry not found")
	}
	if !h.Verify() {
		t.Fatal("an intact entry failed Verify")
	}
	h.Close()

	// Damage the file behind the index's back: same size, other bytes.
	h, _ = c.pin(k)
	if err := os.WriteFile(h.Name(), []byte("0123456788"), 0o600); err != nil {
		t.Fatal(err)
	}
	if h.Verify() {
		t.Fatal("a damaged entry passed Verify")
	}
	h.Close()
	if _, ok := c.sizes(k); ok {
		t.Fatal("a damaged entry is still in the index")
	}
}

// A big entry is checksummed beside its write (parallelSum): the sum must
// still be that of its bytes, so Get and Verify accept it and a flipped
// byte is refused.
func TestBigEntryChecksum(t *testing.T) {
	c, err := OpenDiskCache(t.TempDir(), 64<<20, "v1")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := bytes.Repeat([]byte("glTF"), parallelSum/4+1000)
	b := []byte("mtl")
	k := diskKey{Path: "big.ply", Output: "obj"}
	if err := c.putParts(k, [][]byte{a, b}); err != nil {
		t.Fatal(err)
	}
	got, ok := c.get(k)
	if !ok || len(got) != 2 || !bytes.Equal(got[0], a) || !bytes.Equal(got[1], b) {
		t.Fatal("big entry did not read back")
	}
	h, _ := c.pin(k)
	if !h.Verify() {
		t.Fatal("big entry failed Verify")
	}
	f, err := os.OpenFile(h.Name(), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("X"), parallelSum/2)
	f.Close()
	if h.Verify() {
		t.Fatal("a flipped byte passed Verify")
	}
	h.Close()
}

// The memos of entry names answer what the hash does, for keys differing in
// any field (the output among them) and past their bounds (where they start
// over).
func TestNameMemo(t *testing.T) {
	c := openDiskT(t, t.TempDir(), 1<<20)
	defer c.Close()
	seen := map[string]diskKey{}
	for i := 0; i < 2*maxNames+100; i++ {
		k := diskKey{Path: fmt.Sprintf("/src/m%d.gem", i%1400), Version: ver(1, uint64(i%3), int64(i%5), 0, uint64(i%2)),
			Output: fmt.Sprintf("chunk/c%d", i%(maxNames+7))}
		want := c.hashName(k)
		if got := c.name(k); got != want {
			t.Fatalf("name(%+v) = %s, hash %s", k, got, want)
		}
		if got := c.name(k); got != want {
			t.Fatalf("memoized name(%+v) = %s, hash %s", k, got, want)
		}
		if o, ok := seen[want]; ok && o != k {
			t.Fatalf("%+v and %+v name the same entry", o, k)
		}
		seen[want] = k
		if len(c.names) > maxNames || len(c.folders) > maxNames || len(c.outputs) > maxNames {
			t.Fatalf("memos hold %d names, %d folders and %d outputs, bound %d", len(c.names), len(c.folders), len(c.outputs), maxNames)
		}
	}
	// Entries put under a memoized name are found by a fresh hash of the
	// key after a reopen (the memo is not persisted).
	k := diskKey{Path: "/src/a.gem", Version: ver(2, 3, 0, 0, 0), Output: "obj"}
	if err := c.putParts(k, [][]byte{[]byte("abc")}); err != nil {
		t.Fatal(err)
	}
	if s, ok := c.sizes(k); !ok || s[0] != 3 {
		t.Fatalf("sizes %v %v", s, ok)
	}
}

// BenchmarkSizes is the size lookup a listing makes per geometry output.
func BenchmarkSizes(b *testing.B) {
	c, err := OpenDiskCache(b.TempDir(), 1<<20, "v1")
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	keys := make([]diskKey, 64)
	for i := range keys {
		keys[i] = diskKey{Path: fmt.Sprintf("/assets/levels/area%d/mesh%d.gem", i/8, i), Version: ver(2049, uint64(1000+i), 4096, 1e18, 0), Output: "glb"}
		c.putParts(keys[i], [][]byte{[]byte("x")})
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, ok := c.sizes(keys[i%len(keys)]); !ok {
			b.Fatal("miss")
		}
	}
}

// ver is the version of a source file (dev, ino, size, mtime) read with
// other files whose digest is deps.
func ver(dev, ino uint64, size, mtimeNs int64, deps uint64) source.Version {
	return source.Version{Ident: source.Ident{File: source.File{Dev: dev, Ino: ino}, Size: size, MtimeNs: mtimeNs}, Deps: deps}
}
