package gem

import (
	"context"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// manySubmeshes is an n×n grid split into k MESH submeshes of consecutive
// faces over one VERT chunk (as map files are), with its index values.
func manySubmeshes(t *testing.T, n, k int) (*File, []uint32) {
	vs, tris := grid(n, 0, 0, false)
	for i := range vs {
		vs[i].UVs = [][2]float32{{vs[i].Position[0] / float32(n), vs[i].Position[1] / float32(n)}}
		vs[i].Colors = [][4]float32{{0.5, 0.25, 0.125, 1}}
	}
	var chunks []Chunk
	per := len(tris) / k
	var first *Submesh
	for i := range k {
		count := per
		if i == k-1 {
			count = len(tris) - per*(k-1)
		}
		s := &Submesh{Kind: KindMESH, FVF: 0x152, FaceStart: uint32(i * per), FaceCount: uint32(count), Flags: FlagMaterial,
			Material: "m" + strings.Repeat("x", i) + ".mtl"}
		if i%3 == 1 {
			s.Flags |= FlagMirrored
		}
		if first == nil {
			first = s
		}
		chunks = append(chunks, s)
	}
	data, err := PackVertices(first, 36, vs)
	if err != nil {
		t.Fatal(err)
	}
	idx := &Indices{Wide: true}
	for _, tr := range tris {
		idx.Values = append(idx.Values, tr[0], tr[1], tr[2])
	}
	chunks = append(chunks, &Vert{Size: 36, Flags: 7, Data: data}, idx)
	return &File{Magic: MagicBPLY, Chunks: chunks}, idx.Values
}

// TestSubmeshesInParallel: a file of many submeshes, large enough for
// them to be built at once, gives the scene of a one-CPU build; with bad
// indices in two submeshes, the error is the earlier submesh's.
func TestSubmeshesInParallel(t *testing.T) {
	f, values := manySubmeshes(t, 120, 9) // 28 800 faces, 86 400 corners
	build := func(procs int) (*decode.Scene, error) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		return BuildScene(context.Background(), f, "many.ply")
	}
	one, err := build(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Meshes) != 1 || len(one.Meshes[0].Primitives) != 9 {
		t.Fatalf("%d meshes", len(one.Meshes))
	}
	for range 5 {
		par, err := build(4)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(par, one) {
			t.Fatal("scenes built on 1 and 4 CPUs differ")
		}
	}
	per := len(values) / 3 / 9
	for _, bad := range [][2]int{{2, 7}, {7, 8}, {0, 1}} {
		saved := [2]uint32{values[3*per*bad[0]+4], values[3*per*bad[1]+1]}
		values[3*per*bad[0]+4] = 1 << 30
		values[3*per*bad[1]+1] = 1 << 30
		for _, procs := range []int{1, 4} {
			_, err := build(procs)
			want := "indices[" + strconv.Itoa(3*per*bad[0]+4) + "]"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("bad submeshes %v on %d CPUs: error %v, want one naming %s", bad, procs, err, want)
			}
		}
		values[3*per*bad[0]+4], values[3*per*bad[1]+1] = saved[0], saved[1]
	}
}
