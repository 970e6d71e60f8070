package fs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/export/outputs"
)

// Under no_open a reader that reads a big output on from its first request
// gets the rest from the kernel's page cache, stored ahead of it: the same
// bytes, far fewer READs. One that stops after its first request makes
// nothing be pushed.
func TestPushAhead(t *testing.T) {
	src := t.TempDir()
	for _, name := range []string{"a", "b"} {
		write(t, filepath.Join(src, name+fakeExt), fakeMesh(100000, 1))
	}
	f, mnt := mountT(t, src, Config{})
	want, err := outputs.New(filepath.Join(src, "a"+fakeExt), fakeFormat{}).GLBFile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 4*pushMin {
		t.Fatalf("glb of %d bytes: too small for the test", len(want))
	}

	// A peek: one request, nothing pushed.
	fb, err := os.Open(filepath.Join(mnt, "b"+fakeExt, "b.glb"))
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 12)
	if _, err := fb.ReadAt(head, 0); err != nil || string(head[:4]) != "glTF" {
		t.Fatalf("peek: %q %v", head, err)
	}
	fb.Close()
	if n := f.Stats().PushedBytes; n != 0 {
		t.Fatalf("a peek pushed %d bytes", n)
	}

	before := f.raw.requests()
	got, err := os.ReadFile(filepath.Join(mnt, "a"+fakeExt, "a.glb"))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes (%v), want %d: same bytes", len(got), err, len(want))
	}
	f.pushes.Wait()
	pushed := f.Stats().PushedBytes
	if pushed < int64(len(want))/2 {
		t.Fatalf("pushed %d of %d bytes", pushed, len(want))
	}
	_, d := requestsSince(f, before)
	if max := int64(len(want)) / (128 << 10) / 2; d["READ"] > max {
		t.Fatalf("%d READs for %d bytes (want at most %d): %v", d["READ"], len(want), max, d)
	}
	t.Logf("pushed %d of %d bytes; requests %v", pushed, len(want), d)
	// Read again (from the kernel's cache): still the same bytes.
	if got, err := os.ReadFile(filepath.Join(mnt, "a"+fakeExt, "a.glb")); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("second read: %d bytes, %v", len(got), err)
	}
}
