package fs

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/internal/fusetest"
)

// remountRW makes the mount at mnt writable, as root's
// `mount -o remount,rw` does.
func remountRW(t *testing.T, mnt string) {
	t.Helper()
	if err := syscall.Mount("", mnt, "", syscall.MS_REMOUNT|syscall.MS_NOSUID|syscall.MS_NODEV, ""); err != nil {
		decodetest.CannotRun(t, "remount rw: %v", err)
	}
	if opts, _ := mountOptionsOf(t, mnt); !hasOption(opts, "rw") {
		t.Fatalf("remounted, mount options %v", opts)
	}
}

// TestRemountRW: after root remounts the mount read-write, no write reaches
// the source or stays visible to readers. With handles every write open is
// refused (EROFS). Under no_open the kernel opens without asking, so root's
// O_RDWR open succeeds (a known limit), but write() fails and the stores of
// a shared mapping are dropped once written back: another reader then reads
// the source's bytes.
func TestRemountRW(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("remounting needs root")
		}
		src := t.TempDir()
		const text = "hello world\n"
		write(t, filepath.Join(src, "a.txt"), []byte(text))
		write(t, filepath.Join(src, "m"+fakeExt), fakeMesh(2, 1))
		_, mnt := mountT(t, src, Config{})
		fusetest.GuardMount(t, mnt, fusetest.Guard)
		p := filepath.Join(mnt, "a.txt")
		glb := filepath.Join(mnt, "m"+fakeExt, "m.glb")
		wantGLB, err := os.ReadFile(glb)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != text {
			t.Fatalf("a.txt: %q %v", b, err)
		}
		remountRW(t, mnt)

		for _, path := range []string{p, glb} {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if strings.HasSuffix(t.Name(), "/"+handlesMode) {
				if !errors.Is(err, syscall.EROFS) {
					t.Errorf("%s: O_RDWR open with handles: %v, want EROFS", path, err)
				}
				if err == nil {
					f.Close()
				}
				continue
			}
			if err == nil {
				f.Close()
			}
			// The writes run in a process of their own (mmapHelper).
			out, err := exec.Command(mmapHelper(t), "-w", path).CombinedOutput()
			if err != nil || strings.Contains(string(out), "write went through") {
				t.Errorf("%s: writing: %v %s", path, err, out)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(src, "a.txt")); string(b) != text {
			t.Fatalf("the source changed: %q", b)
		}
		if !waitFor(10*time.Second, func() bool {
			b, err := os.ReadFile(p)
			return err == nil && string(b) == text
		}) {
			b, err := os.ReadFile(p)
			t.Errorf("a.txt reads %q %v after a refused write, want %q", b, err, text)
		}
		if !waitFor(10*time.Second, func() bool {
			b, err := os.ReadFile(glb)
			return err == nil && string(b) == string(wantGLB)
		}) {
			b, _ := os.ReadFile(glb)
			t.Errorf("m.glb reads %.8q… after a refused write, want its conversion", b)
		}
	})
}

// TestRemountRWOthersRefused: after root remounts an allow_other mount
// read-write, other users still cannot open a file for writing, even one
// whose source is 0666: no file shows a write bit, and default_permissions
// has the kernel check that (under no_open, where it does not ask us).
func TestRemountRWOthersRefused(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := reachableDir(t)
		p := filepath.Join(src, "open.txt")
		write(t, p, []byte("anyone\n"))
		if err := os.Chmod(p, 0o666); err != nil {
			t.Fatal(err)
		}
		_, mnt := mountOther(t, src, Config{}, fuse.MountOptions{})
		at := filepath.Join(mnt, "open.txt")
		// The first open of the connection (no_open begins with it).
		if b, err := os.ReadFile(at); err != nil || string(b) != "anyone\n" {
			t.Fatalf("open.txt: %q %v", b, err)
		}
		remountRW(t, mnt)
		wantPerm(t, at, 0o444)
		out, err := asNobody(t, "sh", "-c", `exec 3<>"$1" && echo opened`, "sh", at)
		if err == nil || !strings.Contains(out, "Permission denied") {
			t.Errorf("nobody: O_RDWR open after remount,rw: %v %q, want Permission denied", err, out)
		}
		if b, _ := os.ReadFile(p); string(b) != "anyone\n" {
			t.Errorf("the source changed: %q", b)
		}
	})
}
