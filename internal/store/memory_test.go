package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/meshfs/meshfs/internal/source"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newMemCacheT(t *testing.T, budget int64) *memCache {
	t.Helper()
	c, err := newMemCache(budget)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func memKeyOf(path, out string, size int64) memKey {
	return memKey{Path: path, Version: source.Version{Ident: source.Ident{File: source.File{Dev: 1, Ino: 2}, Size: size, MtimeNs: 3}}, Output: out}
}

func bytesOf(n int, b byte) []byte { return bytes.Repeat([]byte{b}, n) }

func TestConcurrentGetsShareOneLoad(t *testing.T) {
	c := newMemCacheT(t, 1<<20)
	var calls atomic.Int32
	gate := make(chan struct{})
	load := func(ctx context.Context) (*memEntry, error) {
		calls.Add(1)
		<-gate
		return &memEntry{Parts: [][]byte{bytesOf(1000, 'g')}}, nil
	}
	const n = 64
	got := make([]*memEntry, n)
	errs := make([]error, n)
	var started, wg sync.WaitGroup
	started.Add(n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started.Done()
			got[i], errs[i] = c.Get(context.Background(), memKeyOf("/a.x", "glb", 10), "x/glb", load)
		}()
	}
	started.Wait()
	close(gate)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("reader %d: %v", i, errs[i])
		}
		if got[i] != got[0] {
			t.Fatalf("reader %d got a different entry", i)
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("loader ran %d times, want 1", calls.Load())
	}
	st := c.Stats()
	if st.Loads["x/glb"] != 1 || st.Misses != 1 || st.Hits != n-1 {
		t.Fatalf("stats: loads %v misses %d hits %d", st.Loads, st.Misses, st.Hits)
	}
}

func TestBoundedByWeight(t *testing.T) {
	const budget = 64 << 10
	c := newMemCacheT(t, budget)
	total := 0
	for i := range 80 {
		k := memKeyOf(fmt.Sprintf("/src/%d", i), "glb", int64(i))
		e, err := c.Get(context.Background(), k, "x/glb", func(context.Context) (*memEntry, error) {
			return &memEntry{Parts: [][]byte{bytesOf(4000, byte(i))}}, nil
		})
		if err != nil || len(e.Part(0)) != 4000 || e.Part(0)[0] != byte(i) {
			t.Fatalf("entry %d: %v", i, err)
		}
		total += 4000
	}
	st := c.Stats()
	if total < 4*budget {
		t.Fatalf("test wrote only %d bytes", total)
	}
	if st.BytesCached > budget {
		t.Fatalf("cached %d bytes, budget %d", st.BytesCached, budget)
	}
	if st.BytesCached < budget/2 {
		t.Fatalf("cached only %d bytes of a %d budget: eviction too eager", st.BytesCached, budget)
	}
}

func TestFailureCachedUntilSourceChanges(t *testing.T) {
	c := newMemCacheT(t, 1<<20)
	var calls int
	bad := errors.New("x.bin: offset 0x10: field count: too large")
	load := func(context.Context) (*memEntry, error) {
		calls++
		return &memEntry{Err: bad}, nil
	}
	for range 3 {
		e, err := c.Get(context.Background(), memKeyOf("/x.bin", "glb", 100), "x/glb", load)
		if err != nil || !errors.Is(e.Err, bad) {
			t.Fatalf("got %v, %v", e, err)
		}
	}
	if calls != 1 {
		t.Fatalf("failed load ran %d times, want 1", calls)
	}
	// Same path, new version: loads again.
	if _, err := c.Get(context.Background(), memKeyOf("/x.bin", "glb", 101), "x/glb", load); err != nil {
		t.Fatal(err)
	}
	if calls != 2 {
		t.Fatalf("changed source did not reload (calls %d)", calls)
	}
	if st := c.Stats(); st.Failures != 2 || st.Failed["x/glb"] != 2 {
		t.Fatalf("failures %d %v", st.Failures, st.Failed)
	}
}

func TestLoaderErrorNotCached(t *testing.T) {
	c := newMemCacheT(t, 1<<20)
	var calls int
	gone := errors.New("vanished")
	load := func(context.Context) (*memEntry, error) { calls++; return nil, gone }
	for range 2 {
		if _, err := c.Get(context.Background(), memKeyOf("/y", "glb", 1), "x/glb", load); !errors.Is(err, gone) {
			t.Fatalf("err %v", err)
		}
	}
	if calls != 2 {
		t.Fatalf("uncacheable error was cached (calls %d)", calls)
	}
}

func TestLoaderNotCancelledWithCaller(t *testing.T) {
	c := newMemCacheT(t, 1<<20)
	ctx, cancel := context.WithCancel(context.Background())
	var loaderCtxErr error
	_, err := c.Get(ctx, memKeyOf("/z", "glb", 1), "x/glb", func(lctx context.Context) (*memEntry, error) {
		cancel()
		loaderCtxErr = lctx.Err()
		return &memEntry{Parts: [][]byte{[]byte("ok")}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if loaderCtxErr != nil {
		t.Fatalf("loader saw the caller's cancellation: %v", loaderCtxErr)
	}
}

func TestInvalidatePath(t *testing.T) {
	c := newMemCacheT(t, 1<<20)
	fill := func(k memKey) {
		c.Get(context.Background(), k, "x", func(context.Context) (*memEntry, error) {
			return &memEntry{Parts: [][]byte{[]byte(k.Output)}}, nil
		})
	}
	fill(memKeyOf("/a", "glb", 1))
	fill(memKeyOf("/a", "obj", 1))
	fill(memKeyOf("/a", "glb", 2))
	fill(memKeyOf("/b", "glb", 1))
	if n := c.Invalidate("/a"); n != 3 {
		t.Fatalf("invalidated %d, want 3", n)
	}
	if _, ok := c.Peek(memKeyOf("/a", "glb", 1)); ok {
		t.Fatal("entry of /a survived Invalidate")
	}
	if _, ok := c.Peek(memKeyOf("/b", "glb", 1)); !ok {
		t.Fatal("entry of /b was dropped")
	}
}

func TestLatencyPercentiles(t *testing.T) {
	var r ring
	for i := 1; i <= 100; i++ {
		r.Add(time.Duration(i) * time.Millisecond)
	}
	l := r.Summary()
	if l.Count != 100 || l.P50Ms != 51 || l.P99Ms != 100 || l.MaxMs != 100 {
		t.Fatalf("%+v", l)
	}
	for i := 0; i < 5000; i++ { // wraps: keeps only the newest samples
		r.Add(time.Second)
	}
	if l := r.Summary(); l.P50Ms != 1000 || l.Count != 5100 {
		t.Fatalf("after wrap %+v", l)
	}
}

func TestNewRejectsZeroBudget(t *testing.T) {
	if _, err := newMemCache(0); err == nil {
		t.Fatal("zero budget accepted")
	}
}

// An entry evicted by the budget but still held by a reader is revived,
// not loaded again.
func TestEvictedButHeldIsRevived(t *testing.T) {
	c := newMemCacheT(t, 64<<10)
	var calls int
	load := func(context.Context) (*memEntry, error) {
		calls++
		return &memEntry{Parts: [][]byte{bytesOf(40<<10, 'a')}}, nil
	}
	held, err := c.Get(context.Background(), memKeyOf("/big", "glb", 1), "x/glb", load)
	if err != nil {
		t.Fatal(err)
	}
	// Evicted (as the budget's policy would): still held by this reader.
	c.c.Invalidate(memKeyOf("/big", "glb", 1))
	again, err := c.Get(context.Background(), memKeyOf("/big", "glb", 1), "x/glb", load)
	if err != nil || again != held || calls != 1 {
		t.Fatalf("held entry reloaded: calls %d, same %v, %v", calls, again == held, err)
	}
	if c.Stats().Revived != 1 {
		t.Fatalf("revived %d", c.Stats().Revived)
	}
	runtime.KeepAlive(held)
}
