// Package mountpoint checks the folders of a mount before anything is
// mounted, reads what /proc/self/mountinfo says of a mount, and sets the
// readahead of a mount. It knows nothing of FUSE's protocol.
package mountpoint

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/meshfs/meshfs/internal/store"
)

// prepareMountpoint checks that mnt can be mounted on. A stale FUSE mount
// left by a killed daemon ("transport endpoint is not connected") is
// detached first; a missing or non-folder mount point is a clear error.
func prepareMountpoint(mnt string) error {
	fi, err := os.Stat(mnt)
	if errors.Is(err, syscall.ENOTCONN) {
		if derr := Detach(mnt); derr != nil {
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
// symbolic link and ".." resolved): what Check checked is what is
// mounted and served.
type Paths struct {
	Source, Mountpoint string
	// CacheDir is "" when no cache folder is used: none was asked for, or
	// the one asked for cannot be used (CacheErr says why).
	CacheDir string
	CacheErr error
}

// Check checks the folders of a mount before anything is mounted or
// written, and returns their real paths. The source must be a folder; the
// mount point a folder (a stale FUSE mount there is detached first, see
// prepareMountpoint), not already a mount point, and empty unless nonempty;
// neither may be inside the other (nor the same). The cache folder (unless
// "") may be neither inside nor around either of them, and must be one
// meshfs may use (store.Check: missing, empty or marked as meshfs's):
// those are errors. A cache folder that cannot be reached (no permission)
// is not: the mount runs without it (Paths.CacheErr).
func Check(source, mnt, cacheDir string, nonempty bool) (Paths, error) {
	var p Paths
	src, err := sourceDir(source)
	if err != nil {
		return p, err
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
	return p, checkCache(&p, cacheDir, []string{"source", src, "mount point", m})
}

// CheckServed is Check for a door without a mount point (`meshfs serve`):
// the source must be a folder, and the cache folder is checked as Check
// checks it against the source alone.
func CheckServed(source, cacheDir string) (Paths, error) {
	var p Paths
	src, err := sourceDir(source)
	if err != nil {
		return p, err
	}
	p.Source = src
	return p, checkCache(&p, cacheDir, []string{"source", src})
}

// sourceDir is the real path of the source folder.
func sourceDir(source string) (string, error) {
	src, err := realPath(source)
	if err != nil {
		return "", fmt.Errorf("source: %w", err)
	}
	if fi, err := os.Stat(src); err != nil {
		return "", fmt.Errorf("source: %w", err)
	} else if !fi.IsDir() {
		return "", fmt.Errorf("source %s is not a directory", source)
	}
	return src, nil
}

// checkCache sets p.CacheDir (or p.CacheErr) from cacheDir, which may
// neither be, lie inside nor hold any of the folders given as pairs of
// what and path.
func checkCache(p *Paths, cacheDir string, folders []string) error {
	if cacheDir == "" {
		return nil
	}
	c, err := realPath(cacheDir)
	if err != nil {
		p.CacheErr = fmt.Errorf("cache folder: %w", err)
		return nil
	}
	for i := 0; i+1 < len(folders); i += 2 {
		what, path := folders[i], folders[i+1]
		switch {
		case path == c:
			return fmt.Errorf("cache folder %s is the %s itself: meshfs would write into it; give --cache-dir a folder outside it, or --no-disk-cache", c, what)
		case within(path, c):
			return fmt.Errorf("cache folder %s is inside the %s %s: meshfs would write into it; give --cache-dir a folder outside it, or --no-disk-cache", c, what, path)
		case within(c, path):
			return fmt.Errorf("cache folder %s holds the %s %s: give --cache-dir a folder of its own, or --no-disk-cache", c, what, path)
		}
	}
	if err := store.CheckCacheDir(c); errors.Is(err, store.ErrNotCache) {
		return err
	} else if err != nil {
		p.CacheErr = err
		return nil
	}
	p.CacheDir = c
	return nil
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
	m, ok := Last(mnt)
	if !ok {
		return ""
	}
	return m.FSType + " from " + m.Source
}

// Detach lazily unmounts mnt: directly when we may (root), else through
// fusermount3 (or fusermount).
func Detach(mnt string) error {
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

// ReadaheadKB is the readahead meshfs sets for its mount.
const ReadaheadKB = 1024

// RaiseReadahead sets the readahead of the mount at mnt to 1 MiB, through
// its backing device's sysfs knob (root only; others keep the kernel's
// 128 KiB). FUSE mounts start at 128 KiB whatever the daemon asks, so a
// sequential reader of a big output reaching the daemon (a first read
// under no_open) was sent 128 KiB READs even though they may be 1 MiB
// (MaxWrite): with 1 MiB, a 36 MB .glb read 8 KiB at a time took 38
// READs instead of 278 and ≈ 20 ms instead of ≈ 25.
//
// The device comes from /proc/self/mountinfo, not from a stat of mnt: that
// would put the root's attributes in the kernel's cache, and a stat of a
// mount whose daemon was killed would then succeed instead of telling
// ENOTCONN, which is how the next mount finds a stale one to clear.
func RaiseReadahead(mnt string) {
	m, ok := Last(mnt)
	if !ok {
		return
	}
	knob := "/sys/class/bdi/" + m.Dev + "/read_ahead_kb"
	os.WriteFile(knob, []byte(strconv.Itoa(ReadaheadKB)), 0) // not root, or no sysfs: the default stays
}

// Info is what /proc/self/mountinfo says of one mount.
type Info struct {
	Point          string
	Dev            string // "major:minor"
	FSType, Source string
	// Options are the mount's own options, Super its super options.
	Options, Super []string
}

// Mounts returns every mount of /proc/self/mountinfo, in its order
// (a mount before those made on top of or inside it).
func Mounts() ([]Info, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var ms []Info
	for _, ln := range strings.Split(string(b), "\n") {
		// ID parentID major:minor root mountpoint options [optional...] - fstype source superoptions
		f := strings.Fields(ln)
		if len(f) < 6 {
			continue
		}
		m := Info{Point: Unescape(f[4]), Dev: f[2], Options: strings.Split(f[5], ",")}
		if i := slices.Index(f, "-"); i > 0 && i+2 < len(f) {
			m.FSType, m.Source = f[i+1], Unescape(f[i+2])
			if i+3 < len(f) {
				m.Super = strings.Split(f[i+3], ",")
			}
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// Last returns the last (topmost) mount at mnt in /proc/self/mountinfo,
// if any.
func Last(mnt string) (Info, bool) {
	ms, _ := Mounts()
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Point == mnt {
			return ms[i], true
		}
	}
	return Info{}, false
}

// Unescape undoes mountinfo's octal escapes (\040 for a space).
func Unescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Source is the real path of the source folder src. The links in its path
// are followed once, here, as the user asked: every path beneath it is then
// a real path, and the daemon follows no link (package source).
func Source(src string) (string, error) {
	src, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	if src, err = filepath.EvalSymlinks(src); err != nil {
		return "", fmt.Errorf("source: %w", err)
	}
	fi, err := os.Stat(src)
	if err != nil {
		return "", fmt.Errorf("source: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("source %s is not a directory", src)
	}
	return src, nil
}
