package fs

import (
	"context"
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
	"github.com/meshfs/meshfs/internal/mountpoint"
)

// nobody is the unprivileged user the permission tests read as.
const nobody = 65534

// mountOptionsOf returns the mount options and the super options of the
// mount at mnt: its own line of /proc/self/mountinfo (the last mount there).
func mountOptionsOf(t testing.TB, mnt string) (mount, super []string) {
	t.Helper()
	m, ok := mountpoint.Last(mnt)
	if !ok || m.Super == nil {
		t.Fatalf("%s is not in /proc/self/mountinfo", mnt)
	}
	return m.Options, m.Super
}

func hasOption(opts []string, o string) bool {
	for _, x := range opts {
		if x == o {
			return true
		}
	}
	return false
}

// mountOther mounts src with allow_other through fusermount3 (or directly
// when fusermount3 is missing), at a mount point every user can reach, under
// fusetest.Guard, and unmounts it when the test ends.
func mountOther(t *testing.T, src string, cfg Config, mo fuse.MountOptions) (*FS, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("reading as another user needs root")
	}
	cfg.Source = src
	if strings.Contains(t.Name(), "/"+handlesMode) {
		cfg.OpenHandles = true
	}
	if cfg.Log == nil {
		cfg.Log = testLogger(t)
	}
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mnt := reachableDir(t)
	mo.AllowOther = true
	_, err = exec.LookPath("fusermount3")
	mo.DirectMount = err != nil
	mo.Debug = *fuseDebug
	srv, err := f.Mount(mnt, mo)
	if err != nil {
		f.Close()
		cannotMount(t, err)
	}
	t.Cleanup(func() {
		if err := Unmount(srv, mnt); err != nil {
			t.Errorf("unmount: %v", err)
		}
		f.Close()
	})
	fusetest.GuardMount(t, mnt, fusetest.Guard)
	return f, mnt
}

// reachableDir is a fresh folder that every user may enter (t.TempDir's
// are the test user's alone).
func reachableDir(t *testing.T) string {
	t.Helper()
	return decodetest.Reachable(t, t.TempDir())
}

// asNobody runs name with args as user nobody, under a deadline, and
// returns its output and error.
func asNobody(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fusetest.Guard/2)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %v as nobody: not done within %v", name, args, fusetest.Guard/2)
	}
	return string(out), err
}

// wantNobodyDenied checks that nobody cannot read (a file) or list (a
// folder) path: the command fails with "Permission denied".
func wantNobodyDenied(t *testing.T, path string) {
	t.Helper()
	cmd := "cat"
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		cmd = "ls"
	}
	out, err := asNobody(t, cmd, path)
	if err == nil || !strings.Contains(out, "Permission denied") {
		if len(out) > 80 {
			out = out[:80] + "…"
		}
		t.Errorf("nobody: %s %s: %v %q; want Permission denied", cmd, path, err, out)
	}
}

// wantNobodyReads checks that nobody reads path and gets want.
func wantNobodyReads(t *testing.T, path string, want []byte) {
	t.Helper()
	out, err := asNobody(t, "cat", path)
	if err != nil || out != string(want) {
		t.Errorf("nobody: cat %s: %v, %d bytes; want the %d bytes of the source", path, err, len(out), len(want))
	}
}

// wantPerm checks the permission bits path shows (to root, who stats
// anything).
func wantPerm(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Errorf("stat %s: %v", path, err)
		return
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s shows mode %v, want %v", path, got, want)
	}
}

// permTree is a source tree of root-owned files and folders whose modes
// deny user nobody, beside readable ones.
func permTree(t *testing.T) string {
	t.Helper()
	src := reachableDir(t)
	files := map[string]struct {
		b    []byte
		mode os.FileMode
	}{
		"open.txt":                 {[]byte("anyone\n"), 0o644},
		"zero.txt":                 {[]byte("root's 0000 file\n"), 0},
		"private.txt":              {[]byte("root's 0600 file\n"), 0o600},
		"d0700/inner.txt":          {[]byte("inside a 0700 folder\n"), 0o644},
		"d0700/broken.fmesh":       {fakeScanBroken(), 0o644},
		"d0000/inner.txt":          {[]byte("inside a 0000 folder\n"), 0o644},
		"open.fmesh":               {fakeMesh(3, 1), 0o644},
		"private.fmesh":            {fakeMesh(3, 2), 0o600},
		"tf/cube.msh":              {readTestdata(t, "tfever/tf2_cube.msh"), 0o644},
		"tf/cube.msh.blob":         {readTestdata(t, "tfever/tf2_cube.msh.blob"), 0o644},
		"tfsecret/cube.msh":        {readTestdata(t, "tfever/tf2_cube.msh"), 0o644},
		"tfsecret/cube.msh.blob":   {readTestdata(t, "tfever/tf2_cube.msh.blob"), 0o600},
		"tfgroup/cube.msh":         {readTestdata(t, "tfever/tf2_cube.msh"), 0o644},
		"tfgroup/cube.msh.blob":    {readTestdata(t, "tfever/tf2_cube.msh.blob"), 0o640},
		"d0755/open_in_folder.txt": {[]byte("reachable\n"), 0o644},
	}
	for name, f := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, p, f.b)
		if err := os.Chmod(p, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	// Files of nobody's own, readable by nobody alone.
	for _, name := range []string{"mine.txt", "mine.fmesh"} {
		p := filepath.Join(src, name)
		b := []byte("nobody's own\n")
		if name == "mine.fmesh" {
			b = fakeMesh(2, 3)
		}
		write(t, p, b)
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for dir, mode := range map[string]os.FileMode{"d0700": 0o700, "d0000": 0} {
		if err := os.Chmod(filepath.Join(src, dir), mode); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(src, "d0000"), 0o755) })
	return src
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPermissionsAsTheyAre mounts a tree of root's files with allow_other
// alone and reads it as user nobody: modes show as they are (000 included),
// allow_other brought default_permissions, and nobody reads neither root's
// 0000 and 0600 files, nor files inside 0700 and 0000 folders, nor the
// outputs of a 0600 mesh, nor those of a 0644 Transport Fever mesh whose
// .msh.blob is 0600; what is readable at the source stays readable.
func TestPermissionsAsTheyAre(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := permTree(t)
		_, mnt := mountOther(t, src, Config{}, fuse.MountOptions{})
		_, super := mountOptionsOf(t, mnt)
		if !hasOption(super, "default_permissions") || !hasOption(super, "allow_other") {
			t.Errorf("super options %v: want allow_other and default_permissions", super)
		}
		at := func(p string) string { return filepath.Join(mnt, p) }

		wantPerm(t, at("zero.txt"), 0)
		wantPerm(t, at("private.txt"), 0o400)
		wantPerm(t, at("d0000"), 0)
		wantPerm(t, at("d0700"), 0o500)
		wantPerm(t, at("open.txt"), 0o444)
		wantPerm(t, at("private.fmesh"), 0o500)
		wantPerm(t, at("private.fmesh/private.glb"), 0o400)
		wantPerm(t, at("tf/cube.msh"), 0o555)
		wantPerm(t, at("tf/cube.msh/cube.glb"), 0o444)
		wantPerm(t, at("tfsecret/cube.msh"), 0o500)
		wantPerm(t, at("tfsecret/cube.msh/cube.glb"), 0o400)
		wantPerm(t, at("tfsecret/cube.msh/header.json"), 0o400)
		wantPerm(t, at("tfgroup/cube.msh/cube.glb"), 0o440)

		for _, p := range []string{"zero.txt", "private.txt", "d0700", "d0700/inner.txt", "d0000", "d0000/inner.txt",
			"private.fmesh", "private.fmesh/private.glb", "private.fmesh/header.json",
			"tfsecret/cube.msh", "tfsecret/cube.msh/cube.glb", "tfsecret/cube.msh/header.json",
			"tfsecret/cube.msh/chunks/position.bin",
			"tfgroup/cube.msh/cube.glb", "tfgroup/cube.msh/chunks/position.bin"} {
			wantNobodyDenied(t, at(p))
		}
		// .meshfs names broken meshes anywhere and quotes their errors:
		// the daemon's user's alone.
		if _, err := os.ReadDir(at("d0700/broken.fmesh")); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(at(".meshfs/errors.txt")); err != nil || !strings.Contains(string(b), "d0700/broken.fmesh") {
			t.Errorf("root: .meshfs/errors.txt %q %v, want the broken mesh", b, err)
		}
		wantPerm(t, at(".meshfs"), 0o500)
		wantPerm(t, at(".meshfs/errors.txt"), 0o400)
		for _, p := range []string{".meshfs", ".meshfs/errors.txt", ".meshfs/stats.json"} {
			wantNobodyDenied(t, at(p))
		}
		// Root reads them all (and the denials above are not a broken mount).
		for _, p := range []string{"zero.txt", "d0000/inner.txt", "tfsecret/cube.msh/cube.glb", "tfsecret/cube.msh/chunks/position.bin"} {
			if _, err := os.ReadFile(at(p)); err != nil {
				t.Errorf("root: %v", err)
			}
		}
		glb, err := os.ReadFile(at("tf/cube.msh/cube.glb"))
		if err != nil {
			t.Fatal(err)
		}
		wantNobodyReads(t, at("tf/cube.msh/cube.glb"), glb)
		wantNobodyReads(t, at("open.txt"), []byte("anyone\n"))
		wantNobodyReads(t, at("d0755/open_in_folder.txt"), []byte("reachable\n"))
		fglb, err := os.ReadFile(at("open.fmesh/open.glb"))
		if err != nil {
			t.Fatal(err)
		}
		wantNobodyReads(t, at("open.fmesh/open.glb"), fglb)
		// Owners are the source's: nobody reads its own 0600 files and the
		// outputs of its own 0600 mesh, which nobody else could.
		wantNobodyReads(t, at("mine.txt"), []byte("nobody's own\n"))
		mglb, err := os.ReadFile(at("mine.fmesh/mine.glb"))
		if err != nil {
			t.Fatal(err)
		}
		wantNobodyReads(t, at("mine.fmesh/mine.glb"), mglb)
		var st syscall.Stat_t
		if err := syscall.Stat(at("mine.fmesh/header.json"), &st); err != nil || st.Uid != nobody || st.Gid != nobody || st.Mode&0o777 != 0o400 {
			t.Errorf("mine.fmesh/header.json: uid %d gid %d mode %o (%v), want nobody's, 0400", st.Uid, st.Gid, st.Mode&0o777, err)
		}
	})
}

// TestPermissionsCompanionChmod: a companion made private after its mesh
// was read takes the outputs with it (the watcher drops what the kernel
// holds), and made readable again gives them back.
func TestPermissionsCompanionChmod(t *testing.T) {
	src := permTree(t)
	_, mnt := mountOther(t, src, Config{}, fuse.MountOptions{})
	glb := filepath.Join(mnt, "tf/cube.msh/cube.glb")
	want, err := os.ReadFile(glb)
	if err != nil {
		t.Fatal(err)
	}
	wantNobodyReads(t, glb, want)
	if err := os.Chmod(filepath.Join(src, "tf/cube.msh.blob"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !waitFor(10*time.Second, func() bool {
		fi, err := os.Stat(glb)
		return err == nil && fi.Mode().Perm() == 0o400
	}) {
		fi, err := os.Stat(glb)
		t.Fatalf("after chmod 0600 of the blob: %v %v, want mode 0400", fi.Mode(), err)
	}
	wantNobodyDenied(t, glb)
}

// TestNoDefaultPermissions: -o no_default_permissions leaves the kernel's
// checks off, as asked, and says so in the log.
func TestNoDefaultPermissions(t *testing.T) {
	src := permTree(t)
	_, mnt := mountOther(t, src, Config{NoDefaultPermissions: true}, fuse.MountOptions{})
	_, super := mountOptionsOf(t, mnt)
	if hasOption(super, "default_permissions") || !hasOption(super, "allow_other") {
		t.Errorf("super options %v: want allow_other without default_permissions", super)
	}
	if l := logOf(t); !strings.Contains(l, "no_default_permissions") {
		t.Errorf("no warning in the log: %q", l)
	}
}

// TestZeroModeRoot: a mount of a 0000 source folder shows mode 000 at its
// root, not go-fuse's 0755.
func TestZeroModeRoot(t *testing.T) {
	src := t.TempDir()
	if err := os.Chmod(src, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(src, 0o700) })
	_, mnt := mountT(t, src, Config{})
	fusetest.GuardMount(t, mnt, fusetest.Guard)
	var st syscall.Stat_t
	if err := syscall.Stat(mnt, &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&0o7777 != 0 {
		t.Errorf("root of a 0000 source shows mode %o", st.Mode&0o7777)
	}
}
