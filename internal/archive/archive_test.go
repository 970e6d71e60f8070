package archive

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math/rand/v2"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// checkTree asserts that a lists exactly files (and their folders), each
// with its size, time and bytes, read whole and at random offsets.
func checkTree(t *testing.T, a *Archive, files map[string][]byte, limits Limits) {
	t.Helper()
	dirs := map[string]bool{}
	for p := range files {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	seen := 0
	err := a.Walk(func(e *Entry) error {
		seen++
		if e.IsDir() {
			if !dirs[e.Path] {
				t.Errorf("folder %q listed, not in the tree", e.Path)
			}
			return nil
		}
		want, ok := files[e.Path]
		if !ok {
			t.Errorf("file %q listed, not in the tree", e.Path)
			return nil
		}
		if e.Size != int64(len(want)) || !e.Modified.Equal(testTime) || e.Mode != 0o444 {
			t.Errorf("%s: size %d, time %v, mode %v; want %d, %v, -r--r--r--", e.Path, e.Size, e.Modified, e.Mode, len(want), testTime)
		}
		got, err := a.ReadFile(e, 0)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: ReadFile: %d bytes, %v; want the loose file's %d", e.Path, len(got), err, len(want))
		}
		r, err := a.Open(e)
		if err != nil {
			t.Errorf("%s: Open: %v", e.Path, err)
			return nil
		}
		defer r.Close()
		rng := rand.New(rand.NewPCG(uint64(len(want)), 1))
		for range 20 {
			off := rng.Int64N(int64(len(want)) + 1)
			p := make([]byte, rng.IntN(70000)+1)
			n, err := r.ReadAt(p, off)
			end := min(off+int64(len(p)), int64(len(want)))
			if int64(n) != end-off || !bytes.Equal(p[:n], want[off:end]) || (n < len(p)) != (err == io.EOF) {
				t.Errorf("%s: ReadAt(%d bytes, %d) = %d, %v; want %d bytes of the file", e.Path, len(p), off, n, err, end-off)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(files)+len(dirs) || a.Len() != seen {
		t.Errorf("%d entries listed (Len %d), want %d files and %d folders", seen, a.Len(), len(files), len(dirs))
	}
}

// TestInovaArchive: a ZIP that Go's writer made of ../shared/assets/tf-inova,
// stored and deflated entries alternating, lists the loose tree and reads
// its bytes, in memory and through spill files; archive/zip agrees on every
// entry's offset, sizes and CRC.
func TestInovaArchive(t *testing.T) {
	_, files := inova(t)
	z := zipFiles(t, files, 0)
	for _, limits := range []Limits{DefaultLimits, {MaxInflate: 1 << 30, MemInflate: 1 << 10, SpillDir: t.TempDir()}} {
		a, err := Open(bytes.NewReader(z), int64(len(z)), "inova.zip", limits)
		if err != nil {
			t.Fatal(err)
		}
		checkTree(t, a, files, limits)
	}
	a, _ := Open(bytes.NewReader(z), int64(len(z)), "inova.zip", DefaultLimits)
	zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if err != nil {
		t.Fatal(err)
	}
	methods := map[uint16]int{}
	for _, f := range zr.File {
		e, ok := a.Lookup(f.Name)
		if !ok {
			t.Errorf("%s: not listed", f.Name)
			continue
		}
		data, _ := f.DataOffset()
		got, _ := a.dataOffset(e)
		if got != data || e.CompressedSize != int64(f.CompressedSize64) || e.CRC32 != f.CRC32 || e.Method != f.Method {
			t.Errorf("%s: data at %d, %d bytes, crc %08x, method %d; archive/zip says %d, %d, %08x, %d",
				f.Name, got, e.CompressedSize, e.CRC32, e.Method, data, f.CompressedSize64, f.CRC32, f.Method)
		}
		methods[e.Method]++
	}
	if methods[Store] == 0 || methods[Deflate] == 0 {
		t.Errorf("methods %v: want both stored and deflated entries", methods)
	}
}

// TestZip64EndRecords: with 65 600 entries Go's writer writes ZIP64 end
// records (the 16-bit count saturates); the listing is complete.
func TestZip64EndRecords(t *testing.T) {
	_, files := inova(t)
	const pad = 65600
	z := zipFiles(t, files, pad)
	if !bytes.Contains(z[len(z)-200:], []byte("PK\x06\x06")) {
		t.Fatal("Go's writer wrote no ZIP64 end record")
	}
	a, err := Open(bytes.NewReader(z), int64(len(z)), "pad.zip", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(a.ReadDir("pad")); got != pad {
		t.Errorf("pad/ lists %d entries, want %d", got, pad)
	}
	for p, want := range files {
		e, ok := a.Lookup(p)
		if !ok {
			t.Errorf("%s: not listed", p)
			continue
		}
		if got, err := a.ReadFile(e, 0); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// zeroDeflate is a deflate stream of n MiB of zeros: one MiB's blocks,
// ending byte-aligned (a sync flush), repeated, then a final empty block.
func zeroDeflate(t testing.TB, mib int) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	w.Write(make([]byte, 1<<20))
	w.Flush()
	unit := bytes.Clone(buf.Bytes())
	out := bytes.Repeat(unit, mib)
	return append(out, 0x03, 0x00) // final fixed-Huffman block holding only its end
}

// TestZip64Entry: an entry of more than 4 GiB (a ZIP64 extra field in both
// headers, written by Go's writer from raw deflate data) lists its size,
// reads its first bytes without inflating the rest, and is refused past
// MaxInflate.
func TestZip64Entry(t *testing.T) {
	const mib = 4097
	z := zipOfZeros(t, mib)
	a, err := Open(bytes.NewReader(z), int64(len(z)), "big.zip", Limits{MemInflate: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	e, ok := a.Lookup("big.bin")
	if !ok || e.Size != mib<<20 || e.Size <= 1<<32 {
		t.Fatalf("big.bin: %v, %+v", ok, e)
	}
	r, err := a.Open(e)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := make([]byte, 4096)
	if n, err := r.ReadAt(p, 3<<20); n != len(p) || err != nil || !bytes.Equal(p, make([]byte, 4096)) {
		t.Errorf("ReadAt at 3 MiB: %d, %v", n, err)
	}
	// Checkpointed (no SpillDir, bigger than MemInflate): the index went no
	// further than the block holding the bytes read.
	if c := r.(*checkpointed); c.x.ix.out > 5<<20 || c.r != nil {
		t.Errorf("%d bytes indexed for a read ending at 3 MiB + 4 KiB (fallen back: %v)", c.x.ix.out, c.r != nil)
	}
	a.limits.MaxInflate = 1 << 30
	if _, err := a.Open(e); !errors.Is(err, decode.ErrLimit) {
		t.Errorf("Open past MaxInflate: %v, want decode.ErrLimit", err)
	}
	if _, err := a.ReadFile(e, 1<<30); !errors.Is(err, decode.ErrLimit) {
		t.Errorf("ReadFile past its max: %v, want decode.ErrLimit", err)
	}
}

// TestNames: the package's rule of names (doc, Names), entry by entry.
func TestNames(t *testing.T) {
	if len(cp437Runes) != 128 || decodeCP437([]byte{0xff, 0xb0}) != "\u00a0░" {
		t.Fatalf("the CP437 table has %d runes, ends in %q", len(cp437Runes), decodeCP437([]byte{0xff, 0xb0}))
	}
	uni := []byte{0x75, 0x70, 0x05, 0x00 + 5 + byte(len("ünï.txt")), 0x01}
	raw := []byte("xn.txt")
	c := crc32.ChecksumIEEE(raw)
	uni = append(uni, byte(c), byte(c>>8), byte(c>>16), byte(c>>24))
	uni = append(uni, "ünï.txt"...)
	uni[2], uni[3] = byte(len(uni)-4), 0
	cases := []struct {
		e    rawEntry
		want string // "" when refused
	}{
		{storedEntry("plain.txt", nil), "plain.txt"},
		{storedEntry(`win\dir\file.txt`, nil), "win/dir/file.txt"},
		{storedEntry("./dot//double/x", nil), "dot/double/x"},
		{rawEntry{name: "\x81ber-\xe1.txt", offset: -1}, "über-ß.txt"},
		{rawEntry{name: "xn.txt", extra: uni, offset: -1}, "ünï.txt"},
		{storedEntry("ünï-flagged.txt", nil), "ünï-flagged.txt"},
		{storedEntry("bad-\xff.txt", nil), ""},
		{storedEntry("../x", nil), ""},
		{storedEntry("a/../../x", nil), ""},
		{storedEntry(`..\..\x`, nil), ""},
		{storedEntry("/etc/passwd", nil), ""},
		{storedEntry(`\etc\passwd`, nil), ""},
		{storedEntry("C:/x", nil), ""},
		{storedEntry("a\x00b", nil), ""},
		{storedEntry("a\nb", nil), ""},
		{storedEntry(strings.Repeat("n", 256), nil), ""},
		{storedEntry("./", nil), ""},
	}
	for _, c := range cases {
		z := rawZip([]rawEntry{c.e, storedEntry("witness", []byte("w"))})
		a, err := Open(bytes.NewReader(z), int64(len(z)), "names.zip", DefaultLimits)
		names := []string{}
		a.Walk(func(e *Entry) error {
			if !e.IsDir() && e.Path != "witness" {
				names = append(names, e.Path)
			}
			return nil
		})
		if _, ok := a.Lookup("witness"); !ok {
			t.Errorf("%q: the sound entry beside it is not listed", c.e.name)
		}
		switch {
		case c.want == "" && (len(names) != 0 || err == nil):
			t.Errorf("%q: listed as %q (error %v), want refused with an error", c.e.name, names, err)
		case c.want != "" && (len(names) != 1 || names[0] != c.want || err != nil):
			t.Errorf("%q: listed as %q (error %v), want %q", c.e.name, names, err, c.want)
		}
	}
}

// TestRefusedEntries: encrypted, unsupported, duplicate, clashing,
// overlapping and lying entries are left out, each named in the error,
// and their sound neighbours listed and read.
func TestRefusedEntries(t *testing.T) {
	body := bytes.Repeat([]byte("meshfs "), 100)
	enc := storedEntry("enc.bin", body)
	enc.flags |= flagEncrypted
	strong := storedEntry("strong.bin", body)
	strong.flags |= flagStrongEncrypted
	masked := storedEntry("masked.bin", body)
	masked.flags |= 1 << 13
	bz := storedEntry("bzip2.bin", body)
	bz.method = 12
	lie := storedEntry("lie.bin", body)
	lie.usize = 5
	ratio := deflatedEntry(t, "ratio.bin", body)
	ratio.usize = int64(len(ratio.data))*maxRatio + 65
	link := storedEntry("link", []byte("/etc/passwd"))
	link.madeBy, link.ext = hostUnix<<8, 0o120777<<16
	overlap := storedEntry("overlap.bin", nil)
	overlap.offset, overlap.noLocal = 0, true // claims the first entry's header
	past := storedEntry("past.bin", nil)
	past.offset, past.noLocal = 1<<20, true
	entries := []rawEntry{
		storedEntry("first.bin", body), enc, strong, masked, bz, lie, ratio, link, overlap, past,
		storedEntry("first.bin", []byte("second")), // duplicate: the first wins
		storedEntry("f", []byte("a file")),
		storedEntry("f/inside", []byte("under a file")),
		storedEntry("d/x", []byte("x")),
		storedEntry("d", []byte("a file named like a folder")),
		deflatedEntry(t, "ok.bin", body),
	}
	z := rawZip(entries)
	a, err := Open(bytes.NewReader(z), int64(len(z)), "refuse.zip", DefaultLimits)
	var le *ListError
	if !errors.As(err, &le) {
		t.Fatalf("error %v, want a *ListError", err)
	}
	for _, name := range []string{"enc.bin", "strong.bin", "masked.bin", "bzip2.bin", "lie.bin", "ratio.bin", "link", "overlap.bin", "past.bin", "f/inside"} {
		if _, ok := a.Lookup(name); ok {
			t.Errorf("%s: listed, want refused", name)
		}
		if !strings.Contains(err.Error(), quote(name)) {
			t.Errorf("the error names no %q:\n%v", name, err)
		}
	}
	if e, ok := a.Lookup("d"); !ok || !e.IsDir() {
		t.Errorf("d: %v, want the folder named by d/x", e)
	}
	if !strings.Contains(err.Error(), "duplicate") || !strings.Contains(err.Error(), "a file and a folder") {
		t.Errorf("the error names no duplicate or clash:\n%v", err)
	}
	for name, want := range map[string][]byte{"first.bin": body, "f": []byte("a file"), "d/x": []byte("x"), "ok.bin": body} {
		e, ok := a.Lookup(name)
		if !ok {
			t.Errorf("%s: not listed", name)
			continue
		}
		if got, err := a.ReadFile(e, 0); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	if len(le.Problems) != 12 {
		t.Errorf("%d problems, want 12:\n%v", len(le.Problems), err)
	}
}

// TestListingRoundTrip: MarshalBinary, then Resume on the same file,
// gives the same tree and bytes without reading the central directory;
// a changed file or a damaged listing is refused.
func TestListingRoundTrip(t *testing.T) {
	_, files := inova(t)
	z := zipFiles(t, files, 10)
	a, err := Open(bytes.NewReader(z), int64(len(z)), "inova.zip", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	blob, _ := a.MarshalBinary()
	cd := int(a.dataEnd)
	lr := &lowReader{r: bytes.NewReader(z), low: int64(len(z))}
	b, err := Resume(lr, int64(len(z)), "inova.zip", DefaultLimits, blob)
	if err != nil {
		t.Fatal(err)
	}
	if lr.low < int64(len(z))-lenEnd-maxComment {
		t.Errorf("Resume read from offset %d, before the last %d bytes of %d", lr.low, lenEnd+maxComment, len(z))
	}
	if b.Fingerprint() != a.Fingerprint() || b.Len() != a.Len() {
		t.Errorf("resumed: %v, %d entries; want %v, %d", b.Fingerprint(), b.Len(), a.Fingerprint(), a.Len())
	}
	for i := range 10 {
		files["pad/"+strconv.Itoa(i)] = []byte{}
	}
	checkTree(t, b, files, DefaultLimits)
	if len(blob) > len(z)-cd {
		t.Errorf("listing of %d bytes, more than the central directory's %d", len(blob), len(z)-cd)
	}
	grown := append(bytes.Clone(z), 0)
	if _, err := Resume(bytes.NewReader(grown), int64(len(grown)), "inova.zip", DefaultLimits, blob); err == nil {
		t.Error("Resume of a file of another size: no error")
	}
	tail := bytes.Clone(z)
	tail[len(tail)-10] ^= 1
	if _, err := Resume(bytes.NewReader(tail), int64(len(tail)), "inova.zip", DefaultLimits, blob); err == nil {
		t.Error("Resume of a file whose end record changed: no error")
	}
	for i := range blob {
		flipped := bytes.Clone(blob)
		flipped[i] ^= 0x55
		var c Archive
		if err := c.UnmarshalBinary(flipped); err == nil {
			t.Errorf("listing with byte %d of %d flipped: no error", i, len(blob))
		}
		if err := c.UnmarshalBinary(blob[:i]); err == nil {
			t.Errorf("listing cut at %d of %d: no error", i, len(blob))
		}
	}
}

// TestSniff: archives are sniffed by their first bytes, not their names.
func TestSniff(t *testing.T) {
	z := rawZip(nil)
	for _, c := range []struct {
		head []byte
		want bool
	}{{[]byte("PK\x03\x04rest"), true}, {z, true}, {[]byte("PK\x01\x02"), false}, {[]byte("EPLY"), false}, {nil, false}} {
		if got := Sniff(c.head); got != c.want {
			t.Errorf("Sniff(%q) = %v", c.head, got)
		}
	}
	a, err := Open(bytes.NewReader(z), int64(len(z)), "empty.pak", DefaultLimits)
	if err != nil || a.Len() != 0 {
		t.Errorf("empty archive: %d entries, %v", a.Len(), err)
	}
	if m := fs.FileMode(a.root.Mode); !m.IsDir() {
		t.Errorf("root mode %v", m)
	}
}

// TestConcurrentReads: goroutines reading one deflated entry at random
// offsets while it inflates, in memory, through a spill file and through
// checkpoints, all get the true bytes; a closed reader fails. Race-built,
// each reader makes fewer reads: every read through checkpoints inflates
// a span, which the detector slows tenfold.
func TestConcurrentReads(t *testing.T) {
	reads := 200
	if raceOn {
		reads = 25
	}
	rng := rand.New(rand.NewPCG(11, 12))
	want := make([]byte, 3<<20)
	for i := range want {
		want[i] = byte(rng.IntN(16))
	}
	z := rawZip([]rawEntry{deflatedEntry(t, "big.bin", want)})
	for _, limits := range []Limits{DefaultLimits, {MemInflate: 1 << 10, SpillDir: t.TempDir()}, {MemInflate: 1 << 10}} {
		a, err := Open(bytes.NewReader(z), int64(len(z)), "c.zip", limits)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := a.Lookup("big.bin")
		r, err := a.Open(e)
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 8)
		for g := range 8 {
			go func() {
				rng := rand.New(rand.NewPCG(uint64(g), 13))
				p := make([]byte, 4096)
				for range reads {
					off := rng.Int64N(int64(len(want)) - 4096)
					if n, err := r.ReadAt(p, off); n != len(p) || err != nil || !bytes.Equal(p, want[off:off+4096]) {
						errs <- fmt.Errorf("ReadAt(%d) = %d, %v", off, n, err)
						return
					}
				}
				errs <- nil
			}()
		}
		for range 8 {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
		r.Close()
		if _, err := r.ReadAt(make([]byte, 1), 0); err == nil {
			t.Error("read of a closed entry: no error")
		}
	}
}
