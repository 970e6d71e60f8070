package tfever

import (
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"testing"
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
