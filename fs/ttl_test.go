package fs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshfs/meshfs/export/outputs"
)

// With the watcher on, names and attributes are cached for a minute by
// default; without it, one second.
func TestDefaultTimeouts(t *testing.T) {
	f, _ := mountT(t, t.TempDir(), Config{})
	if e, a := f.ttl.Effective(); e != watchedTimeout || a != watchedTimeout {
		t.Fatalf("watched: entry %v attr %v, want %v", e, a, watchedTimeout)
	}
	g, _ := mountT(t, t.TempDir(), Config{NoWatch: true})
	if e, a := g.ttl.Effective(); e != defaultTimeout || a != defaultTimeout {
		t.Fatalf("unwatched: entry %v attr %v, want 1s", e, a)
	}
	h, _ := mountT(t, t.TempDir(), Config{AttrTimeout: 3 * time.Second})
	if e, a := h.ttl.Effective(); e != watchedTimeout || a != 3*time.Second {
		t.Fatalf("explicit attr: entry %v attr %v", e, a)
	}
}

// Under the long default timeouts every kind of change in a folder below
// the root, whose entries the kernel has cached, still shows within 1 s:
// the watcher pushes it.
func TestLongTimeoutsSeeChanges(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		sub := filepath.Join(src, "a", "b")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(sub, "plain.txt"), []byte("one"))
		write(t, filepath.Join(sub, "m.fmesh"), fakeMesh(3, 1))
		write(t, filepath.Join(sub, "c.fmesh"), fakeMesh(3, 2))
		write(t, filepath.Join(sub, "c.fmesh.side"), []byte("v1"))
		f, mnt := mountT(t, src, Config{})
		if _, a := f.ttl.Effective(); a != watchedTimeout {
			t.Fatalf("attr timeout %v, want %v", a, watchedTimeout)
		}
		msub := filepath.Join(mnt, "a", "b")
		// Prime the kernel's caches: every name and attribute seen once.
		checkTree(t, mnt)
		hdr := filepath.Join(msub, "m.fmesh", "header.json")
		oldHdr, err := os.ReadFile(hdr)
		if err != nil {
			t.Fatal(err)
		}
		dirBefore, err := os.Stat(msub)
		if err != nil {
			t.Fatal(err)
		}

		t.Run("plain file rewritten", func(t *testing.T) {
			p := filepath.Join(msub, "plain.txt")
			if _, err := os.Stat(p); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(sub, "plain.txt"), []byte("a longer text"))
			if !waitFor(time.Second, func() bool {
				b, err := os.ReadFile(p)
				fi, err2 := os.Stat(p)
				return err == nil && err2 == nil && fi.Size() == 13 && string(b) == "a longer text"
			}) {
				fi, _ := os.Stat(p)
				t.Fatalf("plain file still %d bytes after 1 s", fi.Size())
			}
		})
		t.Run("mesh rewritten", func(t *testing.T) {
			sp := filepath.Join(sub, "m.fmesh")
			write(t, sp, fakeMesh(77, 3))
			m := outputs.New(sp, fakeFormat{})
			want, err := m.Header(m.Scan(t.Context()))
			if err != nil || bytes.Equal(want, oldHdr) {
				t.Fatalf("new header %q, %v", want, err)
			}
			// The new version's header.json, not an intermediate one: a
			// rewrite in place is seen twice (the truncation, then the
			// write). Its folder's files are dropped from the kernel's
			// caches with header.json last, so then all show the new
			// version.
			if !waitFor(time.Second, func() bool {
				b, err := os.ReadFile(hdr)
				fi, err2 := os.Stat(hdr)
				return err == nil && err2 == nil && bytes.Equal(b, want) && fi.Size() == int64(len(b))
			}) {
				t.Fatal("header.json not updated within 1 s")
			}
			checkTree(t, filepath.Join(msub, "m.fmesh"))
		})
		t.Run("mesh appears and vanishes", func(t *testing.T) {
			p := filepath.Join(msub, "new.fmesh", "header.json")
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("before: %v", err)
			}
			write(t, filepath.Join(sub, "new.fmesh"), fakeMesh(4, 1))
			if !waitFor(time.Second, func() bool { _, err := os.Stat(p); return err == nil }) {
				t.Fatal("a new mesh did not appear within 1 s")
			}
			if err := os.Remove(filepath.Join(sub, "new.fmesh")); err != nil {
				t.Fatal(err)
			}
			if !waitFor(time.Second, func() bool { _, err := os.Stat(p); return errors.Is(err, os.ErrNotExist) }) {
				t.Fatal("a removed mesh did not vanish within 1 s")
			}
		})
		t.Run("folder times", func(t *testing.T) {
			// Entries were created and removed above: the folder's mtime moved.
			var want time.Time
			if fi, err := os.Stat(sub); err == nil {
				want = fi.ModTime()
			}
			if want.Equal(dirBefore.ModTime()) {
				t.Fatal("entries were made and removed, and the source folder's mtime did not change")
			}
			if !waitFor(time.Second, func() bool {
				fi, err := os.Stat(msub)
				return err == nil && fi.ModTime().Equal(want)
			}) {
				fi, _ := os.Stat(msub)
				t.Fatalf("folder mtime %v after 1 s, want %v", fi.ModTime(), want)
			}
		})
		t.Run("companion changed", func(t *testing.T) {
			mesh, dir := filepath.Join(sub, "c.fmesh"), filepath.Join(msub, "c.fmesh")
			if d := outputsDiffer(t, mesh, dir); d != "" {
				t.Fatal(d)
			}
			write(t, mesh+".side", []byte("v2, longer"))
			var d string
			if !waitFor(time.Second, func() bool { d = outputsDiffer(t, mesh, dir); return d == "" }) {
				t.Fatalf("after the companion changed: %s; conversions %v", d, stats(t, mnt).Conversions)
			}
		})
	})
}
