package fs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/meshfs/meshfs/internal/version"
)

func TestSrcFDLimit(t *testing.T) {
	for _, c := range []struct {
		nofile uint64
		want   int
	}{{0, 1}, {3, 1}, {64, 16}, {256, maxSrcFDs}, {1 << 20, maxSrcFDs}} {
		if got := srcFDLimit(c.nofile); got != c.want {
			t.Errorf("srcFDLimit(%d) = %d, want %d", c.nofile, got, c.want)
		}
	}
}

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

// TestSrcFDsLowLimit reads more plain files than maxSrcFDs under no_open
// with a descriptor limit of 40 more than are open: the source descriptors
// kept stay within a quarter of it, every file reads, and the process can
// still open files of its own.
func TestSrcFDsLowLimit(t *testing.T) {
	src := t.TempDir()
	const files = maxSrcFDs + 36
	for i := range files {
		write(t, filepath.Join(src, fmt.Sprintf("f%03d", i)), []byte(fmt.Sprint(i)))
	}
	limit := limitWithFree(t, 40)
	lowerNofile(t, limit)
	f, mnt := mountT(t, src, Config{})
	guardMount(t, mnt, mountGuard)
	if f.srcFDs.max != srcFDLimit(limit) {
		t.Fatalf("%d descriptors may be kept under a limit of %d, want %d", f.srcFDs.max, limit, srcFDLimit(limit))
	}
	for i := range files {
		if b, err := os.ReadFile(filepath.Join(mnt, fmt.Sprintf("f%03d", i))); err != nil || string(b) != fmt.Sprint(i) {
			t.Fatalf("f%03d: %q %v", i, b, err)
		}
	}
	f.srcFDs.mu.Lock()
	held := f.srcFDs.lru.Len()
	f.srcFDs.mu.Unlock()
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

// TestSrcFDsOpenWhenFull: an open that finds no descriptor free closes
// the idle ones kept and succeeds.
func TestSrcFDsOpenWhenFull(t *testing.T) {
	dir := t.TempDir()
	c := newSrcFDs()
	defer c.close()
	key := func(i int) (srcKey, func(*syscall.Stat_t) bool) {
		p := filepath.Join(dir, fmt.Sprintf("f%d", i))
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			write(t, p, []byte("x"))
			syscall.Stat(p, &st)
		}
		return srcKey{path: p, id: version.Ident{File: version.FromStat(&st).File}}, func(s *syscall.Stat_t) bool { return version.FromStat(s).File == version.FromStat(&st).File }
	}
	for i := range 10 {
		k, same := key(i)
		e, errno := c.get(k, same)
		if errno != 0 {
			t.Fatal(errno)
		}
		c.release(e)
	}
	k, same := key(10)
	// No descriptor left: the limit at the lowest free number, so that
	// every one below it is taken.
	lowerNofile(t, limitWithFree(t, 0))
	var fill []int
	defer func() {
		for _, fd := range fill {
			syscall.Close(fd)
		}
	}()
	for {
		fd, err := syscall.Open(os.DevNull, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			if err != syscall.EMFILE {
				t.Fatal(err)
			}
			break
		}
		fill = append(fill, fd)
	}
	e, errno := c.get(k, same)
	if errno != 0 {
		t.Fatalf("open with every descriptor taken and 10 idle ones kept: %v", errno)
	}
	c.release(e)
}
