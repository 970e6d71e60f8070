package gem

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

// TestLoadMatchesParse: reading a file through its ReaderAt (Decode's
// way, arrays read straight into their slices) gives the File that parsing
// it in memory gives, or the same error, for every fixture and real file,
// cut short at every chunk and with random bytes changed.
func TestLoadMatchesParse(t *testing.T) {
	files := allFixtureBytes(t)
	if _, ok := decodetest.RealData(t, "gem"); ok {
		for _, p := range realFiles(t) {
			b, _ := os.ReadFile(p)
			files[p] = b
		}
	}
	r := rand.New(rand.NewPCG(11, 12))
	check := func(name string, b []byte) {
		t.Helper()
		want, werr := Parse(context.Background(), name, b)
		got, gerr := loadFile(context.Background(), name, bytes.NewReader(b), int64(len(b)), false)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Fatalf("%s (%d bytes): Parse error %v, load error %v", name, len(b), werr, gerr)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("%s (%d bytes): loaded File differs from the parsed one", name, len(b))
		}
	}
	for name, b := range files {
		check(name, b)
		f, _ := Parse(context.Background(), name, b)
		for _, c := range f.Chunks {
			sp := c.Where()
			for _, cut := range []int64{sp.Offset + 1, sp.Offset + 9, sp.Offset + sp.Length/2, sp.Offset + sp.Length - 1} {
				if cut > sp.Offset && cut < int64(len(b)) {
					check(name, b[:cut])
				}
			}
		}
		for range 100 {
			c := bytes.Clone(b)
			for range 1 + r.IntN(4) {
				c[r.IntN(len(c))] = byte(r.UintN(256))
			}
			check(name, c)
		}
	}
}

// shortReader is a ReaderAt that stops early: the file shrank under us.
type shortReader struct {
	b   []byte
	end int64
}

func (s shortReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= s.end {
		return 0, io.EOF
	}
	n := copy(p, s.b[off:min(s.end, off+int64(len(p)))])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// TestLoadParallelRead: an array large enough to be read in pieces on
// several CPUs loads as on one; a source that ends inside it fails with a
// FormatError naming the array and the offset where the data stopped.
func TestLoadParallelRead(t *testing.T) {
	b := mountFile(t, 1000) // VERT of 44 MB, IND4 of 24 MB
	want, err := Parse(context.Background(), "big.ply", b)
	if err != nil {
		t.Fatal(err)
	}
	vert := want.Chunks[2].(*Vert)
	for _, procs := range []int{1, 2, 3} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			got, err := loadFile(context.Background(), "big.ply", bytes.NewReader(b), int64(len(b)), false)
			if err != nil || !reflect.DeepEqual(want, got) {
				t.Errorf("GOMAXPROCS %d: loaded File differs (error %v)", procs, err)
			}
			stop := vert.Offset + 12 + int64(len(vert.Data))*3/4
			_, err = loadFile(context.Background(), "big.ply", shortReader{b, stop}, int64(len(b)), false)
			var fe *decode.FormatError
			if !errors.As(err, &fe) || fe.Field != "vertices" || fe.Offset != stop || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("GOMAXPROCS %d: source ending at %d: %v", procs, stop, err)
			}
		}()
	}
}

// TestDecodeOwnsIndices: Decode, which numbers the vertices of submeshes
// with a face range of their own in place, gives the scene that
// BuildScene (which never changes its File) gives, for every fixture and
// real file and for submeshes whose ranges overlap in every way: equal,
// nested, staggered, one range inside a later-starting long one.
func TestDecodeOwnsIndices(t *testing.T) {
	files := allFixtureBytes(t)
	if _, ok := decodetest.RealData(t, "gem"); ok {
		for _, p := range realFiles(t) {
			b, _ := os.ReadFile(p)
			files[p] = b
		}
	}
	f, _ := manySubmeshes(t, 40, 6) // 3200 faces
	subs := []*Submesh{}
	for _, c := range f.Chunks {
		if s, ok := c.(*Submesh); ok {
			subs = append(subs, s)
		}
	}
	ranges := [][2]uint32{{0, 100}, {0, 100}, {150, 1000}, {200, 50}, {1500, 100}, {1550, 1650}}
	for k, s := range subs {
		s.FaceStart, s.FaceCount = ranges[k][0], ranges[k][1]
	}
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	files["overlapping"] = b
	f.Chunks = append(f.Chunks[:1], f.Chunks[5:]...) // subs 0 [0, 100) and 5 [1550, 3200): disjoint
	if b, err = Encode(f); err != nil {
		t.Fatal(err)
	}
	files["disjoint"] = b
	for name, b := range files {
		pf, err := Parse(context.Background(), name, b)
		if err != nil {
			t.Fatal(err)
		}
		want, werr := BuildScene(context.Background(), pf, name)
		for _, whole := range []bool{true, false} {
			got, gerr := decodeSource(context.Background(), &decode.Source{Name: name, R: bytes.NewReader(b), Size: int64(len(b))}, whole)
			if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
				t.Fatalf("%s (whole %v): BuildScene error %v, Decode error %v", name, whole, werr, gerr)
			}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("%s (whole %v): Decode's scene differs from BuildScene's", name, whole)
			}
		}
	}
}

// TestExclusive: which face ranges count as a submesh's own.
func TestExclusive(t *testing.T) {
	sub := func(start, count uint32) *Submesh { return &Submesh{FaceStart: start, FaceCount: count} }
	subs := []*Submesh{sub(0, 10), sub(10, 5), sub(20, 100), sub(30, 5), sub(40, 5), sub(130, 0), sub(125, 1), sub(200, 3), sub(200, 3)}
	got := (&builder{own: true}).exclusive(subs)
	want := []bool{true, true, false, false, false, false, true, false, false}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("exclusive = %v, want %v", got, want)
	}
	if got := (&builder{}).exclusive(subs); slices.Contains(got, true) {
		t.Errorf("a builder that does not own its File numbered in place: %v", got)
	}
}

// decodeBytes runs Decode on b, through the reader however small b is.
func decodeBytes(name string, b []byte) (*decode.Scene, error) {
	return decodeSource(context.Background(), &decode.Source{Name: name, R: bytes.NewReader(b), Size: int64(len(b))}, false)
}

// TestStream: Decode, which converts a lone submesh's vertices straight
// from the file a window at a time (in parallel ranges when large), gives
// BuildScene's scene for every column layout, small and large, at 1-3
// CPUs, also with non-finite positions (repaired alike); a source that
// ends inside VERT is a FormatError about the vertices.
func TestStream(t *testing.T) {
	decls := [][]Element{
		{{TypeUsage: 0x02}, {TypeUsage: 0x12}, {TypeUsage: 0x26}, {TypeUsage: 0x31}},
		{{TypeUsage: 0x02}, {TypeUsage: 0x18}, {TypeUsage: 0x28}, {TypeUsage: 0x34}, {TypeUsage: 0x37, UsageIndex: 1}},
		{{TypeUsage: 0x03}, {TypeUsage: 0x16}, {TypeUsage: 0x26}, {TypeUsage: 0x28, UsageIndex: 1}, {TypeUsage: 0x30},
			{TypeUsage: 0x62}, {TypeUsage: 0x33, UsageIndex: 2}},
	}
	r := rand.New(rand.NewPCG(13, 14))
	for di, els := range decls {
		for _, size := range [][2]int{{300, 200}, {60000, 3 * decode.ParallelGrain}} {
			f, _ := columnCase(r, els, di == 0, di == 1, size[0], size[1])
			b, err := Encode(f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := BuildScene(context.Background(), f, "s.ply")
			if err != nil {
				t.Fatal(err)
			}
			for _, procs := range []int{1, 2, 3} {
				func() {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					got, err := decodeBytes("s.ply", b)
					if err != nil || !reflect.DeepEqual(want, got) {
						t.Errorf("decl %d, %d vertices, GOMAXPROCS %d: Decode's scene differs from BuildScene's (error %v)",
							di, size[0], procs, err)
					}
				}()
			}
		}
	}

	// Non-finite positions, record 5 used late, record 40000 early: the
	// streamed scene is BuildScene's, their triangles dropped.
	f, _ := columnCase(r, decls[0], false, false, 60000, 3*decode.ParallelGrain)
	vert, idx := f.Chunks[1].(*Vert), f.Chunks[2].(*Indices)
	idx.Values[0], idx.Values[len(idx.Values)-1] = 40000, 5
	for _, v := range []int{5, 40000} {
		binary.LittleEndian.PutUint32(vert.Data[v*int(vert.Size)+4:], 0x7fc00000) // NaN y
	}
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := Parse(context.Background(), "s.ply", b)
	if err != nil {
		t.Fatal(err)
	}
	want, err := BuildScene(context.Background(), pf, "s.ply")
	if err != nil || len(want.Repairs) == 0 || want.Repairs[0].Attribute != "position" || want.Repairs[0].Vertices != 2 ||
		want.Repairs[0].Triangles < 2 {
		t.Fatalf("BuildScene: %v, repairs %+v; want the positions of 2 vertices repaired", err, want.Repairs)
	}
	for _, procs := range []int{1, 2} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			got, err := decodeBytes("s.ply", b)
			if err != nil || !reflect.DeepEqual(want, got) {
				t.Errorf("GOMAXPROCS %d: Decode's scene differs from BuildScene's (error %v)", procs, err)
			}
		}()
	}

	// An I/O error inside VERT, which the parse no longer reads.
	f, _ = columnCase(r, decls[0], false, false, 60000, 3*decode.ParallelGrain)
	if b, err = Encode(f); err != nil {
		t.Fatal(err)
	}
	if pf, err = Parse(context.Background(), "s.ply", b); err != nil {
		t.Fatal(err)
	}
	sp := pf.Chunks[1].Where()
	bad := sp.Offset + sp.Length/2
	_, err = decodeSource(context.Background(), &decode.Source{Name: "s.ply", R: failingReader{b, bad}, Size: int64(len(b))}, false)
	var fe *decode.FormatError
	if !errors.As(err, &fe) || fe.Field != "vertices" || fe.Offset < sp.Offset || fe.Offset > bad || !errors.Is(err, errDisk) {
		t.Errorf("I/O error at %d inside VERT at %d: %v", bad, sp.Offset, err)
	}
}

var errDisk = errors.New("disk error")

// failingReader fails every read that covers byte bad.
type failingReader struct {
	b   []byte
	bad int64
}

func (f failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off <= f.bad && f.bad < off+int64(len(p)) {
		return copy(p, f.b[off:f.bad]), errDisk
	}
	return bytes.NewReader(f.b).ReadAt(p, off)
}

// TestStreamSubmeshes: submeshes over disjoint (and slightly overlapping)
// ranges of records are converted from the file each over its own range,
// several at once; the scene is BuildScene's, also with non-finite
// positions in two submeshes (repaired in each). Skinned layouts and ranges that overlap much
// read VERT whole instead, with the same results.
func TestStreamSubmeshes(t *testing.T) {
	f, _ := manySubmeshes(t, 200, 3) // 80 000 faces, 40 401 records
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := Parse(context.Background(), "m.ply", b)
	if err != nil {
		t.Fatal(err)
	}
	want, err := BuildScene(context.Background(), pf, "m.ply")
	if err != nil {
		t.Fatal(err)
	}
	var subs []*Submesh
	for _, c := range pf.Chunks {
		if s, ok := c.(*Submesh); ok {
			subs = append(subs, s)
		}
	}
	orders := make([][]uint32, len(subs))
	layouts := make([]layout, len(subs))
	vals := pf.Chunks[len(pf.Chunks)-1].(*Indices).Values
	for i, s := range subs {
		orders[i], _ = firstUse(vals[3*s.FaceStart : 3*(s.FaceStart+s.FaceCount)])
		layouts[i], _ = layoutOf(s, 36)
	}
	if !streamable([]int{0, 1, 2}, layouts, orders, 40401) {
		t.Fatal("three submeshes over consecutive rows of a grid are not streamed")
	}
	if streamable([]int{0, 0, 1, 2}, layouts, [][]uint32{orders[0], orders[0], orders[1], orders[2]}, 40401) {
		t.Error("ranges read 4/3 times over are streamed")
	}
	for _, procs := range []int{1, 2, 3} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			got, err := decodeBytes("m.ply", b)
			if err != nil || !reflect.DeepEqual(want, got) {
				t.Errorf("GOMAXPROCS %d: Decode's scene differs from BuildScene's (error %v)", procs, err)
			}
		}()
	}

	// Non-finite positions: in the last submesh, and in the second at two
	// records, the one used first stored after the other.
	vert := f.Chunks[3].(*Vert)
	var usedFirst, usedLater uint32
	o := orders[1]
	for k := len(o) / 2; k+1 < len(o); k++ { // away from the rows shared with the neighbours
		if o[k+1] < o[k] {
			usedFirst, usedLater = o[k], o[k+1]
			break
		}
	}
	if usedFirst == 0 {
		t.Fatal("no record of the second submesh is used before one stored earlier")
	}
	for _, v := range []uint32{usedFirst, usedLater, orders[2][0]} {
		binary.LittleEndian.PutUint32(vert.Data[int(v)*36:], 0x7f800000) // +Inf x
	}
	if b, err = Encode(f); err != nil {
		t.Fatal(err)
	}
	if pf, err = Parse(context.Background(), "m.ply", b); err != nil {
		t.Fatal(err)
	}
	want, err = BuildScene(context.Background(), pf, "m.ply")
	if err != nil {
		t.Fatal(err)
	}
	var repaired []string
	for _, r := range want.Repairs {
		repaired = append(repaired, fmt.Sprintf("%s %s %d", r.Primitive, r.Attribute, r.Vertices))
	}
	// The third submesh's first record lies on the row of the grid it
	// shares with the second.
	if fmt.Sprint(repaired) != "[mx.mtl position 3 mxx.mtl position 1]" {
		t.Fatalf("repairs %v, want 3 positions in the second submesh, 1 in the third", repaired)
	}
	for _, procs := range []int{1, 2} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			if got, err := decodeBytes("m.ply", b); err != nil || !reflect.DeepEqual(want, got) {
				t.Errorf("GOMAXPROCS %d: Decode's scene differs from BuildScene's (error %v)", procs, err)
			}
		}()
	}
}
