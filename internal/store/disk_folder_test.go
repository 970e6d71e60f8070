package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree returns every file under dir (relative path → content), for
// checking that a refused or cleaned folder kept what it held.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			m[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		m[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("%s: %d entries before, %d after:\n%v\n%v", what, len(before), len(after), before, after)
	}
	for k, v := range before {
		if w, ok := after[k]; !ok || w != v {
			t.Fatalf("%s: %s changed or gone (%q → %q, %v)", what, k, v, w, ok)
		}
	}
}

func TestNewFolderMarked(t *testing.T) {
	for _, dir := range []string{filepath.Join(t.TempDir(), "a", "cache"), t.TempDir()} {
		c := openDiskT(t, dir, 1<<20)
		c.Close()
		tag, err := os.ReadFile(filepath.Join(dir, TagName))
		if err != nil || !strings.HasPrefix(string(tag), "Signature: 8a477f597d28d172789f06886806bc55") {
			t.Fatalf("%s: CACHEDIR.TAG %q %v", dir, tag, err)
		}
		m, err := os.ReadFile(filepath.Join(dir, MarkerName))
		if err != nil || !strings.HasPrefix(string(m), "meshfs-cache 1\n") {
			t.Fatalf("%s: marker %q %v", dir, m, err)
		}
		// A marked folder may hold anything else.
		os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
		openDiskT(t, dir, 1<<20).Close()
	}
}

func TestForeignFolderRefused(t *testing.T) {
	for _, c := range []struct {
		name  string
		plant map[string]string
	}{
		{"plain files", map[string]string{"a.txt": "precious", "sub/b.txt": "precious too"}},
		// A folder that looks like a cache but holds something else.
		{"foreign file in data", map[string]string{"index": layoutVersion + "\n", "lock": "", "data/photo.jpg": "jpeg"}},
		{"foreign file in tmp", map[string]string{"index": layoutVersion + "\n", "tmp/draft.txt": "draft"}},
		{"foreign index", map[string]string{"index": "my index\n", "data/": ""}},
		{"data of other names", map[string]string{"data/0123": "x"}},
	} {
		dir := t.TempDir()
		for p, text := range c.plant {
			os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
			if !strings.HasSuffix(p, "/") {
				os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644)
			}
		}
		before := tree(t, dir)
		if err := CheckCacheDir(dir); !errors.Is(err, ErrNotCache) {
			t.Fatalf("%s: Check: %v", c.name, err)
		}
		cc, err := OpenDiskCache(dir, 1<<20, "v1")
		if !errors.Is(err, ErrNotCache) {
			if cc != nil {
				cc.Close()
			}
			t.Fatalf("%s: Open: %v, want ErrNotCache", c.name, err)
		}
		if !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: the error does not name the folder: %v", c.name, err)
		}
		sameTree(t, c.name, before, tree(t, dir))
	}
	// A file is not a folder.
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, []byte("x"), 0o644)
	if _, err := OpenDiskCache(f, 1<<20, "v1"); !errors.Is(err, ErrNotCache) {
		t.Fatalf("a file as cache folder: %v", err)
	}
}

// An unmarked cache written by an earlier meshfs is adopted whole: its
// entries are served, and it is marked.
func TestEarlierCacheAdopted(t *testing.T) {
	dir := t.TempDir()
	c := openDiskT(t, dir, 1<<20)
	c.putParts(diskKeyOf(1), [][]byte{payload(1, 100)})
	c.putMeta(diskKeyOf(2), [][]byte{payload(2, 10)}, []byte("meta"))
	c.Close()
	os.Remove(filepath.Join(dir, MarkerName))
	os.Remove(filepath.Join(dir, TagName))
	os.WriteFile(filepath.Join(dir, "tmp", "00000000000000000000000000000000000000ee.42"), []byte("partial"), 0o600)
	if err := CheckCacheDir(dir); err != nil {
		t.Fatalf("an earlier meshfs's cache refused: %v", err)
	}
	c = openDiskT(t, dir, 1<<20)
	if got, ok := c.get(diskKeyOf(1)); !ok || len(got[0]) != 100 {
		t.Fatal("entry lost on adoption")
	}
	if _, _, ok := c.meta(diskKeyOf(2)); !ok {
		t.Fatal("meta entry lost on adoption")
	}
	if !marked(dir) {
		t.Fatal("adopted folder not marked")
	}
}

// Files meshfs did not write survive every cleanup of a marked folder:
// Open's, eviction's and a damaged entry's.
func TestForeignFilesSurviveCleanup(t *testing.T) {
	dir := t.TempDir()
	c := openDiskT(t, dir, 250)
	c.Close()
	planted := map[string]string{
		"data/notes.txt":                        "keep",
		"data/" + strings.Repeat("a", 39) + "g": "not hex: keep",
		"tmp/draft":                             "keep",
		"tmp/" + strings.Repeat("0", 40) + ".x": "not a temp name: keep",
		"mine.txt":                              "keep",
	}
	for p, text := range planted {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(dir, "data", strings.Repeat("b", 40)), 0o755) // a folder of an entry's name
	ours := filepath.Join(dir, "tmp", strings.Repeat("c", 40)+".77")
	os.WriteFile(ours, []byte("partial"), 0o600)

	c = openDiskT(t, dir, 250)
	if _, err := os.Stat(ours); !os.IsNotExist(err) {
		t.Error("a leftover temporary file of the cache was kept")
	}
	for i := range 10 { // evicts: 100 bytes each in 250
		if err := c.putParts(diskKeyOf(i), [][]byte{payload(i, 100)}); err != nil {
			t.Fatal(err)
		}
	}
	if s := c.stats(); s.Evictions == 0 {
		t.Fatalf("no eviction: %+v", s)
	}
	c.Close()
	c = openDiskT(t, dir, 1) // a smaller budget: evicts everything on Open
	c.Close()
	for p, text := range planted {
		if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != text {
			t.Errorf("%s: %q %v after the cache's cleanups", p, b, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "data", strings.Repeat("b", 40))); err != nil || !fi.IsDir() {
		t.Errorf("a folder in data/ was removed: %v", err)
	}
}
