// Package decodetest holds what the decoders' and the mount's tests share:
// where the repository and the real sample files are, and the check that a
// committed fixture is what its encoder writes now. Only tests import it.
package decodetest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// RepoRoot is the module root, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Shared returns ../shared/<rel> beside the repository root (the real
// files: realdata/, assets/) and whether it is there. A test that uses it
// when present calls it: under CI (the CI variable set) its absence fails
// the test, elsewhere it is logged and the test goes on without it.
func Shared(t testing.TB, rel string) (string, bool) {
	t.Helper()
	dir := filepath.Join(RepoRoot(), "..", "shared", rel)
	fi, err := os.Stat(dir)
	if err == nil && fi.IsDir() {
		return dir, true
	}
	if err == nil {
		err = fmt.Errorf("%s is not a folder", dir)
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("real data missing under CI: %v (CI lays shared/ beside the clone; "+
			"copy or link it to %s)", err, filepath.Join(RepoRoot(), "..", "shared"))
	}
	t.Logf("real data absent, going on without it: %v", err)
	return dir, false
}

// NeedShared returns ../shared/<rel> for a test that has nothing to check
// without it: under CI its absence fails the test (Shared's rule),
// elsewhere it skips the test.
func NeedShared(t testing.TB, rel string) string {
	t.Helper()
	dir, ok := Shared(t, rel)
	if !ok {
		t.Skipf("%s is absent", dir)
	}
	return dir
}

// LiveHeap is the process's live heap after a collection: what a test
// that bounds memory compares before and after.
func LiveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// CannotRun ends a test that cannot run on this machine (no FUSE knob, not
// root, ...): under CI, where every test must run, it fails; elsewhere it
// skips with the reason.
func CannotRun(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("cannot run under CI: "+format, args...)
	}
	t.Skipf(format, args...)
}

// RealData is Shared for ../shared/realdata/<sub> ("" for the whole folder).
func RealData(t testing.TB, sub string) (string, bool) {
	t.Helper()
	return Shared(t, filepath.Join("realdata", sub))
}

// NeedRealData is NeedShared for ../shared/realdata/<sub>.
func NeedRealData(t testing.TB, sub string) string {
	t.Helper()
	return NeedShared(t, filepath.Join("realdata", sub))
}

// Golden compares the committed fixture at path with got, the bytes its
// encoder writes now; with update set it rewrites the file instead. regen is
// the command that rewrites it, for the failure message.
func Golden(t testing.TB, path string, got []byte, update bool, regen string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run %s)", err, regen)
	}
	if !bytes.Equal(have, got) {
		t.Errorf("%s is stale: its encoder now writes different bytes (run %s)", path, regen)
	}
}

// CPUTime is the process's user + system CPU time: with cpu-ns/op beside
// the wall-clock ns/op, a benchmark on a busy machine still shows the work
// done, and the ratio shows how much ran in parallel.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReportCPU reports the CPU time per op since start (a CPUTime reading
// taken before the benchmark loop) as cpu-ns/op.
func ReportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(CPUTime()-start)/float64(b.N), "cpu-ns/op")
}

// Loop is the body of the project's throughput benchmarks: it runs op in
// b's loop and reports MB/s of size bytes (the source), allocations and
// CPU time per op; an error from op fails the benchmark.
func Loop(b *testing.B, size int64, op func() error) {
	b.SetBytes(size)
	b.ReportAllocs()
	c0 := CPUTime()
	for b.Loop() {
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	ReportCPU(b, c0)
}
