package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/internal/fusetest"
	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/mountpoint"
)

// The mount command is tested as users run it: the binary, built here, in
// a child process. A race-built test binary (make test-race) builds it with
// the race detector too; the children then write their race reports to
// raceLog.PID (GORACE log_path), and any report fails the run: the test
// that started that daemon, or TestMain for a child no test waited for.

var meshfsBin, raceLog string

// buildArgs are the arguments of `go build` that make out from pkg, with
// -race when this test binary has it.
func buildArgs(out, pkg string) []string {
	args := []string{"build"}
	if raceBuilt {
		args = append(args, "-race")
	}
	return append(args, "-o", out, pkg)
}

func TestMain(m *testing.M) {
	stop := fusetest.StartReaper()
	if os.Getenv("MESHFS_RACE") != "" && !raceBuilt {
		// make test-race sets it: its go test lost -race.
		fmt.Fprintln(os.Stderr, "MESHFS_RACE is set but this test binary is not race-built (go test -race)")
		os.Exit(2)
	}
	if os.Getenv(faultServerEnv) != "" {
		os.Exit(m.Run()) // a fault server (soakfault_test.go) needs no daemon
	}
	dir, err := os.MkdirTemp("", "meshfs-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Chmod(dir, 0o755)
	// The binary's default cache folder is under XDG_CACHE_HOME: a
	// temporary one, never the user's real cache. Go's build cache is
	// found there too when GOCACHE is unset: it is pinned first, so the
	// build below and the tests' own go commands reuse it instead of
	// building the standard library anew.
	if os.Getenv("GOCACHE") == "" {
		if c, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
			os.Setenv("GOCACHE", strings.TrimSpace(string(c)))
		}
	}
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	meshfsBin = filepath.Join(dir, "meshfs")
	out, err := exec.Command("go", buildArgs(meshfsBin, ".")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building meshfs: %v\n%s", err, out)
		os.Exit(2)
	}
	if raceBuilt {
		raceLog = filepath.Join(dir, "race")
		os.Setenv("GORACE", "log_path="+raceLog)
	}
	code := m.Run()
	if reports, _ := filepath.Glob(raceLog + ".*"); raceLog != "" && len(reports) > 0 {
		for _, r := range reports {
			b, _ := os.ReadFile(r)
			fmt.Fprintf(os.Stderr, "race report of a child (%s):\n%s\n", r, b)
		}
		code = 1
	}
	os.RemoveAll(dir)
	stop()
	os.Exit(code)
}

// raceReport returns the race report of the child pid, if it wrote one,
// and removes it (so TestMain does not report it again).
func raceReport(pid int) (string, bool) {
	if raceLog == "" {
		return "", false
	}
	r := fmt.Sprintf("%s.%d", raceLog, pid)
	b, err := os.ReadFile(r)
	if err != nil {
		return "", false
	}
	os.Remove(r)
	return string(b), true
}

// rssBounded reports whether the daemon's memory bounds apply: not to a
// race-built daemon, whose memory the race detector multiplies (5-10×,
// by Go's documentation); the plain run checks them.
func rssBounded(t *testing.T) bool {
	if raceBuilt {
		t.Log("race-built daemon: its memory bound is not checked here")
	}
	return !raceBuilt
}

// checkRace fails t with the race report of the child pid, if any.
func checkRace(t *testing.T, pid int) {
	t.Helper()
	if r, ok := raceReport(pid); ok {
		t.Errorf("the race detector reported in process %d:\n%s", pid, r)
	}
}

func canMount(t *testing.T) {
	t.Helper()
	if os.Getenv("CI") == "" {
		if _, err := os.Stat("/dev/fuse"); err != nil {
			t.Skip("no /dev/fuse: mount tests need FUSE")
		}
	}
}

// daemon is one running `meshfs mount`.
type daemon struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	pid    int
}

// guard bounds how long a test waits for a child that misbehaves, so a
// bug fails the test instead of hanging it. It is not a performance bound.
const guard = 30 * time.Second

func startMount(t *testing.T, args ...string) *daemon {
	t.Helper()
	return startMountCmd(t, exec.Command(meshfsBin, append([]string{"mount"}, args...)...))
}

// startMountCmd starts cmd, a `meshfs mount` (perhaps through a wrapper
// that execs it), and waits until it has mounted.
func startMountCmd(t *testing.T, cmd *exec.Cmd) *daemon {
	t.Helper()
	canMount(t)
	args := cmd.Args[1:]
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if l := readyLine(t, cmd, out, &stderr); !strings.Contains(l, "mounted on") {
		cmd.Wait()
		t.Fatalf("meshfs mount %v: %q\n%s", args, l, stderr.String())
	}
	d := &daemon{cmd: cmd, stderr: &stderr, pid: cmd.Process.Pid}
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			d.cmd.Process.Signal(syscall.SIGTERM)
			d.cmd.Wait()
		}
		checkRace(t, d.pid)
	})
	return d
}

// readyLine is the first line the started cmd writes on out (the rest is
// read and dropped); a cmd that writes none within guard is killed and
// fails t.
func readyLine(t testing.TB, cmd *exec.Cmd, out io.Reader, stderr *bytes.Buffer) string {
	t.Helper()
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- l
		io.Copy(io.Discard, out)
	}()
	select {
	case l := <-line:
		return l
	case <-time.After(guard):
		cmd.Process.Kill()
		t.Fatalf("%v: not ready after %v\n%s", cmd.Args, guard, stderr.String())
	}
	return ""
}

func (d *daemon) stop(t *testing.T, sig syscall.Signal) error {
	t.Helper()
	d.cmd.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(guard):
		d.cmd.Process.Kill()
		t.Fatalf("daemon did not exit on %v within %v", sig, guard)
	}
	return nil
}

// mounted reports whether mnt is a mount point now.
func mounted(t *testing.T, mnt string) bool {
	t.Helper()
	_, ok := mountOptions(t, mnt)
	return ok
}

// mountOptions returns the options of the mount on mnt (the per-mount and
// the filesystem's, from its own line of /proc/self/mountinfo), and whether
// mnt is a mount point.
func mountOptions(t *testing.T, mnt string) ([]string, bool) {
	t.Helper()
	m, ok := mountpoint.Last(mnt)
	if !ok {
		return nil, false
	}
	return append(append([]string(nil), m.Options...), m.Super...), true
}

func sourceTree(t *testing.T) string {
	t.Helper()
	src, err := os.MkdirTemp("", "meshfs-src")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(src) })
	os.Chmod(src, 0o755)
	b, err := meshgen.GEM(2000, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "ground.ply"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "notes.txt"), []byte("plain\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}

func mountDir(t *testing.T) string {
	t.Helper()
	mnt, err := os.MkdirTemp("", "meshfs-mnt")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(mnt, 0o755)
	t.Cleanup(func() {
		if mounted(t, mnt) {
			exec.Command("umount", "-l", mnt).Run()
		}
		os.Remove(mnt)
	})
	return mnt
}

func readGLB(t *testing.T, mnt string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mnt, "ground.ply", "ground.glb"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 12 || string(b[:4]) != "glTF" {
		t.Fatalf("ground.glb: %d bytes, %q", len(b), b[:min(4, len(b))])
	}
	return b
}

func TestMountSIGTERMUnmounts(t *testing.T) {
	src, mnt := sourceTree(t), mountDir(t)
	d := startMount(t, "--debug", src, mnt)
	readGLB(t, mnt)
	if b, err := os.ReadFile(filepath.Join(mnt, "notes.txt")); err != nil || string(b) != "plain\n" {
		t.Fatalf("notes.txt %q %v", b, err)
	}
	if err := d.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, d.stderr)
	}
	if mounted(t, mnt) {
		t.Fatal("SIGTERM left the mount behind")
	}
	// --debug logs the FUSE operations.
	if log := d.stderr.String(); !strings.Contains(log, `LOOKUP`) || !strings.Contains(log, `"notes.txt"`) {
		t.Fatalf("--debug log lacks the lookups:\n%.2000s", log)
	}
}

func TestMountSIGINTWhileBusy(t *testing.T) {
	src, mnt := sourceTree(t), mountDir(t)
	d := startMount(t, src, mnt)
	// A reader holding a file open makes a plain unmount fail (EBUSY): the
	// daemon falls back to a lazy one.
	f, err := os.Open(filepath.Join(mnt, "notes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	err = d.stop(t, syscall.SIGINT)
	f.Close()
	if err != nil {
		t.Fatalf("exit after SIGINT: %v\n%s", err, d.stderr)
	}
	if mounted(t, mnt) {
		t.Fatal("SIGINT left the mount behind")
	}
}

func TestMountOverKilledDaemon(t *testing.T) {
	src, mnt := sourceTree(t), mountDir(t)
	d := startMount(t, src, mnt)
	readGLB(t, mnt)
	d.stop(t, syscall.SIGKILL)
	if _, err := os.Stat(mnt); !errors.Is(err, syscall.ENOTCONN) {
		t.Logf("after SIGKILL, stat gives %v (expected a stale mount)", err)
	}
	d2 := startMount(t, src, mnt)
	readGLB(t, mnt)
	if err := d2.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if mounted(t, mnt) {
		t.Fatal("mount left behind")
	}
}

func TestMountMissingMountpoint(t *testing.T) {
	canMount(t)
	src := sourceTree(t)
	missing := filepath.Join(t.TempDir(), "nope")
	out, err := exec.Command(meshfsBin, "mount", src, missing).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "does not exist") {
		t.Fatalf("missing mount point: %v\n%s", err, out)
	}
	out, err = exec.Command(meshfsBin, "mount", filepath.Join(src, "nope"), t.TempDir()).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "source") {
		t.Fatalf("missing source: %v\n%s", err, out)
	}
	inside := filepath.Join(src, "sub")
	os.Mkdir(inside, 0o755)
	out, err = exec.Command(meshfsBin, "mount", src, inside).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "inside the source") {
		t.Fatalf("mount point inside the source: %v\n%s", err, out)
	}
	out, err = exec.Command(meshfsBin, "mount", "-o", "bogus_option", src, t.TempDir()).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "bogus_option") {
		t.Fatalf("unknown option: %v\n%s", err, out)
	}
}

// daemonPid reads "pid N" from a --daemon's output line.
func daemonPid(t *testing.T, out string) int {
	t.Helper()
	i := strings.Index(out, "pid ")
	if i < 0 {
		t.Fatalf("no pid in %q", out)
	}
	f := strings.FieldsFunc(out[i+4:], func(r rune) bool { return r < '0' || r > '9' })
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

func stopPid(t *testing.T, pid int, mnt string) {
	t.Helper()
	syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(guard)
	for mounted(t, mnt) || syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("daemon %d did not unmount %s", pid, mnt)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMountHelperDaemon runs the binary as mount(8) would for an fstab line
// of type meshfs: it must return only once the mount is ready.
func TestMountHelperDaemon(t *testing.T) {
	canMount(t)
	src, mnt := sourceTree(t), mountDir(t)
	helper := filepath.Join(t.TempDir(), "mount.meshfs")
	if err := os.Symlink(meshfsBin, helper); err != nil {
		t.Fatal(err)
	}
	logf := filepath.Join(t.TempDir(), "log")
	out, err := exec.Command(helper, src, mnt, "-n", "-o", "ro,nosuid,nodev,allow_other,cache_size=64M,nofail,log="+logf).CombinedOutput()
	if err != nil {
		t.Fatalf("mount.meshfs: %v\n%s", err, out)
	}
	pid := daemonPid(t, string(out))
	defer stopPid(t, pid, mnt)
	// Ready means ready: no waiting here.
	readGLB(t, mnt)
	b, err := os.ReadFile(filepath.Join(mnt, ".meshfs", "stats.json"))
	if err != nil || !bytes.Contains(b, []byte(`"budget_bytes": 67108864`)) {
		t.Fatalf("stats.json: %v\n%s", err, b)
	}
	if opts, _ := mountOptions(t, mnt); !slices.Contains(opts, "allow_other") {
		t.Errorf("allow_other not in the options of the mount on %s: %v", mnt, opts)
	}
}

// TestMountAsUser mounts through fusermount3 as an unprivileged user.
func TestMountAsUser(t *testing.T) {
	canMount(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to an unprivileged user")
	}
	if _, err := exec.LookPath("fusermount3"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("fusermount3 is not installed (apt-get install fuse3)")
		}
		t.Skip("fusermount3 is not installed")
	}
	if fi, err := os.Stat("/dev/fuse"); err == nil && fi.Mode().Perm()&0o006 != 0o006 {
		// fusermount3 opens /dev/fuse as the user; distributions make it
		// 0666, some containers do not (.ci/run makes it 0666, as udev does).
		if os.Getenv("CI") != "" {
			t.Fatalf("/dev/fuse is %v: no user may mount through fusermount3 (chmod 0666 /dev/fuse)", fi.Mode().Perm())
		}
		t.Skipf("/dev/fuse is %v here: no user may mount through fusermount3 on this machine", fi.Mode().Perm())
	}
	src, mnt := sourceTree(t), mountDir(t)
	const nobody = 65534
	os.Chown(mnt, nobody, nobody)
	cmd := exec.Command(meshfsBin, "mount", "--daemon", src, mnt)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mount as nobody: %v\n%s", err, out)
	}
	pid := daemonPid(t, string(out))
	// A user mount without allow_other is for its owner only: check it
	// through a reader running as that user.
	rd := exec.Command("cat", filepath.Join(mnt, "ground.ply", "ground.glb"))
	rd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	glb, err := rd.Output()
	if err != nil || string(glb[:4]) != "glTF" {
		t.Fatalf("reading as nobody: %v", err)
	}
	if opts, _ := mountOptions(t, mnt); !slices.Contains(opts, "user_id=65534") {
		t.Errorf("the mount on %s is not nobody's: %v", mnt, opts)
	}
	stopPid(t, pid, mnt)
}

// vmHWM reads a process's peak resident set, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			f := strings.Fields(rest)
			kb, _ := strconv.ParseInt(f[0], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestMemoryBound reads outputs totalling well over twice the cache budget
// and checks the daemon's peak RSS stays within budget + 150 MiB.
func TestMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and converts about 90 MB of meshes")
	}
	src, mnt := sourceTree(t), mountDir(t)
	const budget = 32 << 20
	const meshes = 12
	for i := range meshes {
		b, err := meshgen.GEM(100_000, float32(i))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("m%02d.ply", i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := startMount(t, "--cache-size", strconv.Itoa(budget), src, mnt)
	var total int64
	for i := range meshes {
		for _, ext := range []string{"glb", "obj"} {
			p := filepath.Join(mnt, fmt.Sprintf("m%02d.ply", i), fmt.Sprintf("m%02d.%s", i, ext))
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			total += int64(len(b))
		}
	}
	peak := vmHWM(t, d.pid)
	t.Logf("read %d MiB of outputs through a %d MiB cache; daemon peak RSS %d MiB", total>>20, budget>>20, peak>>20)
	if total < 2*budget {
		t.Fatalf("read only %d bytes: not twice the budget", total)
	}
	if limit := int64(budget + 150<<20); peak > limit && rssBounded(t) {
		t.Fatalf("peak RSS %d MiB over budget + 150 MiB", peak>>20)
	}
	st, _ := os.ReadFile(filepath.Join(mnt, ".meshfs", "stats.json"))
	if !bytes.Contains(st, []byte(`"gem-ply/glb": 12`)) {
		t.Errorf("stats: %s", st)
	}
}

// The kernel opens files itself by default; --open-handles and -o
// open_handles make every open reach the daemon (stats.json says which,
// and counts the OPEN requests).
func TestMountOpenHandles(t *testing.T) {
	for _, c := range []struct {
		args []string
		mode string
	}{
		{nil, "no_open"},
		{[]string{"--open-handles"}, "handles"},
		{[]string{"-o", "ro,open_handles"}, "handles"},
	} {
		src, mnt := sourceTree(t), mountDir(t)
		d := startMount(t, append(c.args, src, mnt)...)
		for range 3 {
			readGLB(t, mnt)
		}
		var s struct {
			OpenMode string           `json:"open_mode"`
			Requests map[string]int64 `json:"fuse_requests"`
		}
		b, err := os.ReadFile(filepath.Join(mnt, ".meshfs", "stats.json"))
		if err == nil {
			err = json.Unmarshal(b, &s)
		}
		if err != nil || s.OpenMode != c.mode {
			t.Fatalf("%v: stats.json %v, open_mode %q, want %q\n%s", c.args, err, s.OpenMode, c.mode, b)
		}
		// Three reads of the .glb: three opens with handles; without, the
		// first open of the connection is asked (and told ENOSYS), no other.
		if opens := s.Requests["OPEN"]; (c.mode == "handles" && opens < 3) || (c.mode == "no_open" && opens > 1) {
			t.Fatalf("%v: %d OPEN requests for 3 reads in mode %s: %v", c.args, opens, c.mode, s.Requests)
		}
		if err := d.stop(t, syscall.SIGTERM); err != nil {
			t.Fatalf("exit: %v\n%s", err, d.stderr)
		}
	}
}

// superOptions returns the super options of the mount at mnt: its own line
// of /proc/self/mountinfo.
func superOptions(t *testing.T, mnt string) []string {
	t.Helper()
	m, ok := mountpoint.Last(mnt)
	if !ok || m.Super == nil {
		t.Fatalf("%s is not in /proc/self/mountinfo", mnt)
	}
	return m.Super
}

// TestMountAllowOtherChecksPermissions: -o allow_other alone mounts with
// default_permissions; -o no_default_permissions leaves it off and warns;
// asking for both is refused. --help's fstab line is the safe form.
func TestMountAllowOtherChecksPermissions(t *testing.T) {
	src := sourceTree(t)
	mnt := mountDir(t)
	d := startMount(t, "-o", "allow_other", "--no-disk-cache", src, mnt)
	if super := superOptions(t, mnt); !slices.Contains(super, "allow_other") || !slices.Contains(super, "default_permissions") {
		t.Errorf("-o allow_other: super options %v, want allow_other and default_permissions", super)
	}
	if err := d.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, d.stderr)
	}

	d = startMount(t, "-o", "allow_other,no_default_permissions", "--no-disk-cache", src, mnt)
	if super := superOptions(t, mnt); !slices.Contains(super, "allow_other") || slices.Contains(super, "default_permissions") {
		t.Errorf("-o allow_other,no_default_permissions: super options %v", super)
	}
	if err := d.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, d.stderr)
	}
	if !strings.Contains(d.stderr.String(), "no_default_permissions: every user may read every file") {
		t.Errorf("no warning logged:\n%s", d.stderr)
	}

	out, err := exec.Command(meshfsBin, "mount", "-o", "default_permissions,no_default_permissions", src, mnt).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "contradict") {
		t.Errorf("both options: %v %s", err, out)
	}
	if mounted(t, mnt) {
		t.Error("mounted with contradicting options")
	}
	help, err := exec.Command(meshfsBin, "mount", "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(help), "meshfs  ro,allow_other,default_permissions,") {
		t.Errorf("--help's fstab line lacks default_permissions (%v):\n%s", err, help)
	}
}
