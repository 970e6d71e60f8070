package srcfd

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/meshfs/meshfs/internal/fusetest"
	"github.com/meshfs/meshfs/internal/source"
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
		return Key{Path: p, ID: source.Ident{File: source.FromStat(&st).File}}, func(s *syscall.Stat_t) bool { return source.FromStat(s).File == source.FromStat(&st).File }
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
	fusetest.LowerNofile(t, fusetest.LimitWithFree(t, 0))
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
