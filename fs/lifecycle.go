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

	"github.com/meshfs/meshfs/fs/diskcache"
)

// prepareMountpoint checks that mnt can be mounted on. A stale FUSE mount
// left by a killed daemon ("transport endpoint is not connected") is
// detached first; a missing or non-folder mount point is a clear error.
func prepareMountpoint(mnt string) error {
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

// Paths are the folders of one mount, as real paths (absolute, with every
// symbolic link and ".." resolved): what CheckPaths checked is what is
// mounted and served.
type Paths struct {
	Source, Mountpoint string
	// CacheDir is "" when no cache folder is used: none was asked for, or
	// the one asked for cannot be used (CacheErr says why).
	CacheDir string
	CacheErr error
}

// CheckPaths checks the folders of a mount before anything is mounted or
// written, and returns their real paths. The source must be a folder; the
// mount point a folder (a stale FUSE mount there is detached first, see
// prepareMountpoint), not already a mount point, and empty unless nonempty;
// neither may be inside the other (nor the same). The cache folder (unless
// "") may be neither inside nor around either of them, and must be one
// meshfs may use (diskcache.Check: missing, empty or marked as meshfs's):
// those are errors. A cache folder that cannot be reached (no permission)
// is not: the mount runs without it (Paths.CacheErr).
func CheckPaths(source, mnt, cacheDir string, nonempty bool) (Paths, error) {
	var p Paths
	src, err := realPath(source)
	if err != nil {
		return p, fmt.Errorf("source: %w", err)
	}
	if fi, err := os.Stat(src); err != nil {
		return p, fmt.Errorf("source: %w", err)
	} else if !fi.IsDir() {
		return p, fmt.Errorf("source %s is not a directory", source)
	}
	absMnt, err := filepath.Abs(mnt)
	if err != nil {
		return p, err
	}
	if err := prepareMountpoint(absMnt); err != nil {
		return p, err
	}
	m, err := realPath(mnt)
	if err != nil {
		return p, fmt.Errorf("mount point: %w", err)
	}
	if what := mountedAt(m); what != "" {
		return p, fmt.Errorf("mount point %s is already a mount point (%s): unmount it first (fusermount3 -u %s, or umount %s as root) or choose another folder", m, what, m, m)
	}
	switch {
	case src == m:
		return p, fmt.Errorf("mount point %s is the source folder itself: the mount would contain itself; mount it elsewhere", mnt)
	case within(src, m):
		return p, fmt.Errorf("mount point %s (%s) is inside the source %s: the mount would contain itself; mount it outside the source", mnt, m, src)
	case within(m, src):
		return p, fmt.Errorf("source %s (%s) is inside the mount point %s: the mount would hide its own source; mount it elsewhere", source, src, m)
	}
	if !nonempty {
		if names := someEntries(m, 3); len(names) > 0 {
			return p, fmt.Errorf("mount point %s is not empty (it holds %s): the mount would hide what it holds; empty it, choose another folder, or add -o nonempty to mount over it", m, strings.Join(names, ", "))
		}
	}
	p.Source, p.Mountpoint = src, m
	if cacheDir == "" {
		return p, nil
	}
	c, err := realPath(cacheDir)
	if err != nil {
		p.CacheErr = fmt.Errorf("cache folder: %w", err)
		return p, nil
	}
	for _, o := range []struct{ what, path string }{{"source", src}, {"mount point", m}} {
		switch {
		case o.path == c:
			return p, fmt.Errorf("cache folder %s is the %s itself: meshfs would write into it; give --cache-dir a folder outside it, or --no-disk-cache", c, o.what)
		case within(o.path, c):
			return p, fmt.Errorf("cache folder %s is inside the %s %s: meshfs would write into it; give --cache-dir a folder outside it, or --no-disk-cache", c, o.what, o.path)
		case within(c, o.path):
			return p, fmt.Errorf("cache folder %s holds the %s %s: give --cache-dir a folder of its own, or --no-disk-cache", c, o.what, o.path)
		}
	}
	if err := diskcache.Check(c); errors.Is(err, diskcache.ErrNotCache) {
		return p, err
	} else if err != nil {
		p.CacheErr = err
		return p, nil
	}
	p.CacheDir = c
	return p, nil
}

// realPath is p made absolute with every symbolic link and ".." resolved
// (in that order, as the kernel walks it: "A/link/.." is link's parent).
// A missing tail is kept as written below its deepest existing folder.
func realPath(p string) (string, error) {
	var missing []string
	q := p
	for {
		r, err := filepath.EvalSymlinks(q)
		if err == nil {
			r, err = filepath.Abs(r)
			if err != nil {
				return "", err
			}
			for i := len(missing) - 1; i >= 0; i-- {
				r = filepath.Join(r, missing[i])
			}
			return r, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		dir, base := filepath.Split(filepath.Clean(q))
		if base == "" || base == "." || base == ".." || dir == q {
			return "", err
		}
		missing = append(missing, base)
		q = dir
		if q == "" {
			q = "."
		}
	}
}

// within reports whether the real path child is inside the real path
// parent (strictly: not equal).
func within(parent, child string) bool {
	if parent == child {
		return false
	}
	if parent == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(child, parent+string(filepath.Separator))
}

// someEntries returns up to n names in folder dir.
func someEntries(dir string, n int) []string {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(n)
	return names
}

// mountedAt describes what is mounted at the real path mnt ("fuse.meshfs
// from /src"), or returns "" when mnt is no mount point.
func mountedAt(mnt string) string {
	m, ok := lastMount(mnt)
	if !ok {
		return ""
	}
	return m.fstype + " from " + m.source
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
