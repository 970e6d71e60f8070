package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/mountpoint"
	"github.com/meshfs/meshfs/internal/srcfd"
)

// fakeTree writes n fake meshes in folders of ten, with a plain file in
// each folder.
func fakeTree(t *testing.T, n int) string {
	t.Helper()
	src := t.TempDir()
	for i := range n {
		d := filepath.Join(src, fmt.Sprintf("d%02d", i/10))
		write(t, filepath.Join(d, fmt.Sprintf("m%03d%s", i, fakeExt)), fakeMesh(3+i%5, float32(i)))
		if i%10 == 0 {
			write(t, filepath.Join(d, "notes.txt"), []byte(fmt.Sprintf("folder %d\n", i/10)))
		}
	}
	return src
}

// requestsSince is the number of round trips since before (FORGET is none).
func requestsSince(f *FS, before map[string]int64) (int64, map[string]int64) {
	var n int64
	d := map[string]int64{}
	for op, c := range f.raw.requests() {
		if op == "FORGET" {
			continue
		}
		if c -= before[op]; c != 0 {
			d[op] = c
			n += c
		}
	}
	return n, d
}

// (a) A warm grep -r --include=header.json, find and a read of every
// header.json make no request at all under no_open; with handles they
// make several per mesh (so the counting itself is tested too).
func TestWarmWalkNoRequests(t *testing.T) {
	const meshes = 40
	bothModes(t, func(t *testing.T) {
		src := fakeTree(t, meshes)
		f, mnt := mountT(t, src, Config{})
		walk := func() {
			out, err := exec.Command("grep", "-r", "--include=header.json", "-c", "triangles", mnt).Output()
			if err != nil || strings.Count(string(out), "\n") != meshes {
				t.Fatalf("grep: %v\n%s", err, out)
			}
			out, err = exec.Command("find", mnt).Output()
			if err != nil || strings.Count(string(out), "header.json") != meshes {
				t.Fatalf("find: %v\n%s", err, out)
			}
			for i := range meshes {
				name := fmt.Sprintf("m%03d%s", i, fakeExt)
				b, err := os.ReadFile(filepath.Join(mnt, fmt.Sprintf("d%02d", i/10), name, outputs.HeaderName))
				if err != nil || !bytes.Contains(b, []byte("triangles")) {
					t.Fatalf("%s: %q %v", name, b, err)
				}
			}
		}
		walk() // cold
		walk() // every listing and name now seen once
		before := f.raw.requests()
		walk()
		n, d := requestsSince(f, before)
		t.Logf("warm walk of %d meshes: %d requests %v", meshes, n, d)
		if f.cfg.OpenHandles {
			// OPEN and RELEASE of header.json, at least, per read.
			if n < 2*meshes {
				t.Fatalf("with handles a warm walk made only %d requests %v: the counting is broken", n, d)
			}
			return
		}
		// grep and find ask STATFS of the mount once or twice per run: not
		// per mesh, and nothing the kernel could cache.
		if n-d["STATFS"] != 0 || d["STATFS"] > 4 {
			t.Fatalf("warm walk of %d meshes made %d requests: %v", meshes, n, d)
		}
	})
}

// (b) Under no_open, a change of the source shows after the watcher's
// event, though the kernel keeps pages, names and listings: new bytes and
// size of a plain file and of an output, a new and a removed name in a
// folder's cached listing. Without the watcher, within the one-second
// attribute timeout (the new mtime drops the pages: AUTO_INVAL_DATA).
func TestNoOpenChangesSeen(t *testing.T) {
	for _, watched := range []bool{true, false} {
		t.Run(fmt.Sprintf("watched=%v", watched), func(t *testing.T) {
			src := t.TempDir()
			sub := filepath.Join(src, "sub")
			plain := filepath.Join(sub, "plain.txt")
			mesh := filepath.Join(sub, "m"+fakeExt)
			write(t, plain, []byte("one"))
			write(t, mesh, fakeMesh(3, 1))
			_, mnt := mountT(t, src, Config{NoWatch: !watched})
			mplain := filepath.Join(mnt, "sub", "plain.txt")
			mglb := filepath.Join(mnt, "sub", "m"+fakeExt, "m.glb")
			msub := filepath.Join(mnt, "sub")
			// Warm everything: pages, names, listings.
			for range 2 {
				checkTree(t, mnt)
				names(t, msub)
			}
			limit := 5 * time.Second // unwatched: 1 s of attributes, a slow machine

			// In place (same inode), longer.
			write(t, plain, []byte("two, longer"))
			if !waitFor(limit, func() bool {
				b, err := os.ReadFile(mplain)
				fi, serr := os.Stat(mplain)
				return err == nil && serr == nil && string(b) == "two, longer" && fi.Size() == int64(len(b))
			}) {
				b, err := os.ReadFile(mplain)
				t.Fatalf("plain file after rewrite: %q %v", b, err)
			}

			// The mesh rewritten in place with more triangles.
			write(t, mesh, fakeMesh(30, 2))
			want, err := outputs.New(mesh, fakeFormat{}).GLBFile(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !waitFor(limit, func() bool {
				b, err := os.ReadFile(mglb)
				fi, serr := os.Stat(mglb)
				return err == nil && serr == nil && bytes.Equal(b, want) && fi.Size() == int64(len(want))
			}) {
				b, err := os.ReadFile(mglb)
				t.Fatalf("glb after rewrite: %d bytes %v, want %d", len(b), err, len(want))
			}

			// A new name, then a removed one, in the cached listing.
			write(t, filepath.Join(sub, "new.txt"), []byte("new"))
			if !waitFor(limit, func() bool { return slices.Contains(names(t, msub), "new.txt") }) {
				t.Fatalf("new.txt not listed: %v", names(t, msub))
			}
			if err := os.Remove(plain); err != nil {
				t.Fatal(err)
			}
			if !waitFor(limit, func() bool { return !slices.Contains(names(t, msub), "plain.txt") }) {
				t.Fatalf("plain.txt still listed: %v", names(t, msub))
			}
		})
	}
}

// Under no_opendir the kernel keeps every listing: a second listing of a
// mesh folder, chunks/ and a source folder reaches no daemon.
func TestNoOpenListingCached(t *testing.T) {
	src := fakeTree(t, 3)
	f, mnt := mountT(t, src, Config{})
	dirs := []string{mnt, filepath.Join(mnt, "d00"), filepath.Join(mnt, "d00", "m000"+fakeExt),
		filepath.Join(mnt, "d00", "m000"+fakeExt, outputs.ChunksDir)}
	var first [][]string
	for _, d := range dirs {
		first = append(first, names(t, d))
	}
	before := f.raw.requests()
	for i, d := range dirs {
		if got := names(t, d); !slices.Equal(got, first[i]) {
			t.Fatalf("%s: second listing %v, first %v", d, got, first[i])
		}
	}
	if n, d := requestsSince(f, before); n != 0 {
		t.Fatalf("second listings made %d requests: %v", n, d)
	}
}

// (c) A mesh folder listed (and kept by the kernel) before its conversion
// failed lists error.txt once it has: the failure drops the listing.
func TestErrorTxtAppearsInCachedListing(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		write(t, filepath.Join(src, "bad"+fakeExt), fakeDecodeBroken())
		f, mnt := mountT(t, src, Config{})
		dir := filepath.Join(mnt, "bad"+fakeExt)
		for range 2 {
			if ls := names(t, dir); slices.Contains(ls, outputs.ErrorName) {
				t.Fatalf("error.txt listed before any conversion: %v", ls)
			}
		}
		if !f.cfg.OpenHandles {
			before := f.raw.requests()
			names(t, dir)
			if n, d := requestsSince(f, before); n != 0 {
				t.Fatalf("the listing was not kept: %d requests %v", n, d)
			}
		}
		if _, err := os.ReadFile(filepath.Join(dir, "bad.glb")); !errors.Is(err, syscall.EIO) {
			t.Fatalf("glb read: %v, want EIO", err)
		}
		if ls := names(t, dir); !slices.Contains(ls, outputs.ErrorName) {
			t.Fatalf("error.txt not listed right after the failure: %v", ls)
		}
		if b, err := os.ReadFile(filepath.Join(dir, outputs.ErrorName)); err != nil || !bytes.Contains(b, []byte("bad"+fakeExt)) {
			t.Fatalf("error.txt: %q %v", b, err)
		}
	})
}

// (d) A folder of 5 000 entries lists whole through the handle-less
// READDIR path, read in many requests, each listing made once (not once
// per request), by one reader and by several at once; a reader that stops
// half way leaves nothing held for long.
func TestNoOpenBigFolder(t *testing.T) {
	const n = 5000
	src := t.TempDir()
	big := filepath.Join(src, "big")
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range n {
		name := fmt.Sprintf("file-with-a-longish-name-%05d.txt", i)
		want = append(want, name)
		fh, err := os.Create(filepath.Join(big, name))
		if err != nil {
			t.Fatal(err)
		}
		fh.Close()
	}
	sort.Strings(want)
	f, mnt := mountT(t, src, Config{})
	mbig := filepath.Join(mnt, "big")

	// Half a listing, then stop: the held handle goes after heldIdle.
	d, err := os.Open(mbig)
	if err != nil {
		t.Fatal(err)
	}
	if part, err := d.Readdirnames(10); err != nil || len(part) != 10 {
		t.Fatalf("first names: %v %v", part, err)
	}
	d.Close()

	// One reader: the listing is made once (or not at all: the kernel
	// may go on from the part it kept, through the handle held for it).
	opens := f.raw.listOpens.Load()
	if got := names(t, mbig); !slices.Equal(got, want) {
		t.Fatalf("listed %d names, want %d", len(got), n)
	}
	if o := f.raw.listOpens.Load() - opens; o > 1 {
		t.Fatalf("one listing of %d entries made %d times", n, o)
	}

	// Four readers at once, after the kernel dropped its listing.
	node, _ := f.dirs.At(big)
	if node == nil {
		t.Fatal("the folder is not watched")
	}
	f.notifyContent(&node.Inode)
	before, opens := f.raw.requests(), f.raw.listOpens.Load()
	var wg sync.WaitGroup
	got := make([][]string, 4)
	for i := range got {
		wg.Go(func() { got[i] = names(t, mbig) })
	}
	wg.Wait()
	for i := range got {
		if !slices.Equal(got[i], want) {
			t.Fatalf("reader %d listed %d names, want %d", i, len(got[i]), n)
		}
	}
	_, reqs := requestsSince(f, before)
	o := f.raw.listOpens.Load() - opens
	t.Logf("4 concurrent listings of %d entries: %v, %d listings made", n, reqs, o)
	rd := reqs["READDIR"] + reqs["READDIRPLUS"]
	if rd == 0 || rd > n/10 || o > rd/2 {
		t.Fatalf("%d READDIR(PLUS) requests and %d listings for %d entries", rd, o, n)
	}
	// Cached now: no request.
	before = f.raw.requests()
	if got := names(t, mbig); !slices.Equal(got, want) {
		t.Fatalf("cached listing: %d names", len(got))
	}
	if m, d := requestsSince(f, before); m != 0 {
		t.Fatalf("cached listing made %d requests: %v", m, d)
	}
	if !waitFor(2*heldIdle+time.Second, func() bool { return f.raw.held.Len() == 0 }) {
		t.Fatalf("%d listing handles still held", f.raw.held.Len())
	}
}

// (e) Concurrent readers of outputs, plain files, raw chunks and listings
// under no_open all get the bytes `convert` writes.
func TestNoOpenConcurrentReaders(t *testing.T) {
	src := fakeTree(t, 20)
	_, mnt := mountT(t, src, Config{})
	type file struct {
		path string
		want []byte
	}
	var files []file
	for i := range 20 {
		dir := fmt.Sprintf("d%02d", i/10)
		name := fmt.Sprintf("m%03d%s", i, fakeExt)
		m := outputs.New(filepath.Join(src, dir, name), fakeFormat{})
		glb, err := m.GLBFile(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := m.OBJFiles(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Join(mnt, dir, name)
		files = append(files, file{filepath.Join(base, m.GLBName()), glb}, file{filepath.Join(base, m.OBJName()), obj})
		st, err := m.Scan(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		chunks := map[string][]byte{} // the last of a name is shown
		for _, c := range st.Chunks {
			b, err := m.ChunkBytes(&c)
			if err != nil {
				t.Fatal(err)
			}
			chunks[decode.SafeName(c.Name)] = b
		}
		for name, b := range chunks {
			files = append(files, file{filepath.Join(base, outputs.ChunksDir, name), b})
		}
	}
	for i := range 2 {
		p := filepath.Join(fmt.Sprintf("d%02d", i), "notes.txt")
		b, _ := os.ReadFile(filepath.Join(src, p))
		files = append(files, file{filepath.Join(mnt, p), b})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 200 {
				fl := files[rng.IntN(len(files))]
				var b []byte
				var err error
				if rng.IntN(4) == 0 {
					_, err = os.ReadDir(filepath.Dir(fl.path))
				}
				if err == nil {
					b, err = os.ReadFile(fl.path)
				}
				if err != nil || !bytes.Equal(b, fl.want) {
					errs <- fmt.Errorf("%s: %d bytes, %v; want %d", fl.path, len(b), err, len(fl.want))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A source replaced under no_open (watched): a reader that opens the path
// again reads the new version, with its size.
func TestNoOpenReplaced(t *testing.T) {
	src := t.TempDir()
	p := filepath.Join(src, "m"+fakeExt)
	write(t, p, fakeMesh(40, 1))
	write(t, filepath.Join(src, "notes.txt"), bytes.Repeat([]byte("old version\n"), 1000))
	_, mnt := mountT(t, src, Config{})
	out := filepath.Join(mnt, "m"+fakeExt, "m.obj")
	notes := filepath.Join(mnt, "notes.txt")
	if _, err := os.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(notes); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct{ name, tmp string }{{p, "m.tmp"}, {filepath.Join(src, "notes.txt"), "notes.tmp"}} {
		tmp := filepath.Join(src, w.tmp)
		if w.tmp == "m.tmp" {
			write(t, tmp, fakeMesh(4, 2))
		} else {
			write(t, tmp, []byte("new\n"))
		}
		if err := os.Rename(tmp, w.name); err != nil {
			t.Fatal(err)
		}
	}
	wantNew, _, err := outputs.New(p, fakeFormat{}).OBJFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !waitFor(5*time.Second, func() bool {
		b, err := os.ReadFile(out)
		fi, serr := os.Stat(out)
		return err == nil && serr == nil && bytes.Equal(b, wantNew) && fi.Size() == int64(len(wantNew))
	}) {
		b, err := os.ReadFile(out)
		t.Fatalf("after the replacement: %d bytes %v, want %d", len(b), err, len(wantNew))
	}
	if !waitFor(5*time.Second, func() bool {
		b, err := os.ReadFile(notes)
		return err == nil && string(b) == "new\n"
	}) {
		b, err := os.ReadFile(notes)
		t.Fatalf("notes.txt after the replacement: %q %v", b, err)
	}
}

// Write opens fail with EROFS under no_open too (the kernel refuses them on
// the read-only mount; OPEN is never asked).
func TestNoOpenWriteOpens(t *testing.T) {
	src := t.TempDir()
	write(t, filepath.Join(src, "m"+fakeExt), fakeMesh(3, 1))
	write(t, filepath.Join(src, "plain.txt"), []byte("x"))
	_, mnt := mountT(t, src, Config{})
	for _, p := range []string{"plain.txt", filepath.Join("m"+fakeExt, "m.glb"), filepath.Join("m"+fakeExt, outputs.HeaderName)} {
		// Read first, so that the connection is in no_open already.
		if _, err := os.ReadFile(filepath.Join(mnt, p)); err != nil {
			t.Fatal(err)
		}
		for _, fl := range []int{os.O_WRONLY, os.O_RDWR, os.O_RDONLY | os.O_TRUNC, os.O_WRONLY | os.O_APPEND} {
			fh, err := os.OpenFile(filepath.Join(mnt, p), fl, 0)
			if err == nil {
				fh.Close()
			}
			if !errors.Is(err, syscall.EROFS) {
				t.Errorf("%s opened with %#x: %v, want EROFS", p, fl, err)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(src, "plain.txt")); err != nil || string(b) != "x" {
		t.Fatalf("source changed: %q %v", b, err)
	}
}

// READDIRPLUS answers the entries whose attributes are cheap: after a
// remount on a filled disk cache, `ls -lR` needs no LOOKUP for the outputs
// of a mesh (their sizes are in the index) and converts nothing; before any
// conversion, a listing with READDIRPLUS converts nothing either.
func TestReadDirPlusCheapEntries(t *testing.T) {
	src := fakeTree(t, 20)
	dir := t.TempDir()
	f, _, stop := mountDisk(t, src, dir, true)
	waitPrewarmed(t, f)
	stop()

	f, mnt, _ := mountDisk(t, src, dir, false)
	before := f.raw.requests()
	out, err := exec.Command("ls", "-lR", mnt).CombinedOutput()
	if err != nil {
		t.Fatalf("ls -lR: %v\n%s", err, out)
	}
	n, d := requestsSince(f, before)
	t.Logf("remount, ls -lR of 20 meshes: %d requests %v", n, d)
	if c := conversions(f.Stats()); c != 0 {
		t.Fatalf("ls -lR after remount converted %d outputs", c)
	}
	if d["READDIRPLUS"] == 0 {
		t.Fatalf("no READDIRPLUS: %v", d)
	}
	// Per mesh, the one entry left to a LOOKUP is its loaded chunk
	// (POS.x2: decompressed on demand, not in memory after the remount);
	// without READDIRPLUS every folder, output and chunk is one (8 a mesh).
	if d["LOOKUP"] > 20 {
		t.Fatalf("%d LOOKUPs for 20 meshes: %v", d["LOOKUP"], d)
	}
	// The sizes listed are exact.
	for i := range 20 {
		name := fmt.Sprintf("m%03d%s", i, fakeExt)
		m := outputs.New(filepath.Join(src, fmt.Sprintf("d%02d", i/10), name), fakeFormat{})
		glb, err := m.GLBFile(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(mnt, fmt.Sprintf("d%02d", i/10), name, m.GLBName()))
		if err != nil || fi.Size() != int64(len(glb)) {
			t.Fatalf("%s: size %v %v, want %d", name, fi, err, len(glb))
		}
	}
}

// Handle-less reads of plain files keep a bounded number of source
// descriptors open: a cold read of a big file opens its source once, not
// once per request; reading more files than srcfd.Max leaves no more than
// that open; all are closed with the mount.
func TestNoOpenSourceDescriptors(t *testing.T) {
	src := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<19) // 8 MiB: 8 READs at least (1 MiB each)
	write(t, filepath.Join(src, "big.bin"), big)
	for i := range srcfd.Max + 36 {
		write(t, filepath.Join(src, "many", fmt.Sprintf("f%03d", i)), []byte(fmt.Sprint(i)))
	}
	base := fdCount(t)
	f, mnt := mountT(t, src, Config{})
	before := f.raw.requests()["READ"]
	opens := f.srcFDs.Opens()
	if b, err := os.ReadFile(filepath.Join(mnt, "big.bin")); err != nil || !bytes.Equal(b, big) {
		t.Fatalf("big.bin: %d bytes %v", len(b), err)
	}
	reads := f.raw.requests()["READ"] - before
	if o := f.srcFDs.Opens() - opens; reads < 8 || o != 1 {
		t.Fatalf("%d READs opened the source %d times", reads, o)
	}
	for i := range srcfd.Max + 36 {
		if b, err := os.ReadFile(filepath.Join(mnt, "many", fmt.Sprintf("f%03d", i))); err != nil || string(b) != fmt.Sprint(i) {
			t.Fatalf("f%03d: %q %v", i, b, err)
		}
	}
	// The mount's own descriptors (/dev/fuse, the watcher) are a few.
	if n := fdCount(t) - base; n > srcfd.Max+8 {
		t.Fatalf("%d descriptors open after reading %d files", n, srcfd.Max+37)
	}
	held := f.srcFDs.Kept()
	if held != f.srcFDs.Cap() || held != srcfd.Max {
		t.Fatalf("%d source descriptors held, want %d (at most %d)", held, f.srcFDs.Cap(), srcfd.Max)
	}
}

// stats.json's fuse_request_ms has the kinds fuse_requests counts (less
// FORGET, which has no reply), and READDIRPLUS, which lists and scans the
// mesh folder, took time.
func TestRequestMillis(t *testing.T) {
	src := fakeTree(t, 3)
	_, mnt := mountT(t, src, Config{})
	if _, err := os.ReadFile(filepath.Join(mnt, "d00", "m001"+fakeExt, outputs.HeaderName)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadDir(filepath.Join(mnt, "d00", "m002"+fakeExt)); err != nil {
		t.Fatal(err)
	}
	s := stats(t, mnt)
	for op, n := range s.Requests {
		if _, ok := s.RequestMillis[op]; !ok && op != "FORGET" && n > 0 {
			t.Errorf("%s: %d requests, no time: %v", op, n, s.RequestMillis)
		}
	}
	for op, ms := range s.RequestMillis {
		if s.Requests[op] == 0 || ms < 0 {
			t.Errorf("%s: %v ms for %d requests", op, ms, s.Requests[op])
		}
	}
	if s.RequestMillis["READDIRPLUS"] <= 0 && s.RequestMillis["READDIR"] <= 0 {
		t.Errorf("listings took no time: %v", s.RequestMillis)
	}
}

// Under no_open a cold listing of a mesh folder stores header.json in the
// kernel's page cache: reading it next sends no READ and gives the bytes a
// READ would; after the source changes, the new header is read.
func TestHeaderPushedWithListing(t *testing.T) {
	for _, watched := range []bool{true, false} {
		t.Run(fmt.Sprintf("watched=%v", watched), func(t *testing.T) {
			src := t.TempDir()
			mesh := filepath.Join(src, "m"+fakeExt)
			write(t, mesh, fakeMesh(3, 1))
			f, mnt := mountT(t, src, Config{NoWatch: !watched})
			hdr := filepath.Join(mnt, "m"+fakeExt, outputs.HeaderName)
			header := func() []byte {
				t.Helper()
				m := outputs.New(mesh, fakeFormat{})
				b, err := m.Header(m.Scan(t.Context()))
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			names(t, filepath.Join(mnt, "m"+fakeExt))
			if s := f.Stats(); s.HeaderPushes != 1 {
				t.Fatalf("header pushes %d after the listing, want 1", s.HeaderPushes)
			}
			before := f.raw.requests()
			got, err := os.ReadFile(hdr)
			if err != nil || !bytes.Equal(got, header()) {
				t.Fatalf("header.json %q %v, want %q", got, err, header())
			}
			if _, d := requestsSince(f, before); d["READ"] != 0 {
				t.Fatalf("reading the pushed header.json sent %v", d)
			}

			write(t, mesh, fakeMesh(40, 2)) // more triangles: another header
			want := header()
			if !waitFor(5*time.Second, func() bool {
				b, err := os.ReadFile(hdr)
				return err == nil && bytes.Equal(b, want)
			}) {
				b, err := os.ReadFile(hdr)
				t.Fatalf("header.json after the change: %q %v, want %q", b, err, want)
			}
		})
	}
}

// Listings that push header.json race reads of it: both finish (no lock
// held across the store, which waits for pages a READ in flight holds),
// and every read gives the header's bytes.
func TestHeaderPushRacesReads(t *testing.T) {
	const meshes = 200
	src := fakeTree(t, meshes)
	_, mnt := mountT(t, src, Config{})
	var wg sync.WaitGroup
	errs := make(chan error, 2*meshes)
	for i := range meshes {
		rel := filepath.Join(fmt.Sprintf("d%02d", i/10), fmt.Sprintf("m%03d%s", i, fakeExt))
		m := outputs.New(filepath.Join(src, rel), fakeFormat{})
		want, err := m.Header(m.Scan(t.Context()))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, err := os.ReadDir(filepath.Join(mnt, rel)); err != nil {
				errs <- err
			}
		}()
		go func() {
			defer wg.Done()
			b, err := os.ReadFile(filepath.Join(mnt, rel, outputs.HeaderName))
			if err == nil && !bytes.Equal(b, want) {
				err = fmt.Errorf("%s: header.json %q, want %q", rel, b, want)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("listings and reads of header.json did not finish: deadlock")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// As root the mount's readahead is raised to 1 MiB, so a sequential
// reader's READs come 1 MiB at a time (MaxWrite).
func TestMountReadahead(t *testing.T) {
	src := t.TempDir()
	write(t, filepath.Join(src, "big"+fakeExt), fakeMesh(100000, 1))
	f, mnt := mountT(t, src, Config{})
	var st syscall.Stat_t
	if err := syscall.Stat(mnt, &st); err != nil {
		t.Fatal(err)
	}
	knob := fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)))
	b, err := os.ReadFile(knob)
	if err != nil {
		decodetest.CannotRun(t, "no bdi knob: %v", err)
	}
	if os.Geteuid() != 0 {
		decodetest.CannotRun(t, "not root: readahead %s KiB", strings.TrimSpace(string(b)))
	}
	if got := strings.TrimSpace(string(b)); got != strconv.Itoa(mountpoint.ReadaheadKB) {
		t.Fatalf("readahead %s KiB, want %d", got, mountpoint.ReadaheadKB)
	}
	glb := filepath.Join(mnt, "big"+fakeExt, "big.glb")
	fi, err := os.Stat(glb)
	if err != nil {
		t.Fatal(err)
	}
	before := f.raw.requests()
	fd, err := os.Open(glb)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	buf := make([]byte, 8<<10)
	var n int64
	for {
		k, err := fd.Read(buf)
		n += int64(k)
		if err != nil {
			break
		}
	}
	_, d := requestsSince(f, before)
	// 128 KiB READs would be size/128 KiB of them.
	if n != fi.Size() || d["READ"] > fi.Size()/(256<<10)+2 {
		t.Fatalf("read %d of %d bytes in %d READs", n, fi.Size(), d["READ"])
	}
}

// requests returns the counts of requests by kind.
func (r *rawFS) requests() map[string]int64 {
	n, _ := r.reqs.Counts()
	return n
}

func TestCounter(t *testing.T) {
	c := newReqCounter()
	c.Count("FORGET")
	read := c.Time("READ")
	time.Sleep(3 * time.Millisecond)
	read.Done()
	c.Time("READ").Done()
	got, ms := c.Counts()
	if len(got) != 2 || got["READ"] != 2 || got["FORGET"] != 1 {
		t.Fatalf("counts %v", got)
	}
	if _, ok := ms["LOOKUP"]; ok || ms["READ"] < 3 {
		t.Fatalf("millis %v", ms)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a kind not counted was counted")
		}
	}()
	c.Count("WRITE")
}
