package fs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestTextureSniffAndError: a .dds without DDS's magic is a plain file
// with no NAME.dds.png; one with it whose header is broken lists its PNG
// until making it fails (EIO to the lookup that tried), then
// NAME.dds.error.txt in
// the PNG's place, the error naming the file and field, and
// .meshfs/errors.txt lists it.
func TestTextureSniffAndError(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		write(t, filepath.Join(src, "fake.dds"), []byte("no texture, just a name"))
		write(t, filepath.Join(src, "bad.dds"), append([]byte("DDS |"), make([]byte, 123)...)) // 0×0 pixels
		write(t, filepath.Join(src, "ok.dds"), ddsOf(t, 16, 8))
		_, mnt := mountT(t, src, Config{})
		if got, want := names(t, mnt), []string{"bad.dds", "bad.dds.png", "fake.dds", "ok.dds", "ok.dds.png"}; !slices.Equal(got, want) {
			t.Fatalf("listing %v, want %v", got, want)
		}
		if _, err := os.Stat(filepath.Join(mnt, "fake.dds.png")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("fake.dds.png: %v, want no such file", err)
		}
		// The first lookup of bad.dds.png (this stat's, or the listing's
		// under READDIRPLUS) makes it and fails with EIO; later ones find no
		// such file.
		if _, err := os.Stat(filepath.Join(mnt, "bad.dds.png")); !errors.Is(err, syscall.EIO) && !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("bad.dds.png: %v, want EIO or no such file", err)
		}
		want := []string{"bad.dds", "bad.dds.error.txt", "fake.dds", "ok.dds", "ok.dds.png"}
		if !waitFor(10*time.Second, func() bool { return slices.Equal(names(t, mnt), want) }) {
			t.Fatalf("listing %v after the failure, want %v", names(t, mnt), want)
		}
		msg, err := os.ReadFile(filepath.Join(mnt, "bad.dds.error.txt"))
		if err != nil || !strings.Contains(string(msg), filepath.Join(src, "bad.dds")) || !strings.Contains(string(msg), "width") {
			t.Errorf("bad.dds.error.txt: %q (%v), want the error naming the file and the field", msg, err)
		}
		if _, err := os.Stat(filepath.Join(mnt, "bad.dds.png")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("bad.dds.png after the failure: %v, want no such file", err)
		}
		list, err := os.ReadFile(filepath.Join(mnt, ".meshfs", "errors.txt"))
		if err != nil || !strings.Contains(string(list), "bad.dds") {
			t.Errorf(".meshfs/errors.txt %q (%v) does not list bad.dds", list, err)
		}
	})
}
