package store

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func metaKey(i int) diskKey { k := diskKeyOf(i); k.Output = "scan"; return k }

func TestMetaAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	c := openDiskT(t, dir, 1<<20)
	hdr := []byte("{\n  \"file\": \"m1.ply\"\n}\n")
	// Bytes of every value, newlines and spaces included: the index line
	// must carry them whole.
	meta := []byte("chunk table\n\x00\xff with spaces")
	if err := c.putMeta(metaKey(1), [][]byte{hdr}, meta); err != nil {
		t.Fatal(err)
	}
	if err := c.putMeta(metaKey(2), [][]byte{{}}, nil); err != nil { // empty header, empty blob
		t.Fatal(err)
	}
	if err := c.putParts(diskKeyOf(3), [][]byte{payload(3, 10)}); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := c.meta(diskKeyOf(3)); ok {
		t.Error("an entry put without a blob has one")
	}
	// A blob without parts (the mount's record of a failed conversion).
	if err := c.putMeta(metaKey(4), nil, []byte("failed")); err != nil {
		t.Fatal(err)
	}
	c.Close()

	c = openDiskT(t, dir, 1<<20)
	got, sizes, ok := c.meta(metaKey(1))
	if !ok || !bytes.Equal(got, meta) || len(sizes) != 1 || sizes[0] != int64(len(hdr)) {
		t.Fatalf("meta after reopen: %q %v %v", got, sizes, ok)
	}
	if got, sizes, ok := c.meta(metaKey(2)); !ok || len(got) != 0 || len(sizes) != 1 || sizes[0] != 0 {
		t.Fatalf("empty meta after reopen: %q %v %v", got, sizes, ok)
	}
	if got, sizes, ok := c.meta(metaKey(4)); !ok || string(got) != "failed" || len(sizes) != 0 {
		t.Fatalf("a blob without parts after reopen: %q %v %v", got, sizes, ok)
	}
	if parts, ok := c.get(metaKey(4)); !ok || len(parts) != 0 {
		t.Fatalf("a blob without parts: Get gives %q %v", parts, ok)
	}
	parts, ok := c.get(metaKey(1))
	if !ok || !bytes.Equal(parts[0], hdr) {
		t.Fatalf("parts after reopen: %q %v", parts, ok)
	}
	if s := c.stats(); s.Entries != 4 || s.Bytes != int64(len(hdr)+len(meta)+10+len("failed")) {
		t.Errorf("stats: %+v (the blob counts against the budget)", s)
	}
	// Another version string misses.
	c.Close()
	c2, err := OpenDiskCache(dir, 1<<20, "v2")
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, _, ok := c2.meta(metaKey(1)); ok {
		t.Fatal("a blob of another version is a hit")
	}
	// So does another source version.
	k := metaKey(1)
	k.MtimeNs++
	c2.Close()
	c = openDiskT(t, dir, 1<<20)
	if _, _, ok := c.meta(k); ok {
		t.Fatal("a blob of another mtime is a hit")
	}
}

// A damaged index line is skipped, and the lines around it still load.
func TestMetaCorruptLine(t *testing.T) {
	for _, damage := range []struct {
		name string
		edit func(ln string) string
	}{
		{"blob byte", func(ln string) string {
			f := strings.Fields(ln)
			b := []byte(f[5])
			b[5] = map[bool]byte{true: 'B', false: 'A'}[b[5] == 'A']
			f[5] = string(b)
			return strings.Join(f, " ")
		}},
		{"blob checksum", func(ln string) string {
			f := strings.Fields(ln)
			f[4] = "00000000"
			return strings.Join(f, " ")
		}},
		{"blob cut", func(ln string) string {
			f := strings.Fields(ln)
			f[5] = f[5][:len(f[5])-3]
			return strings.Join(f, " ")
		}},
		{"not base64", func(ln string) string {
			f := strings.Fields(ln)
			f[5] += "*"
			return strings.Join(f, " ")
		}},
		{"inline parts cut", func(ln string) string { return ln[:len(ln)-1] }},
		{"inline parts without their colon", func(ln string) string {
			f := strings.Fields(ln)
			f[6] = f[6][1:]
			return strings.Join(f, " ")
		}},
		{"field missing", func(ln string) string { return ln[:strings.LastIndexByte(ln, ' ')] }},
		{"bad size", func(ln string) string {
			f := strings.Fields(ln)
			f[3] = "-5"
			return strings.Join(f, " ")
		}},
	} {
		t.Run(damage.name, func(t *testing.T) {
			dir := t.TempDir()
			c := openDiskT(t, dir, 1<<20)
			for i := 1; i <= 3; i++ {
				if err := c.putMeta(metaKey(i), [][]byte{payload(i, 20)}, payload(i+5, 40)); err != nil {
					t.Fatal(err)
				}
			}
			victim := c.name(metaKey(2))
			c.Close()
			ip := filepath.Join(dir, "index")
			b, err := os.ReadFile(ip)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(b), "\n")
			found := false
			for i, ln := range lines {
				if strings.Contains(ln, victim) {
					lines[i], found = damage.edit(ln), true
				}
			}
			if !found {
				t.Fatal("no index line of the entry")
			}
			os.WriteFile(ip, []byte(strings.Join(lines, "\n")), 0o600)

			c = openDiskT(t, dir, 1<<20)
			if m, _, ok := c.meta(metaKey(2)); ok {
				t.Fatalf("a damaged line was served: %q", m)
			}
			for _, i := range []int{1, 3} {
				if m, _, ok := c.meta(metaKey(i)); !ok || !bytes.Equal(m, payload(i+5, 40)) {
					t.Errorf("entry %d lost with its neighbour's damaged line: %q %v", i, m, ok)
				}
			}
			for _, i := range []int{1, 3} {
				if p, ok := c.get(metaKey(i)); !ok || !bytes.Equal(p[0], payload(i, 20)) {
					t.Errorf("entry %d's inline parts after its neighbour's damage: %q %v", i, p, ok)
				}
			}
		})
	}
}

// An entry's parts damaged, inline in the index or in a data file (parts
// over MaxInline): Get refuses them, and drops the blob with them.
func TestMetaDamagedParts(t *testing.T) {
	for _, size := range []int{100, maxInline + 1} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			c := openDiskT(t, t.TempDir(), 1<<20)
			if err := c.putMeta(metaKey(1), [][]byte{payload(1, size)}, []byte("m")); err != nil {
				t.Fatal(err)
			}
			if err := c.putMeta(metaKey(2), [][]byte{payload(2, size)}, []byte("n")); err != nil {
				t.Fatal(err)
			}
			e := c.ents[c.name(metaKey(1))]
			if e.inline != (size <= maxInline) {
				t.Fatalf("inline = %v for %d bytes", e.inline, size)
			}
			if p, ok := c.get(metaKey(1)); !ok || !bytes.Equal(p[0], payload(1, size)) {
				t.Fatalf("before the damage: %v", ok)
			}
			p, off := c.path(e.name), int64(3)
			if e.inline {
				p, off = filepath.Join(c.dir, "index"), e.off+3
			}
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 1)
			f.ReadAt(b, off)
			b[0] = map[bool]byte{true: 'B', false: 'A'}[b[0] == 'A'] // still base64
			f.WriteAt(b, off)
			f.Close()
			if _, ok := c.get(metaKey(1)); ok {
				t.Fatal("damaged parts served")
			}
			if _, _, ok := c.meta(metaKey(1)); ok {
				t.Fatal("the blob of a damaged entry is still served")
			}
			if s := c.stats(); s.Damaged != 1 {
				t.Errorf("damaged %d", s.Damaged)
			}
			// The neighbour, and a reopen, are unaffected.
			c.Close()
			c = openDiskT(t, c.dir, 1<<20)
			if p, ok := c.get(metaKey(2)); !ok || !bytes.Equal(p[0], payload(2, size)) {
				t.Fatalf("neighbour after reopen: %v", ok)
			}
			if _, ok := c.get(metaKey(1)); ok {
				t.Fatal("the damaged entry is back after a reopen")
			}
		})
	}
}

// Blobs count against the budget and are evicted least recently used
// first, Meta counting as a use; the order survives a reopen.
func TestMetaEviction(t *testing.T) {
	dir := t.TempDir()
	c := openDiskT(t, dir, 1000)
	for i := 0; i < 3; i++ {
		// 100 bytes of data and 200 of blob: 300 against the budget.
		if err := c.putMeta(metaKey(i), [][]byte{payload(i, 100)}, payload(i, 200)); err != nil {
			t.Fatal(err)
		}
	}
	c.meta(metaKey(0)) // 1 is now the least recently used
	if err := c.putMeta(metaKey(3), [][]byte{payload(3, 100)}, payload(3, 200)); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false, true, true} {
		if _, _, ok := c.meta(metaKey(i)); ok != want {
			t.Errorf("entry %d present = %v, want %v", i, ok, want)
		}
	}
	if s := c.stats(); s.Bytes != 900 || s.Evictions != 1 {
		t.Errorf("stats %+v", s)
	}
	// A blob alone over the budget is refused.
	if err := c.putMeta(metaKey(8), [][]byte{{}}, payload(8, 1001)); !errors.Is(err, errTooBig) {
		t.Errorf("blob over the budget: %v", err)
	}
	if err := c.putMeta(metaKey(9), nil, make([]byte, maxMeta+1)); !errors.Is(err, errTooBig) {
		t.Errorf("blob over MaxMeta: %v", err)
	}
	// The in-memory recency of Meta reaches the index at Close: 2 is the
	// least recently used after these, and goes first after a reopen.
	c.meta(metaKey(0))
	c.meta(metaKey(3))
	c.Close()
	c = openDiskT(t, dir, 1000)
	if err := c.putMeta(metaKey(4), [][]byte{payload(4, 100)}, payload(4, 200)); err != nil {
		t.Fatal(err)
	}
	for i, want := range map[int]bool{0: true, 2: false, 3: true, 4: true} {
		if _, _, ok := c.meta(metaKey(i)); ok != want {
			t.Errorf("after reopen: entry %d present = %v, want %v", i, ok, want)
		}
	}
}

// A hostile index (one endless line, lines just over the bound, a blob
// that claims more than MaxMeta) loads without allocating more than the
// bound, and the valid lines after them still count.
func TestMetaHostileIndex(t *testing.T) {
	dir := t.TempDir()
	c := openDiskT(t, dir, 1<<20)
	if err := c.putMeta(metaKey(1), [][]byte{payload(1, 10)}, []byte("ok")); err != nil {
		t.Fatal(err)
	}
	c.Close()
	ip := filepath.Join(dir, "index")
	good, _ := os.ReadFile(ip)
	head, rest, _ := strings.Cut(string(good), "\n")

	name := c.name(metaKey(7))
	var b bytes.Buffer
	b.WriteString(head + "\n")
	// 64 MiB in one line.
	b.WriteString("meta " + name + " 00000000 10 00000000 :")
	b.Write(bytes.Repeat([]byte("A"), 64<<20))
	b.WriteString("\n")
	// Just over the line bound.
	b.WriteString("meta " + name + " 00000000 10 00000000 :")
	b.Write(bytes.Repeat([]byte("A"), maxLine))
	b.WriteString("\n")
	b.WriteString(rest)
	os.WriteFile(ip, b.Bytes(), 0o600)
	os.WriteFile(c.path(name), payload(7, 10), 0o600)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c = openDiskT(t, dir, 1<<20)
	runtime.ReadMemStats(&after)
	// Each overlong line costs what assembling maxLine (≈ 1.3 MiB) by
	// doubling costs, whatever its length: a quarter of this one line.
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("loading a 64 MiB hostile line allocated %d MiB", got>>20)
	}
	if _, _, ok := c.meta(metaKey(7)); ok {
		t.Error("an overlong line was loaded")
	}
	if m, _, ok := c.meta(metaKey(1)); !ok || string(m) != "ok" {
		t.Errorf("the valid line after the hostile ones: %q %v", m, ok)
	}
}

// Inline parts are found again by offset after every way the index
// changes: appends after a reopen that did not rewrite it, compaction
// while in use, a torn last line.
func TestMetaInlineOffsets(t *testing.T) {
	dir := t.TempDir()
	ip := filepath.Join(dir, "index")
	want := map[int][]byte{}
	c := openDiskT(t, dir, 1<<24)
	put := func(i int, b []byte) {
		t.Helper()
		if err := c.putMeta(metaKey(i), [][]byte{b[:len(b)/2], b[len(b)/2:]}, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		want[i] = b
	}
	check := func(when string) {
		t.Helper()
		for i, b := range want {
			p, ok := c.get(metaKey(i))
			if !ok || !bytes.Equal(append(p[0], p[1]...), b) {
				t.Fatalf("%s: entry %d: %v", when, i, ok)
			}
		}
	}
	for i := range 5 {
		put(i, payload(i, 50+i))
	}
	check("first")
	c.Close()
	before, _ := os.Stat(ip)
	c = openDiskT(t, dir, 1<<24)
	if after, _ := os.Stat(ip); !os.SameFile(before, after) {
		t.Error("a compact index was rewritten on open")
	}
	check("reopened")
	put(5, payload(5, 77))
	put(6, payload(6, 0))
	check("appended after reopen")
	for n := range 1500 { // enough lines to compact the index in use
		put(1, payload(n, 10+n%40))
	}
	check("compacted")
	c.Close()
	f, _ := os.OpenFile(ip, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("meta 0123 torn")
	f.Close()
	c = openDiskT(t, dir, 1<<24)
	check("torn last line")
	put(7, payload(7, 33))
	check("appended after a torn line")
	c.Close()
	c = openDiskT(t, dir, 1<<24)
	check("last reopen")
}

// The hand-built index line is the fmt-formatted one the index syntax
// describes, for entries with and without a blob and checksums of every
// width.
func TestRecordLineFormat(t *testing.T) {
	for _, e := range []*diskEntry{
		{name: "ab", sum: 0, sizes: []int64{0}},
		{name: "cd", sum: 0xf, sizes: []int64{1, 22, 333}},
		{name: "ef", sum: 0xdeadbeef, sizes: nil, meta: []byte{}},
		{name: "0123456789abcdef0123456789abcdef01234567", sum: 0x00a0b0c0, sizes: []int64{1 << 40, 7}, meta: []byte("blob\x00\xff")},
	} {
		kind := "put"
		if e.meta != nil {
			kind = "meta"
		}
		want := fmt.Sprintf("%s %s %08x ", kind, e.name, e.sum)
		if len(e.sizes) == 0 {
			want += "-"
		}
		for i, s := range e.sizes {
			if i > 0 {
				want += ","
			}
			want += fmt.Sprint(s)
		}
		if e.meta != nil {
			want += fmt.Sprintf(" %08x :%s", crc32.Checksum(e.meta, castagnoli), base64.RawURLEncoding.EncodeToString(e.meta))
		}
		if got := recordLine(e); got != want {
			t.Errorf("recordLine = %q, want %q", got, want)
		}
	}
}
