package fs

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/store"
)

// kernelPassthrough reports whether this kernel offers FUSE passthrough
// (Linux ≥ 6.9) to this process (root).
func kernelPassthrough() bool {
	var u syscall.Utsname
	if os.Geteuid() != 0 || syscall.Uname(&u) != nil {
		return false
	}
	var sb strings.Builder
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	f := strings.FieldsFunc(sb.String(), func(r rune) bool { return r < '0' || r > '9' })
	if len(f) < 2 {
		return false
	}
	major, _ := strconv.Atoi(f[0])
	minor, _ := strconv.Atoi(f[1])
	return major > 6 || major == 6 && minor >= 9
}

// mountHandles mounts src in the open-handles mode with a disk cache.
func mountHandles(t *testing.T, src string, noPassthrough bool) (*FS, string) {
	t.Helper()
	f, mnt, _ := mountDiskConfig(t, Config{Source: src, OpenHandles: true, NoPassthrough: noPassthrough}, t.TempDir(), false)
	return f, mnt
}

// openWant opens path and checks that it reads want; the file stays open.
func openWant(t *testing.T, path string, want []byte) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := readHandle(t, f); !bytes.Equal(got, want) {
		f.Close()
		t.Fatalf("%s: %d bytes differ from convert's %d", path, len(got), len(want))
	}
	return f
}

// openSaved opens glb (of the mount at mnt) twice: the first open converts
// and reads from the daemon, since the disk-cache file is written only once
// the readers pause; once it is and that open is released, the second open
// may pass it through (and is returned, open).
func openSaved(t *testing.T, mnt, glb string, want []byte) *os.File {
	t.Helper()
	openWant(t, glb, want).Close()
	if kernelPassthrough() && stats(t, mnt).PassthroughOpens != 0 {
		t.Fatalf("the first open of a fresh conversion was passed through: it must not wait for the disk-cache write")
	}
	waitSaved(t, mnt)
	return openWant(t, glb, want)
}

// waitSaved waits until the mount at mnt has saved every conversion to its
// disk cache and every handle but the one reading stats.json is released.
func waitSaved(t *testing.T, mnt string) {
	t.Helper()
	if !waitFor(5*time.Second, func() bool {
		s := stats(t, mnt)
		return s.DiskSavesPending == 0 && s.OpenHandles <= 1 // stats.json itself
	}) {
		t.Fatalf("conversions never saved to the disk cache, or handles never released: %+v", stats(t, mnt))
	}
}

// waitBytes waits until path reads want (the watcher's event landed).
func waitBytes(t *testing.T, path string, want []byte, what string) {
	t.Helper()
	var got []byte
	var err error
	if !waitFor(5*time.Second, func() bool {
		got, err = os.ReadFile(path)
		return err == nil && bytes.Equal(got, want)
	}) {
		t.Fatalf("%s reads %d bytes (%v), not the %d expected", what, len(got), err, len(want))
	}
}

// bigSources writes a 60 000-triangle GEM mesh (big.ply, seed 0) and a
// random plain file of texSize bytes (big.dds) to a new folder.
func bigSources(t *testing.T, texSize int) (src string, mesh, tex []byte) {
	t.Helper()
	src = t.TempDir()
	mesh, err := meshgen.GEM(60000, 0)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(src, "big.ply"), mesh)
	tex = make([]byte, texSize)
	rand.Read(tex)
	write(t, filepath.Join(src, "big.dds"), tex)
	return src, mesh, tex
}

// glbOf converts a GEM source the way `meshfs convert` does.
func glbOf(t *testing.T, path string) []byte {
	t.Helper()
	m, err := outputs.Open(path)
	if err != nil || m == nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := m.GLBFile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readHandle(t *testing.T, f *os.File) []byte {
	t.Helper()
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<40))
	if err != nil {
		t.Fatalf("%s: %v", f.Name(), err)
	}
	return b
}

// TestPassthrough: in the open-handles mode a big .glb and a plain file
// are passed through (the kernel reads them itself) and read as convert's
// bytes and the source's; an open while another version is passed through
// and still open is served by the daemon (direct io) with the new
// version's bytes, while the old handle keeps reading the old version.
func TestPassthrough(t *testing.T) {
	src, _, tex := bigSources(t, 3<<20)
	sp := filepath.Join(src, "big.ply")
	want1 := glbOf(t, sp)
	if len(want1) < store.PassMin {
		t.Fatalf("the test's .glb is %d bytes, below store.PassMin", len(want1))
	}

	fsys, mnt := mountHandles(t, src, false)
	glb := filepath.Join(mnt, "big.ply", "big.glb")
	g1 := openSaved(t, mnt, glb, want1)
	defer g1.Close()
	if got, err := os.ReadFile(filepath.Join(mnt, "big.dds")); err != nil || !bytes.Equal(got, tex) {
		t.Fatalf("plain file: %d bytes, %v", len(got), err)
	}
	s := stats(t, mnt)
	if kernelPassthrough() {
		if s.PassthroughOpens < 2 || !s.Passthrough || fsys.passOff.Load() {
			t.Fatalf("passthrough: %d opens, in effect %v (passOff %v); want both files passed through",
				s.PassthroughOpens, s.Passthrough, fsys.passOff.Load())
		}
	} else {
		t.Logf("no FUSE passthrough here (not root or Linux < 6.9): checked the fallback only")
	}

	// A new version while g1 (version 1, passed through) is open.
	v2, err := meshgen.GEM(60000, 1)
	if err != nil {
		t.Fatal(err)
	}
	write(t, sp+".tmp", v2)
	later := time.Now().Add(time.Minute)
	os.Chtimes(sp+".tmp", later, later)
	if err := os.Rename(sp+".tmp", sp); err != nil {
		t.Fatal(err)
	}
	want2 := glbOf(t, sp)
	if bytes.Equal(want1, want2) {
		t.Fatal("the two versions convert to the same bytes")
	}
	waitBytes(t, glb, want2, "after the change, the .glb")
	// g1 may be on the replaced source's inode, whose outputs the daemon
	// no longer serves (ESTALE-free reads of what was opened are all it
	// owes): what it returns must be version 1, whole.
	if got := readHandle(t, g1); !bytes.Equal(got, want1) {
		t.Fatalf("the handle opened on version 1 read %d bytes that are not version 1's", len(got))
	}
	g1.Close()

	// Every handle closed and version 2 saved (its first reads came from
	// the daemon): the next open passes version 2 through.
	waitSaved(t, mnt)
	before := stats(t, mnt).PassthroughOpens
	g3, err := os.Open(glb)
	if err != nil {
		t.Fatal(err)
	}
	if got := readHandle(t, g3); !bytes.Equal(got, want2) {
		t.Fatalf("reopened .glb: %d bytes, not version 2's", len(got))
	}
	g3.Close()
	if kernelPassthrough() && stats(t, mnt).PassthroughOpens <= before {
		t.Errorf("version 2 was not passed through once every handle closed")
	}
}

// TestPassthroughSameInodeNewVersion: a source rewritten in place (same
// inode, new mtime) while its .glb is passed through and open: the new
// open must not get the old backing file; it reads the new bytes.
func TestPassthroughSameInodeNewVersion(t *testing.T) {
	src := t.TempDir()
	v1, _ := meshgen.GEM(60000, 0)
	v2, _ := meshgen.GEM(60000, 2)
	sp := filepath.Join(src, "big.ply")
	write(t, sp, v1)
	want1 := glbOf(t, sp)
	_, mnt := mountHandles(t, src, false)
	glb := filepath.Join(mnt, "big.ply", "big.glb")
	g1 := openSaved(t, mnt, glb, want1)
	defer g1.Close()
	// In place: same inode.
	if err := os.WriteFile(sp, v2, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	os.Chtimes(sp, later, later)
	want2 := glbOf(t, sp)
	waitBytes(t, glb, want2, "the new version's .glb")
	// The handle opened before the change still reads version 1 whole
	// (passed through, it reads the disk-cache file of version 1).
	if got := readHandle(t, g1); kernelPassthrough() && !bytes.Equal(got, want1) {
		t.Fatalf("the handle opened on version 1 read %d bytes that are not version 1's", len(got))
	}
}

// TestNoPassthroughFlag: --no-passthrough keeps every read in the daemon.
func TestNoPassthroughFlag(t *testing.T) {
	src := t.TempDir()
	v1, _ := meshgen.GEM(60000, 0)
	sp := filepath.Join(src, "big.ply")
	write(t, sp, v1)
	_, mnt := mountHandles(t, src, true)
	got, err := os.ReadFile(filepath.Join(mnt, "big.ply", "big.glb"))
	if err != nil || !bytes.Equal(got, glbOf(t, sp)) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	if s := stats(t, mnt); s.PassthroughOpens != 0 || s.Passthrough {
		t.Fatalf("passthrough with --no-passthrough: %d opens, %v", s.PassthroughOpens, s.Passthrough)
	}
}
