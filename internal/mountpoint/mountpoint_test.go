package mountpoint

import (
	"os"
	"path/filepath"
	"testing"
)

func TestUnescapeMountinfo(t *testing.T) {
	for in, want := range map[string]string{
		`/tmp/a`:             "/tmp/a",
		`/tmp/my\040models`:  "/tmp/my models",
		`/tmp/tab\011x\134y`: "/tmp/tab\tx\\y",
		`/tmp/short\04`:      `/tmp/short\04`,
	} {
		if got := Unescape(in); got != want {
			t.Errorf("Unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	root := t.TempDir()
	src, mnt, cache := filepath.Join(root, "src"), filepath.Join(root, "mnt"), filepath.Join(root, "cache")
	for _, d := range []string{src, mnt, filepath.Join(src, "inner")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Check(src, mnt, cache, false)
	if err != nil || p.Source != src || p.Mountpoint != mnt || p.CacheDir != cache || p.CacheErr != nil {
		t.Fatalf("plain mount: %+v, %v", p, err)
	}
	for _, c := range []struct{ src, mnt, cache string }{
		{src, src, ""},                         // the source itself
		{src, filepath.Join(src, "inner"), ""}, // inside the source
		{filepath.Join(src, "inner"), src, ""}, // around the source
		{src, mnt, filepath.Join(src, "c")},    // cache inside the source
		{src, mnt, root},                       // cache around both
		{src, filepath.Join(root, "none"), ""}, // no mount point
		{filepath.Join(root, "none"), mnt, ""}, // no source
	} {
		if _, err := Check(c.src, c.mnt, c.cache, false); err == nil {
			t.Errorf("Check(%s, %s, %s) accepted", c.src, c.mnt, c.cache)
		}
	}
	os.WriteFile(filepath.Join(mnt, "x"), nil, 0o644)
	if _, err := Check(src, mnt, "", false); err == nil {
		t.Error("a non-empty mount point accepted")
	}
	if _, err := Check(src, mnt, "", true); err != nil {
		t.Errorf("nonempty: %v", err)
	}
}

func TestLast(t *testing.T) {
	m, ok := Last("/")
	if !ok || m.Dev == "" || m.FSType == "" || len(m.Options) == 0 {
		t.Fatalf("/ in mountinfo: %+v, %v", m, ok)
	}
	if _, ok := Last(t.TempDir()); ok {
		t.Fatal("a plain folder is a mount point")
	}
}

func TestSource(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o755)
	os.Symlink(real, filepath.Join(dir, "link"))
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	want, _ := filepath.EvalSymlinks(real)
	if got, err := Source(filepath.Join(dir, "link")); err != nil || got != want {
		t.Fatalf("Source(link) = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{filepath.Join(dir, "file"), filepath.Join(dir, "missing")} {
		if _, err := Source(bad); err == nil {
			t.Errorf("Source(%s) accepted", bad)
		}
	}
}

// TestCheckServed: a served source must be a folder, and the cache folder
// may be neither the source, inside it, nor around it.
func TestCheckServed(t *testing.T) {
	src := t.TempDir()
	file := filepath.Join(src, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	if p, err := CheckServed(src, cache); err != nil || p.Source != src || p.CacheDir != cache {
		t.Errorf("CheckServed: %+v, %v", p, err)
	}
	if _, err := CheckServed(file, ""); err == nil {
		t.Errorf("a file as the source was accepted")
	}
	for _, c := range []string{src, filepath.Join(src, "cache"), filepath.Dir(src)} {
		if _, err := CheckServed(src, c); err == nil {
			t.Errorf("cache folder %s accepted for source %s", c, src)
		}
	}
}
