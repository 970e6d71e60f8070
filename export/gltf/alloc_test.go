package gltf

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// poisoned allocates an output filled with b instead of newOutput's
// unspecified bytes.
func poisoned(b byte) func(n int) []byte {
	return func(n int) []byte {
		out := make([]byte, n)
		for i := range out {
			out[i] = b
		}
		return out
	}
}

// gapScene has every kind of data whose writer might leave bytes alone: an
// empty UV set and colour set between filled ones, an absent morph target,
// 16-bit indices of odd count (2 bytes of alignment padding after them),
// a skinned primitive without influences.
func gapScene() *decode.Scene {
	p := grid(4, 3, 0) // 12 vertices, 12 triangles
	p.Indices = p.Indices[:15]
	addNormals(&p, 1)
	addUVs(&p, 1, 2)
	p.UVs = append([][][2]float32{nil}, p.UVs...)
	addColors(&p, 1, 3)
	p.Colors = append(p.Colors, nil)
	p.Targets = []decode.MorphTarget{{}, {Positions: make([][3]float32, len(p.Positions))}}
	q := grid(3, 3, 1)
	q.Indices = q.Indices[:3]
	return &decode.Scene{
		Meshes: []decode.Mesh{{Name: "gaps", Primitives: []decode.Primitive{p}},
			{Name: "skinned", Skinned: true, Primitives: []decode.Primitive{q}}},
		Skeleton: &decode.Skeleton{Joints: []decode.Joint{{Name: "root", Parent: -1}, {Name: "child", Parent: 0}}},
	}
}

// TestOutputFullyWritten: Encode writes every byte of its output (it is
// allocated without zeroing): whatever the buffer held before, the .glb is
// the same, for scenes with gaps, random broken scenes, and a scene large
// enough to be written in parallel.
func TestOutputFullyWritten(t *testing.T) {
	scenes := []*decode.Scene{gapScene(), animatedScene(), bigScene()}
	r := rand.New(rand.NewPCG(17, 18))
	for range 300 {
		scenes = append(scenes, randomScene(r))
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for i, s := range scenes {
		var outs [3][]byte
		var errs [3]error
		for k, poison := range []byte{0, 0xa5, 0xff} {
			outs[k], errs[k] = encodeWith(s, poisoned(poison))
		}
		if errs[0] != nil {
			for k := range errs {
				if errs[k] == nil || errs[k].Error() != errs[0].Error() {
					t.Fatalf("scene %d: errors %v", i, errs)
				}
			}
			continue
		}
		if !bytes.Equal(outs[0], outs[1]) || !bytes.Equal(outs[0], outs[2]) {
			t.Fatalf("scene %d: the .glb depends on what the buffer held before (%d bytes)", i, len(outs[0]))
		}
	}
}

// TestNewOutput: newOutput gives a writable slice of exactly n bytes, and
// two calls give separate memory.
func TestNewOutput(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4096, 5 << 20} {
		a, b := newOutput(n), newOutput(n)
		if len(a) != n || len(b) != n {
			t.Fatalf("newOutput(%d): lengths %d, %d", n, len(a), len(b))
		}
		for i := range a {
			a[i], b[i] = byte(i), ^byte(i)
		}
		for i := range a {
			if a[i] != byte(i) || b[i] != ^byte(i) {
				t.Fatalf("newOutput(%d): byte %d overwritten by another slice", n, i)
			}
		}
	}
}
