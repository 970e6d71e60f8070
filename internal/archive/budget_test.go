package archive

import (
	"archive/zip"
	"bytes"
	"hash/crc32"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode/decodetest"
)

// zipOfZeros is an archive of one deflated entry, big.bin, of mib MiB of
// zeros (ZIP64 past 4 GiB), its deflate data zeroDeflate's.
func zipOfZeros(t testing.TB, mib int) []byte {
	data := zeroDeflate(t, mib)
	crc := crc32.NewIEEE()
	zero := make([]byte, 1<<20)
	for range mib {
		crc.Write(zero)
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	fw, err := w.CreateRaw(&zip.FileHeader{Name: "big.bin", Method: zip.Deflate, CRC32: crc.Sum32(),
		CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(mib) << 20, Modified: testTime})
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	w.Close()
	return buf.Bytes()
}

// TestFarReadBudget: a 4 KiB read at the end of a 16 GiB ZIP64 entry keeps
// what the reader holds (checkpoints, spans) within its Budget: the
// reader thins its checkpoints instead of keeping one per MiB (512 MiB of
// windows). Closing the reader gives every byte back.
func TestFarReadBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("inflates 16 GiB")
	}
	const mib = 16 << 10
	z := zipOfZeros(t, mib)
	budget := NewBudget(4 << 20)
	a, err := Open(bytes.NewReader(z), int64(len(z)), "big.zip", Limits{MemInflate: 1 << 20, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := a.Lookup("big.bin")
	r, err := a.Open(e)
	if err != nil {
		t.Fatal(err)
	}
	before := decodetest.LiveHeap()
	p := make([]byte, 4096)
	start := time.Now()
	if n, err := r.ReadAt(p, e.Size-4096); n != len(p) || (err != nil && err != io.EOF) || !bytes.Equal(p, make([]byte, 4096)) {
		t.Fatalf("ReadAt(size-4096): %d, %v", n, err)
	}
	took := time.Since(start)
	held := decodetest.LiveHeap() - before
	x := r.(*checkpointed).x
	if r.(*checkpointed).r != nil {
		t.Fatal("fell back to the in-memory inflater")
	}
	cps, every := len(x.ix.cps), x.ix.every
	t.Logf("16 GiB entry, read at its end in %v: %d checkpoints %d MiB apart, %.1f MiB charged, heap +%.1f MiB",
		took, cps, every>>20, float64(budget.Used())/(1<<20), float64(held)/(1<<20))
	if budget.Used() > budget.Limit() || cps > maxCheckpoints {
		t.Errorf("%d bytes charged to a budget of %d, %d checkpoints", budget.Used(), budget.Limit(), cps)
	}
	// What is held beyond the charges: the pass's own output (slideAt)
	// and its bufio reader.
	if held > budget.Limit()+4<<20 {
		t.Errorf("the reader holds %d bytes after one read, more than its budget of %d and 4 MiB", held, budget.Limit())
	}
	// A read anywhere now restarts no further than the spacing before it.
	start = time.Now()
	if n, _ := r.ReadAt(p, e.Size/3); n != len(p) || !bytes.Equal(p, make([]byte, 4096)) {
		t.Fatalf("ReadAt(size/3): %d", n)
	}
	t.Logf("then a read at a third in %v", time.Since(start))
	r.Close()
	if budget.Used() != 0 {
		t.Errorf("%d bytes still charged after Close", budget.Used())
	}
	runtime.KeepAlive(r)
}

// bitWriter writes a deflate stream's bits, least significant first.
type bitWriter struct {
	b  []byte
	v  uint64
	nb uint
}

func (w *bitWriter) bits(v uint64, n uint) {
	w.v |= v << w.nb
	w.nb += n
	for w.nb >= 8 {
		w.b = append(w.b, byte(w.v))
		w.v >>= 8
		w.nb -= 8
	}
}

// code writes a Huffman code of n bits, most significant first.
func (w *bitWriter) code(c uint64, n uint) {
	r := uint64(0)
	for i := range n {
		r = r<<1 | c>>i&1
	}
	w.bits(r, n)
}

func (w *bitWriter) flush() []byte {
	if w.nb > 0 {
		w.b = append(w.b, byte(w.v))
	}
	return w.b
}

// oneBlockOfZeros is a deflate stream of a single fixed-Huffman block: a
// zero, then matches of 258 bytes at distance 1, size bytes in all.
func oneBlockOfZeros(size int) []byte {
	var w bitWriter
	w.bits(1|1<<1, 3) // final, fixed
	w.code(0x30, 8)   // literal 0
	for n := 1; n < size; {
		if size-n >= 258 {
			w.code(0xc5, 8) // length symbol 285: 258
			w.code(0, 5)    // distance 1
			n += 258
		} else {
			w.code(0x30, 8)
			n++
		}
	}
	w.code(0, 7) // end of block
	return w.flush()
}

// TestCheckpointsInsideBlock: a stream of one 64 MiB block still has
// checkpoints (inside it, with its code lengths), so a read restarts near
// its bytes and allocates a span's worth, not everything from the
// block's start.
func TestCheckpointsInsideBlock(t *testing.T) {
	const size = 64 << 20
	z := oneBlockOfZeros(size)
	src := io.NewSectionReader(bytes.NewReader(z), 0, int64(len(z)))
	x := newIndexed(src, size, crc32.ChecksumIEEE(make([]byte, size)), &charges{})
	p := make([]byte, 4096)
	if n, err := x.ReadAt(p, size-4096); n != len(p) || err != nil || !bytes.Equal(p, make([]byte, 4096)) {
		t.Fatalf("ReadAt(size-4096): %d, %v", n, err)
	}
	if len(x.ix.cps) < 60 || !x.ix.cps[1].inBlock {
		t.Fatalf("%d checkpoints in a 64 MiB block (the second inside it: %v)", len(x.ix.cps), len(x.ix.cps) > 1 && x.ix.cps[1].inBlock)
	}
	for _, off := range []int64{size / 2, 5<<20 + 77, size - 1<<20 - 1} {
		var n int
		var err error
		if a := allocated(func() { n, err = x.ReadAt(p, off) }); a > 4<<20 {
			t.Errorf("ReadAt(%d) allocated %d bytes", off, a)
		}
		if n != len(p) || err != nil || !bytes.Equal(p, make([]byte, 4096)) {
			t.Errorf("ReadAt(%d): %d, %v", off, n, err)
		}
	}
}
