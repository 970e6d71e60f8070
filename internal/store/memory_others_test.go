package store

import (
	"context"
	"sync/atomic"
	"testing"
)

// InvalidateOthers drops the source's entries of other versions, held or
// not, and keeps its entries of the version given and other sources'.
func TestInvalidateOthers(t *testing.T) {
	c := newMemCacheT(t, 64<<10)
	var calls atomic.Int32
	// Over the budget: kept by its hold alone.
	if _, err := c.GetSized(context.Background(), memKeyOf("/a", "glb", 1), "x/glb", 1, bigLoad(1<<20, &calls)); err != nil {
		t.Fatal(err)
	}
	fill := func(k memKey) {
		c.Get(context.Background(), k, "x", func(context.Context) (*memEntry, error) {
			return &memEntry{Parts: [][]byte{[]byte(k.Output)}}, nil
		})
	}
	fill(memKeyOf("/a", "obj", 1))
	fill(memKeyOf("/a", "glb", 2))
	fill(memKeyOf("/a", "scan", 2))
	fill(memKeyOf("/b", "glb", 1))
	if n := c.InvalidateOthers("/a", memKeyOf("/a", "glb", 2).Version); n < 1 {
		t.Fatalf("invalidated %d, want /a's obj of version 1 at least", n)
	}
	for _, k := range []memKey{memKeyOf("/a", "glb", 1), memKeyOf("/a", "obj", 1)} {
		if _, ok := c.Peek(k); ok {
			t.Errorf("%v survived", k)
		}
	}
	for _, k := range []memKey{memKeyOf("/a", "glb", 2), memKeyOf("/a", "scan", 2), memKeyOf("/b", "glb", 1)} {
		if _, ok := c.Peek(k); !ok {
			t.Errorf("%v was dropped", k)
		}
	}
	if st := c.Stats(); st.Held != 0 {
		t.Fatalf("held %d after InvalidateOthers", st.Held)
	}
}
