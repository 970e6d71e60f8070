package fusetest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/meshfs/meshfs/internal/mountpoint"
)

// The reaper keeps one rule for a test binary that mounts: nothing it
// started outlives it, however it ends (passing, failing, panicking on
// `go test -timeout`, or killed with SIGKILL). StartReaper gives the
// binary a folder of its own for every temporary file (TMPDIR, so each
// t.TempDir and mount point lies beneath it) and marks its environment,
// which every child inherits; a reaper process, a copy of the binary
// that outlives it, waits for the binary's end (its stdin closes) and
// then aborts every FUSE connection mounted beneath the folder, kills
// every process that carries the mark, detaches the mounts and removes
// the folder.

const (
	// markEnv holds the test binary's folder in it and in every process
	// it starts: the mark the reaper looks for.
	markEnv = "MESHFS_TEST_ROOT"
	// reaperEnv, set, makes the binary the reaper of the folder it names.
	reaperEnv = "MESHFS_TEST_REAPER"
	// parentEnv names the test binary's pid, which the reaper spares.
	parentEnv = "MESHFS_TEST_PARENT"
)

// StartReaper is called first in TestMain. In the reaper copy it reaps
// and exits; in a binary started by a reaped one it does nothing; in the
// test binary it returns stop, which TestMain calls
// after m.Run: stop ends the reaper, which cleans up what the tests left
// (and says what it was on stderr) and removes the folder.
func StartReaper() (stop func()) {
	if root := os.Getenv(reaperEnv); root != "" {
		os.Exit(reap(os.Stdin, root, os.Getenv(parentEnv)))
	}
	none := func() {}
	if os.Getenv(markEnv) != "" {
		return none // started by a reaped binary: its reaper reaps this one too
	}
	root, err := os.MkdirTemp("", "meshfs-test-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "fusetest: no reaper: %v\n", err)
		return none
	}
	os.Chmod(root, 0o755) // children run as nobody reach their files
	pr, pw, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fusetest: no reaper: %v\n", err)
		return none
	}
	self, err := os.Executable()
	if err != nil {
		self = "/proc/self/exe"
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), reaperEnv+"="+root, parentEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pr, os.Stderr, os.Stderr
	// Its own process group: a ^C to the test's group leaves it to clean up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "fusetest: no reaper: %v\n", err)
		return none
	}
	pr.Close()
	os.Setenv("TMPDIR", root)
	os.Setenv(markEnv, root)
	return func() {
		pw.Close()
		cmd.Wait()
	}
}

// reap waits for EOF on in (the test binary's end), then cleans up root.
func reap(in io.Reader, root, parent string) int {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	io.Copy(io.Discard, in)
	spare := map[int]bool{os.Getpid(): true}
	if p, err := strconv.Atoi(parent); err == nil {
		spare[p] = true
	}
	for _, l := range Cleanup(root, spare) {
		fmt.Fprintf(os.Stderr, "fusetest: after the tests: %s\n", l)
	}
	os.RemoveAll(root)
	return 0
}

// Cleanup aborts the FUSE connections of the mounts beneath root, kills
// the processes marked with root (but those in spare), detaches the
// mounts, and returns a line for each thing it found.
func Cleanup(root string, spare map[int]bool) []string {
	var done []string
	mounts := MountsBeneath(root)
	for _, m := range mounts {
		abortDev(m.Dev) // requests in it fail: whatever hangs there returns
	}
	var killed []int
	for _, pid := range Marked(root) {
		if spare[pid] {
			continue
		}
		done = append(done, fmt.Sprintf("killed process %d (%s)", pid, cmdline(pid)))
		syscall.Kill(pid, syscall.SIGKILL)
		killed = append(killed, pid)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		alive := killed[:0]
		for _, pid := range killed {
			if syscall.Kill(pid, 0) == nil && !zombie(pid) {
				alive = append(alive, pid)
			}
		}
		if killed = alive; len(killed) == 0 {
			break
		}
	}
	// Deepest first, so a mount inside another one goes before it.
	for i := len(mounts) - 1; i >= 0; i-- {
		m := mounts[i]
		err := syscall.Unmount(m.Point, syscall.MNT_DETACH)
		if err != nil {
			if out, ferr := exec.Command("fusermount3", "-u", "-z", m.Point).CombinedOutput(); ferr == nil {
				err = nil
			} else {
				err = fmt.Errorf("%v; fusermount3: %v %s", err, ferr, bytes.TrimSpace(out))
			}
		}
		if err != nil {
			done = append(done, fmt.Sprintf("could not unmount %s: %v", m.Point, err))
		} else {
			done = append(done, fmt.Sprintf("unmounted %s (%s)", m.Point, m.FSType))
		}
	}
	return done
}

// AbortAt aborts the FUSE connection of the mount at mnt, found in
// mountinfo: a stat of a hung mount would hang too.
func AbortAt(mnt string) error {
	m, ok := mountpoint.Last(mnt)
	if !ok {
		return fmt.Errorf("%s is not a mount point", mnt)
	}
	return abortDev(m.Dev)
}

// abortDev aborts the FUSE connection of the mount on device dev
// ("major:minor" of mountinfo; a FUSE mount's major is 0).
func abortDev(dev string) error {
	maj, min, ok := strings.Cut(dev, ":")
	n, err := strconv.ParseUint(min, 10, 32)
	if !ok || maj != "0" || err != nil {
		return fmt.Errorf("device %s is no FUSE connection", dev)
	}
	return Abort(uint32(n))
}

// MountsBeneath returns the FUSE mounts at or beneath root, in the order
// of mountinfo (a mount before those inside it).
func MountsBeneath(root string) []mountpoint.Info {
	ms, _ := mountpoint.Mounts()
	var out []mountpoint.Info
	for _, m := range ms {
		if strings.HasPrefix(m.FSType, "fuse") && (m.Point == root || strings.HasPrefix(m.Point, root+"/")) {
			out = append(out, m)
		}
	}
	return out
}

// Marked returns the pids of the processes whose environment holds
// root's mark.
func Marked(root string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	mark := []byte(markEnv + "=" + root + "\x00")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		if bytes.HasPrefix(env, mark) || bytes.Contains(env, append([]byte{0}, mark...)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}

// zombie reports whether pid has exited and waits for its parent.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}
