package decode

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// vertexKey is vertex v's attributes as bytes, the reference for
// JoinByValue's bit equality.
func vertexKey(p *Primitive, v int) string {
	var b []byte
	put := func(fs ...float32) {
		for _, f := range fs {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
		}
	}
	put(p.Positions[v][:]...)
	if p.Normals != nil {
		put(p.Normals[v][:]...)
	}
	if p.Tangents != nil {
		put(p.Tangents[v][:]...)
	}
	for _, uv := range p.UVs {
		put(uv[v][:]...)
	}
	for _, c := range p.Colors {
		put(c[v][:]...)
	}
	if p.Joints != nil {
		for _, j := range p.Joints[v] {
			b = binary.LittleEndian.AppendUint16(b, j)
		}
		put(p.Weights[v][:]...)
	}
	for _, t := range p.Targets {
		put(t.Positions[v][:]...)
	}
	return string(b)
}

// randomPrimitive has n vertices drawn from few distinct values (so many
// are equal), with −0 and NaN among them, and every attribute kind.
func randomPrimitive(rng *rand.Rand, n, span int) *Primitive {
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, float32(math.NaN()), 0.5}
	f := func() float32 { return vals[rng.IntN(min(span, len(vals)))] }
	p := &Primitive{Name: "p", Material: -1}
	p.UVs = make([][][2]float32, 2)
	p.Colors = make([][][4]float32, 1)
	p.Targets = make([]MorphTarget, 1)
	for range n {
		p.Positions = append(p.Positions, [3]float32{f(), f(), f()})
		p.Normals = append(p.Normals, [3]float32{f(), 1, 0})
		p.Tangents = append(p.Tangents, [4]float32{1, f(), 0, 1})
		p.UVs[0] = append(p.UVs[0], [2]float32{f(), 0})
		p.UVs[1] = append(p.UVs[1], [2]float32{0, f()})
		p.Colors[0] = append(p.Colors[0], [4]float32{f(), 0, 0, 1})
		p.Joints = append(p.Joints, [4]uint16{uint16(rng.IntN(2)), 0, 0, 0})
		p.Weights = append(p.Weights, [4]float32{1, 0, 0, 0})
		p.Targets[0].Positions = append(p.Targets[0].Positions, [3]float32{0, f(), 0})
	}
	for range 3 * n {
		p.Indices = append(p.Indices, uint32(rng.IntN(n)))
	}
	return p
}

// TestJoinByValue compares JoinByValue with a map from each vertex's bytes:
// the same classes, numbered in order of first appearance, and every
// corner still sees the same values.
func TestJoinByValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 303 {
		n, span := 1+rng.IntN(300), 1+rng.IntN(5)
		if trial >= 300 {
			// Large enough to be split into partitions (joinPart), with
			// both equal and distinct vertices in each.
			n, span = (trial-299)*3*joinPart+rng.IntN(joinPart), 5
		}
		p := randomPrimitive(rng, n, span)
		before := make([]string, len(p.Indices))
		for i, x := range p.Indices {
			before[i] = vertexKey(p, int(x))
		}
		seen := map[string]bool{}
		var wantOrder []string
		for v := range n {
			if k := vertexKey(p, v); !seen[k] {
				seen[k] = true
				wantOrder = append(wantOrder, k)
			}
		}
		removed := p.JoinByValue()
		if removed != n-len(wantOrder) || len(p.Positions) != len(wantOrder) {
			t.Fatalf("trial %d: removed %d of %d, %d left; want %d distinct", trial, removed, n, len(p.Positions), len(wantOrder))
		}
		for v := range p.Positions {
			if vertexKey(p, v) != wantOrder[v] {
				t.Fatalf("trial %d: vertex %d is not the %dth distinct value in order", trial, v, v)
			}
		}
		for i, x := range p.Indices {
			if vertexKey(p, int(x)) != before[i] {
				t.Fatalf("trial %d: corner %d changed its values", trial, i)
			}
		}
		if len(p.Joints) != len(p.Positions) || len(p.Targets[0].Positions) != len(p.Positions) || len(p.UVs[1]) != len(p.Positions) {
			t.Fatalf("trial %d: attributes not compacted together", trial)
		}
	}
}

// square is two triangles over (0,0)–(1,1) in the XZ plane facing +Y,
// with UVs along X and Z, normals +Y, tangents +X with w = 1.
func square() *Primitive {
	return &Primitive{
		Name:      "sq",
		Positions: [][3]float32{{0, 0, 0}, {1, 0, 0}, {1, 0, -1}, {0, 0, -1}},
		Normals:   [][3]float32{{0, 1, 0}, {0, 1, 0}, {0, 1, 0}, {0, 1, 0}},
		Tangents:  [][4]float32{{1, 0, 0, 1}, {1, 0, 0, 1}, {1, 0, 0, 1}, {1, 0, 0, 1}},
		UVs:       [][][2]float32{{{0, 1}, {1, 1}, {1, 0}, {0, 0}}},
		Joints:    [][4]uint16{{0}, {1}, {2}, {3}},
		Weights:   [][4]float32{{1}, {1}, {1}, {1}},
		Targets:   []MorphTarget{{Positions: [][3]float32{{0, 0, 0}, {0, 1, 0}, {0, 2, 0}, {0, 3, 0}}, Tangents: make([][3]float32, 4)}},
		Indices:   []uint32{0, 1, 2, 0, 2, 3},
	}
}

func TestRepairPrimitive(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(-1))
	t.Run("sound", func(t *testing.T) {
		p := square()
		if rs := p.Repair(); rs != nil || !reflect.DeepEqual(p, square()) {
			t.Fatalf("a sound primitive changed: %+v", rs)
		}
	})
	t.Run("position", func(t *testing.T) {
		p := square()
		p.Positions[1][2] = inf
		rs := p.Repair()
		want := []Repair{{Primitive: "sq", Attribute: "position", Vertices: 1, Action: RepairDropTriangles, Triangles: 1}}
		if !reflect.DeepEqual(rs, want) {
			t.Fatalf("repairs %+v, want %+v", rs, want)
		}
		// Vertex 1 and its triangle are gone; the others renumbered, with
		// every per-vertex attribute kept together.
		if !reflect.DeepEqual(p.Indices, []uint32{0, 1, 2}) || len(p.Positions) != 3 ||
			!reflect.DeepEqual(p.Joints, [][4]uint16{{0}, {2}, {3}}) ||
			!reflect.DeepEqual(p.Targets[0].Positions, [][3]float32{{0, 0, 0}, {0, 2, 0}, {0, 3, 0}}) {
			t.Fatalf("after repair: %+v", p)
		}
	})
	t.Run("uv", func(t *testing.T) {
		p := square()
		p.UVs = append(p.UVs, [][2]float32{{0, 0}, {0, 0}, {0, 0}, {nan, 0}})
		rs := p.Repair()
		want := []Repair{{Primitive: "sq", Attribute: "uv1", Vertices: 1, Action: RepairDropTriangles, Triangles: 1}}
		if !reflect.DeepEqual(rs, want) || len(p.Positions) != 3 || len(p.UVs[1]) != 3 {
			t.Fatalf("repairs %+v, want %+v; %d vertices", rs, want, len(p.Positions))
		}
	})
	t.Run("normal", func(t *testing.T) {
		p := square()
		p.Normals[2] = [3]float32{nan, 0, 0}
		p.Tangents[2] = [4]float32{0.6, 0.8, 0, -1} // sound, but leaning on the normal
		rs := p.Repair()
		want := []Repair{{Primitive: "sq", Attribute: "normal", Vertices: 1, Action: RepairRecompute}}
		if !reflect.DeepEqual(rs, want) {
			t.Fatalf("repairs %+v, want %+v", rs, want)
		}
		// Counter-clockwise seen from +Y: the face normal is +Y.
		if p.Normals[2] != [3]float32{0, 1, 0} {
			t.Errorf("normal %v, want (0, 1, 0)", p.Normals[2])
		}
		if p.Tangents[2] != [4]float32{1, 0, 0, -1} {
			t.Errorf("tangent %v, want its part orthogonal to the new normal, (1, 0, 0, −1)", p.Tangents[2])
		}
	})
	t.Run("tangent", func(t *testing.T) {
		p := square()
		p.Tangents[0] = [4]float32{nan, nan, nan, 1}
		p.Tangents[3] = [4]float32{0, 0, 1, nan}
		rs := p.Repair()
		want := []Repair{{Primitive: "sq", Attribute: "tangent", Vertices: 2, Action: RepairRecompute}}
		if !reflect.DeepEqual(rs, want) {
			t.Fatalf("repairs %+v, want %+v", rs, want)
		}
		// u grows along +X; v falls along −Z, so increasing v is +Z, which
		// is cross(+Y, +X)·(−1): w = −1.
		for _, v := range []int{0, 3} {
			if p.Tangents[v] != [4]float32{1, 0, 0, -1} {
				t.Errorf("tangent %d: %v, want (1, 0, 0, −1)", v, p.Tangents[v])
			}
		}
	})
	t.Run("tangent without UV area", func(t *testing.T) {
		p := square()
		p.UVs[0] = [][2]float32{{0.5, 0.5}, {0.5, 0.5}, {0.5, 0.5}, {0.5, 0.5}}
		p.Tangents[1] = [4]float32{inf, 0, 0, 1}
		rs := p.Repair()
		want := []Repair{{Primitive: "sq", Attribute: "tangent", Vertices: 1, Action: RepairDropAttribute}}
		if !reflect.DeepEqual(rs, want) || p.Tangents != nil || p.Targets[0].Tangents != nil {
			t.Fatalf("repairs %+v, want %+v; tangents %v", rs, want, p.Tangents)
		}
	})
	t.Run("tangent without UVs", func(t *testing.T) {
		p := square()
		p.UVs = nil
		p.Tangents[1] = [4]float32{nan, 0, 0, 1}
		if rs := p.Repair(); len(rs) != 1 || rs[0].Action != RepairDropAttribute || p.Tangents != nil {
			t.Fatalf("repairs %+v; tangents %v", rs, p.Tangents)
		}
	})
	t.Run("scene", func(t *testing.T) {
		s := &Scene{Meshes: []Mesh{{Name: "m", Primitives: []Primitive{*square(), *square()}}}}
		s.Meshes[0].Primitives[1].Name = "second"
		s.Meshes[0].Primitives[1].Normals[0][1] = nan
		s.Repair()
		want := []Repair{{Mesh: "m", Primitive: "second", Attribute: "normal", Vertices: 1, Action: RepairRecompute}}
		if !reflect.DeepEqual(s.Repairs, want) {
			t.Fatalf("repairs %+v, want %+v", s.Repairs, want)
		}
	})
	t.Run("primitive emptied", func(t *testing.T) {
		s := &Scene{Meshes: []Mesh{{Name: "m", Primitives: []Primitive{*square(), *square()}}}}
		s.Meshes[0].Primitives[0].Positions[0][0] = nan
		s.Meshes[0].Primitives[0].Positions[2][0] = nan
		s.Repair()
		if len(s.Meshes) != 1 || len(s.Meshes[0].Primitives) != 1 || len(s.Meshes[0].Primitives[0].Indices) != 6 ||
			len(s.Repairs) != 1 || s.Repairs[0].Triangles != 2 {
			t.Fatalf("%d primitives left, repairs %+v; want the sound one, and 2 triangles dropped", len(s.Meshes[0].Primitives), s.Repairs)
		}
	})
}

// TestRepairFields: header.json's form of the repairs; triangles only
// where triangles were dropped.
func TestRepairFields(t *testing.T) {
	b, err := HeaderJSON(Fields{{Key: "repairs", Value: RepairFields([]Repair{
		{Mesh: "m", Primitive: "p", Attribute: "position", Vertices: 2, Action: RepairDropTriangles, Triangles: 3},
		{Mesh: "m", Primitive: "p", Attribute: "tangent", Vertices: 1, Action: RepairRecompute},
	})}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "repairs": [
    {
      "mesh": "m",
      "primitive": "p",
      "attribute": "position",
      "vertices": 2,
      "action": "dropped triangles",
      "triangles": 3
    },
    {
      "mesh": "m",
      "primitive": "p",
      "attribute": "tangent",
      "vertices": 1,
      "action": "recomputed"
    }
  ]
}
`
	if string(b) != want {
		t.Errorf("header.json:\n%s\nwant:\n%s", b, want)
	}
}

// TestNonFiniteFloats: each of NaN, +Inf and −Inf is found in any word
// position; finite extremes and a trailing partial word are not.
func TestNonFiniteFloats(t *testing.T) {
	le := func(fs ...float32) []byte {
		var b []byte
		for _, f := range fs {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
		}
		return b
	}
	finite := le(0, -0, 1, math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32)
	if NonFiniteFloats(finite) || NonFiniteFloats(append(finite, 0xff, 0xff, 0xff)) || NonFiniteFloats(nil) {
		t.Error("finite floats reported non-finite")
	}
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		for at := range 6 {
			b := append([]byte(nil), finite...)
			copy(b[4*at:], le(bad))
			if !NonFiniteFloats(b) {
				t.Errorf("%v at word %d not found", bad, at)
			}
		}
	}
}

// BenchmarkJoinByValue joins a 709×709 grid's vertices (position, normal,
// UV and colour, as a GEM terrain mesh has them), all distinct but for a
// repeated last row, the join every decoder does on a million-triangle mesh.
func BenchmarkJoinByValue(b *testing.B) {
	const n = 709
	src := &Primitive{UVs: make([][][2]float32, 1), Colors: make([][][4]float32, 1)}
	for y := range n + 1 {
		for x := range n {
			fy := float32(min(y, n-1))
			src.Positions = append(src.Positions, [3]float32{float32(x), fy, 0.01 * float32((x*7+min(y, n-1)*3)%5)})
			src.Normals = append(src.Normals, [3]float32{0, 0, 1})
			src.UVs[0] = append(src.UVs[0], [2]float32{float32(x) / n, fy / n})
			src.Colors[0] = append(src.Colors[0], [4]float32{0.5, 0.25, 0.125, 1})
		}
	}
	for y := range n {
		for x := range n - 1 {
			a := uint32(y*n + x)
			src.Indices = append(src.Indices, a, a+1, a+n+1, a, a+n+1, a+n)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		p := *src
		p.Indices = slices.Clone(src.Indices)
		b.StartTimer()
		if p.JoinByValue() != n {
			b.Fatal("the repeated row was not joined")
		}
	}
}

// TestJoinAndRepair: JoinAndRepair does what JoinByValue on every
// primitive then Repair do, the join's soundness test included: every
// attribute Repair tests, each non-finite in one primitive beside sound
// ones, a large primitive (hashed in ranges) among them.
func TestJoinAndRepair(t *testing.T) {
	inf := float32(math.Inf(1))
	big := func() *Primitive {
		p := square()
		p.Name = "big"
		for k := 0; len(p.Positions) < 3*ParallelGrain; k++ {
			p.Positions = append(p.Positions, [3]float32{float32(k), 0, 1})
			p.Normals = append(p.Normals, [3]float32{0, 1, 0})
			p.Tangents = append(p.Tangents, [4]float32{1, 0, 0, 1})
			p.UVs[0] = append(p.UVs[0], [2]float32{0, float32(k)})
			p.Joints = append(p.Joints, [4]uint16{})
			p.Weights = append(p.Weights, [4]float32{1})
			p.Targets[0].Positions = append(p.Targets[0].Positions, [3]float32{})
			p.Targets[0].Tangents = append(p.Targets[0].Tangents, [3]float32{})
			p.Indices = append(p.Indices, 0, 1, uint32(len(p.Positions)-1))
		}
		return p
	}
	breaks := []func(p *Primitive){
		func(p *Primitive) {},
		func(p *Primitive) { p.Positions[len(p.Positions)-1][1] = inf },
		func(p *Primitive) { p.Normals[len(p.Positions)-1][0] = inf },
		func(p *Primitive) { p.Tangents[len(p.Positions)-1][2] = inf },
		func(p *Primitive) { p.UVs[0][len(p.Positions)-1][0] = inf },
		func(p *Primitive) { p.Normals = p.Normals[:2]; p.Normals[1][0] = inf }, // not per-vertex
	}
	for i, brk := range breaks {
		for _, mk := range []func() *Primitive{square, big} {
			scene := func() *Scene {
				a, b, c := mk(), mk(), square()
				brk(b)
				return &Scene{Meshes: []Mesh{{Name: "m", Primitives: []Primitive{*a, *b}}, {Name: "n", Primitives: []Primitive{*c}}}}
			}
			want, got := scene(), scene()
			for mi := range want.Meshes {
				for pi := range want.Meshes[mi].Primitives {
					want.Meshes[mi].Primitives[pi].JoinByValue()
				}
			}
			want.Repair()
			got.JoinAndRepair()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("break %d, %d vertices: JoinAndRepair gave repairs %+v, want %+v", i, len(mk().Positions), got.Repairs, want.Repairs)
			}
			if i > 0 && i < 5 && len(want.Repairs) == 0 { // break 5 leaves Repair nothing it can do
				t.Errorf("break %d: nothing repaired", i)
			}
		}
	}
}
