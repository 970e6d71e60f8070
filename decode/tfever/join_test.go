package tfever

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// refJoin is joinTuples as a map from the tuple's bytes: the reference
// numbering (first use order).
func refJoin(lists [][]uint32, n int) ([]uint32, []int) {
	idx := make([]uint32, n)
	seen := map[string]uint32{}
	key := make([]byte, 4*len(lists))
	var order []int
	for i := range n {
		for a, l := range lists {
			binary.LittleEndian.PutUint32(key[4*a:], l[i])
		}
		v, ok := seen[string(key)]
		if !ok {
			v = uint32(len(order))
			seen[string(key)] = v
			order = append(order, i)
		}
		idx[i] = v
	}
	return idx, order
}

// TestJoinTuples: random index lists, from all-distinct to heavily shared
// tuples, sizes across the table's growth, 0 to 5 lists.
func TestJoinTuples(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		nl := rng.IntN(6)
		n := rng.IntN(5000)
		if trial%50 == 0 {
			n = 100000
		}
		span := 1 + rng.IntN(n+1) // small spans: many repeated tuples
		lists := make([][]uint32, nl)
		for a := range lists {
			lists[a] = make([]uint32, n)
			for i := range n {
				lists[a][i] = uint32(rng.IntN(span))
			}
		}
		gi, go_ := joinTuples(lists, n)
		wi, wo := refJoin(lists, n)
		if !reflect.DeepEqual(gi, wi) || !reflect.DeepEqual(go_, wo) {
			t.Fatalf("trial %d (%d lists, %d corners): numbering differs from the reference", trial, nl, n)
		}
	}
}

// TestFirstBadIndex: the lists are read in stretches of corners, all lists
// in step, yet the error names the first bad index of the first list that
// has one, as a pass over each list in turn would: here position's at
// corner 20000 (the second stretch), not uv0's at corner 3.
func TestFirstBadIndex(t *testing.T) {
	script, blob, err := EncodeMsh(gridMesh(100)) // 58 806 corners
	if err != nil {
		t.Fatal(err)
	}
	src := memSource("g.msh", map[string][]byte{"g.msh": script, "g.msh.blob": blob})
	_, m, err := Msh{}.load(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	pos, uv := m.SubMeshes[0].index("position"), m.SubMeshes[0].index("uv0")
	if pos == nil || uv == nil || int(pos.items()) <= 20000 {
		t.Fatal("fixture lacks its index lists")
	}
	bad := append([]byte(nil), blob...)
	binary.LittleEndian.PutUint32(bad[pos.Offset+4*20000:], 1<<30)
	binary.LittleEndian.PutUint32(bad[uv.Offset+4*3:], 1<<30)
	src = memSource("g.msh", map[string][]byte{"g.msh": script, "g.msh.blob": bad})
	_, err = Msh{}.Decode(context.Background(), src)
	var fe *decode.FormatError
	if !errors.As(err, &fe) || fe.Section != "submesh 0 indices.position" || fe.Field != "index[20000]" || fe.Offset != pos.Offset+4*20000 {
		t.Fatalf("err %v", err)
	}
}
