// Package fusetest holds what the tests of FUSE mounts share: the watchdog
// that turns a hang in a mount into a failed test.
package fusetest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

// connections is where the kernel lists FUSE connections (fusectl).
const connections = "/sys/fs/fuse/connections"

// Conn returns the number of mnt's FUSE connection: the minor of the
// mount's st_dev (an anonymous device, major 0).
func Conn(mnt string) (uint32, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(mnt, &st); err != nil {
		return 0, err
	}
	return unix.Minor(uint64(st.Dev)), nil
}

// Abort aborts FUSE connection n: every request in it, and every one made
// after, fails with ENOTCONN, and the daemon's reads of /dev/fuse end. It
// mounts fusectl first when it is not mounted.
func Abort(n uint32) error {
	dir := connections + "/" + strconv.FormatUint(uint64(n), 10)
	if _, err := os.Stat(dir); err != nil {
		if merr := syscall.Mount("fusectl", connections, "fusectl", 0, ""); merr != nil && merr != syscall.EBUSY {
			return fmt.Errorf("mounting fusectl on %s: %v", connections, merr)
		}
	}
	return os.WriteFile(dir+"/abort", []byte("1"), 0)
}

// Run runs fn, which uses the mount at mnt, on the calling goroutine (so
// fn may call t.Fatal) and returns nil once it returns within limit. If it
// has not by then, Run aborts the mount's FUSE connection, so that
// whatever hangs in it returns (with ENOTCONN), calls unstick (when not
// nil) to free what the abort cannot, and returns an error saying so once
// fn has returned. The connection is found before fn runs, since a stat of
// a hung mount would hang too.
func Run(mnt string, limit time.Duration, unstick func(), fn func()) (err error) {
	n, err := Conn(mnt)
	if err != nil {
		return err
	}
	fired := make(chan error, 1)
	timer := time.AfterFunc(limit, func() {
		aerr := Abort(n)
		if unstick != nil {
			unstick()
		}
		if aerr != nil {
			fired <- fmt.Errorf("hung for %v, and aborting FUSE connection %d failed: %v", limit, n, aerr)
		} else {
			fired <- fmt.Errorf("hung for %v: FUSE connection %d aborted", limit, n)
		}
	})
	defer func() {
		if !timer.Stop() {
			err = <-fired
		}
	}()
	fn()
	return nil
}

// Guard is the limit Watchdog gives a test body: far beyond what any of
// them needs, so it only ever catches a hang. It is not a speed bound.
const Guard = 60 * time.Second

// Watchdog runs fn under Run with limit Guard and fails t if it hung.
// After a hang it also opens every FIFO under fifoDirs (the mount's
// source, and wherever a test keeps a link to each FIFO it renames away)
// for writing, so that a daemon blocked opening one for reading gets its
// open back and the mount can close.
func Watchdog(t testing.TB, mnt string, fn func(), fifoDirs ...string) {
	t.Helper()
	unstick := func() {
		t.Errorf("%s: hung for %v: FUSE connection aborted", mnt, Guard)
		for _, d := range fifoDirs {
			UnblockFIFOs(d)
		}
	}
	if err := Run(mnt, Guard, unstick, fn); err != nil {
		t.Fatalf("%s: %v", mnt, err)
	}
}

// GuardMount aborts the FUSE connection of the mount at mnt if the test
// is still running after limit, and fails the test: a hang then fails it
// instead of wedging the run. It bounds a bug, not a speed.
func GuardMount(t testing.TB, mnt string, limit time.Duration) {
	t.Helper()
	n, err := Conn(mnt)
	if err != nil {
		t.Fatalf("%s: %v", mnt, err)
	}
	timer := time.AfterFunc(limit, func() {
		t.Errorf("still running after %v: aborting the FUSE connection of %s", limit, mnt)
		if err := Abort(n); err != nil {
			t.Errorf("aborting: %v", err)
		}
	})
	t.Cleanup(func() { timer.Stop() })
}

// UnblockFIFOs opens each FIFO under root for writing and closes it, which
// completes any open of it for reading that is blocked waiting for a
// writer (the reader then reads end of file).
func UnblockFIFOs(root string) {
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeNamedPipe != 0 {
			if fd, err := syscall.Open(p, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0); err == nil {
				syscall.Close(fd)
			}
		}
		return nil
	})
}

// LowerNofile sets the soft descriptor limit to n until the test ends.
func LowerNofile(t testing.TB, n uint64) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Skipf("getrlimit: %v", err)
	}
	lim := old
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("setrlimit %d: %v", n, err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}

// LimitWithFree returns the descriptor limit under which exactly free
// descriptor numbers are unused in this process now (a new descriptor
// takes the lowest free number, which must be below the limit).
func LimitWithFree(t testing.TB, free int) uint64 {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	used := map[int]bool{}
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			used[n] = true
		}
	}
	for n := 0; ; n++ {
		if !used[n] {
			if free == 0 {
				return uint64(n)
			}
			free--
		}
	}
}

// NoLeaks is what TestMain exits with after m.Run returned code, once
// every mount was unmounted and closed: 1, saying what is left on stderr,
// when a run that passed left goroutines running (watchers, cache
// maintenance, FUSE loops); else code.
func NoLeaks(code int) int {
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goroutines left after the tests: %v\n", err)
			return 1
		}
	}
	return code
}

// A Mounter is a file system a test mounts (package fs's *FS).
type Mounter interface {
	Mount(mnt string, mo fuse.MountOptions) (*fuse.Server, error)
	Close()
}

// Mount mounts f at a fresh folder (a direct mount as root; debug logs
// go-fuse's requests) and returns the folder. When the test ends it
// unmounts it with unmount, then closes f. A mount that fails closes f
// and ends the test (CannotMount).
func Mount(t testing.TB, f Mounter, unmount func(*fuse.Server, string) error, debug bool) string {
	t.Helper()
	mnt := t.TempDir()
	srv, err := f.Mount(mnt, fuse.MountOptions{DirectMount: os.Geteuid() == 0, Debug: debug})
	if err != nil {
		f.Close()
		CannotMount(t, err)
	}
	t.Cleanup(func() {
		if err := unmount(srv, mnt); err != nil {
			t.Errorf("unmount: %v", err)
		}
		f.Close()
	})
	return mnt
}

// CannotMount ends a test whose mount failed with err: it fails, except
// outside CI on a machine without /dev/fuse, where it skips.
func CannotMount(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") == "" {
		if _, serr := os.Stat("/dev/fuse"); serr != nil {
			t.Skipf("no /dev/fuse here (%v); mount tests need FUSE", serr)
		}
	}
	t.Fatalf("cannot mount: %v", err)
}
