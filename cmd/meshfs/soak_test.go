package main

// The soak (issue 7): readers doing cat, pread, mmap and grep -r over a
// mounted tree of over 1 000 meshes while this process rewrites, renames
// and deletes source files every second. Every read must be the bytes
// `convert` makes of one version of its source, whole, at the size fstat
// gave; the daemon's RSS must stay within the cache budget + 150 MiB. A
// file may be gone only where the mutator made it so: a hot file's name
// absent at its open, or its version replaced under a reader (ESTALE; for
// mmap a fault whose read then says so), at most once per reader per
// change. Any other error, EIO included, fails the soak.
//
// `go test` runs a short form (a few seconds); MESHFS_SOAK=10m (any Go
// duration) runs the full one (`make soak`).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/readcycles"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

const (
	soakDirs     = 10  // folders of static meshes
	soakPerDir   = 100 // static meshes per folder
	soakHot      = 24  // meshes the mutator changes, in hot/
	soakVersions = 3   // contents each hot mesh cycles through
	soakBudget   = 64 << 20
	soakReaders  = 8
)

// soakTree is the source tree and what `convert` makes of every version
// of every file in it: output path (relative to the mount) → the possible
// contents.
type soakTree struct {
	src    string
	want   map[string][][]byte
	paths  []string // every output path, static and hot
	hot    [soakHot][soakVersions][]byte
	static []string // folders of static meshes
}

func hotName(i int, renamed bool) string {
	if renamed {
		return fmt.Sprintf("h%02d-r.ply", i)
	}
	return fmt.Sprintf("h%02d.ply", i)
}

// expect records what `convert` (the tree of the folder: vfstest.Folder)
// makes of b when it is the source file rel: converted from a copy at the
// same relative path in a scratch tree, as the user would run `meshfs
// convert`.
func (st *soakTree) expect(t testing.TB, scratch, rel string, b []byte) {
	t.Helper()
	p := filepath.Join(scratch, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	made, err := vfstest.Folder(context.Background(), vfstest.Tree(t, scratch, nil), filepath.ToSlash(rel))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	for _, f := range made {
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		k := filepath.Join(rel, filepath.FromSlash(f.Name))
		if _, seen := st.want[k]; !seen {
			st.paths = append(st.paths, k)
		}
		if !slices.ContainsFunc(st.want[k], func(have []byte) bool { return bytes.Equal(have, f.Data) }) {
			st.want[k] = append(st.want[k], f.Data)
		}
	}
}

func newSoakTree(t testing.TB) *soakTree {
	t.Helper()
	src, err := os.MkdirTemp("", "meshfs-soak-src")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(src, 0o755)
	t.Cleanup(func() { os.RemoveAll(src) })
	scratch := t.TempDir()
	st := &soakTree{src: src, want: map[string][][]byte{}}
	for d := range soakDirs {
		dir := fmt.Sprintf("d%02d", d)
		st.static = append(st.static, dir)
		for i := range soakPerDir {
			b, err := meshgen.GEM(20+(i%7)*10, float32(d*soakPerDir+i))
			if err != nil {
				t.Fatal(err)
			}
			rel := filepath.Join(dir, fmt.Sprintf("m%03d.ply", i))
			write(t, filepath.Join(src, rel), b)
			st.expect(t, scratch, rel, b)
		}
	}
	for i := range soakHot {
		for v := range soakVersions {
			b, err := meshgen.GEM(30+v*40, float32(1000*i+v))
			if err != nil {
				t.Fatal(err)
			}
			st.hot[i][v] = b
			for _, renamed := range []bool{false, true} {
				st.expect(t, scratch, filepath.Join("hot", hotName(i, renamed)), b)
			}
		}
		write(t, filepath.Join(src, "hot", hotName(i, false)), st.hot[i][0])
	}
	return st
}

func write(t testing.TB, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// mutate changes a few hot meshes: a rewrite (the new version written
// beside it and renamed over it, as editors and tools save), a rename, or
// a delete (the next change of that mesh writes it again).
func (st *soakTree) mutate(rng *rand.Rand, state *[soakHot][2]int) (n int, err error) {
	for range 6 {
		i := rng.IntN(soakHot)
		renamed, present := state[i][0] == 1, state[i][1] >= 0
		cur := filepath.Join(st.src, "hot", hotName(i, renamed))
		switch op := rng.IntN(3); {
		case !present || op == 0: // rewrite (or recreate)
			v := (max(state[i][1], 0) + 1) % soakVersions
			tmp := filepath.Join(st.src, "hot", fmt.Sprintf(".h%02d.tmp", i))
			if err := os.WriteFile(tmp, st.hot[i][v], 0o644); err != nil {
				return n, err
			}
			if err := os.Rename(tmp, cur); err != nil {
				return n, err
			}
			state[i][1] = v
		case op == 1: // rename
			if err := os.Rename(cur, filepath.Join(st.src, "hot", hotName(i, !renamed))); err != nil {
				return n, err
			}
			state[i][0] = 1 - state[i][0]
		default: // delete
			if err := os.Remove(cur); err != nil {
				return n, err
			}
			state[i][1] = -1
		}
		n++
	}
	return n, nil
}

// soakCounts are the soak's figures.
type soakCounts struct {
	ops, cats, preads, mmaps, greps, reads atomic.Int64
	// absent counts opens of a name the mutator had renamed or deleted;
	// replaced counts files that went away under a reader that had opened
	// them (ESTALE or ENOENT on a read, or a mapped page that faulted and
	// whose read then failed so). Only hot files may do either.
	absent, replaced atomic.Int64
	errors, stale    atomic.Int64
	// eio counts I/O errors (all of them errors too).
	eio       atomic.Int64
	mutations atomic.Int64
	// changed counts whole reads that returned a version other than the
	// first: proof the readers saw the changes, not an old cache.
	changed atomic.Int64
}

// oneOf reports whether b is one of the versions.
func oneOf(b []byte, versions [][]byte) bool { return versionOf(b, versions) >= 0 }

// versionOf returns the index of b among the versions, or -1.
func versionOf(b []byte, versions [][]byte) int {
	for i, v := range versions {
		if bytes.Equal(b, v) {
			return i
		}
	}
	return -1
}

func vmRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func soakDuration(t *testing.T) time.Duration {
	if v := os.Getenv("MESHFS_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("MESHFS_SOAK=%q: %v", v, err)
		}
		return d
	}
	return 5 * time.Second
}

func TestSoak(t *testing.T) {
	canMount(t)
	dur := soakDuration(t)
	st := newSoakTree(t)
	mnt := mountDir(t)
	// The disk cache is on, as by default, in a folder of the test's own.
	d := startMount(t, "--cache-size", strconv.Itoa(soakBudget), "--cache-dir", t.TempDir(), st.src, mnt)
	var c soakCounts
	var problems sync.Map // first message per kind
	report := func(kind *atomic.Int64, format string, args ...any) {
		kind.Add(1)
		msg := fmt.Sprintf(format, args...)
		problems.LoadOrStore(msg[:min(len(msg), 60)], msg)
	}

	stop := make(chan struct{})
	start := time.Now()
	var wg sync.WaitGroup
	// The mutator.
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(1, 1))
		var state [soakHot][2]int
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				n, err := st.mutate(rng, &state)
				c.mutations.Add(int64(n))
				if err != nil {
					report(&c.errors, "mutator: %v", err)
				}
			}
		}
	}()
	// RSS sampling.
	var peakRSS atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if r := vmRSS(d.pid); r > peakRSS.Load() {
				peakRSS.Store(r)
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	// The readers.
	for r := range soakReaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 99))
			for {
				select {
				case <-stop:
					return
				default:
				}
				c.ops.Add(1)
				rel := st.paths[rng.IntN(len(st.paths))]
				if rng.IntN(3) == 0 { // a third of the reads go to the meshes that change
					hot := st.paths[rng.IntN(len(st.paths))]
					for !strings.HasPrefix(hot, "hot") {
						hot = st.paths[rng.IntN(len(st.paths))]
					}
					rel = hot
				}
				p := filepath.Join(mnt, rel)
				switch op := rng.IntN(16); {
				case op == 0:
					c.greps.Add(1)
					dir := "hot"
					if rng.IntN(2) == 0 {
						dir = st.static[rng.IntN(len(st.static))]
					}
					soakGrep(filepath.Join(mnt, dir), &c, report)
				case op < 4:
					c.cats.Add(1)
					soakCat(p, rel, st.want[rel], &c, report)
				case op < 8:
					c.mmaps.Add(1)
					soakRead(p, rel, st.want[rel], true, rng, &c, report)
				case op < 12:
					c.preads.Add(1)
					soakRead(p, rel, st.want[rel], false, rng, &c, report)
				default:
					c.reads.Add(1)
					soakRead(p, rel, st.want[rel], false, nil, &c, report)
				}
			}
		}()
	}
	time.Sleep(dur)
	// A slow daemon (race-built, or a busy machine) may not have served a
	// changed version yet: go on until one is read, for at most guard more.
	for end := time.Now().Add(guard); c.changed.Load() == 0 && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	ran := time.Since(start).Round(time.Second)
	hwm := vmHWM(t, d.pid)
	if err := d.stop(t, syscall.SIGTERM); err != nil {
		t.Errorf("daemon exit: %v\n%s", err, d.stderr)
	}
	t.Logf("soak %v over %d meshes (%d output files): %d operations (%d cat, %d pread, %d mmap, %d read, %d grep -r; %d found absent, %d replaced under the reader), %d source changes, %d whole reads of a changed version; errors %d (EIO %d), stale reads %d; daemon peak RSS %d MiB (sampled %d MiB), cache budget %d MiB",
		ran, soakDirs*soakPerDir+soakHot, len(st.paths), c.ops.Load(), c.cats.Load(), c.preads.Load(), c.mmaps.Load(), c.reads.Load(), c.greps.Load(), c.absent.Load(), c.replaced.Load(),
		c.mutations.Load(), c.changed.Load(), c.errors.Load(), c.eio.Load(), c.stale.Load(), hwm>>20, peakRSS.Load()>>20, soakBudget>>20)
	problems.Range(func(_, v any) bool {
		t.Errorf("%s", v)
		return true
	})
	if c.errors.Load() != 0 || c.stale.Load() != 0 {
		t.Errorf("%d errors (%d EIO), %d stale reads", c.errors.Load(), c.eio.Load(), c.stale.Load())
	}
	// A source change can take a file from under the readers that have it
	// open then, each once: at most one per reader per change.
	if limit := soakReaders * c.mutations.Load(); c.replaced.Load() > limit {
		t.Errorf("%d reads found their file replaced, for %d source changes and %d readers (at most %d)", c.replaced.Load(), c.mutations.Load(), soakReaders, limit)
	}
	if c.changed.Load() == 0 {
		t.Errorf("no read returned a changed version: the readers never saw the mutator's work")
	}
	if c.mutations.Load() == 0 || c.ops.Load() < 100 {
		t.Errorf("%d operations, %d source changes: the soak did not run", c.ops.Load(), c.mutations.Load())
	}
	if limit := int64(soakBudget + 150<<20); hwm > limit && rssBounded(t) {
		t.Errorf("daemon peak RSS %d MiB over the budget + 150 MiB", hwm>>20)
	}
}

// gone reports whether err means the file went away (renamed or deleted
// by the mutator): an honest answer, not an error. ESTALE is one too: in
// the default (no-open) mode the daemon holds no handle on the version a
// reader started on, so a read of a page the kernel does not hold, after
// the source was replaced, is refused rather than answered with the new
// version's bytes (README, "The mount").
func gone(err error) bool { return os.IsNotExist(err) || errors.Is(err, syscall.ESTALE) }

// vanished counts rel found gone (gone(err)) at its open (absent) or under
// a reader that had opened it (replaced). Only the mutator's hot/ files
// change: a static file found gone is an error.
func vanished(c *soakCounts, report func(*atomic.Int64, string, ...any), rel string, atOpen bool, err error) {
	switch {
	case !strings.HasPrefix(rel, "hot"+string(filepath.Separator)):
		report(&c.errors, "%s: %v, but static files never change", rel, err)
	case atOpen:
		c.absent.Add(1)
	default:
		c.replaced.Add(1)
	}
}

// failed reports err on rel, counting EIO apart too.
func failed(c *soakCounts, report func(*atomic.Int64, string, ...any), format string, args ...any) {
	if err, ok := args[len(args)-1].(error); ok && errors.Is(err, syscall.EIO) {
		c.eio.Add(1)
	}
	report(&c.errors, format, args...)
}

func soakCat(p, rel string, want [][]byte, c *soakCounts, report func(*atomic.Int64, string, ...any)) {
	var stderr bytes.Buffer
	cmd := exec.Command("cat", p)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	switch {
	case err != nil && strings.Contains(stderr.String(), "No such file"):
		vanished(c, report, rel, true, errors.New(stderr.String()))
	case err != nil && strings.Contains(stderr.String(), "Stale file handle"):
		vanished(c, report, rel, false, errors.New(stderr.String()))
	case err != nil:
		if strings.Contains(stderr.String(), "Input/output error") {
			c.eio.Add(1)
		}
		report(&c.errors, "cat %s: %v: %s", rel, err, stderr.String())
	default:
		switch v := versionOf(out, want); {
		case v < 0:
			report(&c.stale, "cat %s: %d bytes, none of the %d versions", rel, len(out), len(want))
		case v > 0:
			c.changed.Add(1)
		}
	}
}

// soakRead opens p, takes its size from fstat, and reads it whole (read or
// mmap) or at random offsets (pread). The bytes must be one version, and
// that version's size must be fstat's.
func soakRead(p, rel string, want [][]byte, mmap bool, rng *rand.Rand, c *soakCounts, report func(*atomic.Int64, string, ...any)) {
	f, err := os.Open(p)
	if gone(err) {
		vanished(c, report, rel, true, err)
		return
	}
	if err != nil {
		failed(c, report, "open %s: %v", rel, err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if gone(err) {
		vanished(c, report, rel, false, err)
		return
	}
	if err != nil {
		failed(c, report, "fstat %s: %v", rel, err)
		return
	}
	size := fi.Size()
	var sized [][]byte
	for _, w := range want {
		if int64(len(w)) == size {
			sized = append(sized, w)
		}
	}
	if len(sized) == 0 {
		report(&c.stale, "%s: fstat size %d is no version's size", rel, size)
		return
	}
	switch {
	case mmap:
		soakMmap(f, rel, size, sized, c, report)
	case rng != nil:
		buf := make([]byte, 4096)
		cands := sized
		for range 8 {
			off := rng.Int64N(size + 1)
			n, err := f.ReadAt(buf, off)
			if gone(err) {
				vanished(c, report, rel, false, err)
				return
			}
			if err != nil && err != io.EOF {
				failed(c, report, "pread %s at %d: %v", rel, off, err)
				return
			}
			var still [][]byte
			for _, w := range cands {
				if bytes.Equal(buf[:n], w[off:min(off+int64(len(buf)), size)]) {
					still = append(still, w)
				}
			}
			if cands = still; len(cands) == 0 {
				report(&c.stale, "pread %s at %d: %d bytes match no single version", rel, off, n)
				return
			}
		}
	default:
		b, err := io.ReadAll(f)
		if gone(err) {
			vanished(c, report, rel, false, err)
			return
		}
		if err != nil {
			failed(c, report, "read %s: %v", rel, err)
			return
		}
		switch v := versionOf(b, want); {
		case v < 0 || int64(len(b)) != size:
			report(&c.stale, "read %s: %d bytes (fstat %d), none of the versions of that size", rel, len(b), size)
		case v > 0:
			c.changed.Add(1)
		}
	}
}

// soakMmap maps f (size bytes, rel in the mount) and compares it with the
// versions of that size.
func soakMmap(f *os.File, rel string, size int64, sized [][]byte, c *soakCounts, report func(*atomic.Int64, string, ...any)) {
	if size == 0 {
		return
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		failed(c, report, "mmap %s: %v", rel, err)
		return
	}
	// A page the kernel must fetch after the source was replaced faults
	// (SIGBUS: the read behind it got ESTALE), and so does one whose read
	// failed (EIO). A read of the whole file through the same descriptor
	// tells them apart: it fails as gone when the version this reader
	// opened was replaced, and anything else (an error, or every byte read
	// fine) makes the fault an error.
	ok, faulted := func() (ok, faulted bool) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if recover() != nil {
				faulted = true
			}
		}()
		return oneOf(m, sized), false
	}()
	syscall.Munmap(m)
	if faulted {
		_, err := f.ReadAt(make([]byte, size), 0)
		switch {
		case gone(err):
			vanished(c, report, rel, false, err)
		case err == nil || err == io.EOF:
			report(&c.errors, "mmap %s: SIGBUS, but a read of the same descriptor returned every byte", rel)
		default:
			failed(c, report, "mmap %s: SIGBUS, and a read of the same descriptor: %v", rel, err)
		}
		return
	}
	if !ok {
		report(&c.stale, "mmap %s: %d bytes, none of the versions of that size", rel, size)
	}
}

// soakGrep runs grep -r over a folder of the mount: it must finish, and
// complain of nothing but files that went away under it.
func soakGrep(dir string, c *soakCounts, report func(*atomic.Int64, string, ...any)) {
	var stderr bytes.Buffer
	cmd := exec.Command("grep", "-r", "-l", "-a", "glTF", dir)
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() > 2) {
		report(&c.errors, "grep -r %s: %v", dir, err)
	}
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if l != "" && !strings.Contains(l, "No such file or directory") && !strings.Contains(l, "Stale file handle") {
			report(&c.errors, "grep -r: %s", l)
		}
	}
}

// TestDaemonNoLeaks: 10 000 open/read/close cycles over many outputs
// (memory outputs and raw chunks read through a source descriptor) leave
// the daemon with the descriptors (/proc/PID/fd) and goroutines
// (stats.json) it had after a warm-up pass of the same shape. Tolerance:
// no descriptor more but pipes, of which go-fuse's splice pool keeps a pair
// for each reply spliced at once (at most splicePipes more); goroutines
// at most daemonReaders more, go-fuse's request readers coming and going
// with the load; no open handle but the stats.json read's own. In the
// open-handles mode
// every cycle is an OPEN and a RELEASE the daemon answers; in the default
// mode the kernel opens without asking and every cycle is a READ (the
// cycles drop the file's pages first). The request counts show both.
func TestDaemonNoLeaks(t *testing.T) {
	for _, mode := range []struct {
		name string
		args []string
	}{{"no_open", nil}, {"open_handles", []string{"--open-handles"}}} {
		t.Run(mode.name, func(t *testing.T) { daemonNoLeaks(t, mode.args) })
	}
}

// daemonReaders is go-fuse's maximum of request readers (GOMAXPROCS,
// capped at 16): the daemon's goroutines vary by as many with the load.
const daemonReaders = 16

// splicePipes bounds the pipes go-fuse's splice pool may add under the
// cycles: a pair per reply spliced at once, and the cycles' 8 readers and
// the kernel's readahead (max_background, 12) keep fewer than 64 requests
// in flight. A pipe leaked per read would be thousands.
const splicePipes = 2 * 64

// daemonStats is the part of stats.json the leak test reads.
type daemonStats struct {
	Goroutines       int              `json:"goroutines"`
	OpenHandles      int64            `json:"open_handles"`
	DiskSavesPending int64            `json:"disk_saves_pending"`
	Requests         map[string]int64 `json:"fuse_requests"`
}

func readDaemonStats(t *testing.T, mnt string) daemonStats {
	t.Helper()
	var s daemonStats
	b, err := os.ReadFile(filepath.Join(mnt, ".meshfs", "stats.json"))
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	if err != nil {
		t.Fatalf("stats.json: %v\n%s", err, b)
	}
	return s
}

func daemonNoLeaks(t *testing.T, args []string) {
	canMount(t)
	src, mnt := sourceTree(t), mountDir(t)
	var paths []string
	for i := range 50 {
		b, err := meshgen.GEM(20+i, float32(i))
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("m%02d", i)
		write(t, filepath.Join(src, name+".ply"), b)
		for _, o := range []string{".glb", ".obj", ".mtl"} {
			paths = append(paths, filepath.Join(name+".ply", name+o))
		}
		paths = append(paths, filepath.Join(name+".ply", "header.json"))
	}
	paths = append(paths, "notes.txt")
	// Without collections the daemon cannot close a leaked descriptor
	// behind the test's back (an os.File's finalizer closes it);
	// GOMEMLIMIT bounds the daemon's memory all the same.
	t.Setenv("GOGC", "off")
	t.Setenv("GOMEMLIMIT", "1GiB")
	d := startMount(t, append(args, "--cache-size", "4MiB", "--cache-dir", t.TempDir(), src, mnt)...)
	// Raw chunks (read from the source through a descriptor) too.
	for i := range 50 {
		ents, err := os.ReadDir(filepath.Join(mnt, fmt.Sprintf("m%02d.ply", i), "chunks"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			paths = append(paths, filepath.Join(fmt.Sprintf("m%02d.ply", i), "chunks", e.Name()))
		}
	}
	fdDir := fmt.Sprintf("/proc/%d/fd", d.pid)
	// fds counts the daemon's descriptors: pipes, and the others.
	fds := func() (pipes, others int) {
		ents, err := os.ReadDir(fdDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if target, _ := os.Readlink(filepath.Join(fdDir, e.Name())); strings.HasPrefix(target, "pipe:") {
				pipes++
			} else {
				others++
			}
		}
		return pipes, others
	}
	fdList := func() string {
		ents, _ := os.ReadDir(fdDir)
		var l []string
		for _, e := range ents {
			if len(l) == 100 {
				l = append(l, fmt.Sprintf("(%d more)", len(ents)-100))
				break
			}
			target, _ := os.Readlink(filepath.Join(fdDir, e.Name()))
			l = append(l, e.Name()+"→"+target)
		}
		return strings.Join(l, " ")
	}
	const total = 10_000
	cycles := func(n int) { readcycles.Run(t, mnt, paths, n, 13) }
	cycles(2 * len(paths))
	// The warm-up's conversions are saved to the disk cache in the
	// background: the baseline is taken once they are.
	deadline := time.Now().Add(guard)
	for readDaemonStats(t, mnt).DiskSavesPending > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	before := readDaemonStats(t, mnt)
	basePipes, base := fds()
	baseList := fdList()
	cycles(total)
	if t.Failed() {
		t.FailNow()
	}
	// Releases reach the daemon after close returns; go-fuse's extra
	// readers end when the load does.
	var after daemonStats
	var afterPipes, afterFD int
	deadline = time.Now().Add(guard)
	for {
		after = readDaemonStats(t, mnt)
		afterPipes, afterFD = fds()
		settled := afterFD <= base && afterPipes <= basePipes+splicePipes &&
			after.Goroutines <= before.Goroutines+daemonReaders && after.OpenHandles <= 1
		if settled || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	asked := func(op string) int64 { return after.Requests[op] - before.Requests[op] }
	t.Logf("%d output files; daemon after the warm-up: %d descriptors + %d pipes, %d goroutines; after %d cycles: %d descriptors + %d pipes, %d goroutines, %d open handles; requests in the cycles: %d OPEN, %d RELEASE, %d READ",
		len(paths), base, basePipes, before.Goroutines, total, afterFD, afterPipes, after.Goroutines, after.OpenHandles, asked("OPEN"), asked("RELEASE"), asked("READ"))
	if len(args) > 0 {
		// Each cycle's open and close reach the daemon (the stats.json
		// reads add their own).
		if asked("OPEN") < total || asked("RELEASE") < total {
			t.Errorf("%d OPEN and %d RELEASE requests for %d cycles: the daemon did not see every open", asked("OPEN"), asked("RELEASE"), total)
		}
	} else if asked("READ") < total/2 {
		t.Errorf("%d READ requests for %d cycles: the cycles did not reach the daemon", asked("READ"), total)
	}
	if afterFD > base || afterPipes > basePipes+splicePipes {
		t.Errorf("daemon holds %d descriptors + %d pipes, %d + %d after the warm-up (tolerance: %d pipes):\n%s\nwarm-up:\n%s",
			afterFD, afterPipes, base, basePipes, splicePipes, fdList(), baseList)
	}
	if after.Goroutines > before.Goroutines+daemonReaders {
		t.Errorf("daemon runs %d goroutines, %d after the warm-up (tolerance %d)", after.Goroutines, before.Goroutines, daemonReaders)
	}
	if after.OpenHandles > 1 {
		t.Errorf("daemon counts %d open handles after every file was closed (one is the stats.json read's)", after.OpenHandles)
	}
}
