package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/meshfs/meshfs/internal/mountpoint"
	"github.com/meshfs/meshfs/internal/store"
)

// Start-up checks: every refusal comes before anything is mounted or
// written, and leaves what it refused untouched.

// runMeshfs runs the binary to completion under the guard deadline: a
// command that should have been refused but mounts (and so serves in the
// foreground) fails the test instead of hanging it.
func runMeshfs(t *testing.T, args ...string) (string, error) {
	t.Helper()
	canMount(t)
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	out, err := exec.CommandContext(ctx, meshfsBin, args...).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("meshfs %v did not return within %v (mounted after all?)\n%s", args, guard, out)
	}
	return string(out), err
}

// refused runs a mount that must fail with a message holding every one of
// want, and checks nothing was mounted on mnt.
func refused(t *testing.T, mnt string, want []string, args ...string) string {
	t.Helper()
	out, err := runMeshfs(t, append([]string{"mount"}, args...)...)
	if err == nil {
		t.Fatalf("meshfs mount %v was not refused:\n%s", args, out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Fatalf("meshfs mount %v: message lacks %q:\n%s", args, w, out)
		}
	}
	if mnt != "" && mounted(t, mnt) {
		t.Fatalf("meshfs mount %v: refused but %s is mounted", args, mnt)
	}
	return out
}

// snapshot is every path under dir with its content (folders as "/").
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			m[p] = "/"
			return nil
		}
		b, _ := os.ReadFile(p)
		m[p] = string(b)
		return nil
	})
	return m
}

func unchanged(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, v := range before {
		if w, ok := after[p]; !ok || w != v {
			t.Fatalf("%s: %s changed or removed", what, p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Fatalf("%s: %s was created", what, p)
		}
	}
}

func TestMountPointNotEmpty(t *testing.T) {
	src, mnt := sourceTree(t), mountDir(t)
	keep := filepath.Join(mnt, "keep.txt")
	os.WriteFile(keep, []byte("hidden?"), 0o644)
	defer os.Remove(keep)
	refused(t, mnt, []string{"not empty", "keep.txt", "-o nonempty"}, "--cache-dir", t.TempDir(), src, mnt)
	refused(t, mnt, []string{"not empty"}, "--daemon", "--cache-dir", t.TempDir(), src, mnt)
	// -o nonempty mounts over it.
	d := startMount(t, "-o", "nonempty", "--cache-dir", t.TempDir(), src, mnt)
	readGLB(t, mnt)
	if err := d.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "hidden?" {
		t.Fatalf("after the mount: %q %v", b, err)
	}
}

func TestMountPointAlreadyMounted(t *testing.T) {
	src, mnt := sourceTree(t), mountDir(t)
	d := startMount(t, "--cache-dir", t.TempDir(), src, mnt)
	other := sourceTree(t)
	refused(t, "", []string{"already a mount point", "fuse.meshfs", src}, "--cache-dir", t.TempDir(), other, mnt)
	refused(t, "", []string{"already a mount point"}, "--daemon", "--cache-dir", t.TempDir(), other, mnt)
	// Still one mount, served by the first daemon.
	ms, _ := mountpoint.Mounts()
	n := 0
	for _, m := range ms {
		if m.Point == mnt {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d mounts at %s", n, mnt)
	}
	readGLB(t, mnt)
	if err := d.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if mounted(t, mnt) {
		t.Fatal("a mount left behind")
	}
}

// Nesting is judged on real paths: after "..", and after symbolic links.
func TestMountNestingRefused(t *testing.T) {
	src, mnt := sourceTree(t), mountDir(t)
	dotdot := filepath.Join(src, "..m") // a name, not the parent
	os.Mkdir(dotdot, 0o755)
	deep := filepath.Join(src, "a", "b")
	os.MkdirAll(deep, 0o755)
	links := t.TempDir()
	toSub := filepath.Join(links, "sub")
	os.Symlink(filepath.Join(src, "a"), toSub)
	toDeep := filepath.Join(links, "deep")
	os.Symlink(deep, toDeep)
	toSrc := filepath.Join(links, "src")
	os.Symlink(src, toSrc)
	for _, c := range []struct {
		src, mnt string
		want     string
		opts     []string
	}{
		{src, src, "the source folder itself", nil},
		{src, filepath.Join(src, "a", ".."), "the source folder itself", nil},
		{src, toSrc, "the source folder itself", nil},
		{src, dotdot, "inside the source", nil},
		{src, toSub, "inside the source", nil},
		// deep/.. is src/a physically; lexically it would be links/.
		{src, toDeep + "/..", "inside the source", nil},
		{filepath.Join(src, "a"), src, "inside the mount point", nil},
		{filepath.Join(src, "a"), src, "inside the mount point", []string{"-o", "nonempty"}},
		{filepath.Join(toSrc, "a"), mnt + "/../" + filepath.Base(mnt), "", nil}, // not nested: mounts
	} {
		args := append(append([]string{"--cache-dir", t.TempDir()}, c.opts...), c.src, c.mnt)
		if c.want == "" {
			d := startMount(t, args...)
			if err := d.stop(t, syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			continue
		}
		refused(t, c.mnt, []string{c.want}, args...)
		if mounted(t, src) || mounted(t, filepath.Join(src, "a")) || mounted(t, dotdot) {
			t.Fatalf("%v: something was mounted", args)
		}
	}
}

// The cache folder is meshfs's own: never the source, inside it or the
// mount point, nor a folder of someone else's files; and a refusal deletes
// or creates nothing.
func TestCacheDirRefused(t *testing.T) {
	src, mnt := sourceTree(t), mountDir(t)
	os.MkdirAll(filepath.Join(src, "data"), 0o755)
	os.WriteFile(filepath.Join(src, "data", "precious.txt"), []byte("keep"), 0o644)
	os.MkdirAll(filepath.Join(src, "tmp"), 0o755)
	os.WriteFile(filepath.Join(src, "tmp", "draft.txt"), []byte("keep"), 0o644)
	os.WriteFile(filepath.Join(src, "index"), []byte("my index\n"), 0o644)
	foreign := t.TempDir()
	os.MkdirAll(filepath.Join(foreign, "data"), 0o755)
	os.WriteFile(filepath.Join(foreign, "data", "photo.jpg"), []byte("jpeg"), 0o644)
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("notes"), 0o644)
	parent := t.TempDir()
	inner := filepath.Join(parent, "src")
	os.Mkdir(inner, 0o755)
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(src, link)

	before := snapshot(t, src)
	beforeForeign := snapshot(t, foreign)
	for _, c := range []struct {
		src, cache string
		want       []string
	}{
		{src, src, []string{"cache folder", "the source itself"}},
		{src, link, []string{"cache folder", "the source itself"}},
		{src, filepath.Join(src, "cache"), []string{"inside the source"}},
		{src, filepath.Join(mnt, "cache"), []string{"inside the mount point"}},
		{inner, parent, []string{"holds the source"}},
		{src, foreign, []string{"not a meshfs cache folder", "photo.jpg"}},
	} {
		for _, mode := range [][]string{nil, {"--daemon"}, {"--no-disk-cache", "--daemon"}} {
			args := append(append([]string{}, mode...), "--cache-dir", c.cache, c.src, mnt)
			refused(t, mnt, c.want, args...)
		}
	}
	unchanged(t, "source", before, snapshot(t, src))
	unchanged(t, "foreign folder", beforeForeign, snapshot(t, foreign))
	// --no-disk-cache in the foreground uses no cache folder at all.
	d := startMount(t, "--no-disk-cache", "--cache-dir", src, src, mnt)
	readGLB(t, mnt)
	if err := d.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	unchanged(t, "source after a mount without a disk cache", before, snapshot(t, src))
}

// Option and argument errors come before any cache or mount work: no cache
// folder is made, and a busy cache's warning is not printed.
func TestArgumentErrorsFirst(t *testing.T) {
	src, mnt := sourceTree(t), mountDir(t)
	fresh := filepath.Join(t.TempDir(), "cache")
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	for _, args := range [][]string{
		{"-o", "bogus_option", "--cache-dir", fresh, src, mnt},
		{"--cache-size", "12parsecs", "--cache-dir", fresh, src, mnt},
		{"--disk-cache-size", "0", "--cache-dir", fresh, src, mnt},
		{"--cache-dir", fresh, filepath.Join(src, "missing"), mnt},
		{"--cache-dir", fresh, src, filepath.Join(mnt, "missing")},
		{"--cache-dir", fresh, src, full},
		{"--daemon", "--cache-dir", fresh, src, full},
		{"--cache-dir", fresh, src},
	} {
		refused(t, mnt, nil, args...)
		if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%v: the cache folder was made before the arguments were checked", args)
		}
	}
	// A cache folder held by another process: the argument error, and
	// not the cache's warning.
	held := t.TempDir()
	dc, err := store.OpenDiskCache(held, 1<<20, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	out := refused(t, mnt, []string{"source"}, "--cache-dir", held, filepath.Join(src, "missing"), mnt)
	if strings.Contains(out, "in use") {
		t.Fatalf("the busy-cache warning came before the argument error:\n%s", out)
	}
}

// A --daemon without --log logs to daemon.log in its cache folder, and its
// ready line says so: a broken mesh's failure is there after the daemon
// is gone.
func TestDaemonLogFile(t *testing.T) {
	src, mnt := sourceTree(t), mountDir(t)
	good, err := os.ReadFile(filepath.Join("..", "..", "testdata", "gem", "pm01_gem3.ply"))
	if err != nil {
		t.Fatal(err)
	}
	// Cut short: its vertex chunk claims more bytes than are left.
	if err := os.WriteFile(filepath.Join(src, "broken.ply"), good[:700], 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	out, err := runMeshfs(t, "mount", "--daemon", "--cache-dir", cache, src, mnt)
	if err != nil {
		t.Fatalf("mount --daemon: %v\n%s", err, out)
	}
	pid := daemonPid(t, out)
	logPath := filepath.Join(cache, "daemon.log")
	if !strings.Contains(out, "log "+logPath) {
		stopPid(t, pid, mnt)
		t.Fatalf("the ready line does not name the log %s: %q", logPath, out)
	}
	readGLB(t, mnt)
	if _, err := os.ReadFile(filepath.Join(mnt, "broken.ply", "broken.glb")); !errors.Is(err, syscall.EIO) {
		stopPid(t, pid, mnt)
		t.Fatalf("broken.glb: %v, want EIO", err)
	}
	stopPid(t, pid, mnt)
	b, err := os.ReadFile(logPath)
	if err != nil || !strings.Contains(string(b), "broken.ply") || !strings.Contains(string(b), "VERT") {
		t.Fatalf("daemon.log (%v) lacks the failure:\n%s", err, b)
	}
	if !strings.Contains(string(b), "unmounting") {
		t.Errorf("daemon.log lacks the daemon's last line:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(cache, store.TagName)); err != nil {
		t.Errorf("the cache folder is not tagged: %v", err)
	}
}

// A file planted in a real cache's data/ and tmp/ survives the mounts that
// clean the cache.
func TestCacheKeepsForeignFiles(t *testing.T) {
	src, mnt := sourceTree(t), mountDir(t)
	cache := filepath.Join(t.TempDir(), "cache")
	d := startMount(t, "--cache-dir", cache, src, mnt)
	glb := readGLB(t, mnt)
	if err := d.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	planted := map[string]string{"data/notes.txt": "keep", "tmp/draft": "keep", "mine.txt": "keep"}
	for p, text := range planted {
		if err := os.WriteFile(filepath.Join(cache, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		d = startMount(t, "--cache-dir", cache, "--disk-cache-size", "1KiB", src, mnt)
		if got := readGLB(t, mnt); len(got) != len(glb) {
			t.Fatalf("glb of %d bytes, was %d", len(got), len(glb))
		}
		if err := d.stop(t, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	for p, text := range planted {
		if b, err := os.ReadFile(filepath.Join(cache, p)); err != nil || string(b) != text {
			t.Errorf("%s: %q %v", p, b, err)
		}
	}
}

// A .meshfs entry in the source root is hidden by the mount's own (the
// statistics): the mount says so in its log.
func TestSourceMeshfsEntryLogged(t *testing.T) {
	src, mnt := sourceTree(t), mountDir(t)
	os.Mkdir(filepath.Join(src, ".meshfs"), 0o755)
	d := startMount(t, "--cache-dir", t.TempDir(), src, mnt)
	if _, err := os.Stat(filepath.Join(mnt, ".meshfs", "stats.json")); err != nil {
		t.Fatal(err)
	}
	if err := d.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if log := d.stderr.String(); !strings.Contains(log, filepath.Join(src, ".meshfs")+" is hidden") {
		t.Fatalf("no warning of the hidden .meshfs:\n%s", log)
	}
}
