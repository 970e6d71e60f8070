package fs

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/meshfs/meshfs/internal/fusetest"
	"github.com/meshfs/meshfs/internal/srcfd"
)

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
	// The archives earlier tests' mounts left to the garbage collector
	// (source.Forget) are closed first: the limit counts this test's own.
	runtime.GC()
	runtime.GC()
	limit := fusetest.LimitWithFree(t, 40)
	fusetest.LowerNofile(t, limit)
	f, mnt := mountT(t, src, Config{})
	fusetest.GuardMount(t, mnt, fusetest.Guard)
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
