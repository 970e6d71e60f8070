// Package readcycles drives a mounted tree the way the leak tests need:
// many short open/pread/close cycles from several goroutines at once. It is
// shared by the in-process mount tests (fs) and the daemon's (cmd/meshfs).
package readcycles

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// Run opens, reads 512 bytes at a small offset and closes total files from
// 8 goroutines, cycling through paths (relative to mnt); the first failure
// fails t. spread varies the offsets (i % spread). Before each read it drops
// the file's pages from the kernel's cache (POSIX_FADV_DONTNEED), so every
// read is a READ request to the daemon even where the kernel opens files
// without asking it.
func Run(t testing.TB, mnt string, paths []string, total, spread int) {
	t.Helper()
	var wg sync.WaitGroup
	var once sync.Once
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 512)
			for i := w; i < total; i += 8 {
				p := filepath.Join(mnt, paths[i%len(paths)])
				f, err := os.Open(p)
				if err == nil {
					err = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
					if err == nil {
						_, err = f.ReadAt(buf, int64(i%spread))
					}
					if err == io.EOF {
						err = nil
					}
					f.Close()
				}
				if err != nil {
					once.Do(func() { t.Errorf("%s: %v", p, err) })
				}
			}
		}()
	}
	wg.Wait()
}
