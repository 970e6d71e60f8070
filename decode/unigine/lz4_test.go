package unigine

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// lz4Samples are blocks of the kinds a mesh holds (float and index arrays,
// runs, noise), compressed by both of lz4's compressors, each with its
// decompressed bytes.
func lz4Samples(t testing.TB) (packed, raw [][]byte) {
	r := rand.New(rand.NewPCG(1, 2))
	var floats, idx, runs, noise, small []byte
	for i := range 300_000 {
		floats = binary.LittleEndian.AppendUint32(floats, math.Float32bits(float32(i%977)*0.25))
		idx = binary.LittleEndian.AppendUint32(idx, uint32(i/3+i%3))
	}
	for i := range 1 << 20 {
		runs = append(runs, byte(i/1000))
	}
	for range 1 << 16 {
		noise = append(noise, byte(r.Uint32()))
	}
	small = []byte("abcabcabcabcabcabcabc, a short block")
	for _, b := range [][]byte{floats, idx, runs, noise, small, append(append([]byte{}, floats...), noise...)} {
		for _, hc := range []bool{false, true} {
			buf := make([]byte, lz4.CompressBlockBound(len(b)))
			var n int
			var err error
			if hc {
				var c lz4.CompressorHC
				n, err = c.CompressBlock(b, buf)
			} else {
				var c lz4.Compressor
				n, err = c.CompressBlock(b, buf)
			}
			if err != nil || n == 0 {
				t.Fatalf("compressing %d bytes: %d, %v", len(b), n, err)
			}
			packed, raw = append(packed, buf[:n]), append(raw, b)
		}
	}
	return packed, raw
}

// decodeGo gives lz4's bytes for every block, and fails where lz4 fails:
// a short output buffer, a truncated block, a flipped byte.
func TestDecodeGoMatchesLZ4(t *testing.T) {
	packed, raw := lz4Samples(t)
	for i, p := range packed {
		dst := make([]byte, len(raw[i]))
		if n := decodeGo(dst, p); n != len(raw[i]) || !bytes.Equal(dst, raw[i]) {
			t.Fatalf("block %d (%d bytes): decodeGo gave %d bytes, equal %v", i, len(raw[i]), n, bytes.Equal(dst[:max(n, 0)], raw[i][:max(n, 0)]))
		}
		if n, err := uncompressBlock(p, make([]byte, len(raw[i])-1)); err == nil {
			t.Fatalf("block %d into a buffer one byte short: %d bytes, no error", i, n)
		}
	}
	const short = 8 // the short block, by lz4's fast compressor
	if string(raw[short]) != "abcabcabcabcabcabcabc, a short block" {
		t.Fatal("lz4Samples' order changed")
	}
	small := packed[short]
	r := rand.New(rand.NewPCG(3, 4))
	variants := [][]byte{}
	for cut := range len(small) {
		variants = append(variants, small[:cut])
	}
	for range 2000 {
		v := append([]byte{}, small...)
		v[r.IntN(len(v))] ^= byte(1 + r.IntN(255))
		variants = append(variants, v)
	}
	for _, v := range variants {
		for _, size := range []int{len(raw[short]), 4 << 10} {
			want := make([]byte, size)
			wn, werr := lz4.UncompressBlock(v, want)
			got := make([]byte, size)
			gn := decodeGo(got, v)
			if (werr == nil) != (gn >= 0) || werr == nil && (wn != gn || !bytes.Equal(want[:wn], got[:gn])) {
				t.Fatalf("block % x into %d bytes: lz4 %d %v, decodeGo %d", v, size, wn, werr, gn)
			}
		}
	}
}

// FuzzDecodeGo checks decodeGo against lz4's decoder on arbitrary blocks.
func FuzzDecodeGo(f *testing.F) {
	packed, _ := lz4Samples(f)
	for _, p := range packed {
		if len(p) < 4<<10 {
			f.Add(p)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := make([]byte, 64<<10)
		wn, werr := lz4.UncompressBlock(b, want)
		got := make([]byte, 64<<10)
		gn := decodeGo(got, b)
		if (werr == nil) != (gn >= 0) || werr == nil && (wn != gn || !bytes.Equal(want[:wn], got[:gn])) {
			t.Fatalf("lz4 %d %v, decodeGo %d", wn, werr, gn)
		}
	})
}
