package srcfd

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
	}{{0, 1}, {3, 1}, {64, 16}, {256, Max}, {1 << 20, Max}} {
		if got := Limit(c.nofile); got != c.want {
			t.Errorf("Limit(%d) = %d, want %d", c.nofile, got, c.want)
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

// TestSrcFDsOpenWhenFull: an open that finds no descriptor free closes
// the idle ones kept and succeeds.
func TestSrcFDsOpenWhenFull(t *testing.T) {
	dir := t.TempDir()
	c := New()
	defer c.Close()
	key := func(i int) (Key, func(*syscall.Stat_t) bool) {
		p := filepath.Join(dir, fmt.Sprintf("f%d", i))
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			os.WriteFile(p, []byte("x"), 0o644)
			syscall.Stat(p, &st)
		}
		return Key{Path: p, ID: version.Ident{File: version.FromStat(&st).File}}, func(s *syscall.Stat_t) bool { return version.FromStat(s).File == version.FromStat(&st).File }
	}
	for i := range 10 {
		k, same := key(i)
		e, err := c.Get(k, same)
		if err != nil {
			t.Fatal(err)
		}
		c.Release(e)
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
	e, err := c.Get(k, same)
	if err != nil {
		t.Fatalf("open with every descriptor taken and 10 idle ones kept: %v", err)
	}
	c.Release(e)
}
