package archive

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

// hostileLimits are small, so that a bomb meets them at once.
var hostileLimits = Limits{MaxInflate: 1 << 20, MemInflate: 1 << 20}

// variant is a broken or malicious archive; originals, when set, are the
// true contents of the names it lists: whatever reads whole must be them.
type variant struct {
	name      string
	data      []byte
	originals map[string][]byte
}

// hostileBase is a sound archive without data descriptors: small files of
// ../shared/assets/tf-inova when present, and generated ones, stored and
// deflated, with a folder entry.
func hostileBase(t *testing.T) ([]byte, map[string][]byte) {
	files := map[string][]byte{}
	if root, ok := decodetest.Shared(t, "assets/tf-inova"); ok {
		for p, b := range treeFiles(t, root) {
			if len(b) < 20000 {
				files[p] = b
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 12 {
		b := make([]byte, rng.IntN(5000))
		for j := range b {
			b[j] = byte(rng.IntN(4)) + 'a'
		}
		files[fmt.Sprintf("gen/%02d.bin", i)] = b
	}
	var entries []rawEntry
	for i, p := range sortedKeys(files) {
		if i%2 == 0 {
			entries = append(entries, storedEntry(p, files[p]))
		} else {
			entries = append(entries, deflatedEntry(t, p, files[p]))
		}
	}
	entries = append(entries, storedEntry("empty/", nil))
	return rawZip(entries), files
}

// boundaries are the offsets where records and fields of z start: every
// local header, every central record, the end record and its fields.
func boundaries(z []byte) []int {
	var out []int
	for i := 0; i+4 <= len(z); i++ {
		switch le32(z[i:]) {
		case sigLocal, sigCentral:
			out = append(out, i, i+4, i+lenLocal, i+lenCentral)
		case sigEnd:
			for _, f := range []int{0, 4, 8, 10, 12, 16, 20, 22} {
				out = append(out, i+f)
			}
		}
	}
	return out
}

// hostileVariants: truncations at every boundary and at random points,
// lying sizes, offsets and counts, flipped bytes, bombs, overlaps, many
// entries and deep names.
func hostileVariants(t *testing.T) []variant {
	z, files := hostileBase(t)
	rng := rand.New(rand.NewPCG(3, 4))
	var vs []variant
	cuts := boundaries(z)
	for range 64 {
		cuts = append(cuts, rng.IntN(len(z)))
	}
	for _, c := range cuts {
		if c < len(z) {
			vs = append(vs, variant{fmt.Sprintf("cut at %d", c), z[:c], files})
		}
	}
	cd := bytes.Index(z, []byte("PK\x01\x02"))
	for at := cd; at >= 0 && at+lenCentral <= len(z); {
		for _, field := range []int{20, 24, 42} { // compressed size, size, local header offset
			for _, v := range []uint32{0, 1, 0x7fffffff, 0xffffffff, le32(z[at+field:]) + 1, le32(z[at+field:]) - 1} {
				b := bytes.Clone(z)
				binary.LittleEndian.PutUint32(b[at+field:], v)
				vs = append(vs, variant{fmt.Sprintf("central record at %d, field at +%d = %d", at, field, v), b, files})
			}
		}
		next := bytes.Index(z[at+4:], []byte("PK\x01\x02"))
		if next < 0 {
			break
		}
		at += 4 + next
	}
	end := bytes.LastIndex(z, []byte("PK\x05\x06"))
	for _, f := range []struct{ off, size int }{{8, 2}, {10, 2}, {12, 4}, {16, 4}, {20, 2}} {
		for _, v := range []uint32{0, 1, 0xffff, 0xffffffff} {
			b := bytes.Clone(z)
			if f.size == 2 {
				binary.LittleEndian.PutUint16(b[end+f.off:], uint16(v))
			} else {
				binary.LittleEndian.PutUint32(b[end+f.off:], v)
			}
			vs = append(vs, variant{fmt.Sprintf("end record field at +%d = %d", f.off, v), b, files})
		}
	}
	for i := range 200 {
		b := bytes.Clone(z)
		for range 1 + rng.IntN(4) {
			b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		}
		vs = append(vs, variant{fmt.Sprintf("flips %d", i), b, files})
	}
	// Bombs: an honest one past MaxInflate, one lying about its size, one
	// declaring more than deflate can hold, and 1000 entries sharing one
	// kernel (overlapping).
	zeros := zeroDeflate(t, 64)
	honest := rawEntry{name: "honest.bin", data: zeros, method: Deflate, crc: crc32.ChecksumIEEE(make([]byte, 64<<20)), usize: 64 << 20, offset: -1}
	liar := rawEntry{name: "liar.bin", data: zeros, method: Deflate, crc: 0, usize: 1000, offset: -1}
	huge := rawEntry{name: "huge.bin", data: zeros[:100], method: Deflate, usize: 0xfffffff0, offset: -1}
	vs = append(vs, variant{"bomb", rawZip([]rawEntry{honest, liar, huge}), nil})
	shared := []rawEntry{{name: "kernel", data: zeros, method: Deflate, usize: 64 << 20, crc: honest.crc, offset: -1}}
	for i := range 1000 {
		shared = append(shared, rawEntry{name: fmt.Sprintf("copy%d", i), data: zeros, method: Deflate, usize: 64 << 20, crc: honest.crc, offset: 0, noLocal: true})
	}
	vs = append(vs, variant{"overlapping bomb", rawZip(shared), nil})
	// Encrypted, escaping and duplicate names.
	var bad []rawEntry
	for _, n := range []string{"../x", "/etc/passwd", "a\x00b", `..\..\windows\x`, "ok", "ok", "C:/boot.ini"} {
		e := storedEntry(n, []byte(n))
		bad = append(bad, e)
	}
	enc := storedEntry("secret", []byte("secret"))
	enc.flags |= flagEncrypted
	vs = append(vs, variant{"names", rawZip(append(bad, enc)), map[string][]byte{"ok": []byte("ok")}})
	// Many entries with deep names, each naming new folders.
	var deep []rawEntry
	for i := range 2000 {
		deep = append(deep, storedEntry(fmt.Sprintf("%d/%s", i, strings.Repeat("a/", 40)), nil))
	}
	vs = append(vs, variant{"deep names", rawZip(deep), nil})
	// Go's writer puts sizes in data descriptors: cut, they are measured.
	many := map[string][]byte{}
	for i := range 3000 {
		many[fmt.Sprintf("m/%d", i)] = []byte{byte(i)}
	}
	zm := zipFiles(t, many, 0)
	for _, c := range []int{len(zm) / 2, len(zm) - 100} {
		vs = append(vs, variant{fmt.Sprintf("3000 descriptors cut at %d", c), zm[:c], many})
	}
	var tiny []rawEntry
	for i := range 20000 {
		tiny = append(tiny, storedEntry(fmt.Sprint(i%10), nil))
	}
	vs = append(vs, variant{"20000 duplicates", rawZip(tiny), nil})
	return vs
}

// TestHostile: every variant lists and reads, under a deadline, without a
// panic, a name escaping the archive's folder, bytes other than the true
// ones, or allocation beyond a bound: 64 times the archive's size for the
// listing (plus the 64 KiB end search), and an entry's size plus 256 KiB
// for reading one whole (the first 64 files of each variant).
func TestHostile(t *testing.T) {
	vs := hostileVariants(t)
	var listed, read, refused int
	var worst float64
	for _, v := range vs {
		done := make(chan string, 1)
		go func() {
			defer func() {
				if r := recover(); r != nil {
					done <- fmt.Sprintf("panic: %v", r)
				}
			}()
			done <- hostileOne(v, &listed, &read, &refused, &worst)
		}()
		select {
		case msg := <-done:
			if msg != "" {
				t.Errorf("%s: %s", v.name, msg)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: hangs", v.name)
		}
	}
	t.Logf("%d variants: %d entries listed, %d read whole, %d reads refused; listing allocated at most %.1f× the archive's size", len(vs), listed, read, refused, worst)
}

func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// hostileOne checks one variant; it returns what went wrong, or "".
func hostileOne(v variant, listed, read, refused *int, worst *float64) string {
	var a *Archive
	size := int64(len(v.data))
	n := allocated(func() { a, _ = Open(bytes.NewReader(v.data), size, v.name, hostileLimits) })
	if bound := 64*uint64(size) + 4*(lenEnd+maxComment) + 4096; n > bound {
		return fmt.Sprintf("listing allocated %d bytes for an archive of %d", n, size)
	}
	*worst = max(*worst, float64(n-min(n, 4*(lenEnd+maxComment)))/float64(max(size, 1)))
	var msg string
	measured := 0
	a.Walk(func(e *Entry) error {
		*listed++
		if c, _, err := cleanName(e.Path); err != nil || c != e.Path || !filepath.IsLocal(e.Path) {
			msg = fmt.Sprintf("entry %q escapes or is not clean", e.Path)
			return errors.New(msg)
		}
		if e.IsDir() {
			return nil
		}
		var b []byte
		var err error
		readWhole := func() { b, err = a.ReadFile(e, hostileLimits.MaxInflate) }
		if measured++; measured > 64 {
			readWhole() // the first 64 files of each variant are measured (ReadMemStats stops the world)
		} else if n := allocated(readWhole); n > uint64(e.Size)+256<<10 {
			msg = fmt.Sprintf("%s: reading %d bytes allocated %d", e.Path, e.Size, n)
			return errors.New(msg)
		}
		if err != nil {
			*refused++
			var fe *decode.FormatError
			if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), v.name+": ") {
				msg = fmt.Sprintf("%s: error %v names no archive or offset", e.Path, err)
			}
		} else {
			*read++
			if want, ok := v.originals[e.Path]; ok && !bytes.Equal(b, want) {
				msg = fmt.Sprintf("%s: read %d bytes that are not the original's %d", e.Path, len(b), len(want))
				return errors.New(msg)
			}
		}
		if r, err := a.Open(e); err == nil {
			p := make([]byte, 4096)
			r.ReadAt(p, e.Size/2)
			r.ReadAt(p, 0)
			r.Close()
		}
		// Through checkpoints (no memory for whole entries, no spill
		// folder): the same bytes as ReadFile, or an error.
		cp := *a
		cp.limits = Limits{MaxInflate: hostileLimits.MaxInflate}
		if r, err := cp.Open(e); err == nil {
			p := make([]byte, e.Size+1)
			n, rerr := r.ReadAt(p, 0)
			r.Close()
			if b != nil && rerr == io.EOF && !bytes.Equal(p[:n], b) {
				msg = fmt.Sprintf("%s: %d bytes read through checkpoints differ from ReadFile's %d", e.Path, n, len(b))
				return errors.New(msg)
			}
			if b == nil && rerr == io.EOF && n == len(p)-1 && e.Method == Deflate && e.Size > 0 {
				msg = fmt.Sprintf("%s: read whole through checkpoints, refused by ReadFile: %v", e.Path, err)
				return errors.New(msg)
			}
		}
		return nil
	})
	if msg != "" {
		return msg
	}
	blob, _ := a.MarshalBinary()
	var b Archive
	if err := b.UnmarshalBinary(blob); err != nil || b.Len() != a.Len() {
		return fmt.Sprintf("listing round trip: %v, %d entries of %d", err, b.Len(), a.Len())
	}
	return ""
}

// TestBombs: an honest bomb is refused past MaxInflate, a liar stops at its
// declared size, a declaration deflate cannot hold is refused at listing,
// and entries sharing one kernel leave only the first.
func TestBombs(t *testing.T) {
	vs := hostileVariants(t)
	find := func(name string) variant {
		for _, v := range vs {
			if v.name == name {
				return v
			}
		}
		t.Fatalf("no variant %q", name)
		return variant{}
	}
	v := find("bomb")
	a, err := Open(bytes.NewReader(v.data), int64(len(v.data)), "bomb.zip", hostileLimits)
	if err == nil || !strings.Contains(err.Error(), `"huge.bin"`) {
		t.Errorf("huge.bin not refused at listing: %v", err)
	}
	if e, ok := a.Lookup("honest.bin"); !ok {
		t.Error("honest.bin: not listed")
	} else if _, err := a.Open(e); !errors.Is(err, decode.ErrLimit) {
		t.Errorf("honest.bin: Open %v, want decode.ErrLimit", err)
	}
	if e, ok := a.Lookup("liar.bin"); !ok {
		t.Error("liar.bin: not listed")
	} else {
		r, err := a.Open(e)
		if err != nil {
			t.Fatal(err)
		}
		p := make([]byte, 100)
		if _, err := r.ReadAt(p, 0); err == nil || !strings.Contains(err.Error(), "more than the 1000 bytes") {
			t.Errorf("liar.bin: ReadAt: %v, want the size's lie", err)
		}
		if z := r.(*inflater); z.done > 1000 || cap(z.mem) > 1000 {
			t.Errorf("liar.bin: %d bytes inflated, %d held, for 1000 declared", z.done, cap(z.mem))
		}
		if _, err := a.ReadFile(e, 0); err == nil {
			t.Error("liar.bin: ReadFile: no error")
		}
	}
	v = find("overlapping bomb")
	a, err = Open(bytes.NewReader(v.data), int64(len(v.data)), "overlap.zip", hostileLimits)
	if a.Len() != 1 || err == nil || !strings.Contains(err.Error(), "overlaps") {
		t.Errorf("overlapping bomb: %d entries listed, %v; want the kernel alone", a.Len(), err)
	}
}

// TestRecoverDescriptors: an archive Go's writer made (every entry's sizes
// in a data descriptor, stored and deflated) cut short anywhere lists, from
// its local headers, every entry whose data and descriptor are whole, with
// the true bytes, and an error.
func TestRecoverDescriptors(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	files := map[string][]byte{}
	for i := range 20 {
		b := make([]byte, rng.IntN(20000))
		for j := range b {
			b[j] = byte(rng.IntN(8)) + 'a'
		}
		files[fmt.Sprintf("d%d/f%02d.bin", i%3, i)] = b
	}
	z := zipFiles(t, files, 0)
	cd := bytes.Index(z, []byte("PK\x01\x02"))
	var cuts []int
	for _, c := range boundaries(z) {
		if c < len(z) {
			cuts = append(cuts, c)
		}
	}
	for range 40 {
		cuts = append(cuts, rng.IntN(len(z)))
	}
	whole := 0
	for _, c := range cuts {
		a, err := Open(bytes.NewReader(z[:c]), int64(c), "cut.zip", hostileLimits)
		if err == nil {
			t.Errorf("cut at %d: no error", c)
		}
		n := 0
		a.Walk(func(e *Entry) error {
			if e.IsDir() {
				return nil
			}
			n++
			if b, err := a.ReadFile(e, 0); err != nil || !bytes.Equal(b, files[e.Path]) {
				t.Errorf("cut at %d: %s: %d bytes, %v", c, e.Path, len(b), err)
			}
			return nil
		})
		if c >= cd && n != len(files) {
			t.Errorf("cut at %d, in the central directory (at %d): %d of %d files recovered", c, cd, n, len(files))
		}
		if c >= cd {
			whole++
		}
	}
	if whole == 0 {
		t.Error("no cut in the central directory")
	}
}
