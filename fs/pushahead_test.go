package fs

import (
	"bytes"
	"context"
	"io"
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

	// Read the first 256 KiB (two requests or more: the kernel reads
	// ahead), let the push finish, then read the rest: all of it comes
	// from the kernel's cache.
	fa, err := os.Open(filepath.Join(mnt, "a"+fakeExt, "a.glb"))
	if err != nil {
		t.Fatal(err)
	}
	defer fa.Close()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(fa, got[:256<<10]); err != nil {
		t.Fatal(err)
	}
	f.pushes.Wait()
	pushed := f.Stats().PushedBytes
	if pushed < int64(len(want))/2 {
		t.Fatalf("pushed %d of %d bytes", pushed, len(want))
	}
	before := f.raw.requests()
	if _, err := io.ReadFull(fa, got[256<<10:]); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the bytes read differ from the conversion's")
	}
	if _, d := requestsSince(f, before); d["READ"] != 0 {
		t.Fatalf("reading the pushed rest sent %v", d)
	}
	// Read again (from the kernel's cache): still the same bytes.
	if got, err := os.ReadFile(filepath.Join(mnt, "a"+fakeExt, "a.glb")); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("second read: %d bytes, %v", len(got), err)
	}
}
