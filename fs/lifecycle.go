package fs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// PrepareMountpoint checks that mnt can be mounted on. A stale FUSE mount
// left by a killed daemon ("transport endpoint is not connected") is
// detached first; a missing or non-folder mount point is a clear error.
func PrepareMountpoint(mnt string) error {
	fi, err := os.Stat(mnt)
	if errors.Is(err, syscall.ENOTCONN) {
		if derr := detach(mnt); derr != nil {
			return fmt.Errorf("mount point %s is a stale FUSE mount (transport endpoint is not connected) and could not be cleared: %v; run: fusermount3 -uz %s", mnt, derr, mnt)
		}
		fi, err = os.Stat(mnt)
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("mount point %s does not exist (create it first: mkdir -p %s)", mnt, mnt)
	case errors.Is(err, syscall.ENOTCONN):
		return fmt.Errorf("mount point %s is still a stale FUSE mount after detaching it; run: fusermount3 -uz %s", mnt, mnt)
	case err != nil:
		return fmt.Errorf("mount point: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("mount point %s is not a directory", mnt)
	}
	return nil
}

// CheckNesting refuses a mount point inside the source folder: the mount
// would mirror itself, and every walk of it would recurse into the daemon.
func CheckNesting(source, mnt string) error {
	src, err := filepath.EvalSymlinks(source)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	m, err := filepath.EvalSymlinks(mnt)
	if err != nil {
		return fmt.Errorf("mount point: %w", err)
	}
	if rel, err := filepath.Rel(src, m); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
		return fmt.Errorf("mount point %s is inside the source %s: the mount would contain itself", mnt, source)
	}
	return nil
}

// detach lazily unmounts mnt: directly when we may (root), else through
// fusermount3 (or fusermount).
func detach(mnt string) error {
	if err := syscall.Unmount(mnt, syscall.MNT_DETACH); err == nil {
		return nil
	}
	var last error
	for _, bin := range []string{"fusermount3", "fusermount"} {
		path, err := exec.LookPath(bin)
		if err != nil {
			last = err
			continue
		}
		out, err := exec.Command(path, "-u", "-z", mnt).CombinedOutput()
		if err == nil {
			return nil
		}
		last = fmt.Errorf("%s -uz: %v: %s", bin, err, out)
	}
	return last
}

// Unmount unmounts srv's mount point, falling back to a lazy unmount when
// the file system is busy, and waits until the server has stopped serving
// (when it could unmount cleanly).
func Unmount(srv *fuse.Server, mnt string) error {
	if err := srv.Unmount(); err != nil {
		if derr := detach(mnt); derr != nil {
			return fmt.Errorf("unmount %s: %v; lazy unmount: %v", mnt, err, derr)
		}
		return nil
	}
	srv.Wait()
	return nil
}
