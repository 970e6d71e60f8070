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

// TestWindow: a window reads its bytes (fewer when the file shrank) and
// holds its descriptor until Done, which releases it once.
func TestWindow(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := New()
	k := Key{Path: p}
	same := func(*syscall.Stat_t) bool { return true }
	w, err := c.Window(k, same, 2, 5)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := w.Read(nil); err != nil || string(b) != "23456" {
		t.Fatalf("read %q, %v", b, err)
	}
	tail, err := c.Window(k, same, 8, 5)
	if err != nil || tail.Fd != w.Fd {
		t.Fatalf("second window: %v, fd %d (want the kept %d)", err, tail.Fd, w.Fd)
	}
	if b, err := tail.Read(make([]byte, 1)); err != nil || string(b) != "89" {
		t.Fatalf("read past the end: %q, %v", b, err)
	}
	tail.Done()
	c.Close() // evicted, still held by w
	var st syscall.Stat_t
	if err := syscall.Fstat(w.Fd, &st); err != nil {
		t.Fatalf("a window's descriptor closed before Done: %v", err)
	}
	w.Done()
	w.Done()
	if err := syscall.Fstat(w.Fd, &st); err != syscall.EBADF {
		t.Fatalf("after Done: %v, want EBADF", err)
	}
}
