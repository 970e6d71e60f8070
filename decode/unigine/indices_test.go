package unigine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// refIndices is reader.indices's compact-int branch as a plain loop over
// parseCompact: the reference the inline fast path must agree with. It
// returns the indices and the bytes consumed, or the error's position and
// message.
func refIndices(b []byte, count, n int) ([]uint32, int, string) {
	idx := make([]uint32, count)
	pos := 0
	for i := range idx {
		v, k, err := parseCompact(b[pos:min(len(b), pos+maxCompactLen)])
		if err != nil {
			return nil, pos, fmt.Sprintf("corner %d: %v", i, err)
		}
		if v < 0 || int64(v) >= int64(n) {
			return nil, pos, fmt.Sprintf("index %d of corner %d is outside the %d vertices", v, i, n)
		}
		idx[i] = uint32(v)
		pos += k
	}
	return idx, pos, ""
}

// TestCompactIndicesFastPath decodes index arrays made of every encoding
// length, both signs, over-long and truncated forms, at every position
// including the last bytes of the data, and checks reader.indices against
// refIndices: same values, or an error at the same offset with the same
// message.
func TestCompactIndicesFastPath(t *testing.T) {
	// Compact indices need ≥ 65536 vertices; with 2²⁶ the four-byte forms
	// are in range too.
	for _, n := range []int{70000, 1 << 26} {
		compactIndicesFastPath(t, n)
	}
}

func compactIndicesFastPath(t *testing.T, n int) {
	pieces := [][]byte{
		appendCompact(nil, 0), appendCompact(nil, 5), appendCompact(nil, 63), appendCompact(nil, 64),
		appendCompact(nil, 8191), appendCompact(nil, 8192), appendCompact(nil, int32(n-1)), appendCompact(nil, int32(n)),
		appendCompact(nil, 1<<20-1), appendCompact(nil, 1<<20), appendCompact(nil, 1<<27), appendCompact(nil, -1),
		appendCompact(nil, -70000),
		{0x80, 0x80, 0x01},       // 8192, with a zero middle payload
		{0x84, 0x00},             // over-long 4
		{0x81, 0x80, 0x00},       // over-long, zero last byte
		{0x80, 0x80, 0x80, 0x01}, // four bytes
		{0x80},                   // continuation running into the next piece (or the end)
		{0x81, 0x80, 0x80, 0x00}, // over-long four bytes, zero last byte
		{0xc1, 0x80, 0x80, 0x01}, // negative four bytes
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 3000 {
		var b []byte
		count := 1 + rng.IntN(12)
		for range count {
			p := pieces[rng.IntN(len(pieces))]
			if trial%2 == 0 {
				p = pieces[rng.IntN(9)] // mostly valid arrays, so errors come late
			}
			b = append(b, p...)
		}
		if rng.IntN(4) == 0 && len(b) > 0 {
			b = b[:rng.IntN(len(b))] // cut anywhere
		}
		if count > len(b) {
			continue // refused by the count check before any index is read
		}
		want, wantAt, wantMsg := refIndices(b, count, n)
		r := newMemReader("f", "s", b, 100)
		got := r.indices("coordinate_indices", layout{blocks: true}, count, n)
		if wantMsg == "" {
			if r.err != nil || !reflect.DeepEqual(got, want) || r.pos != wantAt {
				t.Fatalf("% x: got %v at %d, %v; want %v at %d", b, got, r.pos, r.err, want, wantAt)
			}
			continue
		}
		fe, ok := r.err.(*decode.FormatError)
		if !ok || fe.Offset != 100+int64(wantAt) || fe.Msg != wantMsg || got != nil {
			t.Fatalf("% x: got %v, %v; want an error at %d: %s", b, got, r.err, 100+wantAt, wantMsg)
		}
	}
}

// TestCompactIndicesHalves: arrays large enough to be decoded in two halves
// at once, valid and with one or two corrupted bytes anywhere (including
// around the split and bytes that shift every later index's end), agree
// with the one-pass reference: values and end, or the first error.
func TestCompactIndicesHalves(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	const n = 1 << 21
	count := 3*decode.ParallelGrain + 11
	rng := rand.New(rand.NewPCG(7, 8))
	var valid []byte
	for range count {
		valid = appendCompact(valid, int32(rng.IntN(n)))
	}
	mid := count / 2
	split := afterTerminators(valid, mid)
	bytesAt := []int{0, split - 1, split, split + 1, len(valid) - 1}
	for trial := range 60 {
		b := append([]byte(nil), valid...)
		if trial > 0 {
			for k := range 1 + trial%2 {
				at := rng.IntN(len(b))
				if k == 0 && trial < 2*len(bytesAt) {
					at = bytesAt[trial%len(bytesAt)]
				}
				b[at] = []byte{0x00, 0x80, 0x41, 0xff, byte(rng.IntN(256))}[rng.IntN(5)]
			}
		}
		if trial%7 == 3 {
			b = b[:len(b)-rng.IntN(8)] // truncated
		}
		want, wantAt, wantMsg := refIndices(b, count, n)
		r := newMemReader("f", "s", b, 0)
		got := r.indices("triangle_indices", layout{blocks: true}, count, n)
		if wantMsg == "" {
			if r.err != nil || !reflect.DeepEqual(got, want) || r.pos != wantAt {
				t.Fatalf("trial %d: got %d indices ending at %d, %v; want %d ending at %d", trial, len(got), r.pos, r.err, len(want), wantAt)
			}
			continue
		}
		fe, ok := r.err.(*decode.FormatError)
		if !ok || fe.Offset != int64(wantAt) || fe.Msg != wantMsg || got != nil {
			t.Fatalf("trial %d: got %v; want an error at %d: %s", trial, r.err, wantAt, wantMsg)
		}
	}
}

func TestAfterTerminators(t *testing.T) {
	b := []byte{0x80, 0x01, 0x05, 0x81, 0x82, 0x03, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x07, 0x00}
	for k, want := range []int{0, 2, 3, 6, 15, 16, -1} {
		if k == 0 {
			continue
		}
		if got := afterTerminators(b, k); got != want {
			t.Errorf("afterTerminators(k=%d) = %d, want %d", k, got, want)
		}
	}
	// Against a byte-at-a-time count, at every k (first, last, past the
	// end) over random data long enough for the 32-byte steps and their
	// tails, dense and sparse in terminators.
	ref := func(b []byte, k int) int {
		for i, c := range b {
			if c&0x80 == 0 {
				if k--; k == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	rng := rand.New(rand.NewPCG(2, 3))
	for trial := range 200 {
		b := make([]byte, rng.IntN(300))
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if trial%2 == 0 && rng.IntN(8) != 0 {
				b[i] |= 0x80 // sparse terminators: long compact ints
			}
		}
		for k := 1; k <= len(b)+2; k++ {
			if got, want := afterTerminators(b, k), ref(b, k); got != want {
				t.Fatalf("trial %d (%d bytes): afterTerminators(k=%d) = %d, want %d", trial, len(b), k, got, want)
			}
		}
	}
}

// The index benchmarks' list: benchIndexCount random compact indices below
// benchIndexVertices, the counts of a 1 M-triangle mesh.
const benchIndexVertices, benchIndexCount = 501264, 3 << 20

func benchCompactIndices() []byte {
	rng := rand.New(rand.NewPCG(9, 10))
	var enc []byte
	for range benchIndexCount {
		enc = appendCompact(enc, int32(rng.IntN(benchIndexVertices)))
	}
	return enc
}

// BenchmarkCompactIndices decodes 3 M compact indices below 501 264 (a
// 1 M-triangle mesh's index array) in one pass; MB/s is of encoded bytes.
func BenchmarkCompactIndices(b *testing.B) {
	const n, count = benchIndexVertices, benchIndexCount
	enc := benchCompactIndices()
	idx := make([]uint32, count)
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		if _, err := compactRun(enc, 0, idx, n, 0); err != nil {
			b.Fatal(err.msg)
		}
	}
}

// TestSharedIndexLists: a surface that stores the same index list twice
// (the generated grids: no seams) is read into one array for both, in
// every index width; the model is still the one written, and its scene
// the one from two separate arrays. When the bytes are equal but the
// triangle vertices are fewer than the coordinate vertices (so a value
// could be out of range for them), or the lists differ, they are read
// apart.
func TestSharedIndexLists(t *testing.T) {
	for _, n := range []int{10, 100, 300} { // u8, u16 and compact indices
		want := bigGridFile(MagicMS15, n)
		b, err := Encode(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Read(context.Background(), memSource("g.mesh", b))
		if err != nil {
			t.Fatal(err)
		}
		s := got.Surfaces[0]
		if !sameArray(s.CIndices, s.TIndices) {
			t.Errorf("n=%d: the two equal lists were read into two arrays", n)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("n=%d: round trip differs: %s", n, diff(got, want))
		}
		sc, err := Scene(got, "g.mesh", "g")
		if err != nil {
			t.Fatal(err)
		}
		apart := *got
		apart.Surfaces = []Surface{s}
		apart.Surfaces[0].TIndices = slices.Clone(s.TIndices)
		ref, err := Scene(&apart, "g.mesh", "g")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(sc, ref) {
			t.Errorf("n=%d: the scene from the shared array differs from the one from two arrays", n)
		}
	}
	// Fewer triangle vertices than coordinate vertices, both lists equal:
	// the last coordinate vertex is out of range for the triangle list.
	f := bigGridFile(MagicMS15, 300)
	s := &f.Surfaces[0]
	s.Targets[0].Tangents = s.Targets[0].Tangents[:len(s.Targets[0].Tangents)-1]
	s.UV0 = s.UV0[:len(s.UV0)-1]
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Read(context.Background(), memSource("short.mesh", b))
	if err == nil || !strings.Contains(err.Error(), "triangle_indices") {
		t.Errorf("an index past the triangle vertices: got %v", err)
	}
	// Different lists stay apart.
	f = bigGridFile(MagicMS15, 300)
	s = &f.Surfaces[0]
	s.TIndices[0], s.TIndices[1] = s.TIndices[1], s.TIndices[0]
	b, _ = Encode(f)
	got, err := Read(context.Background(), memSource("swap.mesh", b))
	if err != nil {
		t.Fatal(err)
	}
	if sameArray(got.Surfaces[0].CIndices, got.Surfaces[0].TIndices) || !reflect.DeepEqual(got, f) {
		t.Error("different lists: shared, or not read as written")
	}
}

// BenchmarkAfterTerminators finds the end of 3 M compact indices below
// 501 264 (a 1 M-triangle mesh's list, as Scan skips it); MB/s is of
// encoded bytes.
func BenchmarkAfterTerminators(b *testing.B) {
	const count = benchIndexCount
	enc := benchCompactIndices()
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		if afterTerminators(enc, count) != len(enc) {
			b.Fatal("wrong end")
		}
	}
}

// TestEqualBytes: equalBytes is bytes.Equal, for slices split over the
// CPUs and not, with one difference anywhere or none.
func TestEqualBytes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 1000, 2<<20 - 1, 2 << 20, 5<<20 + 3} {
		a := make([]byte, n)
		for i := range a {
			a[i] = byte(rng.IntN(256))
		}
		b := slices.Clone(a)
		if !equalBytes(a, b) {
			t.Fatalf("%d equal bytes: unequal", n)
		}
		for _, at := range []int{0, n / 2, n - 1, rng.IntN(max(n, 1))} {
			if n == 0 {
				break
			}
			b[at] ^= 1
			if equalBytes(a, b) {
				t.Fatalf("%d bytes, byte %d differs: equal", n, at)
			}
			b[at] ^= 1
		}
		if n > 0 && equalBytes(a, b[:n-1]) {
			t.Fatalf("%d bytes against %d: equal", n, n-1)
		}
	}
}
