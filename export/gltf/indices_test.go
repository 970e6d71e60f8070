package gltf

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	qgltf "github.com/qmuntal/gltf"
)

// TestIndexChecks: indices are checked as they are written, yet Encode
// reports what checking them first would: the first primitive in scene
// order with an index out of range (naming the largest index) or with
// another fault, an index fault before another fault of the same
// primitive; small and large (parallel) primitives, 16- and 32-bit.
func TestIndexChecks(t *testing.T) {
	big := func() decode.Primitive { return grid(400, 400, 0) } // 160 000 vertices, 32-bit indices
	small := func() decode.Primitive { return grid(5, 5, 0) }
	badIndex := func(p decode.Primitive, at int, v uint32) decode.Primitive {
		p.Indices = append([]uint32(nil), p.Indices...)
		p.Indices[at] = v
		return p
	}
	badNormals := func(p decode.Primitive) decode.Primitive {
		p.Normals = make([][3]float32, 3)
		return p
	}
	scene := func(ps ...decode.Primitive) *decode.Scene {
		return &decode.Scene{Meshes: []decode.Mesh{{Name: "m", Primitives: ps}}}
	}
	for _, c := range []struct {
		name string
		s    *decode.Scene
		want string // "" for success
	}{
		{"fine", scene(small(), big()), ""},
		{"small, past n", scene(small(), badIndex(small(), 7, 25)), "primitive 1 (\"\"): index 25 out of range for 25 vertices"},
		{"small, past 16 bits", scene(badIndex(small(), 0, 70000)), "primitive 0 (\"\"): index 70000 out of range for 25 vertices"},
		{"big, two past n", scene(badIndex(badIndex(big(), 5, 160000), 900000, 200000), small()),
			"primitive 0 (\"\"): index 200000 out of range for 160000 vertices"},
		{"index before a later fault", scene(small(), badIndex(big(), 900000, 160001), badNormals(small())),
			"primitive 1 (\"\"): index 160001 out of range for 160000 vertices"},
		{"fault before a later index", scene(badNormals(small()), badIndex(big(), 3, 160000)),
			"primitive 0 (\"\"): normals: 3 elements for 25 vertices"},
		{"index before a fault of the same primitive", scene(badNormals(badIndex(small(), 1, 99))),
			"primitive 0 (\"\"): index 99 out of range for 25 vertices"},
	} {
		for _, procs := range []int{1, 2} {
			func() {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				glb, err := Encode(c.s)
				switch {
				case c.want == "" && err != nil:
					t.Errorf("%s, GOMAXPROCS %d: %v", c.name, procs, err)
				case c.want != "" && (err == nil || !strings.HasSuffix(err.Error(), c.want)):
					t.Errorf("%s, GOMAXPROCS %d: error %v, want …%s", c.name, procs, err, c.want)
				case c.want != "" && glb != nil:
					t.Errorf("%s: bytes with the error", c.name)
				}
			}()
		}
	}
}

// TestIndexWidth: 16-bit indices whenever every index is below 65535, even
// in a primitive of more vertices; 32-bit when the last one is 65535.
func TestIndexWidth(t *testing.T) {
	p := grid(300, 300, 0) // 90 000 vertices
	var low []uint32
	for _, v := range p.Indices {
		if v < 65000 {
			low = append(low, v)
		}
	}
	low = low[:len(low)/3*3]
	for _, c := range []struct {
		name string
		idx  []uint32
		want qgltf.ComponentType
	}{
		{"all below 65535", low, qgltf.ComponentUshort},
		{"last is 65535", append(append([]uint32(nil), low...), 0, 1, 65535), qgltf.ComponentUint},
		{"whole grid", p.Indices, qgltf.ComponentUint},
	} {
		q := p
		q.Indices = c.idx
		r := encode(t, &decode.Scene{Meshes: []decode.Mesh{{Name: "m", Primitives: []decode.Primitive{q}}}})
		a := r.doc.Accessors[*r.doc.Meshes[0].Primitives[0].Indices]
		if a.ComponentType != c.want {
			t.Errorf("%s: component type %v, want %v", c.name, a.ComponentType, c.want)
		}
		got, ok := r.acc(int(*r.doc.Meshes[0].Primitives[0].Indices)).([]uint32)
		if !ok {
			if u16, ok16 := r.acc(int(*r.doc.Meshes[0].Primitives[0].Indices)).([]uint16); ok16 {
				for _, v := range u16 {
					got = append(got, uint32(v))
				}
			}
		}
		if !bytes.Equal(bits(t, got), bits(t, c.idx)) {
			t.Errorf("%s: indices read back differ", c.name)
		}
	}
}

// bits is the little-endian bytes of v.
func bits(t *testing.T, v []uint32) []byte {
	t.Helper()
	out := make([]byte, 0, 4*len(v))
	for _, x := range v {
		out = append(out, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
	}
	return out
}
