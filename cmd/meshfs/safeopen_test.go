package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/meshfs/meshfs/internal/fusetest"
	"github.com/meshfs/meshfs/internal/meshgen"
)

// secretMark starts every line of the secret file: no output may hold it.
const secretMark = "MESHFS-SECRET-"

// hostileSource makes a source folder, 0755, holding a good Transport
// Fever mesh, one whose companion is a link to a root-only 0600 file
// outside the folder (leak.msh.blob -> shadow), one whose companion is a
// FIFO, and a FIFO named like a mesh. It returns the folder.
func hostileSource(t *testing.T) string {
	t.Helper()
	var secret bytes.Buffer
	for i := 0; secret.Len() < 64<<10; i++ {
		fmt.Fprintf(&secret, "%s%06d\n", secretMark, i)
	}
	shadow := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(shadow, secret.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := os.MkdirTemp("", "meshfs-src")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(src) })
	os.Chmod(src, 0o755)
	script, blob, err := meshgen.TFever(1)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"good.msh": script, "good.msh.blob": blob, "leak.msh": script, "f.msh": script} {
		if err := os.WriteFile(filepath.Join(src, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(shadow, filepath.Join(src, "leak.msh.blob"))
	for _, n := range []string{"f.msh.blob", "fifo.msh"} {
		if err := syscall.Mkfifo(filepath.Join(src, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// noSecret fails t for every file under dir that holds the secret.
func noSecret(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(secretMark)) {
				t.Errorf("%s holds bytes of the secret", p)
			}
		}
		return nil
	})
}

// TestConvertRefusesLinksAndFIFOs: `meshfs convert` refuses a companion
// that is a link out of its folder and one that is a FIFO, each with a
// message naming it, never reads the link's target, and does not block
// on a FIFO named on its command line. A link named on the command line
// is followed (the user asked for it): its folder, under the link's name,
// holds what the mount shows of the file it names.
func TestConvertRefusesLinksAndFIFOs(t *testing.T) {
	src := hostileSource(t)
	os.Symlink("good.msh", filepath.Join(src, "named.msh"))
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	args := []string{"convert", "-o", out}
	for _, n := range []string{"good.msh", "leak.msh", "f.msh", "fifo.msh", "named.msh"} {
		args = append(args, filepath.Join(src, n))
	}
	cmd := exec.CommandContext(ctx, meshfsBin, args...)
	stderr, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		fusetest.UnblockFIFOs(src)
		t.Fatalf("convert did not return within %v:\n%s", guard, stderr)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1; output:\n%s", err, stderr)
	}
	for _, want := range []string{
		filepath.Join(src, "leak.msh.blob") + ": blob: offset 0x0: cannot open the companion: a symbolic link, not followed",
		filepath.Join(src, "f.msh.blob") + ": blob: offset 0x0: cannot open the companion: not a regular file (fifo)",
		filepath.Join(src, "fifo.msh") + ": not a regular file (fifo)",
		"converted 2 of 5 files (3 failed",
	} {
		if !strings.Contains(string(stderr), want) {
			t.Errorf("no %q in:\n%s", want, stderr)
		}
	}
	for _, p := range []string{"leak.msh/error.txt", "f.msh/error.txt", "good.msh/good.glb", "named.msh/good.glb"} {
		if _, err := os.Stat(filepath.Join(out, p)); err != nil {
			t.Error(err)
		}
	}
	for _, p := range []string{"leak.msh/leak.glb", "leak.msh/chunks/position.bin", "fifo.msh"} {
		if _, err := os.Stat(filepath.Join(out, p)); err == nil {
			t.Errorf("%s written", p)
		}
	}
	noSecret(t, out)
}

// TestMountAllowOtherLeaksNothing: the attack of a user who can write into
// the asset folder, through a root daemon with allow_other: user nobody
// reads every file of the mount and finds no byte of a root-only file a
// companion links to; FIFOs block nothing. Run under the watchdog, so a
// hang aborts the mount's FUSE connection and fails the test.
func TestMountAllowOtherLeaksNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a root daemon read by user nobody")
	}
	src, mnt := hostileSource(t), mountDir(t)
	d := startMount(t, "-o", "allow_other", "--no-disk-cache", src, mnt)
	fusetest.Watchdog(t, mnt, func() {
		// find lists without following links; cat follows none either.
		rd := exec.Command("sh", "-c", `find "$1" -type f -exec cat {} + ; find "$1" -type f | wc -l`, "sh", mnt)
		rd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var out, errOut bytes.Buffer
		rd.Stdout, rd.Stderr = &out, &errOut
		rd.Run() // some files fail (EIO): their errors are in errOut
		if bytes.Contains(out.Bytes(), []byte(secretMark)) {
			t.Errorf("user nobody read the secret through the mount")
		}
		if !bytes.Contains(out.Bytes(), []byte("glTF")) {
			t.Errorf("user nobody read no .glb: %s", errOut.String())
		}
		e, err := os.ReadFile(filepath.Join(mnt, "leak.msh", "error.txt"))
		if err != nil || !strings.Contains(string(e), "a symbolic link, not followed") {
			t.Errorf("leak.msh/error.txt: %q, %v", e, err)
		}
		e, err = os.ReadFile(filepath.Join(mnt, "f.msh", "error.txt"))
		if err != nil || !strings.Contains(string(e), "not a regular file (fifo)") {
			t.Errorf("f.msh/error.txt: %q, %v", e, err)
		}
	}, src)
	if err := d.stop(t, syscall.SIGTERM); err != nil {
		t.Errorf("daemon: %v\n%s", err, d.stderr)
	}
}
