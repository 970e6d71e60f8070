package fs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/meshfs/meshfs/internal/store"
	"io/fs"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/fusetest"
	meshstats "github.com/meshfs/meshfs/internal/store/stats"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

var fuseDebug = flag.Bool("fuse-debug", false, "log FUSE operations of test mounts")

func TestMain(m *testing.M) {
	stop := fusetest.StartReaper()
	formats.All = append(formats.All, fakeFormat{})
	code := m.Run()
	if mmapBin != "" {
		os.RemoveAll(filepath.Dir(mmapBin))
	}
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	code = fusetest.NoLeaks(code) // every mount was unmounted and closed
	stop()
	os.Exit(code)
}

// cannotMount fails the test, except outside CI on a machine without FUSE.
func cannotMount(t testing.TB, err error) {
	t.Helper()
	fusetest.CannotMount(t, err)
}

// Test mounts use the kernel's no-open modes (the default) unless the test
// runs under bothModes' "open_handles" subtest, or sets OpenHandles.
const handlesMode = "open_handles"

// bothModes runs fn once without handles (the default) and once with a
// handle per open (Config.OpenHandles), each a subtest whose mounts
// (mountT) use that mode.
func bothModes(t *testing.T, fn func(t *testing.T)) {
	t.Run("no_open", fn)
	t.Run(handlesMode, fn)
}

// mountT mounts src and unmounts it when the test ends.
func mountT(t testing.TB, src string, cfg Config) (*FS, string) {
	t.Helper()
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
	return f, fusetest.Mount(t, f, Unmount, *fuseDebug)
}

type tlog struct {
	mu  sync.Mutex
	t   testing.TB
	buf bytes.Buffer
}

func (w *tlog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	return len(p), nil
}

func (w *tlog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

var logs sync.Map // testing.TB → *tlog

func testLogger(t testing.TB) *log.Logger {
	w := &tlog{t: t}
	logs.Store(t, w)
	return log.New(w, "", 0)
}

func logOf(t testing.TB) string {
	if w, ok := logs.Load(t); ok {
		return w.(*tlog).String()
	}
	return ""
}

func write(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sampleTree builds a source folder with every kind of entry.
func sampleTree(t testing.TB) string {
	src := t.TempDir()
	write(t, filepath.Join(src, "readme.txt"), []byte("hello\n"))
	write(t, filepath.Join(src, "models", "tank.fmesh"), fakeMesh(20, 1))
	write(t, filepath.Join(src, "models", "tank.fmesh.side"), []byte("companion"))
	write(t, filepath.Join(src, "models", "jeep.fmesh"), fakeMesh(3, 2))
	write(t, filepath.Join(src, "models", "broken.fmesh"), fakeScanBroken())
	write(t, filepath.Join(src, "models", "bad.fmesh"), fakeDecodeBroken())
	write(t, filepath.Join(src, "models", "notamesh.fmesh"), []byte("just text with the extension"))
	write(t, filepath.Join(src, "models", "orphan.side"), []byte("no main file"))
	write(t, filepath.Join(src, "deep", "a", "b", "c.bin"), bytes.Repeat([]byte{7}, 100_000))
	if err := os.Symlink("readme.txt", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	return src
}

func stats(t testing.TB, mnt string) Stats {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mnt, statsDirName, meshstats.StatsName))
	if err != nil {
		t.Fatal(err)
	}
	var s Stats
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("stats.json: %v\n%s", err, b)
	}
	return s
}

func conversions(s Stats) int64 {
	var n int64
	for _, v := range s.Conversions {
		n += v
	}
	return n
}

func names(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		out = append(out, n)
	}
	return out
}

func TestTreeShape(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := sampleTree(t)
		_, mnt := mountT(t, src, Config{})

		if got, want := strings.Join(names(t, mnt), " "), "deep/ link models/ readme.txt"; got != want {
			t.Errorf("root lists %q, want %q", got, want)
		}
		if got, want := strings.Join(names(t, filepath.Join(mnt, "models")), " "),
			"bad.fmesh/ broken.fmesh/ jeep.fmesh/ notamesh.fmesh orphan.side tank.fmesh/"; got != want {
			t.Errorf("models lists %q, want %q", got, want)
		}
		if got, want := strings.Join(names(t, filepath.Join(mnt, "models", "tank.fmesh")), " "),
			"chunks/ header.json tank.glb tank.mtl tank.obj tank.preview.png"; got != want {
			t.Errorf("mesh folder lists %q, want %q", got, want)
		}
		if got, want := strings.Join(names(t, filepath.Join(mnt, "models", "tank.fmesh", "chunks")), " "),
			".._.._escape HEAD POS POS.x2"; got != want {
			t.Errorf("chunks lists %q, want %q", got, want)
		}
		if _, err := os.Stat(filepath.Join(mnt, "models", "tank.fmesh.side")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("companion is visible: %v", err)
		}
		if l, err := os.Readlink(filepath.Join(mnt, "link")); err != nil || l != "readme.txt" {
			t.Errorf("symlink reads %q, %v", l, err)
		}
		if b, err := os.ReadFile(filepath.Join(mnt, "deep", "a", "b", "c.bin")); err != nil || len(b) != 100_000 || b[99_999] != 7 {
			t.Errorf("pass-through file: %d bytes, %v", len(b), err)
		}
		fi, err := os.Stat(filepath.Join(mnt, "models", "tank.fmesh", "tank.glb"))
		if err != nil {
			t.Fatal(err)
		}
		sfi, _ := os.Stat(filepath.Join(src, "models", "tank.fmesh"))
		if fi.Mode() != 0o444 || !fi.ModTime().Equal(sfi.ModTime()) {
			t.Errorf("glb mode %v mtime %v, want r--r--r-- and the source's %v", fi.Mode(), fi.ModTime(), sfi.ModTime())
		}
		if st := fi.Sys().(*syscall.Stat_t); st.Blocks != (st.Size+511)/512 || st.Size == 0 {
			t.Errorf("st_blocks %d for %d bytes", st.Blocks, st.Size)
		}
		dfi, _ := os.Stat(filepath.Join(mnt, "models", "tank.fmesh"))
		if dfi.Mode() != fs.ModeDir|0o555 {
			t.Errorf("mesh folder mode %v", dfi.Mode())
		}
	})
}

// TestSameBytesAsConvert: every mesh folder holds exactly what `meshfs
// convert` writes from the tree (vfstest.Convert), byte for byte.
func TestSameBytesAsConvert(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := sampleTree(t)
		_, mnt := mountT(t, src, Config{})
		for _, name := range []string{"tank", "jeep", "broken", "bad"} {
			sp := filepath.Join(src, "models", name+fakeExt)
			m, err := outputs.Open(sp)
			if err != nil || m == nil {
				t.Fatalf("%s: not a mesh: %v", name, err)
			}
			convErr := sameAsConvert(t, m, filepath.Join(mnt, "models", name+fakeExt))
			if (convErr != nil) != (name == "broken" || name == "bad") {
				t.Errorf("%s: convert error %v", name, convErr)
			}
		}
	})
}

// sameAsConvert checks the mesh folder mdir of the mount against what
// `convert` writes for m: every file convert writes reads the same, and
// the mount lists no other file but a chunk convert could not write, which
// reads EIO. It returns convert's error.
func sameAsConvert(t *testing.T, m *outputs.Mesh, mdir string) error {
	t.Helper()
	name := filepath.Base(m.Path)
	want := t.TempDir()
	convErr := vfstest.Convert(t, m.Path, &m.Limits, want)
	var files []string
	filepath.WalkDir(want, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(want, p)
			files = append(files, rel)
		}
		return err
	})
	for _, rel := range files {
		w, _ := os.ReadFile(filepath.Join(want, rel))
		g, err := os.ReadFile(filepath.Join(mdir, rel))
		if err != nil {
			t.Errorf("%s: %s: %v", name, rel, err)
			continue
		}
		if !bytes.Equal(g, w) {
			t.Errorf("%s: %s differs from convert's (%d vs %d bytes)\n%q\n%q", name, rel, len(g), len(w), g, w)
		}
	}
	// The other way round: the mount lists nothing convert did not write
	// (a broken mesh's folder has no geometry in either), but a chunk
	// convert failed to write.
	filepath.WalkDir(mdir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(mdir, p)
		if _, err := os.Stat(filepath.Join(want, rel)); err == nil {
			return nil
		}
		if convErr == nil || !strings.HasPrefix(rel, outputs.ChunksDir+"/") {
			t.Errorf("%s: mount lists %s, convert did not write it", name, rel)
		} else if _, err := os.ReadFile(p); !errors.Is(err, syscall.EIO) {
			t.Errorf("%s: %s, which convert could not write: %v, want EIO", name, rel, err)
		}
		return nil
	})
	return convErr
}

// A chunk larger than --max-output-size is refused by the mount as by
// `convert`, raw chunks (read from the source itself) included: EIO, and
// the same error.txt.
func TestChunkLimitAsConvert(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		// HEAD (8 bytes, raw) fits; POS (108 bytes, raw) and POS.x2 (216,
		// loaded) do not.
		write(t, filepath.Join(src, "m"+fakeExt), fakeMesh(3, 1))
		lim := outputs.DefaultLimits
		lim.MaxOutputSize = 64
		_, mnt := mountT(t, src, Config{Store: store.Config{Limits: &lim}})
		fusetest.GuardMount(t, mnt, fusetest.Guard)
		m, err := outputs.Open(filepath.Join(src, "m"+fakeExt))
		if err != nil || m == nil {
			t.Fatalf("not a mesh: %v", err)
		}
		m.Limits = lim
		mdir := filepath.Join(mnt, "m"+fakeExt)
		if err := sameAsConvert(t, m, mdir); err == nil {
			t.Fatal("convert took a chunk over the limit")
		}
		if _, err := os.ReadFile(filepath.Join(mdir, "chunks", "POS")); !errors.Is(err, syscall.EIO) {
			t.Errorf("raw chunk over the limit: %v, want EIO", err)
		}
		if b, err := os.ReadFile(filepath.Join(mdir, "chunks", "HEAD")); err != nil || len(b) != 8 {
			t.Errorf("chunk within the limit: %d bytes, %v", len(b), err)
		}
		txt, err := os.ReadFile(filepath.Join(mdir, outputs.ErrorName))
		if err != nil || !strings.Contains(string(txt), "chunks/POS:") || !strings.Contains(string(txt), outputs.FlagMaxOutputSize) {
			t.Errorf("error.txt %q %v: want the raw chunk's limit error", txt, err)
		}
	})
}

func TestListingConvertsNothing(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := sampleTree(t)
		_, mnt := mountT(t, src, Config{})
		n := 0
		err := filepath.WalkDir(mnt, func(p string, d fs.DirEntry, err error) error {
			n++
			return err
		})
		if err != nil || n < 20 {
			t.Fatalf("walk: %d entries, %v", n, err)
		}
		// broken.fmesh's scan failed: its folder has no .glb.
		out, err := exec.Command("find", mnt, "-name", "*.glb").Output()
		if err != nil || strings.Count(string(out), "\n") != 3 {
			t.Fatalf("find -name '*.glb': %v\n%s", err, out)
		}
		out, err = exec.Command("grep", "-r", "--include=header.json", "triangles", mnt).Output()
		if err != nil || strings.Count(string(out), "\n") != 3 {
			t.Fatalf("grep -r --include=header.json: %v\n%s", err, out)
		}
		s := stats(t, mnt)
		if c := conversions(s); c != 0 {
			t.Fatalf("listing, find and grep converted %d outputs: %v", c, s.Conversions)
		}
		if len(s.Scans) == 0 {
			t.Fatalf("no scans recorded: %+v", s)
		}
		// The first stat of an output converts it, once.
		for range 3 {
			if _, err := os.Stat(filepath.Join(mnt, "models", "jeep.fmesh", "jeep.glb")); err != nil {
				t.Fatal(err)
			}
		}
		if s := stats(t, mnt); s.Conversions["fake/glb"] != 1 || conversions(s) != 1 {
			t.Fatalf("after stat: %v", s.Conversions)
		}
	})
}

// checkFile reads the file at p every way a program can and compares each
// with its st_size.
func checkFile(t *testing.T, p string, rng *rand.Rand) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Errorf("stat %s: %v", p, err)
		return
	}
	size := fi.Size()
	whole, err := os.ReadFile(p)
	if err != nil || int64(len(whole)) != size {
		t.Errorf("%s: read %d bytes (%v), st_size %d", p, len(whole), err, size)
		return
	}
	cat, err := exec.Command("cat", p).Output()
	if err != nil || !bytes.Equal(cat, whole) {
		t.Errorf("%s: cat gave %d bytes (%v), read %d", p, len(cat), err, len(whole))
	}
	cp := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", p, cp).CombinedOutput(); err != nil {
		t.Errorf("cp %s: %v %s", p, err, out)
	} else if b, _ := os.ReadFile(cp); !bytes.Equal(b, whole) {
		t.Errorf("%s: cp copied %d bytes, read %d", p, len(b), len(whole))
	}
	if size > 0 {
		// A page fault on a FUSE mapping served by this very process can
		// deadlock with the garbage collector's stop-the-world: map the
		// file in a child process. (Children are started while this
		// process holds no file of the mount open: closing one at exec
		// would need this process to answer.)
		cmd := exec.Command(mmapHelper(t), p)
		out, err := cmd.Output()
		sum := sha256.Sum256(whole)
		if want := fmt.Sprintf("%d %x", size, sum); err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("%s: mmap gave %q (%v), want %q", p, out, err, want)
		}
	}
	f, err := os.Open(p)
	if err != nil {
		t.Errorf("open %s: %v", p, err)
		return
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for range 16 {
		off := int64(0)
		if size > 0 {
			off = rng.Int64N(size + 1)
		}
		n, err := f.ReadAt(buf, off)
		want := whole[off:min(off+4096, size)]
		if (err != nil && n != len(want)) || !bytes.Equal(buf[:n], want) {
			t.Errorf("%s: pread at %d: %d bytes, %v; want %d", p, off, n, err, len(want))
			break
		}
	}
}

var (
	mmapOnce sync.Once
	mmapBin  string
	mmapErr  error
)

// mmapHelperSource maps the file named by its argument and prints its size
// and the SHA-256 of the mapped bytes; with -w it tries to write the file
// through write() and a shared writable mapping (writeMapped). It runs in a
// process of its own: a munmap that writes back to an in-process daemon
// holds the process's memory map while the daemon, which needs it to
// allocate, would answer the write-back.
const mmapHelperSource = `package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"syscall"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-w" {
		writeMapped(os.Args[2])
		return
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fi, err := f.Stat()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d %x\n", fi.Size(), sha256.Sum256(m))
}

// writeMapped tries to change the file at p: write(), then stores into a
// shared writable mapping, written back by munmap and close. It prints
// "write went through" when write() succeeds.
func writeMapped(p string) {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return // refused: nothing to try
	}
	defer f.Close()
	if _, err := f.Write([]byte("X")); err == nil {
		fmt.Println("write went through")
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return // no shared writable mapping: nothing to leak
	}
	copy(m, "JUNK")
	syscall.Munmap(m)
}
`

// mmapHelper builds the mmap helper once (without -race: a race-enabled
// binary takes about a second to start).
func mmapHelper(t testing.TB) string {
	mmapOnce.Do(func() {
		dir, err := os.MkdirTemp("", "meshfs-mmap")
		if err != nil {
			mmapErr = err
			return
		}
		src := filepath.Join(dir, "main.go")
		if mmapErr = os.WriteFile(src, []byte(mmapHelperSource), 0o644); mmapErr != nil {
			return
		}
		mmapBin = filepath.Join(dir, "mmap")
		cmd := exec.Command("go", "build", "-o", mmapBin, src)
		cmd.Env = append(os.Environ(), "GOFLAGS=", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			mmapErr = fmt.Errorf("building the mmap helper: %v\n%s", err, out)
		}
	})
	if mmapErr != nil {
		t.Fatal(mmapErr)
	}
	return mmapBin
}

// vanished reads the file at p whole once, failing t unless it gives the
// size its stat gave, and reports whether reading it made its folder
// broken and took it away: a preview (its length told before drawing) of a
// mesh that turns out not to decode reads as a blank picture of that
// length, and then the folder lists error.txt and no more outputs.
func vanished(t *testing.T, p string) bool {
	fi, err := os.Stat(p)
	if err != nil {
		t.Errorf("%s: %v", p, err)
		return true
	}
	b, err := os.ReadFile(p)
	if err != nil || int64(len(b)) != fi.Size() {
		t.Errorf("%s: read %d bytes, %v; stat said %d", p, len(b), err, fi.Size())
		return true
	}
	_, err = os.Stat(p)
	return errors.Is(err, os.ErrNotExist) && isBrokenFolder(filepath.Dir(p))
}

// checkTree checks every file under root, cold then warm, and returns how
// many it checked. A file whose stat gives EIO is skipped only in a mesh
// folder that shows error.txt (a broken source); anywhere else it fails t.
func checkTree(t *testing.T, root string) int {
	rng := rand.New(rand.NewPCG(1, 2))
	count := 0
	for pass := range 2 {
		count = 0
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Errorf("walk %s: %v", p, err)
				return nil
			}
			if d.IsDir() || d.Type()&fs.ModeSymlink != 0 {
				return nil
			}
			if _, err := os.Stat(p); errors.Is(err, syscall.EIO) {
				if !isBrokenFolder(filepath.Dir(p)) {
					t.Errorf("%s: %v, and its folder shows no %s", p, err, outputs.ErrorName)
				}
				return nil
			} else if errors.Is(err, os.ErrNotExist) && isBrokenFolder(filepath.Dir(p)) {
				return nil // listed before a sibling output's conversion failed
			}
			count++
			if vanished(t, p) {
				return nil
			}
			checkFile(t, p, rng)
			return nil
		})
		if t.Failed() {
			t.Fatalf("pass %d failed", pass)
		}
	}
	return count
}

// checkWholeTree is checkTree over a mount of src, which must have checked
// at least one file per source file, and found at most a tenth of the
// mesh folders broken: a mount where everything fails does not pass.
func checkWholeTree(t *testing.T, src, mnt string) {
	t.Helper()
	sources, folders, broken := 0, 0, 0
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			sources++
		}
		return nil
	})
	filepath.WalkDir(mnt, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "header.json" {
			folders++
			if isBrokenFolder(filepath.Dir(p)) {
				broken++
			}
		}
		return nil
	})
	n := checkTree(t, mnt)
	t.Logf("%d files checked under a mount of %s: %d sources, %d mesh folders, %d broken", n, src, sources, folders, broken)
	if n < sources {
		t.Errorf("checked %d files for %d source files", n, sources)
	}
	if folders == 0 || broken*10 > folders {
		t.Errorf("%d of %d mesh folders are broken", broken, folders)
	}
}

// isBrokenFolder reports whether the mesh folder dir shows error.txt.
func isBrokenFolder(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, outputs.ErrorName))
	return err == nil
}

func TestExactSizesSample(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		_, mnt := mountT(t, sampleTree(t), Config{})
		if n := checkTree(t, mnt); n < 20 {
			t.Fatalf("checked only %d files", n)
		}
	})
}

func repoRoot(t testing.TB) string {
	wd, _ := os.Getwd()
	return filepath.Dir(wd)
}

func TestExactSizesFixtures(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		td := filepath.Join(repoRoot(t), "testdata")
		_, mnt := mountT(t, td, Config{})
		checkWholeTree(t, td, mnt)
	})
}

func TestExactSizesRealData(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		rd := decodetest.NeedRealData(t, "")
		_, mnt := mountT(t, rd, Config{})
		checkWholeTree(t, rd, mnt)
	})
}

func TestConcurrentReadersOneConversion(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		write(t, filepath.Join(src, "big.fmesh"), fakeMesh(50_000, 3))
		_, mnt := mountT(t, src, Config{})
		p := filepath.Join(mnt, "big.fmesh", "big.glb")
		const readers = 64
		got := make([][]byte, readers)
		errs := make([]error, readers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				got[i], errs[i] = os.ReadFile(p)
			}()
		}
		close(start)
		wg.Wait()
		for i := range readers {
			if errs[i] != nil {
				t.Fatalf("reader %d: %v", i, errs[i])
			}
			if !bytes.Equal(got[i], got[0]) {
				t.Fatalf("reader %d got different bytes", i)
			}
		}
		if len(got[0]) < 50_000*36 {
			t.Fatalf("glb of %d bytes is too small for 50000 triangles", len(got[0]))
		}
		if s := stats(t, mnt); s.Conversions["fake/glb"] != 1 {
			t.Fatalf("64 readers caused %v conversions", s.Conversions)
		}
	})
}

// waitFor polls cond for up to limit; the bound is one second.
func waitFor(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSourceReplaced(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		for _, how := range []string{"rename", "rewrite"} {
			t.Run(how, func(t *testing.T) {
				src := t.TempDir()
				sp := filepath.Join(src, "m.fmesh")
				write(t, sp, fakeMesh(10, 1))
				_, mnt := mountT(t, src, Config{})
				glb := filepath.Join(mnt, "m.fmesh", "m.glb")
				hdr := filepath.Join(mnt, "m.fmesh", "header.json")
				old, err := os.ReadFile(glb)
				if err != nil {
					t.Fatal(err)
				}
				oldHdr, err := os.ReadFile(hdr)
				if err != nil {
					t.Fatal(err)
				}
				// The expected new bytes, from convert.
				next := fakeMesh(500, 2)
				want := t.TempDir()
				write(t, filepath.Join(want, "m.fmesh"), next)
				m, _ := outputs.Open(filepath.Join(want, "m.fmesh"))
				if err := vfstest.Convert(t, m.Path, &m.Limits, filepath.Join(want, "out")); err != nil {
					t.Fatal(err)
				}
				wantGLB, _ := os.ReadFile(filepath.Join(want, "out", "m.glb"))
				if bytes.Equal(wantGLB, old) {
					t.Fatal("test meshes convert alike")
				}
				switch how {
				case "rename":
					write(t, sp+".tmp", next)
					if err := os.Rename(sp+".tmp", sp); err != nil {
						t.Fatal(err)
					}
				case "rewrite":
					write(t, sp, next)
				}
				// Both files must show the new version within the bound.
				// Each does once the kernel has dropped its name, which
				// the watcher's notifications do one name after another,
				// header.json last (dropOrder): a .glb already new does
				// not make header.json new. Until its name is dropped, a
				// read of header.json gets the version before (the
				// kernel's pages of it) or ESTALE (its pages dropped and
				// memory holding no header.json of that version), both
				// right, the source having changed. (A rewrite also
				// passes through a truncated file, which is no mesh.)
				var h []byte
				var herr error
				ok := waitFor(time.Second, func() bool {
					fi, err := os.Stat(glb)
					if err != nil || fi.Size() != int64(len(wantGLB)) {
						return false
					}
					b, err := os.ReadFile(glb)
					if err != nil || !bytes.Equal(b, wantGLB) {
						return false
					}
					if h, herr = os.ReadFile(hdr); herr != nil {
						return false
					}
					return !bytes.Equal(h, oldHdr) && bytes.Contains(h, []byte("500"))
				})
				if !ok {
					fi, _ := os.Stat(glb)
					t.Fatalf("after 1 s the mount still shows %d bytes, want %d; header.json: %v\n%s", fi.Size(), len(wantGLB), herr, h)
				}
				checkTree(t, filepath.Join(mnt, "m.fmesh"))
			})
		}
	})
}

func TestAppearAndVanish(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		_, mnt := mountT(t, src, Config{})
		p := filepath.Join(mnt, "new.fmesh", "new.glb")
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("before: %v", err)
		}
		write(t, filepath.Join(src, "new.fmesh"), fakeMesh(4, 1))
		if !waitFor(time.Second, func() bool { _, err := os.Stat(p); return err == nil }) {
			t.Fatal("a new mesh did not appear within 1 s")
		}
		os.Remove(filepath.Join(src, "new.fmesh"))
		if !waitFor(time.Second, func() bool { _, err := os.Stat(p); return errors.Is(err, os.ErrNotExist) }) {
			t.Fatal("a removed mesh did not vanish within 1 s")
		}
		// A plain file turned into a mesh becomes a folder.
		write(t, filepath.Join(src, "x.fmesh"), []byte("plain"))
		if fi, err := os.Stat(filepath.Join(mnt, "x.fmesh")); err != nil || fi.IsDir() {
			t.Fatalf("plain: %v %v", fi, err)
		}
		write(t, filepath.Join(src, "x.fmesh"), fakeMesh(1, 0))
		if !waitFor(time.Second, func() bool { fi, err := os.Stat(filepath.Join(mnt, "x.fmesh")); return err == nil && fi.IsDir() }) {
			t.Fatal("file turned mesh is not a folder within 1 s")
		}
	})
}

func TestCorruptMesh(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := sampleTree(t)
		f, mnt := mountT(t, src, Config{})
		for _, name := range []string{"broken", "bad"} {
			dir := filepath.Join(mnt, "models", name+fakeExt)
			if _, err := os.ReadDir(dir); err != nil {
				t.Fatalf("%s: folder does not list: %v", name, err)
			}
			// A scan failure is known at the listing: no .glb. A decoding
			// failure shows when the first conversion fails: EIO for it.
			want := syscall.EIO
			if name == "broken" {
				want = syscall.ENOENT
			}
			_, err := os.ReadFile(filepath.Join(dir, name+".glb"))
			if !errors.Is(err, want) {
				t.Fatalf("%s: glb read gives %v, want %v", name, err, want)
			}
			et, err := os.ReadFile(filepath.Join(dir, outputs.ErrorName))
			if err != nil || !bytes.Contains(et, []byte(name+fakeExt)) || !bytes.Contains(et, []byte("offset")) {
				t.Fatalf("%s: error.txt %q, %v", name, et, err)
			}
			// Now listed too.
			if ls := strings.Join(names(t, dir), " "); !strings.Contains(ls, outputs.ErrorName) {
				t.Fatalf("%s: error.txt not listed: %s", name, ls)
			}
			if h, err := os.ReadFile(filepath.Join(dir, outputs.HeaderName)); err != nil || !bytes.Contains(h, []byte(`"magic"`)) {
				t.Fatalf("%s: header.json %q %v", name, h, err)
			}
		}
		// Healthy meshes still serve, and have no error.txt.
		if _, err := os.ReadFile(filepath.Join(mnt, "models", "tank.fmesh", "tank.glb")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(mnt, "models", "tank.fmesh", outputs.ErrorName)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("healthy mesh has error.txt: %v", err)
		}
		// Logged once per failure, however often it is read.
		for range 3 {
			os.ReadFile(filepath.Join(mnt, "models", "bad.fmesh", outputs.ErrorName))
			os.ReadFile(filepath.Join(mnt, "models", "bad.fmesh", outputs.HeaderName))
		}
		if n := strings.Count(logOf(t), "bad.fmesh"); n != 1 {
			t.Fatalf("bad.fmesh logged %d times:\n%s", n, logOf(t))
		}
		if s := f.Stats(); s.Errors < 2 {
			t.Fatalf("errors %d", s.Errors)
		}
	})
}

func TestReadOnly(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := sampleTree(t)
		_, mnt := mountT(t, src, Config{})
		glb := filepath.Join(mnt, "models", "tank.fmesh", "tank.glb")
		txt := filepath.Join(mnt, "readme.txt")
		ops := map[string]func() error{
			"write file":     func() error { return os.WriteFile(txt, []byte("x"), 0o644) },
			"open glb rw":    func() error { f, err := os.OpenFile(glb, os.O_RDWR, 0); f.Close(); return err },
			"create":         func() error { return os.WriteFile(filepath.Join(mnt, "new"), nil, 0o644) },
			"create in mesh": func() error { return os.WriteFile(filepath.Join(mnt, "models", "tank.fmesh", "x"), nil, 0o644) },
			"mkdir":          func() error { return os.Mkdir(filepath.Join(mnt, "d"), 0o755) },
			"remove":         func() error { return os.Remove(txt) },
			"remove glb":     func() error { return os.Remove(glb) },
			"rmdir":          func() error { return os.Remove(filepath.Join(mnt, "deep", "a", "b")) },
			"rename":         func() error { return os.Rename(txt, filepath.Join(mnt, "r")) },
			"chmod":          func() error { return os.Chmod(glb, 0o777) },
			"truncate":       func() error { return os.Truncate(txt, 0) },
			"symlink":        func() error { return os.Symlink("x", filepath.Join(mnt, "s")) },
			"link":           func() error { return os.Link(txt, filepath.Join(mnt, "h")) },
			"chtimes":        func() error { return os.Chtimes(txt, time.Now(), time.Now()) },
		}
		for name, op := range ops {
			if err := op(); !errors.Is(err, syscall.EROFS) {
				t.Errorf("%s: %v, want EROFS", name, err)
			}
		}
		_ = ops
		var sfs syscall.Statfs_t
		if err := syscall.Statfs(mnt, &sfs); err != nil || sfs.Flags&1 /* ST_RDONLY */ == 0 {
			t.Errorf("statfs flags %#x, %v: not read-only", sfs.Flags, err)
		}
		if b, _ := os.ReadFile(filepath.Join(src, "readme.txt")); string(b) != "hello\n" {
			t.Errorf("source changed: %q", b)
		}
	})
}

func TestStatsJSON(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		_, mnt := mountT(t, sampleTree(t), Config{})
		if ls := names(t, mnt); strings.Contains(strings.Join(ls, " "), statsDirName) {
			t.Fatalf("%s is listed: %v", statsDirName, ls)
		}
		os.ReadFile(filepath.Join(mnt, "models", "tank.fmesh", "tank.glb"))
		os.ReadFile(filepath.Join(mnt, "models", "tank.fmesh", "tank.glb"))
		os.ReadFile(filepath.Join(mnt, "models", "tank.fmesh", "tank.obj"))
		s := stats(t, mnt)
		if s.Conversions["fake/glb"] != 1 || s.Conversions["fake/obj"] != 1 {
			t.Fatalf("conversions %v", s.Conversions)
		}
		if s.Cache.BytesCached <= 0 || s.Cache.Budget != DefaultCacheSize || s.Cache.Hits == 0 || s.Cache.Misses == 0 {
			t.Fatalf("cache %+v", s.Cache)
		}
		if s.ConversionLatency.Count != 2 || s.ConversionLatency.P99Ms < s.ConversionLatency.P50Ms {
			t.Fatalf("latency %+v", s.ConversionLatency)
		}
		if err := os.WriteFile(filepath.Join(mnt, statsDirName, meshstats.StatsName), nil, 0); !errors.Is(err, syscall.EROFS) {
			t.Fatalf("stats.json writable: %v", err)
		}
	})
}

var _ = fmt.Sprint
var _ = sort.Strings

// A companion file that changes (a .msh.blob beside its .msh) makes the
// meshes beside it convert again, though their own file did not change: the
// .glb and .obj show the new companion's size and bytes (the fake format
// puts the companion's bytes in the mesh's name).
func TestCompanionChangeReconverts(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		mesh := filepath.Join(src, "m.fmesh")
		write(t, mesh, fakeMesh(5, 1))
		write(t, mesh+".side", []byte("v1"))
		_, mnt := mountT(t, src, Config{})
		dir := filepath.Join(mnt, "m.fmesh")
		if d := outputsDiffer(t, mesh, dir); d != "" {
			t.Fatal(d)
		}
		old, err := os.ReadFile(filepath.Join(dir, "m.glb"))
		if err != nil {
			t.Fatal(err)
		}
		write(t, mesh+".side", []byte("v2, a longer companion"))
		var d string
		if !waitFor(time.Second, func() bool { d = outputsDiffer(t, mesh, dir); return d == "" }) {
			t.Fatalf("after the companion changed: %s; conversions %v", d, stats(t, mnt).Conversions)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "m.glb")); bytes.Equal(b, old) {
			t.Fatal("m.glb is the same before and after its companion changed")
		}
	})
}

// outputsDiffer says how the .glb and .obj in the mount's folder dir differ
// from what outputs makes of the fake mesh at source now (size by stat, and
// bytes), or "" when they do not.
func outputsDiffer(t testing.TB, source, dir string) string {
	t.Helper()
	m := outputs.New(source, fakeFormat{})
	glb, err := m.GLBFile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := m.OBJFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []struct {
		name string
		want []byte
	}{{m.GLBName(), glb}, {m.OBJName(), obj}} {
		p := filepath.Join(dir, o.name)
		fi, err := os.Stat(p)
		if err != nil {
			return err.Error()
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err.Error()
		}
		if fi.Size() != int64(len(o.want)) || !bytes.Equal(b, o.want) {
			return fmt.Sprintf("%s: size %d, %d bytes read, want %d bytes (same bytes: %v)", o.name, fi.Size(), len(b), len(o.want), bytes.Equal(b, o.want))
		}
	}
	return ""
}

// prewarmed reports whether f's pre-warmer was started and has ended.
func prewarmed(f *FS) bool {
	p := f.Stats().Prewarm
	return p != nil && !p.Running
}

// waitPrewarmed waits for f's pre-warmer to end.
func waitPrewarmed(t testing.TB, f *FS) {
	t.Helper()
	if !waitFor(60*time.Second, func() bool { return prewarmed(f) }) {
		t.Fatalf("the pre-warmer did not end: %+v", f.Stats().Prewarm)
	}
}
