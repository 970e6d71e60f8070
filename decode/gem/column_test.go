package gem

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// columnCase is a random one-submesh file: vertex records of random bytes
// (so colours, UVs and normals take every byte pattern, NaN and infinity
// included) with finite positions, and random triangles over them.
func columnCase(r *rand.Rand, els []Element, halved bool, basis bool, nv, nt int) (*File, *Submesh) {
	s := &Submesh{Kind: KindSBM1, Elements: els, FaceCount: uint32(nt), Material: "m"}
	l, err := layoutOf(s, 0)
	if err != nil {
		panic(err)
	}
	size := l.Size + 4 // bytes past the layout are ignored
	data := make([]byte, nv*size)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for v := range nv {
		rec := data[v*size:]
		for _, a := range l.Attrs {
			e := rec[a.Offset:]
			switch {
			case a.Usage == UsagePosition && (a.Type == TypeFloat3 || a.Type == TypeFloat4):
				for c := range 3 {
					binary.LittleEndian.PutUint32(e[4*c:], math.Float32bits(float32(r.NormFloat64()*100)))
				}
			case a.Usage == UsageNormal && a.Type == TypeFloat3 && v%3 == 0:
				// Exactly unit, zero and non-finite normals as well.
				n := [][3]float32{{0, 0, 1}, {0, -1, 0}, {0, 0, 0}, {float32(math.NaN()), 0, 1}, {0.6, 0.8, 0}}[v/3%5]
				for c := range 3 {
					binary.LittleEndian.PutUint32(e[4*c:], math.Float32bits(n[c]))
				}
			}
		}
	}
	vals := make([]uint32, 3*nt)
	for k := range vals {
		vals[k] = uint32(r.IntN(nv))
	}
	var flags uint16 = VertFullColor
	if halved {
		flags = 0
	}
	chunks := []Chunk{s, &Vert{Count: uint32(nv), Size: uint16(size), Flags: flags, Data: data},
		&Indices{Wide: true, Count: uint32(len(vals)), Values: vals}}
	if basis {
		chunks = append(chunks, &Basis{Poly: [3][2]float32{{1, 2}, {3, 0}, {0, 5}}, Tex: [3][2]float32{{0, 0}, {1, 0}, {0, 1}}})
	}
	return &File{Magic: MagicBPLY, Chunks: chunks}, s
}

// firstUse numbers vertices in order of first use, as the scene must.
func firstUse(vals []uint32) (order []uint32, index []uint32) {
	seen := map[uint32]uint32{}
	for _, v := range vals {
		n, ok := seen[v]
		if !ok {
			n = uint32(len(order))
			seen[v] = n
			order = append(order, v)
		}
		index = append(index, n)
	}
	return order, index
}

// bits renders slices of fixed-size numbers as their bytes, so that −0 and
// 0 differ.
func bits(t *testing.T, v any) []byte {
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.LittleEndian, v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestColumnsMatchVertex: the attribute-by-attribute conversion of
// unskinned submeshes (with its fast paths for FLOAT3, FLOAT2, D3DCOLOR and
// BYTE4N) gives bit for bit what the element-by-element conversion gives,
// the vertices numbered in order of first use, then joined by value and
// repaired; on one CPU and on several, for files small and large enough to
// be split.
func TestColumnsMatchVertex(t *testing.T) {
	decls := [][]Element{
		{{TypeUsage: 0x02}, {TypeUsage: 0x12}, {TypeUsage: 0x26}, {TypeUsage: 0x31}},
		{{TypeUsage: 0x02}, {TypeUsage: 0x18}, {TypeUsage: 0x28}, {TypeUsage: 0x34}, {TypeUsage: 0x37, UsageIndex: 1}},
		{{TypeUsage: 0x03}, {TypeUsage: 0x16}, {TypeUsage: 0x26}, {TypeUsage: 0x28, UsageIndex: 1}, {TypeUsage: 0x30},
			{TypeUsage: 0x62}, {TypeUsage: 0x33, UsageIndex: 2}},
		{{TypeUsage: 0x02}, {TypeUsage: 0x12}, {TypeUsage: 0x63}, {TypeUsage: 0x21}, {TypeUsage: 0x31}, {TypeUsage: 0x12}},
	}
	r := rand.New(rand.NewPCG(7, 8))
	for di, els := range decls {
		for _, size := range [][2]int{{300, 200}, {40000, 3 * decode.ParallelGrain}} {
			for _, halved := range []bool{false, true} {
				basis := di == 1
				f, s := columnCase(r, els, halved, basis, size[0], size[1])
				for _, procs := range []int{1, 2} {
					name := fmt.Sprintf("decl%d/%dv/halved=%v/procs=%d", di, size[0], halved, procs)
					t.Run(name, func(t *testing.T) {
						defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
						checkColumns(t, f, s)
					})
				}
			}
		}
	}
}

func checkColumns(t *testing.T, f *File, s *Submesh) {
	sc, err := BuildScene(context.Background(), f, "c.ply")
	if err != nil {
		t.Fatal(err)
	}
	got := sc.Meshes[0].Primitives[0]
	b := &builder{file: "c.ply", f: f}
	for _, c := range f.Chunks {
		switch c := c.(type) {
		case *Vert:
			b.vert = c
		case *Indices:
			b.idx = c
		case *Basis:
			b.basis = c
		}
	}
	order, index := firstUse(b.idx.Values)
	n := len(order)
	l, err := layoutOf(s, int(b.vert.Size))
	if err != nil {
		t.Fatal(err)
	}
	want := decode.Primitive{Positions: make([][3]float32, n), Indices: index}
	if l.has(UsageNormal) {
		want.Normals = make([][3]float32, n)
	}
	if l.has(UsageTangent) {
		want.Tangents = make([][4]float32, n)
	}
	for range len(got.UVs) { // the layout's sets and BAS2's
		want.UVs = append(want.UVs, make([][2]float32, n))
	}
	for range l.colorCount() {
		want.Colors = append(want.Colors, make([][4]float32, n))
	}
	fl := &filler{b: b, p: &want, s: s, l: &l, uvSets: l.uvCount(), halved: b.vert.Flags&VertFullColor == 0}
	for j, v := range order {
		if err := fl.vertex(j, v); err != nil {
			t.Fatal(err)
		}
	}
	want.JoinByValue()
	want.Repair()
	if !bytes.Equal(bits(t, got.Indices), bits(t, want.Indices)) {
		t.Fatal("indices are not numbered in order of first use, then joined and repaired")
	}
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"positions", got.Positions, want.Positions}, {"normals", got.Normals, want.Normals},
		{"tangents", got.Tangents, want.Tangents},
	} {
		if !bytes.Equal(bits(t, c.got), bits(t, c.want)) {
			t.Errorf("%s differ", c.what)
		}
	}
	for k := range want.UVs {
		if !bytes.Equal(bits(t, got.UVs[k]), bits(t, want.UVs[k])) {
			t.Errorf("UV set %d differs", k)
		}
	}
	for k := range want.Colors {
		if !bytes.Equal(bits(t, got.Colors[k]), bits(t, want.Colors[k])) {
			t.Errorf("colour set %d differs", k)
		}
	}
}

// TestUnitNormal: the shortcut for exactly unit vectors gives what
// decode.Normalize3 gives, bit for bit, for unit, nearly unit, zero, tiny,
// huge and random vectors.
func TestUnitNormal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vs := [][3]float32{{0, 0, 1}, {0, 0, -1}, {1, 0, 0}, {0, -1, 0}, {0.6, 0.8, 0}, {0, 0.6, -0.8}, {0, 0, 0},
		{0, 0, 1.0000001}, {0, 0, 0.99999994}, {1e-30, 0, 0}, {3e38, 3e38, 0}, {float32(math.Copysign(0, -1)), 0, 1}}
	for range 100000 {
		v := [3]float32{float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())}
		vs = append(vs, v, decode.Normalize3(v))
	}
	shortcuts := 0
	for _, v := range vs {
		got, want := unitNormal(v), decode.Normalize3(v)
		if math.Float32bits(got[0]) != math.Float32bits(want[0]) || math.Float32bits(got[1]) != math.Float32bits(want[1]) ||
			math.Float32bits(got[2]) != math.Float32bits(want[2]) {
			t.Fatalf("unitNormal(%v) = %v, Normalize3 gives %v", v, got, want)
		}
		if got == v {
			shortcuts++
		}
	}
	if shortcuts < 6 {
		t.Errorf("only %d vectors came back as they were; the axis vectors alone are 6", shortcuts)
	}
}

// TestNumberInParallel: a submesh large enough for its vertices to be
// numbered on several CPUs gives the one-CPU result, mirrored winding
// included, and of two bad indices in different parts the error names the
// lower one.
func TestNumberInParallel(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	els := []Element{{TypeUsage: 0x02}} // random positions: no two join
	f, s := columnCase(r, els, false, false, 5000, 4*decode.ParallelGrain)
	s.Flags |= FlagMirrored
	build := func(procs int) (*decode.Scene, error) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		return BuildScene(context.Background(), f, "n.ply")
	}
	one, err := build(1)
	if err != nil {
		t.Fatal(err)
	}
	_, index := firstUse(f.Chunks[2].(*Indices).Values)
	for k := 0; k+2 < len(index); k += 3 {
		index[k+1], index[k+2] = index[k+2], index[k+1]
	}
	if !bytes.Equal(bits(t, one.Meshes[0].Primitives[0].Indices), bits(t, index)) {
		t.Fatal("mirrored indices: not the first-use numbering with winding reversed")
	}
	for _, procs := range []int{2, 3, 4} {
		got, err := build(procs)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bits(t, got.Meshes[0].Primitives[0].Indices), bits(t, index)) ||
			!bytes.Equal(bits(t, got.Meshes[0].Primitives[0].Positions), bits(t, one.Meshes[0].Primitives[0].Positions)) {
			t.Errorf("GOMAXPROCS %d: the scene differs from the one-CPU scene", procs)
		}
	}

	vals := f.Chunks[2].(*Indices).Values
	lowBad, highBad := len(vals)/3+1, len(vals)-2 // the first and the last part
	vals[highBad], vals[lowBad] = 7000, 6000
	for _, procs := range []int{1, 2, 4} {
		_, err := build(procs)
		var fe *decode.FormatError
		if !errors.As(err, &fe) || fe.Field != fmt.Sprintf("indices[%d]", lowBad) || !strings.Contains(fe.Msg, "index 6000") {
			t.Errorf("GOMAXPROCS %d: error %v, want indices[%d] (index 6000)", procs, err, lowBad)
		}
	}
}
