package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/meshfs/meshfs/export/outputs"
)

// A mesh overwritten in place (same inode) while a reader is half way
// through its .glb, without handles (no_open), watched or not: the read
// fails with ESTALE or EIO, or returns one version's .glb whole, never
// the start of one and the end of the other. A reader that starts once the
// change is seen reads the new version. (cmd/meshfs TestNoSplicedReads
// does the same through the daemon with big meshes.)
func TestNoSplicedReadsInPlace(t *testing.T) {
	for _, noWatch := range []bool{false, true} {
		t.Run(fmt.Sprintf("nowatch=%v", noWatch), func(t *testing.T) {
			src, ref := t.TempDir(), t.TempDir()
			name := "m" + fakeExt
			versions := [][]byte{fakeMesh(120_000, 1), fakeMesh(100_000, 2)}
			glbs := make([][]byte, len(versions))
			for v, b := range versions {
				// The .glb names its source: convert a file of the same name.
				p := filepath.Join(ref, fmt.Sprint(v), name)
				os.Mkdir(filepath.Dir(p), 0o755)
				write(t, p, b)
				var err error
				if glbs[v], err = outputs.New(p, fakeFormat{}).GLBFile(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(src, name)
			overwrite := func(v int) error {
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
				if err != nil {
					return err
				}
				if _, err := f.Write(versions[v]); err != nil {
					f.Close()
					return err
				}
				return f.Close()
			}
			if err := overwrite(0); err != nil {
				t.Fatal(err)
			}
			_, mnt := mountT(t, src, Config{NoWatch: noWatch})
			glb := filepath.Join(mnt, name, "m.glb")
			readNew := func(want int) {
				t.Helper()
				deadline := time.Now().Add(10 * time.Second)
				for {
					b, err := os.ReadFile(glb)
					if err == nil && bytes.Equal(b, glbs[want]) {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("a new reader still gets %d bytes, %v, after 10 s; want version %d (%d bytes)", len(b), err, want, len(glbs[want]))
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			readNew(0)
			outcomes := map[string]int{}
			cur := 0
			for round := range 6 {
				got, err := withDeadline(t, func() ([]byte, error) {
					f, err := os.Open(glb)
					if err != nil {
						return nil, err
					}
					defer f.Close()
					if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
						return nil, err
					}
					half := make([]byte, len(glbs[cur])/2)
					if _, err := io.ReadFull(f, half); err != nil {
						return nil, err
					}
					if err := overwrite(1 - cur); err != nil {
						t.Error(err)
					}
					time.Sleep([]time.Duration{0, 50 * time.Millisecond, 300 * time.Millisecond}[round%3])
					rest, err := io.ReadAll(f)
					return append(half, rest...), err
				})
				switch {
				case err != nil:
					if !errors.Is(err, syscall.ESTALE) && !errors.Is(err, syscall.EIO) {
						t.Fatalf("round %d: %v, want ESTALE or EIO", round, err)
					}
					outcomes["error"]++
				case bytes.Equal(got, glbs[cur]):
					outcomes["old whole"]++
				default:
					t.Fatalf("round %d: a read started on version %d (%d bytes) returned %d bytes of neither version",
						round, cur, len(glbs[cur]), len(got))
				}
				cur = 1 - cur
				readNew(cur)
			}
			t.Logf("outcomes: %v", outcomes)
		})
	}
}

// withDeadline runs fn, failing the test if it has not returned within
// 30 s (a hung read; the mount's cleanup then unmounts it).
func withDeadline(t *testing.T, fn func() ([]byte, error)) ([]byte, error) {
	t.Helper()
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := fn()
		ch <- result{b, err}
	}()
	select {
	case r := <-ch:
		return r.b, r.err
	case <-time.After(30 * time.Second):
		t.Fatal("read hangs")
		return nil, nil
	}
}
