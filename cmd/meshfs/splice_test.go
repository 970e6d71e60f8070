package main

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
	"github.com/meshfs/meshfs/internal/fusetest"
	"github.com/meshfs/meshfs/internal/meshgen"
)

// TestNoSplicedReads overwrites a mesh in place (as `cat new > old` does:
// same inode, new size and mtime) while a reader is half way through its
// .glb in the default open mode. Every read must fail with ESTALE or EIO,
// or return exactly one version's .glb whole (as `outputs` converts it),
// never the start of one and the end of the other; a reader that starts
// after the change reads the new version.
func TestNoSplicedReads(t *testing.T) {
	if testing.Short() {
		t.Skip("converts meshes of 14 MB of .glb")
	}
	src, mnt := sourceTree(t), mountDir(t)
	dir := t.TempDir()
	versions := make([][]byte, 2) // sources
	glbs := make([][]byte, 2)     // their .glb, converted here
	for v := range versions {
		// Different sizes: the versions differ all along (with one
		// count, only the positions would, and a splice could go unseen).
		b, err := meshgen.GEM(400_000-v*30_000, float32(v+1))
		if err != nil {
			t.Fatal(err)
		}
		// The .glb names its source: convert a file of the same name.
		p := filepath.Join(dir, fmt.Sprint(v), "m.ply")
		if err := os.Mkdir(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := outputs.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if glbs[v], err = m.GLBFile(context.Background()); err != nil {
			t.Fatal(err)
		}
		versions[v] = b
	}
	if bytes.Equal(glbs[0], glbs[1]) {
		t.Fatal("the two versions convert alike")
	}
	srcPath := filepath.Join(src, "m.ply")
	overwrite := func(v int) {
		// In place: truncate and write the same inode.
		f, err := os.OpenFile(srcPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(versions[v]); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	overwrite(0)
	startMount(t, "--no-disk-cache", src, mnt)
	glb := filepath.Join(mnt, "m.ply", "m.glb")
	which := func(b []byte) string {
		for v := range glbs {
			if bytes.Equal(b, glbs[v]) {
				return fmt.Sprintf("version %d", v)
			}
		}
		prefix := func(a []byte) int {
			n := 0
			for n < len(b) && n < len(a) && b[n] == a[n] {
				n++
			}
			return n
		}
		return fmt.Sprintf("%d bytes, the first %d of version 0's %d and the first %d of version 1's %d",
			len(b), prefix(glbs[0]), len(glbs[0]), prefix(glbs[1]), len(glbs[1]))
	}
	// readFresh reads the .glb from a new open, as a reader who starts
	// after a change does; ESTALE makes it try again (a path walk that
	// raced the change).
	readFresh := func(want int) {
		t.Helper()
		deadline := time.Now().Add(guard)
		for {
			b, err := os.ReadFile(glb)
			if err == nil && bytes.Equal(b, glbs[want]) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("a new reader still gets %v, %s after %v; want version %d", err, which(b), guard, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	readFresh(0)
	const rounds = 9
	outcomes := map[string]int{}
	cur := 0
	for round := range rounds {
		done := make(chan struct{})
		var got []byte
		var rerr error
		go func() {
			defer close(done)
			f, err := os.Open(glb)
			if err != nil {
				rerr = err
				return
			}
			defer f.Close()
			// Cold, as for a first reader: the rest of the file comes
			// from the daemon, not from the pages an earlier read left.
			if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
				rerr = err
				return
			}
			// Half way, the source is overwritten; then read on.
			half := make([]byte, len(glbs[cur])/2)
			if _, err := io.ReadFull(f, half); err != nil {
				rerr = err
				return
			}
			overwrite(1 - cur)
			// Read on at once, or once the watcher has told the kernel,
			// or once a stat of the source is not reused any more.
			time.Sleep([]time.Duration{0, 50 * time.Millisecond, 300 * time.Millisecond}[round%3])
			rest, err := io.ReadAll(f)
			got, rerr = append(half, rest...), err
		}()
		select {
		case <-done:
		case <-time.After(guard):
			fusetest.AbortAt(mnt)
			t.Fatalf("round %d: the reader hangs", round)
		}
		switch {
		case rerr != nil:
			if !errors.Is(rerr, syscall.ESTALE) && !errors.Is(rerr, syscall.EIO) {
				t.Fatalf("round %d: %v, want ESTALE or EIO", round, rerr)
			}
			outcomes[rerr.Error()]++
		case bytes.Equal(got, glbs[cur]):
			outcomes["the old version whole"]++
		default:
			t.Errorf("round %d: a read started on version %d returned %s", round, cur, which(got))
			outcomes["spliced"]++
		}
		cur = 1 - cur
		readFresh(cur)
	}
	t.Logf("%d overwrites during a read: %v", rounds, outcomes)
}
