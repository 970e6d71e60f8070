package fs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/meshfs/meshfs/internal/srcfd"
)

// lowerNofile sets the soft descriptor limit to n until the test ends.
func lowerNofile(t *testing.T, n uint64) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Skipf("getrlimit: %v", err)
	}
	lim := old
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("setrlimit %d: %v", n, err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}

// limitWithFree returns the descriptor limit under which exactly free
// descriptor numbers are unused in this process now (a new descriptor
// takes the lowest free number, which must be below the limit).
func limitWithFree(t *testing.T, free int) uint64 {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	used := map[int]bool{}
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			used[n] = true
		}
	}
	for n := 0; ; n++ {
		if !used[n] {
			if free == 0 {
				return uint64(n)
			}
			free--
		}
	}
}

// TestSrcFDsLowLimit reads more plain files than srcfd.Max under no_open
// with a descriptor limit of 40 more than are open: the source descriptors
// kept stay within a quarter of it, every file reads, and the process can
// still open files of its own.
func TestSrcFDsLowLimit(t *testing.T) {
	src := t.TempDir()
	const files = srcfd.Max + 36
	for i := range files {
		write(t, filepath.Join(src, fmt.Sprintf("f%03d", i)), []byte(fmt.Sprint(i)))
	}
	limit := limitWithFree(t, 40)
	lowerNofile(t, limit)
	f, mnt := mountT(t, src, Config{})
	guardMount(t, mnt, mountGuard)
	if f.srcFDs.Cap() != srcfd.Limit(limit) {
		t.Fatalf("%d descriptors may be kept under a limit of %d, want %d", f.srcFDs.Cap(), limit, srcfd.Limit(limit))
	}
	for i := range files {
		if b, err := os.ReadFile(filepath.Join(mnt, fmt.Sprintf("f%03d", i))); err != nil || string(b) != fmt.Sprint(i) {
			t.Fatalf("f%03d: %q %v", i, b, err)
		}
	}
	held := f.srcFDs.Kept()
	if held > int(limit/4) {
		t.Errorf("%d source descriptors kept under a limit of %d", held, limit)
	}
	var opened []*os.File
	defer func() {
		for _, o := range opened {
			o.Close()
		}
	}()
	for i := range 10 {
		o, err := os.Open(filepath.Join(src, fmt.Sprintf("f%03d", i)))
		if err != nil {
			t.Fatalf("opening a file of the test's own after the reads: %v", err)
		}
		opened = append(opened, o)
	}
}
