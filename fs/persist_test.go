package fs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/store"
	"github.com/meshfs/meshfs/internal/store/record"
)

// mountDisk mounts src with the disk cache folder dir; the returned func
// unmounts and closes everything (idempotent).
func mountDisk(t *testing.T, src, dir string, prewarm bool) (*FS, string, func()) {
	t.Helper()
	return mountDiskConfig(t, Config{Source: src, OpenHandles: strings.Contains(t.Name(), "/"+handlesMode)}, dir, prewarm)
}

// mountDiskConfig is mountDisk with the rest of the configuration given.
func mountDiskConfig(t *testing.T, cfg Config, dir string, prewarm bool) (*FS, string, func()) {
	t.Helper()
	dc, err := store.OpenDiskCache(dir, 1<<30, record.CacheVersion("", outputs.DefaultLimits))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Log, cfg.Store.DiskCache = testLogger(t), dc
	f, err := New(cfg)
	if err != nil {
		dc.Close()
		t.Fatal(err)
	}
	mnt := t.TempDir()
	srv, err := f.Mount(mnt, fuse.MountOptions{DirectMount: os.Geteuid() == 0, Debug: *fuseDebug})
	if err != nil {
		f.Close()
		dc.Close()
		cannotMount(t, err)
	}
	if prewarm {
		f.Prewarm()
	}
	done := false
	stop := func() {
		if done {
			return
		}
		done = true
		if err := Unmount(srv, mnt); err != nil {
			t.Errorf("unmount: %v", err)
		}
		f.Close()
		if err := dc.Close(); err != nil {
			t.Errorf("disk cache close: %v", err)
		}
	}
	t.Cleanup(stop)
	return f, mnt, stop
}

// lsLR stats every entry under root (what ls -lR does) and returns the
// sizes of the regular files by relative path.
func lsLR(t *testing.T, root string) map[string]int64 {
	t.Helper()
	sizes := map[string]int64{}
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			sizes[rel] = fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sizes
}

func makeTree(t *testing.T, n, tris int) string {
	t.Helper()
	src := t.TempDir()
	for i := 0; i < n; i++ {
		data, err := meshgen.GEM(tris, float32(i))
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(src, fmt.Sprintf("d%d", i%3))
		os.MkdirAll(d, 0o755)
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("m%d.ply", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

func TestDiskCacheRemount(t *testing.T) {
	src := makeTree(t, 6, 2000)
	dir := t.TempDir()

	// First mount: read every output (converting each mesh once).
	_, mnt, stop := mountDisk(t, src, dir, false)
	first := map[string][]byte{}
	for rel := range lsLR(t, mnt) {
		b, err := os.ReadFile(filepath.Join(mnt, rel))
		if err != nil {
			t.Fatal(err)
		}
		first[rel] = b
	}
	s := stats(t, mnt)
	if got := conversions(s); got != 18 {
		t.Fatalf("first mount: %d conversions, want 18 (6 glb + 6 obj + 6 preview): %+v", got, s.Conversions)
	}
	stop()

	// Remount on the same cache folder: listing with sizes converts nothing
	// and the sizes are exact.
	_, mnt, stop = mountDisk(t, src, dir, false)
	sizes := lsLR(t, mnt)
	if ls, err := exec.LookPath("ls"); err == nil {
		if out, err := exec.Command(ls, "-lR", mnt).CombinedOutput(); err != nil {
			t.Fatalf("ls -lR: %v\n%s", err, out)
		}
	}
	s = stats(t, mnt)
	if got := conversions(s); got != 0 {
		t.Fatalf("ls -lR after remount converted %d outputs: %+v", got, s.Conversions)
	}
	for rel, b := range first {
		if sizes[rel] != int64(len(b)) {
			t.Errorf("%s: size %d after remount, %d before", rel, sizes[rel], len(b))
		}
	}
	// Reading serves the cached bytes, still without converting.
	for rel, b := range first {
		got, err := os.ReadFile(filepath.Join(mnt, rel))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, b) {
			t.Errorf("%s: bytes differ after remount", rel)
		}
	}
	s = stats(t, mnt)
	if got := conversions(s); got != 0 {
		t.Fatalf("reading after remount converted %d outputs: %+v", got, s.Conversions)
	}
	var loads int64
	for label, n := range s.DiskLoads {
		if store.IsConversion(label) {
			loads += n
		}
	}
	// 18 outputs (glb, obj, preview) and the 6 meshes' scans.
	if loads != 18 || s.DiskCache == nil || s.DiskCache.Entries != 24 {
		t.Fatalf("disk loads %v, disk cache %+v", s.DiskLoads, s.DiskCache)
	}
	stop()

	// A changed source misses: its outputs are converted again.
	p := filepath.Join(src, "d0", "m0.ply")
	data, _ := meshgen.GEM(2000, 99)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, mnt, _ = mountDisk(t, src, dir, false)
	if _, err := os.ReadFile(filepath.Join(mnt, "d0", "m0.ply", "m0.glb")); err != nil {
		t.Fatal(err)
	}
	if got := conversions(stats(t, mnt)); got != 1 {
		t.Fatalf("a changed source: %d conversions, want 1", got)
	}
}

func TestDiskCacheDamagedEntryConverts(t *testing.T) {
	src := makeTree(t, 1, 2000)
	dir := t.TempDir()
	_, mnt, stop := mountDisk(t, src, dir, false)
	glb := filepath.Join(mnt, "d0", "m0.ply", "m0.glb")
	want, err := os.ReadFile(glb)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	// Damage every data file in the cache.
	ents, _ := os.ReadDir(filepath.Join(dir, "data"))
	for _, e := range ents {
		p := filepath.Join(dir, "data", e.Name())
		b, _ := os.ReadFile(p)
		b[len(b)/3] ^= 0x40
		os.WriteFile(p, b, 0o600)
	}
	_, mnt, _ = mountDisk(t, src, dir, false)
	got, err := os.ReadFile(filepath.Join(mnt, "d0", "m0.ply", "m0.glb"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("a damaged cache entry was served")
	}
	s := stats(t, mnt)
	if s.DiskCache.Damaged == 0 || conversions(s) != 1 {
		t.Fatalf("damaged %d, conversions %v", s.DiskCache.Damaged, s.Conversions)
	}
}

func TestPrewarmFillsDiskCache(t *testing.T) {
	src := makeTree(t, 5, 500)
	dir := t.TempDir()
	f, mnt, stop := mountDisk(t, src, dir, true)
	waitPrewarmed(t, f)
	s := stats(t, mnt)
	if s.Prewarm == nil || s.Prewarm.Found != 5 || s.Prewarm.Done != 5 || s.Prewarm.Failed != 0 || s.Prewarm.Running {
		t.Fatalf("prewarm %+v", s.Prewarm)
	}
	if got := conversions(s); got != 15 {
		t.Fatalf("prewarm made %d conversions, want 15 (5 glb + 5 obj + 5 preview)", got)
	}
	// Nobody read: the pre-warmer must not stand aside for its own
	// conversions (at most once, for the mount's first requests).
	if s.Prewarm.Waits > 1 {
		t.Fatalf("prewarm stood aside %d times with no reader", s.Prewarm.Waits)
	}
	stop()
	// Everything is on disk: a new mount's pre-warmer converts nothing.
	f, mnt, _ = mountDisk(t, src, dir, true)
	waitPrewarmed(t, f)
	s = stats(t, mnt)
	if conversions(s) != 0 || s.Prewarm.Cached != 5 {
		t.Fatalf("second prewarm: conversions %v, %+v", s.Conversions, s.Prewarm)
	}
}

// A companion (.msh.blob) changed while nothing was mounted: the next mount
// must not serve the outputs converted from the old one.
func TestDiskCacheCompanionChangedWhileUnmounted(t *testing.T) {
	src := t.TempDir()
	for _, n := range []string{"tf2_cube.msh", "tf2_cube.msh.blob"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "tfever", n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	_, mnt, stop := mountDisk(t, src, dir, false)
	if _, err := os.ReadFile(filepath.Join(mnt, "tf2_cube.msh", "tf2_cube.glb")); err != nil {
		t.Fatal(err)
	}
	stop()
	// Same mount again, nothing changed: served from the disk cache.
	_, mnt, stop = mountDisk(t, src, dir, false)
	if _, err := os.ReadFile(filepath.Join(mnt, "tf2_cube.msh", "tf2_cube.glb")); err != nil {
		t.Fatal(err)
	}
	if n := conversions(stats(t, mnt)); n != 0 {
		t.Fatalf("unchanged remount converted %d", n)
	}
	stop()
	// Rewrite the blob (same bytes, new mtime is enough to count as a change).
	blob := filepath.Join(src, "tf2_cube.msh.blob")
	b, _ := os.ReadFile(blob)
	os.Remove(blob)
	if err := os.WriteFile(blob, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, mnt, _ = mountDisk(t, src, dir, false)
	if _, err := os.ReadFile(filepath.Join(mnt, "tf2_cube.msh", "tf2_cube.glb")); err != nil {
		t.Fatal(err)
	}
	if n := conversions(stats(t, mnt)); n != 1 {
		t.Fatalf("after the companion changed: %d conversions, want 1", n)
	}
}

// A conversion that failed is remembered by the disk cache like one that
// succeeded: after a remount the broken mesh lists error.txt, its .glb
// fails with EIO and error.txt reads the same, all without converting.
func TestDiskCacheRemembersFailures(t *testing.T) {
	src := t.TempDir()
	write(t, filepath.Join(src, "bad"+fakeExt), fakeDecodeBroken())
	write(t, filepath.Join(src, "good"+fakeExt), fakeMesh(20, 1))
	dir := t.TempDir()
	bad := filepath.Join("bad"+fakeExt, "bad.glb")
	errTxt := filepath.Join("bad"+fakeExt, outputs.ErrorName)

	_, mnt, stop := mountDisk(t, src, dir, false)
	if _, err := os.ReadFile(filepath.Join(mnt, bad)); !errors.Is(err, syscall.EIO) {
		t.Fatalf("first mount: %s gives %v, want EIO", bad, err)
	}
	want, err := os.ReadFile(filepath.Join(mnt, errTxt))
	if err != nil || !bytes.Contains(want, []byte("offset")) {
		t.Fatalf("first mount: error.txt %q, %v", want, err)
	}
	for _, name := range []string{"good.glb", "good.obj", "good.preview.png"} {
		if _, err := os.ReadFile(filepath.Join(mnt, "good"+fakeExt, name)); err != nil {
			t.Fatal(err)
		}
	}
	if got := conversions(stats(t, mnt)); got != 5 {
		t.Fatalf("first mount: %d conversions, want 5 (the failing glb and obj, the good ones and its preview)", got)
	}
	stop()

	_, mnt, stop = mountDisk(t, src, dir, false)
	// ls -lR: the broken folder lists error.txt at once, and none of the
	// outputs that failed; it converts nothing.
	if ls := strings.Join(names(t, filepath.Join(mnt, "bad"+fakeExt)), " "); !strings.Contains(ls, outputs.ErrorName) {
		t.Fatalf("remount: error.txt not listed: %s", ls)
	}
	if ls, err := exec.LookPath("ls"); err == nil {
		out, err := exec.Command(ls, "-lR", mnt).CombinedOutput()
		if err != nil || bytes.Contains(out, []byte("bad.glb")) || !bytes.Contains(out, []byte("good.glb")) {
			t.Fatalf("ls -lR after remount: %v\n%s", err, out)
		}
	}
	for _, name := range []string{"bad.glb", "bad.obj", "bad.mtl", "bad.preview.png"} {
		if _, err := os.Stat(filepath.Join(mnt, "bad"+fakeExt, name)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("remount: stat %s gives %v, want ENOENT", name, err)
		}
	}
	got, err := os.ReadFile(filepath.Join(mnt, errTxt))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("remount: error.txt %q, %v; want %q", got, err, want)
	}
	s := stats(t, mnt)
	if n := conversions(s); n != 0 {
		t.Fatalf("remount converted %d outputs: %+v", n, s.Conversions)
	}
	if s.DiskLoads["fake/glb"] != 1 || s.DiskLoads["fake/obj"] != 1 {
		t.Fatalf("disk loads %v, want the two failures", s.DiskLoads)
	}
	stop()

	// Fixed while unmounted: a new source version converts, and succeeds.
	write(t, filepath.Join(src, "bad"+fakeExt), fakeMesh(3, 2))
	_, mnt, _ = mountDisk(t, src, dir, false)
	if _, err := os.ReadFile(filepath.Join(mnt, bad)); err != nil {
		t.Fatalf("fixed source: %v", err)
	}
	if _, err := os.Stat(filepath.Join(mnt, errTxt)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("fixed source still has error.txt: %v", err)
	}
	// 3: asking for error.txt converts the obj and draws the preview too
	// (it holds their errors).
	if n := conversions(stats(t, mnt)); n != 3 {
		t.Fatalf("fixed source: %d conversions, want 3", n)
	}
}

// A big output is saved once its readers pause, and at the latest at
// unmount: a remount reads it without converting.
func TestDiskCacheSavesBigOutput(t *testing.T) {
	src := t.TempDir()
	write(t, filepath.Join(src, "big"+fakeExt), fakeMesh(100000, 3))
	dir := t.TempDir()
	glb := filepath.Join("big"+fakeExt, "big.glb")
	_, mnt, stop := mountDisk(t, src, dir, false)
	want, err := os.ReadFile(filepath.Join(mnt, glb))
	if err != nil || len(want) < store.SaveQuietMin {
		t.Fatalf("%d bytes, %v", len(want), err)
	}
	stop()
	_, mnt, _ = mountDisk(t, src, dir, false)
	got, err := os.ReadFile(filepath.Join(mnt, glb))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("after remount: %d bytes, %v", len(got), err)
	}
	if n := conversions(stats(t, mnt)); n != 0 {
		t.Fatalf("after remount: %d conversions", n)
	}
}

// A big output's save waits for the quiet after its conversion, not after
// the request that converted began: a conversion longer than the quiet
// used to start its own save at once, beside its reader's READs. The
// mount's clock is the test's: the conversion takes 1.5 s of it, the quiet
// is 1 s, and the clock moves only when the test says.
func TestDiskCacheSaveWaitsAfterSlowConversion(t *testing.T) {
	clk := newFakeClock()
	const quiet = time.Second
	fakeDecodeHook = func() { clk.Advance(1500 * time.Millisecond) }
	t.Cleanup(func() { fakeDecodeHook = nil })
	src := t.TempDir()
	write(t, filepath.Join(src, "big"+fakeExt), fakeMesh(100000, 3))
	f, mnt, stop := mountDiskConfig(t, Config{Source: src, Store: store.Config{Clock: clk, SaveQuiet: quiet, SaveQuietMax: time.Minute}}, t.TempDir(), false)
	t.Cleanup(stop) // before fakeDecodeHook is reset
	// A stat converts (sizes are exact); no request follows it, and the
	// test reads the statistics in-process, so the conversion's end is
	// the last request the clock saw.
	if fi, err := os.Stat(filepath.Join(mnt, "big"+fakeExt, "big.glb")); err != nil || fi.Size() < store.SaveQuietMin {
		t.Fatalf("%v, %v", fi, err)
	}
	// The save either waits for the quiet on the clock, which has not
	// moved since the conversion ended, or (wrongly) is done.
	if !waitFor(10*time.Second, func() bool { return clk.Waiters() > 0 || f.Stats().DiskCache.Puts >= 2 }) {
		t.Fatalf("the .glb's save neither waits nor ends: %+v", f.Stats().DiskCache)
	}
	s := f.Stats()
	if s.DiskCache.Puts != 1 || s.DiskSavesPending != 1 {
		t.Fatalf("with no time passed since the conversion: %d disk-cache puts (want 1, the scan), %d saves pending (want 1): the .glb's save did not wait",
			s.DiskCache.Puts, s.DiskSavesPending)
	}
	clk.Advance(quiet)
	if !waitFor(10*time.Second, func() bool { return f.Stats().DiskCache.Puts == 2 }) {
		t.Fatalf("the .glb was not saved after the quiet: %+v", f.Stats().DiskCache)
	}
}

// A big output whose source changes before it is saved is not saved: it
// could never be served.
func TestDiskCacheSkipsReplacedBigOutput(t *testing.T) {
	src := t.TempDir()
	sp := filepath.Join(src, "big"+fakeExt)
	write(t, sp, fakeMesh(100000, 3))
	dir := t.TempDir()
	// Saved only at unmount.
	_, mnt, stop := mountDiskConfig(t, Config{Source: src, OpenHandles: strings.Contains(t.Name(), "/"+handlesMode),
		Store: store.Config{SaveQuiet: time.Hour, SaveQuietMax: time.Hour}}, dir, false)
	if b, err := os.ReadFile(filepath.Join(mnt, "big"+fakeExt, "big.glb")); err != nil || len(b) < store.SaveQuietMin {
		t.Fatalf("%d bytes, %v", len(b), err)
	}
	write(t, sp, fakeMesh(100000, 4))
	stop()
	// A new mount on the disk cache: the old version's scan only (small
	// outputs are saved at once).
	f2, _, stop2 := mountDiskConfig(t, Config{Source: src}, dir, false)
	defer stop2()
	if n := f2.Stats().DiskCache.Entries; n != 1 {
		t.Fatalf("%d disk cache entries, want 1 (the scan): the replaced .glb was saved", n)
	}
}
