package archive

import (
	"bufio"
	"bytes"
	"compress/flate"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"testing"
)

// indexData is data of several kinds: random, text-like, runs, and mixed.
func indexData(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 99))
	b := make([]byte, n)
	for i := 0; i < n; {
		k := min(n-i, 1+rng.IntN(100000))
		switch rng.IntN(4) {
		case 0:
			for j := range k {
				b[i+j] = byte(rng.Uint32())
			}
		case 1:
			for j := range k {
				b[i+j] = "meshfs archive index "[rng.IntN(21)]
			}
		case 2:
			c := byte(rng.Uint32())
			for j := range k {
				b[i+j] = c
			}
		default:
			if i > 0 {
				src := rng.IntN(i)
				for j := range k {
					b[i+j] = b[src+j%(i-src)]
				}
			}
		}
		i += k
	}
	return b
}

// TestCheckpointReads: for streams of compress/flate at every level
// (stored, Huffman-only, fast to best) the block decoder's pass agrees
// with the data's size and CRC-32, takes a checkpoint every span, and
// reads at random offsets, across checkpoints, give the data's bytes.
func TestCheckpointReads(t *testing.T) {
	for level := flate.HuffmanOnly; level <= flate.BestCompression; level++ {
		data := indexData(uint64(level+3), 5<<20+12345)
		var buf bytes.Buffer
		w, _ := flate.NewWriter(&buf, level)
		for i := 0; i < len(data); i += 100000 {
			w.Write(data[i:min(i+100000, len(data))])
			if i%700000 == 0 {
				w.Flush() // stored empty blocks: byte-aligned boundaries too
			}
		}
		w.Close()
		src := io.NewSectionReader(bytes.NewReader(buf.Bytes()), 0, int64(buf.Len()))
		x := newIndexed(src, int64(len(data)), crc32.ChecksumIEEE(data), &charges{})
		rng := rand.New(rand.NewPCG(uint64(level+3), 7))
		p := make([]byte, 70000)
		for range 60 {
			off := rng.Int64N(int64(len(data)))
			n, err := x.ReadAt(p, off)
			end := min(off+int64(len(p)), int64(len(data)))
			if int64(n) != end-off || !bytes.Equal(p[:n], data[off:end]) || (err != nil) != (n < len(p)) {
				t.Fatalf("level %d: ReadAt(%d) = %d, %v; want %d of the data's bytes", level, off, n, err, end-off)
			}
		}
		x.ReadAt(p[:1], int64(len(data)-1))
		if !x.ix.done || len(x.ix.cps) < 5 {
			t.Errorf("level %d: done %v, %d checkpoints for %d bytes", level, x.ix.done, len(x.ix.cps), len(data))
		}
		odd := 0
		for _, cp := range x.ix.cps {
			if cp.bit%8 != 0 {
				odd++
			}
		}
		t.Logf("level %d: %d checkpoints, %d not byte-aligned", level, len(x.ix.cps), odd)
	}
}

// TestBlockDecoderAgrees: the block decoder's output is compress/flate's,
// or it fails where compress/flate does, for damaged streams too.
func TestBlockDecoderAgrees(t *testing.T) {
	data := indexData(1, 300000)
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, 6)
	w.Write(data)
	w.Close()
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range 300 {
		z := bytes.Clone(buf.Bytes())
		if i > 0 {
			for range 1 + rng.IntN(3) {
				z[rng.IntN(len(z))] ^= byte(1 + rng.IntN(255))
			}
		}
		want, ferr := io.ReadAll(flate.NewReader(bytes.NewReader(z)))
		ix := newIndexer(bufio.NewReader(bytes.NewReader(z)), 1<<30, &charges{})
		err := ix.advance(1 << 30)
		if (err == nil) != (ferr == nil) && !(ferr == io.ErrUnexpectedEOF && err != nil) {
			t.Errorf("variant %d: block decoder %v, compress/flate %v", i, err, ferr)
		}
		if err == nil && (ix.out != int64(len(want)) || ix.crc.Sum32() != crc32.ChecksumIEEE(want)) {
			t.Errorf("variant %d: %d bytes, compress/flate %d", i, ix.out, len(want))
		}
	}
}

// FuzzBlockDecoder: on any bytes the block decoder neither panics nor
// hangs, and where it succeeds it gives compress/flate's output; reads
// through its checkpoints give the same bytes.
func FuzzBlockDecoder(f *testing.F) {
	for level := range 10 {
		var buf bytes.Buffer
		w, _ := flate.NewWriter(&buf, level)
		w.Write(indexData(uint64(level), 100000))
		w.Close()
		f.Add(buf.Bytes())
	}
	f.Add([]byte{0x03, 0x00})
	f.Add(zeroDeflate(f, 3)) // 3 MiB from 3 KB: checkpoints, cheaply
	f.Fuzz(func(t *testing.T, z []byte) {
		want, ferr := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(z)), 8<<20))
		ix := newIndexer(bufio.NewReader(bytes.NewReader(z)), 8<<20, &charges{})
		if err := ix.advance(8 << 20); err != nil || !ix.done {
			return
		}
		if ferr != nil || ix.out != int64(len(want)) || ix.crc.Sum32() != crc32.ChecksumIEEE(want) {
			t.Fatalf("block decoder: %d bytes; compress/flate: %d, %v", ix.out, len(want), ferr)
		}
		src := io.NewSectionReader(bytes.NewReader(z), 0, int64(len(z)))
		x := newIndexed(src, int64(len(want)), crc32.ChecksumIEEE(want), &charges{})
		got := make([]byte, len(want))
		for off := int64(len(want)); off > 0; off -= 300000 {
			start := max(off-300000, 0)
			if n, err := x.ReadAt(got[start:off], start); n != int(off-start) || err != nil && err != io.EOF {
				t.Fatalf("ReadAt(%d): %d, %v", start, n, err)
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatal("reads through checkpoints differ")
		}
	})
}
