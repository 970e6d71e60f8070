package fs

// Hardening tests of the mount (issue 7): an escaped panic is EIO and one
// log line; a tree of hostile variants lists and reads without taking the
// daemon down; open/read/close cycles leak no goroutine and no descriptor;
// hostile names from inside files stay inside their folder; the daemon
// writes nothing into the source.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/meshfs/meshfs/internal/store"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/readcycles"
	meshstats "github.com/meshfs/meshfs/internal/store/stats"
)

func init() {
	// Registered before TestMain adds fakeFormat; only files with these
	// extensions are theirs.
	formats.All = append(formats.All, panicFormat{}, namesFormat{})
}

// panicFormat is a format whose code panics, standing in for a decoder bug
// that escapes every check: "PSCN" files panic in Scan, "PDEC" files in
// Decode. The panic is not recovered by outputs or the cache's caller, so
// it reaches go-fuse's panic handler.
type panicFormat struct{}

const panicExt = ".pmesh"

func (panicFormat) Name() string { return "panic" }
func (panicFormat) Sniff(name string, head []byte) bool {
	return strings.HasSuffix(name, panicExt) && len(head) >= 4 && (string(head[:4]) == "PSCN" || string(head[:4]) == "PDEC")
}
func (panicFormat) StripExt(name string) string { return strings.TrimSuffix(name, panicExt) }
func (panicFormat) IsCompanion(string, func(string) bool) bool {
	return false
}

func (panicFormat) Scan(ctx context.Context, src *decode.Source) (*decode.Structure, error) {
	head := make([]byte, 4)
	src.R.ReadAt(head, 0)
	if string(head) == "PSCN" {
		panic("injected scan panic\nsecond line of the panic value")
	}
	st := &decode.Structure{Format: "panic"}
	st.Header.Add("magic", string(head))
	return st, nil
}

func (panicFormat) Decode(ctx context.Context, src *decode.Source) (*decode.Scene, error) {
	var m map[string]int
	//lint:ignore SA5000 the nil-map write is the injected bug
	m["injected decode panic"] = 1 // a nil-map write: a runtime error, as a real bug would be
	return nil, nil
}

// namesFormat takes every name from inside the file: each line of a
// ".nmesh" file after the "NMSH" line (separated by 0x1f) names a chunk, a material, a mesh
// and a bone, as a modded file of any real format could.
type namesFormat struct{}

const namesExt = ".nmesh"

func (namesFormat) Name() string { return "names" }
func (namesFormat) Sniff(name string, head []byte) bool {
	return strings.HasSuffix(name, namesExt) && bytes.HasPrefix(head, []byte("NMSH\n"))
}
func (namesFormat) StripExt(name string) string { return strings.TrimSuffix(name, namesExt) }
func (namesFormat) IsCompanion(string, func(string) bool) bool {
	return false
}

func namesOf(src *decode.Source) ([]string, error) {
	b := make([]byte, src.Size)
	if _, err := src.R.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, err
	}
	return strings.Split(string(b[5:]), "\x1f"), nil
}

func (namesFormat) Scan(ctx context.Context, src *decode.Source) (*decode.Structure, error) {
	names, err := namesOf(src)
	if err != nil {
		return nil, err
	}
	st := &decode.Structure{Format: "names"}
	for i, n := range names {
		st.Header.Add(fmt.Sprintf("name%d", i), n)
		st.Chunks = append(st.Chunks, decode.Chunk{Name: n, Offset: 0, Length: 5, Size: 5})
	}
	return st, nil
}

func (namesFormat) Decode(ctx context.Context, src *decode.Source) (*decode.Scene, error) {
	names, err := namesOf(src)
	if err != nil {
		return nil, err
	}
	s := &decode.Scene{}
	sk := &decode.Skeleton{}
	for i, n := range names {
		s.Materials = append(s.Materials, decode.Material{Name: n})
		p := decode.Primitive{Name: n, Material: i,
			Positions: [][3]float32{{0, 0, float32(i)}, {1, 0, float32(i)}, {0, 1, float32(i)}},
			Indices:   []uint32{0, 1, 2}}
		s.Meshes = append(s.Meshes, decode.Mesh{Name: n, Primitives: []decode.Primitive{p}})
		sk.Joints = append(sk.Joints, decode.Joint{Name: n, Parent: i - 1})
	}
	s.Skeleton = sk
	return s, nil
}

// hostileNames are names a modded file may hold.
func hostileNames() []string {
	return []string{
		"../../etc/passwd", "..", ".", "", "/", "a/b", "a_b", `a\b`, "a:b", "a\x00b", "\x00",
		"\xff\xfe", "\xc3", " ", "name\nnewmtl injected", "map_Kd /etc/passwd\r\n",
		strings.Repeat("L", 4096), strings.Repeat("L", 4095) + "2", "/tmp/meshfs-escape",
	}
}

// snapshot records every entry under root: path, mode, size, mtime and a
// hash of the contents.
func snapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rec := fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rec += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		snap[p] = rec
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func sameSnapshot(t testing.TB, what string, before, after map[string]string) {
	t.Helper()
	for p, r := range after {
		if b, ok := before[p]; !ok {
			t.Errorf("%s: %s appeared (%s)", what, p, r)
		} else if b != r {
			t.Errorf("%s: %s changed: %s → %s", what, p, b, r)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s: %s vanished", what, p)
		}
	}
}

func countLines(s, substr string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			n++
		}
	}
	return n
}

// TestPanicIsEIO: a panic in a format's Scan or Decode reaches go-fuse's
// panic handler, which answers EIO and logs one line; the daemon serves
// the next request, including the same file again (no load left waiting).
func TestPanicIsEIO(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		write(t, filepath.Join(src, "scan"+panicExt), []byte("PSCN...."))
		write(t, filepath.Join(src, "dec"+panicExt), []byte("PDEC...."))
		good := fakeMesh(4, 1)
		write(t, filepath.Join(src, "good"+fakeExt), good)
		_, mnt := mountT(t, src, Config{})

		if got := names(t, mnt); len(got) != 3 {
			t.Fatalf("listing: %q", got)
		}
		for range 2 { // twice: a panicked load must not leave the next one waiting
			for _, p := range []string{"scan" + panicExt + "/header.json", "dec" + panicExt + "/dec.glb", "dec" + panicExt + "/dec.obj"} {
				_, err := os.ReadFile(filepath.Join(mnt, p))
				if !errors.Is(err, syscall.EIO) {
					t.Errorf("%s: %v, want EIO", p, err)
				}
			}
		}
		if b, err := os.ReadFile(filepath.Join(mnt, "dec"+panicExt, "header.json")); err != nil || !bytes.Contains(b, []byte("PDEC")) {
			t.Errorf("header.json of the decode-panic mesh: %q, %v", b, err)
		}
		b, err := os.ReadFile(filepath.Join(mnt, "good"+fakeExt, "good.glb"))
		if err != nil || !bytes.HasPrefix(b, []byte("glTF")) {
			t.Fatalf("good mesh after the panics: %d bytes, %v", len(b), err)
		}
		lg := logOf(t)
		n := countLines(lg, "internal error")
		if n == 0 {
			t.Fatalf("no panic logged:\n%s", lg)
		}
		if countLines(lg, "second line of the panic value") != 0 || countLines(lg, "goroutine ") != 0 {
			t.Errorf("a panic took more than one log line:\n%s", lg)
		}
		t.Logf("%d panics answered EIO, log:\n%s", n, lg)
	})
}

// variants writes hostile variants of every committed fixture (truncations,
// byte flips, 32-bit fields replaced by 0, −1, 2^31−1, 2^32−1, Lua bombs)
// under dir, one folder each with the fixture's companions, and returns
// how many.
func variants(t testing.TB, dir string) int {
	t.Helper()
	root := repoRoot(t)
	var mains []string
	for _, g := range []string{"testdata/gem/*.ply", "testdata/unigine/*.mesh*", "testdata/tfever/*.msh", "testdata/tfever/*.ani"} {
		m, _ := filepath.Glob(filepath.Join(root, g))
		mains = append(mains, m...)
	}
	if len(mains) < 10 {
		t.Fatalf("only %d fixtures found", len(mains))
	}
	rng := rand.New(rand.NewPCG(7, 7))
	n := 0
	put := func(main string, b []byte, blob []byte) {
		d := filepath.Join(dir, fmt.Sprintf("v%04d", n))
		n++
		write(t, filepath.Join(d, filepath.Base(main)), b)
		if blob != nil {
			write(t, filepath.Join(d, filepath.Base(main)+".blob"), blob)
		}
	}
	mutate := func(b []byte) [][]byte {
		var out [][]byte
		for k := range 8 { // truncations at even points and random ones
			out = append(out, b[:len(b)*k/8])
		}
		for range 4 {
			out = append(out, b[:rng.IntN(len(b))])
		}
		for range 7 { // byte flips
			c := bytes.Clone(b)
			for range 1 + rng.IntN(3) {
				c[rng.IntN(len(c))] ^= byte(1 + rng.IntN(255))
			}
			out = append(out, c)
		}
		for _, v := range []uint32{0, 0xffffffff, 0x7fffffff, 0x80000000, 0xffff} { // counts and offsets
			for range 2 {
				c := bytes.Clone(b)
				if len(c) >= 4 {
					off := rng.IntN(min(len(c), 1024)-3) &^ 3
					binary.LittleEndian.PutUint32(c[off:], v)
				}
				out = append(out, c)
			}
		}
		return out
	}
	for _, main := range mains {
		b, err := os.ReadFile(main)
		if err != nil {
			t.Fatal(err)
		}
		blob, err := os.ReadFile(main + ".blob")
		if err != nil {
			blob = nil
		}
		for _, v := range mutate(b) {
			put(main, v, blob)
		}
		if blob != nil {
			for _, v := range mutate(blob) {
				put(main, b, v)
			}
		}
		if strings.HasSuffix(main, ".msh") || strings.HasSuffix(main, ".ani") {
			for _, bomb := range []string{
				`while true do end`,
				`function data() local s = "x" for i = 1, 28 do s = s .. s end end`,
				`function data() local t = {} for i = 1, 1e12 do t[i] = i end return t end`,
				`local function f() return 1 + f() end function data() return f() end`,
				`os.execute("touch /tmp/meshfs-lua-escape") function data() return {} end`,
				`function data() io.open("/tmp/meshfs-lua-escape", "w"):write("x") return {} end`,
			} {
				put(main, []byte(bomb), blob)
			}
		}
	}
	// The hostile corpus's regression fixtures: variants that once failed.
	reg, _ := filepath.Glob(filepath.Join(root, "export/outputs/hostile/testdata/regress/*/*"))
	for _, p := range reg {
		if filepath.Base(p) == "variant.txt" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "regress", filepath.Base(filepath.Dir(p)), filepath.Base(p)), b)
	}
	return n
}

// TestHostileTree mounts a tree of hostile variants of every fixture and
// reads all of it: every folder lists, every header.json and error.txt
// reads, every other output reads or gives EIO, nothing escapes its
// folder, the daemon writes nothing into the source, and a good mesh is
// served afterwards with the bytes `convert` writes.
func TestHostileTree(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		n := variants(t, src)
		write(t, filepath.Join(src, "names"+namesExt), []byte("NMSH\n"+strings.Join(hostileNames(), "\x1f")))
		good := fakeMesh(6, 3)
		write(t, filepath.Join(src, "zgood"+fakeExt), good)
		before := snapshot(t, src)
		outside := filepath.Dir(src)
		outBefore, _ := os.ReadDir(outside)
		os.Remove("/tmp/meshfs-lua-escape")

		lim := outputs.DefaultLimits
		lim.Timeout = 2 * time.Second // the Lua bombs that loop end here
		f, mnt := mountT(t, src, Config{Store: store.Config{Limits: &lim}})

		var meshes, headers, errTexts, geomOK, geomEIO, chunkFiles int
		var meshDirs []string
		err := filepath.WalkDir(mnt, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Errorf("walk %s: %v", p, err)
				return nil
			}
			rel, _ := filepath.Rel(mnt, p)
			name := d.Name()
			if !utf8.ValidString(name) || strings.ContainsAny(name, "/\x00") || len(name) > 255 || name == "." || name == ".." {
				t.Errorf("%s: unsafe name %q", rel, name)
			}
			if d.IsDir() {
				return nil
			}
			b, rerr := os.ReadFile(p)
			switch {
			case name == outputs.HeaderName:
				headers++
				meshes++
				meshDirs = append(meshDirs, filepath.Dir(rel))
				if rerr != nil {
					// Only a mesh whose error.txt says why may lack header.json.
					if _, e := os.ReadFile(filepath.Join(filepath.Dir(p), outputs.ErrorName)); !errors.Is(rerr, syscall.EIO) || e != nil {
						t.Errorf("%s: %v (error.txt: %v)", rel, rerr, e)
					}
				}
			case name == outputs.ErrorName:
				errTexts++
				if rerr != nil || len(b) == 0 {
					t.Errorf("%s: %d bytes, %v", rel, len(b), rerr)
				}
			case filepath.Base(filepath.Dir(p)) == outputs.ChunksDir:
				chunkFiles++
				if rerr != nil && !errors.Is(rerr, syscall.EIO) {
					t.Errorf("%s: %v, want bytes or EIO", rel, rerr)
				}
			default:
				if rerr == nil {
					geomOK++
				} else if errors.Is(rerr, syscall.EIO) {
					geomEIO++
				} else if errors.Is(rerr, os.ErrNotExist) && isBrokenFolder(filepath.Dir(p)) {
					// Listed before the other export's conversion failed:
					// the folder is broken now, and has no geometry.
					geomEIO++
				} else if !strings.Contains(rel, string(filepath.Separator)) {
					// a plain file of the source (a companion): passed through
					t.Errorf("%s: %v", rel, rerr)
				} else {
					t.Errorf("%s: %v, want bytes or EIO", rel, rerr)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d variants: %d mesh folders, %d header.json, %d error.txt, %d outputs read, %d EIO, %d chunk files",
			n, meshes, headers, errTexts, geomOK, geomEIO, chunkFiles)
		// Every output was asked for: every broken mesh is known. Its
		// folder lists error.txt now, and .meshfs/errors.txt names exactly
		// those, as many as stats.json counts.
		var broken []string
		for _, d := range meshDirs {
			if slices.Contains(names(t, filepath.Join(mnt, d)), outputs.ErrorName) {
				broken = append(broken, filepath.ToSlash(d))
			}
		}
		var listed []string
		errs, err := os.ReadFile(filepath.Join(mnt, statsDirName, meshstats.ErrorsName))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSuffix(string(errs), "\n"), "\n") {
			p, _, _ := strings.Cut(l, ": ")
			listed = append(listed, p)
		}
		slices.Sort(broken)
		s := f.Stats()
		if !slices.Equal(listed, broken) || len(broken) != s.ScanFailures+s.ConversionFailures || len(broken) < 100 {
			t.Errorf("errors.txt names %d meshes, %d folders list error.txt, stats count %d+%d\n%s",
				len(listed), len(broken), s.ScanFailures, s.ConversionFailures, errs)
		}
		// A few variants are no longer meshes (truncated to nothing, say): they
		// show as plain files, checked above.
		if n < 300 || meshes < 300 {
			t.Errorf("%d variants, %d mesh folders listed", n, meshes)
		}

		// The hostile names: every chunk has its own file, and nothing is named
		// outside the mesh's folder.
		nm := filepath.Join(mnt, "names"+namesExt)
		chunks := names(t, filepath.Join(nm, outputs.ChunksDir))
		safe := map[string]bool{}
		for _, h := range hostileNames() {
			safe[decode.SafeName(h)] = true // "a/b" and "a_b" fold together, as in `convert`
		}
		for _, c := range chunks {
			if !safe[c] {
				t.Errorf("chunk %q is no sanitised name", c)
			}
			delete(safe, c)
		}
		if len(safe) != 0 {
			t.Errorf("chunks missing from the listing: %v (listed %q)", safe, chunks)
		}
		if mtl, err := os.ReadFile(filepath.Join(nm, "names.mtl")); err == nil {
			for _, l := range strings.Split(string(mtl), "\n") {
				if strings.HasPrefix(l, "map_Kd /etc") || strings.HasPrefix(l, "newmtl injected") {
					t.Errorf("names.mtl: injected statement %q", l)
				}
			}
		} else {
			t.Errorf("names.mtl: %v", err)
		}
		if _, err := os.Stat("/tmp/meshfs-escape"); err == nil {
			t.Errorf("/tmp/meshfs-escape exists")
		}
		if _, err := os.Stat("/tmp/meshfs-lua-escape"); err == nil {
			t.Errorf("a Lua script wrote /tmp/meshfs-lua-escape")
		}

		// The daemon still serves a good mesh, with `convert`'s bytes.
		gotGLB, err := os.ReadFile(filepath.Join(mnt, "zgood"+fakeExt, "zgood.glb"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := outputs.New(filepath.Join(src, "zgood"+fakeExt), fakeFormat{}).GLBFile(context.Background())
		if err != nil || !bytes.Equal(gotGLB, want) {
			t.Errorf("good mesh after the hostile tree: %d bytes, want %d (%v)", len(gotGLB), len(want), err)
		}
		// Releases reach the daemon after close returns.
		if !waitFor(10*time.Second, func() bool { return f.Stats().OpenHandles == 0 }) {
			t.Errorf("%d handles open after the walk", f.Stats().OpenHandles)
		}

		sameSnapshot(t, "source", before, snapshot(t, src))
		outAfter, _ := os.ReadDir(outside)
		if len(outAfter) != len(outBefore)+1 { // + the mount point
			t.Errorf("the source's parent had %d entries, now %d (with the mount point)", len(outBefore), len(outAfter))
		}
	})
}

// fdCount is how many descriptors this process has open, pipes aside:
// the daemon opens source files (raw chunks, passed-through files), never
// pipes, while the Go runtime and os/exec (fusermount at other tests'
// unmounts) open and close pipes on their own schedule.
func fdCount(t testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		if target, _ := os.Readlink("/proc/self/fd/" + e.Name()); !strings.HasPrefix(target, "pipe:") {
			n++
		}
	}
	return n
}

// TestNoLeaks runs 10 000 open/read/close cycles over many outputs (memory
// outputs, raw chunks read from the source, passed-through files) from 8
// goroutines and checks that the daemon's goroutines and descriptors
// return to what they were after a warm-up pass of the same shape.
// Tolerance: no descriptor more (pipes, go-fuse's splice pool, are not
// counted); no goroutine more but go-fuse's request readers, at most 17. In
// the open-handles mode every cycle is an OPEN and a RELEASE the daemon
// answers; in the default mode the kernel opens without asking and every
// cycle is a READ (the cycles drop the file's pages first): the request
// counts show both. Collection is off meanwhile, so no finalizer closes a
// leaked descriptor behind the test's back.
func TestNoLeaks(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(2 << 30))
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		var paths []string
		for i := range 40 {
			name := fmt.Sprintf("m%02d", i)
			write(t, filepath.Join(src, name+fakeExt), fakeMesh(3+i, float32(i)))
			for _, o := range []string{name + ".glb", name + ".obj", name + ".mtl", "header.json", "chunks/POS", "chunks/POS.x2", "chunks/HEAD"} {
				paths = append(paths, filepath.Join(name+fakeExt, o))
			}
		}
		write(t, filepath.Join(src, "plain.txt"), []byte("plain\n"))
		paths = append(paths, "plain.txt")
		f, mnt := mountT(t, src, Config{Store: store.Config{CacheSize: 1 << 20}})

		cycles := func(total int) { readcycles.Run(t, mnt, paths, total, 7) }
		cycles(2 * len(paths)) // warm-up: go-fuse starts its readers, caches fill
		time.Sleep(100 * time.Millisecond)
		baseG := runtime.NumGoroutine()
		baseFD := fdCount(t)
		baseReq := f.Stats().Requests
		// go-fuse's request readers come and go with the load (at most
		// GOMAXPROCS, capped at 16, wait for requests); they are counted apart.
		const fuseLoop = "github.com/hanwen/go-fuse/v2/fuse.(*Server).loop"
		ignore := []goleak.Option{goleak.IgnoreCurrent(), goleak.IgnoreAnyFunction(fuseLoop)}

		const total = 10_000
		cycles(total)
		if t.Failed() {
			t.FailNow()
		}
		// Releases reach the daemon after close returns: wait for them.
		settled := waitFor(10*time.Second, func() bool {
			return fdCount(t) <= baseFD && f.Stats().OpenHandles == 0
		})
		req := f.Stats().Requests
		asked := func(op string) int64 { return req[op] - baseReq[op] }
		t.Logf("baseline: %d goroutines, %d descriptors; after %d cycles: %d goroutines, %d descriptors, %d open handles; requests in the cycles: %d OPEN, %d RELEASE, %d READ",
			baseG, baseFD, total, runtime.NumGoroutine(), fdCount(t), f.Stats().OpenHandles, asked("OPEN"), asked("RELEASE"), asked("READ"))
		if f.Stats().OpenMode == "handles" {
			if asked("OPEN") < total || asked("RELEASE") < total {
				t.Errorf("%d OPEN and %d RELEASE requests for %d cycles: the daemon did not see every open", asked("OPEN"), asked("RELEASE"), total)
			}
		} else if asked("READ") < total/2 {
			t.Errorf("%d READ requests for %d cycles: the cycles did not reach the daemon", asked("READ"), total)
		}
		// goleak retries until the goroutines end (or gives up after a while).
		if err := goleak.Find(ignore...); err != nil {
			t.Errorf("goroutines left: %v", err)
		}
		if n := countStacks(fuseLoop); n > 17 {
			t.Errorf("%d go-fuse readers left, want at most 17", n)
		}
		if !settled {
			if n := fdCount(t); n > baseFD {
				t.Errorf("%d descriptors open, baseline %d: %s", n, baseFD, fdList())
			}
			if h := f.Stats().OpenHandles; h != 0 {
				t.Errorf("%d handles open", h)
			}
		}
	})
}

// countStacks counts the goroutines with fn in their stack.
func countStacks(fn string) int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			n++
		}
	}
	return n
}

// fdList names this process's open descriptors, for failure messages.
func fdList() string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var l []string
	for _, e := range ents {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		l = append(l, e.Name()+"→"+target)
	}
	return strings.Join(l, " ")
}

// TestReplacedUnderOpenFile: a reader holds an output of a mesh open while
// the source is replaced (written beside and renamed over, as tools save)
// by a version whose output is smaller, and a second reader opens the same
// path before the kernel forgot the old name (no watcher; within the entry
// timeout). The first reader must still read its version whole, at its
// size: the kernel keeps one size per inode, so the second open must not
// resize the first one's inode (a read would be cut short, an mmap would
// fault with SIGBUS). This needs handles: under no_open no open reaches
// the daemon, and without a watcher a change shows only once the kernel's
// attributes expire (see TestNoOpenReplaced).
func TestReplacedUnderOpenFile(t *testing.T) {
	src := t.TempDir()
	p := filepath.Join(src, "m"+fakeExt)
	big, small := fakeMesh(40, 1), fakeMesh(4, 2)
	write(t, p, big)
	_, mnt := mountT(t, src, Config{NoWatch: true, EntryTimeout: time.Minute, AttrTimeout: time.Minute, OpenHandles: true})
	out := filepath.Join(mnt, "m"+fakeExt, "m.obj")
	wantOld, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	a, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	tmp := filepath.Join(src, "m.tmp")
	write(t, tmp, small)
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out) // the second reader: the new version
	wantNew, _, nerr := outputs.New(p, fakeFormat{}).OBJFiles(context.Background())
	if err != nil || nerr != nil || !bytes.Equal(b, wantNew) {
		t.Errorf("second reader: %d bytes, %v; want the new version's %d (%v)", len(b), err, len(wantNew), nerr)
	}
	fi, err := a.Stat()
	if err != nil {
		t.Fatal(err)
	}
	gotOld, err := io.ReadAll(a)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != int64(len(wantOld)) || !bytes.Equal(gotOld, wantOld) {
		t.Errorf("the first reader got %d bytes at fstat size %d, want its version's %d (the second reader got %d)",
			len(gotOld), fi.Size(), len(wantOld), len(b))
	}
}

// TestPlainFileReplacedUnderOpenFile is TestReplacedUnderOpenFile for a
// file the mount passes through (a companion, a texture).
func TestPlainFileReplacedUnderOpenFile(t *testing.T) {
	src := t.TempDir()
	p := filepath.Join(src, "notes.txt")
	old := bytes.Repeat([]byte("old version\n"), 1000)
	write(t, p, old)
	_, mnt := mountT(t, src, Config{NoWatch: true, EntryTimeout: time.Minute, AttrTimeout: time.Minute, OpenHandles: true})
	out := filepath.Join(mnt, "notes.txt")
	a, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tmp := filepath.Join(src, "notes.tmp")
	write(t, tmp, []byte("new\n"))
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "new\n" {
		t.Errorf("second reader: %q, %v; want the new file", b, err)
	}
	got, err := io.ReadAll(a)
	if err != nil || !bytes.Equal(got, old) {
		t.Errorf("the first reader got %d bytes (%v), want its file's %d", len(got), err, len(old))
	}
}

// TestReplacedUnderOpenFolder: a reader holding a mesh folder and its
// chunks/ open (grep -r, find) while the source is replaced still fstats
// and lists them (the old file's outputs are gone from them, as from a
// deleted folder), and a walk by path reaches the new file once the
// watcher has told the kernel (until then a walk through the old folder
// finds nothing, as one racing a rename on any file system may).
func TestReplacedUnderOpenFolder(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		p := filepath.Join(src, "m"+fakeExt)
		write(t, p, fakeMesh(40, 1))
		// Attributes uncached, so fstat of the held folders asks the daemon.
		_, mnt := mountT(t, src, Config{EntryTimeout: time.Minute, AttrTimeout: -1})
		dir := filepath.Join(mnt, "m"+fakeExt)
		var held []*os.File
		for _, d := range []string{dir, filepath.Join(dir, outputs.ChunksDir)} {
			f, err := os.Open(d)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			held = append(held, f)
		}
		tmp := filepath.Join(src, "m.tmp")
		write(t, tmp, fakeMesh(4, 2))
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
		for _, f := range held {
			if fi, err := f.Stat(); err != nil || !fi.IsDir() {
				t.Errorf("fstat of the held %s: %v", f.Name(), err)
			}
			if _, err := f.ReadDir(-1); err != nil {
				t.Errorf("listing the held %s: %v", f.Name(), err)
			}
		}
		var b []byte
		var err error
		if !waitFor(10*time.Second, func() bool {
			b, err = os.ReadFile(filepath.Join(dir, outputs.ChunksDir, "POS"))
			return err == nil && len(b) == 4*36
		}) {
			t.Errorf("chunks/POS by path after the replacement: %d bytes, %v; want the new file's %d", len(b), err, 4*36)
		}
	})
}
