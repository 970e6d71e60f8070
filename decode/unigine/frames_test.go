package unigine

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// TestFrameVectorsBits: frameVectors, written out for speed, gives the
// very bits of the plain composition frame → yup → decode.Normalize3 for
// random quaternions of every magnitude, the zero quaternion (no frame)
// and negative w (bitangent sign), signed zeros included.
func TestFrameVectorsBits(t *testing.T) {
	bitsOf := func(v ...float32) (o [4]uint32) {
		for i, f := range v {
			o[i] = math.Float32bits(f)
		}
		return o
	}
	check := func(q [4]int16) {
		t.Helper()
		gotN, gotT := frameVectors(q)
		n, tg, sign := frame(q)
		wantN, tt := decode.Normalize3(yup(n)), decode.Normalize3(yup(tg))
		wantT := [4]float32{tt[0], tt[1], tt[2], sign}
		if bitsOf(gotN[:]...) != bitsOf(wantN[:]...) || bitsOf(gotT[:]...) != bitsOf(wantT[:]...) {
			t.Fatalf("%v: got %v %v, want %v %v", q, gotN, gotT, wantN, wantT)
		}
	}
	for _, q := range [][4]int16{{}, {0, 0, 0, -1}, {0, 0, 0, 32767}, {32767, 0, 0, 0}, {0, 0, 0, -32767}, {-32767, -32767, -32767, -32767}, {1, 0, 0, 0}} {
		check(q)
	}
	rng := rand.New(rand.NewPCG(1, 3))
	for range 200000 {
		var q [4]int16
		for k := range q {
			q[k] = int16(rng.IntN(65535) - 32767)
		}
		check(q)
		for k := range q {
			q[k] >>= rng.IntN(16) // small and zero components too
		}
		check(q)
	}
}

// BenchmarkFrameVectors decodes 65 536 random tangent frames.
func BenchmarkFrameVectors(b *testing.B) {
	qs, ns, ts := benchFrames()
	for b.Loop() {
		for i, q := range qs {
			ns[i], ts[i] = frameVectors(q)
		}
	}
}

// TestDecodeSkipsCollision: Decode does not read the collision blocks, so
// a broken one fails Scan (error.txt) but leaves the scene as it was, while
// Read, which keeps the blocks, still fails.
func TestDecodeSkipsCollision(t *testing.T) {
	good, err := Encode(bigGridFile(MagicMS15, 30))
	if err != nil {
		t.Fatal(err)
	}
	st, err := Format{}.Scan(context.Background(), memSource("g.mesh", good))
	if err != nil {
		t.Fatal(err)
	}
	var coll *decode.Chunk
	for i, c := range st.Chunks {
		if strings.HasSuffix(c.Name, ".collision.bin") {
			coll = &st.Chunks[i]
		}
	}
	if coll == nil || coll.Size == coll.Length-blockHeaderSize {
		t.Fatal("no compressed collision block")
	}
	bad := append([]byte(nil), good...)
	for i := coll.Offset + blockHeaderSize; i < coll.Offset+coll.Length; i++ {
		bad[i] = 0xff // literal lengths that run past the block
	}
	if _, err := (Format{}).Scan(context.Background(), memSource("b.mesh", bad)); err == nil || !strings.Contains(err.Error(), "collision block") {
		t.Errorf("scan of the broken collision block: %v", err)
	}
	if _, err := Read(context.Background(), memSource("b.mesh", bad)); err == nil {
		t.Error("Read accepted the broken collision block")
	}
	want, err := Format{}.Decode(context.Background(), memSource("g.mesh", good))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Format{}.Decode(context.Background(), memSource("g.mesh", bad))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("the broken collision block changed the scene")
	}
}

// TestScenesOwnTheirArrays: blocks are read through pooled buffers; a
// scene must not keep any of their bytes, so decoding another file (which
// reuses the buffers) leaves an earlier scene as it was.
func TestScenesOwnTheirArrays(t *testing.T) {
	a, _ := Encode(bigGridFile(MagicMS15, 40))
	b, _ := Encode(bigGridFile(MagicSK10, 45))
	scA, err := Format{}.Decode(context.Background(), memSource("a.mesh", a))
	if err != nil {
		t.Fatal(err)
	}
	fA, err := Read(context.Background(), memSource("a.mesh", a))
	if err != nil {
		t.Fatal(err)
	}
	keepSc, _ := Format{}.Decode(context.Background(), memSource("a.mesh", a))
	keepF, _ := Read(context.Background(), memSource("a.mesh", a))
	for range 3 {
		if _, err := (Format{}).Decode(context.Background(), memSource("b.mesh", b)); err != nil {
			t.Fatal(err)
		}
		if _, err := (Format{}).Scan(context.Background(), memSource("b.mesh", b)); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(scA, keepSc) || !reflect.DeepEqual(fA, keepF) {
		t.Error("decoding another file changed an earlier scene or model")
	}
}

// refJoin is join's definition as a plain map over (coordinate, triangle)
// pairs: one glTF vertex per unique pair, numbered in order of first use.
func refJoin(ci, ti []uint32, nc, ntv int) (cOf, tOf, idx []uint32, bad int) {
	seen := map[[2]uint32]uint32{}
	for k := range ci {
		c, t := ci[k], ti[k]
		if int(c) >= nc || int(t) >= ntv {
			return nil, nil, nil, k
		}
		v, ok := seen[[2]uint32{c, t}]
		if !ok {
			v = uint32(len(cOf))
			seen[[2]uint32{c, t}] = v
			cOf, tOf = append(cOf, c), append(tOf, t)
		}
		idx = append(idx, v)
	}
	return cOf, tOf, idx, -1
}

// TestJoin: join agrees with refJoin on random corners, with triangle
// vertices mostly of one coordinate vertex, some shared by several (more
// glTF vertices than triangle vertices), unused ones, and a corner out of
// range.
func TestJoin(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	for trial := range 300 {
		nc, ntv := 1+rng.IntN(50), 1+rng.IntN(50)
		owner := make([]uint32, ntv)
		for i := range owner {
			owner[i] = uint32(rng.IntN(nc))
		}
		n := 3 * rng.IntN(40)
		ci, ti := make([]uint32, n), make([]uint32, n)
		for k := range n {
			ti[k] = uint32(rng.IntN(ntv))
			ci[k] = owner[ti[k]]
			if rng.IntN(4) == 0 {
				ci[k] = uint32(rng.IntN(nc))
			}
		}
		if trial%10 == 0 && n > 0 {
			if k := rng.IntN(n); rng.IntN(2) == 0 {
				ci[k] = uint32(nc)
			} else {
				ti[k] = uint32(ntv + rng.IntN(3))
			}
		}
		if trial%3 == 0 {
			// One array for both lists, as the reader shares for a
			// surface without seams (joinSame), sometimes with an
			// index past the smaller count.
			for k := range ci {
				ci[k] = uint32(rng.IntN(min(nc, ntv) + trial%2))
			}
			ti = ci
		}
		c1, t1, i1, b1 := join(ci, ti, nc, ntv)
		c2, t2, i2, b2 := refJoin(ci, ti, nc, ntv)
		if b1 != b2 || (b1 < 0 && (!slices.Equal(c1, c2) || !slices.Equal(t1, t2) || !slices.Equal(i1, i2))) {
			t.Fatalf("trial %d: join %v %v %v %d, want %v %v %v %d", trial, c1, t1, i1, b1, c2, t2, i2, b2)
		}
	}
}

// TestNonFiniteRepaired: a NaN or infinite coordinate in a position or a
// UV is not an error: the scene drops the triangles that use it and says
// so, and every value left is finite.
func TestNonFiniteRepaired(t *testing.T) {
	for _, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		for _, what := range []string{"position", "uv0"} {
			g := grid(4, 1)
			if what == "position" {
				g.Targets[0].Positions[6][2] = v
			} else {
				g.UV0[7][0] = v
			}
			b, err := Encode(&File{Magic: MagicMS15, Surfaces: []Surface{g}})
			if err != nil {
				t.Fatal(err)
			}
			sc, err := Format{}.Decode(context.Background(), memSource("n.mesh", b))
			if err != nil {
				t.Fatalf("%s %v: %v", what, v, err)
			}
			if len(sc.Repairs) != 1 || sc.Repairs[0].Attribute != what || sc.Repairs[0].Action != decode.RepairDropTriangles ||
				sc.Repairs[0].Triangles == 0 {
				t.Fatalf("%s %v: repairs %+v", what, v, sc.Repairs)
			}
			p := sc.Meshes[0].Primitives[0]
			if got, want := len(p.Indices)/3, len(g.CIndices)/3-sc.Repairs[0].Triangles; got != want {
				t.Errorf("%s %v: %d triangles, want %d", what, v, got, want)
			}
			for k := range p.Positions {
				if !decode.Finite(p.Positions[k][:]...) || !decode.Finite(p.UVs[0][k][:]...) {
					t.Fatalf("%s %v: vertex %d not finite", what, v, k)
				}
			}
		}
	}
}

// TestFrameVectors2Bits: two frames at once give frameVectors' bits for
// each, random pairs of every magnitude with zero (no frame) and
// degenerate ones among them.
func TestFrameVectors2Bits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	special := [][4]int16{{}, {0, 0, 0, -1}, {1, 0, 0, 0}, {0, 0, 0, 32767}, {-32767, -32767, -32767, -32767}, {0, 1, 0, 0}}
	random := func() [4]int16 {
		if rng.IntN(20) == 0 {
			return special[rng.IntN(len(special))]
		}
		var q [4]int16
		for k := range q {
			q[k] = int16(rng.IntN(65535)-32767) >> rng.IntN(16)
		}
		return q
	}
	for range 400000 {
		q0, q1 := random(), random()
		var n0, n1 [3]float32
		var t0, t1 [4]float32
		frameVectors2(q0, q1, &n0, &n1, &t0, &t1)
		w0n, w0t := frameVectors(q0)
		w1n, w1t := frameVectors(q1)
		if !bitsEqual(n0[:], w0n[:]) || !bitsEqual(n1[:], w1n[:]) || !bitsEqual(t0[:], w0t[:]) || !bitsEqual(t1[:], w1t[:]) {
			t.Fatalf("%v %v: got %v %v %v %v, want %v %v %v %v", q0, q1, n0, t0, n1, t1, w0n, w0t, w1n, w1t)
		}
	}
}

func bitsEqual(a, b []float32) bool {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// BenchmarkFrameVectors2 is BenchmarkFrameVectors two frames at a time.
func BenchmarkFrameVectors2(b *testing.B) {
	qs, ns, ts := benchFrames()
	for b.Loop() {
		for i := 0; i+1 < len(qs); i += 2 {
			frameVectors2(qs[i], qs[i+1], &ns[i], &ns[i+1], &ts[i], &ts[i+1])
		}
	}
}

// benchFrames returns 65 536 random tangent frames and room for their
// vectors.
func benchFrames() (qs [][4]int16, ns [][3]float32, ts [][4]float32) {
	rng := rand.New(rand.NewPCG(1, 2))
	qs = make([][4]int16, 1<<16)
	for i := range qs {
		for k := range qs[i] {
			qs[i][k] = int16(rng.IntN(65535) - 32767)
		}
	}
	return qs, make([][3]float32, len(qs)), make([][4]float32, len(qs))
}

// TestUnitShort: unitShort is the quotient s/32767, bit for bit, for every
// int16.
func TestUnitShort(t *testing.T) {
	for v := math.MinInt16; v <= math.MaxInt16; v++ {
		if got, want := unitShort(int16(v)), float64(v)/32767; math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("unitShort(%d) = %v, want %v", v, got, want)
		}
	}
}
