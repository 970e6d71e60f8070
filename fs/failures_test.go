package fs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/export/outputs"
	meshstats "github.com/meshfs/meshfs/internal/store/stats"
)

// underDeadline ends the test binary, with every goroutine's stack, when
// the test is still running after d: a mount test that hangs (in the
// kernel, or in the daemon) cannot be failed any other way.
func underDeadline(t testing.TB, d time.Duration) {
	t.Helper()
	name := t.Name()
	timer := time.AfterFunc(d, func() {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		fmt.Fprintf(os.Stderr, "%s: still running after %v\n%s\n", name, d, buf[:n])
		panic(name + ": deadline exceeded")
	})
	t.Cleanup(func() { timer.Stop() })
}

// brokenShape checks that the mesh folder dir is broken: it lists
// error.txt and header.json (which carries an "error"), and no geometry
// output, which lookups do not find either.
func brokenShape(t *testing.T, dir, base string) {
	t.Helper()
	ls := names(t, dir)
	if !slices.Contains(ls, outputs.ErrorName) || !slices.Contains(ls, outputs.HeaderName) {
		t.Fatalf("%s lists %v, want error.txt and header.json", dir, ls)
	}
	for _, n := range []string{base + ".glb", base + ".obj", base + ".mtl"} {
		if slices.Contains(ls, n) {
			t.Fatalf("%s lists %s: %v", dir, n, ls)
		}
		if _, err := os.Stat(filepath.Join(dir, n)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("stat %s: %v, want ENOENT", n, err)
		}
	}
	h, err := os.ReadFile(filepath.Join(dir, outputs.HeaderName))
	if err != nil || !bytes.Contains(h, []byte(`"error": "`)) || !bytes.HasSuffix(h, []byte("}\n")) {
		t.Fatalf("header.json %q, %v: want an error field", h, err)
	}
	e, err := os.ReadFile(filepath.Join(dir, outputs.ErrorName))
	if err != nil || !bytes.Contains(e, []byte(base+fakeExt)) || !bytes.HasSuffix(e, []byte("\n")) {
		t.Fatalf("error.txt %q, %v", e, err)
	}
}

// A broken mesh shows it without anyone opening its outputs once its
// failure is known: a scan failure at once, a conversion failure as soon
// as one conversion failed. The mount's stats.json counts the two kinds
// apart and .meshfs/errors.txt names both; a remount on the same disk
// cache shows the same at the first listing, converting nothing.
func TestBrokenMeshShows(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		underDeadline(t, 2*time.Minute)
		src := sampleTree(t)
		cacheDir := t.TempDir()
		models := func(mnt string) string { return filepath.Join(mnt, "models") }

		_, mnt, stop := mountDisk(t, src, cacheDir, false)
		// A scan failure: broken from the first listing.
		brokenShape(t, filepath.Join(models(mnt), "broken"+fakeExt), "broken")
		// Not tried yet: the folder lists the geometry outputs.
		bad := filepath.Join(models(mnt), "bad"+fakeExt)
		if ls := names(t, bad); !slices.Contains(ls, "bad.glb") || slices.Contains(ls, outputs.ErrorName) {
			t.Fatalf("untried mesh lists %v", ls)
		}
		// The reader who makes the conversion fail gets EIO...
		if _, err := os.ReadFile(filepath.Join(bad, "bad.glb")); !errors.Is(err, syscall.EIO) {
			t.Fatalf("first read of bad.glb: %v, want EIO", err)
		}
		// ...and from then on the folder is broken (its cached listing
		// and entries dropped).
		brokenShape(t, bad, "bad")
		s := stats(t, mnt)
		if s.ScanFailures != 1 || s.ConversionFailures != 1 ||
			!slices.Equal(s.Failing, []string{"models/bad" + fakeExt, "models/broken" + fakeExt}) {
			t.Fatalf("stats: scan_failures %d, conversion_failures %d, failing %v", s.ScanFailures, s.ConversionFailures, s.Failing)
		}
		errs := readErrors(t, mnt)
		if len(errs) != 2 || !strings.HasPrefix(errs[0], "models/bad"+fakeExt+": ") ||
			!strings.HasPrefix(errs[1], "models/broken"+fakeExt+": ") || !strings.Contains(errs[1], "broken on purpose") {
			t.Fatalf("errors.txt: %q", errs)
		}
		// A healthy mesh has all its outputs and no error.txt.
		if ls := names(t, filepath.Join(models(mnt), "tank"+fakeExt)); slices.Contains(ls, outputs.ErrorName) || !slices.Contains(ls, "tank.glb") {
			t.Fatalf("healthy mesh lists %v", ls)
		}
		stop()

		_, mnt, stop = mountDisk(t, src, cacheDir, false)
		defer stop()
		brokenShape(t, filepath.Join(models(mnt), "bad"+fakeExt), "bad")
		brokenShape(t, filepath.Join(models(mnt), "broken"+fakeExt), "broken")
		s = stats(t, mnt)
		if n := conversions(s); n != 0 {
			t.Fatalf("remount converted %d outputs: %v", n, s.Conversions)
		}
		if s.ScanFailures != 1 || s.ConversionFailures != 1 {
			t.Fatalf("remount: scan_failures %d, conversion_failures %d", s.ScanFailures, s.ConversionFailures)
		}
		if got := readErrors(t, mnt); !slices.Equal(got, errs) {
			t.Fatalf("remount: errors.txt %q, want %q", got, errs)
		}
		// Fixed: the folder has its geometry again, and the lists forget it.
		write(t, filepath.Join(src, "models", "bad"+fakeExt), fakeMesh(3, 2))
		fixed := filepath.Join(models(mnt), "bad"+fakeExt)
		if !waitFor(10*time.Second, func() bool { return slices.Contains(names(t, fixed), "bad.glb") }) {
			t.Fatalf("fixed mesh lists %v", names(t, fixed))
		}
		if _, err := os.ReadFile(filepath.Join(fixed, "bad.glb")); err != nil {
			t.Fatal(err)
		}
		if got := readErrors(t, mnt); len(got) != 1 || !strings.HasPrefix(got[0], "models/broken"+fakeExt) {
			t.Fatalf("errors.txt after the fix: %q", got)
		}
		if s := stats(t, mnt); s.ConversionFailures != 0 || s.ScanFailures != 1 {
			t.Fatalf("after the fix: scan_failures %d, conversion_failures %d", s.ScanFailures, s.ConversionFailures)
		}
	})
}

// The pre-warmer's failures show like a reader's: the folder of a mesh it
// failed to convert lists error.txt (the kernel's cached listing of it
// dropped), and errors.txt names it. So does a mesh in a folder nobody
// listed (the kernel has no node to tell: the daemon must not crash
// trying).
func TestBrokenMeshShowsAfterPrewarm(t *testing.T) {
	underDeadline(t, 2*time.Minute)
	src := t.TempDir()
	write(t, filepath.Join(src, "good"+fakeExt), fakeMesh(3, 1))
	write(t, filepath.Join(src, "bad"+fakeExt), fakeDecodeBroken())
	write(t, filepath.Join(src, "unlisted", "bad2"+fakeExt), fakeDecodeBroken())
	f, mnt := mountT(t, src, Config{})
	bad := filepath.Join(mnt, "bad"+fakeExt)
	if ls := names(t, bad); !slices.Contains(ls, "bad.glb") {
		t.Fatalf("untried mesh lists %v", ls)
	}
	f.Prewarm()
	if !waitFor(30*time.Second, func() bool { return prewarmed(f) }) {
		t.Fatal("prewarm did not finish")
	}
	if f.Stats().Prewarm.Failed != 2 {
		t.Fatalf("prewarm: %+v", f.Stats().Prewarm)
	}
	brokenShape(t, bad, "bad")
	brokenShape(t, filepath.Join(mnt, "unlisted", "bad2"+fakeExt), "bad2")
	if errs := readErrors(t, mnt); len(errs) != 2 || !strings.HasPrefix(errs[0], "bad"+fakeExt+": ") ||
		!strings.HasPrefix(errs[1], "unlisted/bad2"+fakeExt+": ") {
		t.Fatalf("errors.txt: %q", errs)
	}
}

func readErrors(t *testing.T, mnt string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mnt, statsDirName, meshstats.ErrorsName))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		return nil
	}
	if !bytes.HasSuffix(b, []byte("\n")) {
		t.Fatalf("errors.txt does not end with a newline: %q", b)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
