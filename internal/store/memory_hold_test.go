package store

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// bigLoad returns a loader of an n-byte entry that counts its calls.
func bigLoad(n int, calls *atomic.Int32) memLoader {
	return func(context.Context) (*memEntry, error) {
		calls.Add(1)
		return &memEntry{Parts: [][]byte{bytesOf(n, 'b')}}, nil
	}
}

// An output bigger than the whole budget, read by many readers one piece
// at a time (each READ a Get, nothing referencing the entry between them,
// collections in between), is loaded once while the reads keep coming.
func TestHeldBeyondBudgetLoadsOnce(t *testing.T) {
	c := newMemCacheT(t, 64<<10)
	var calls atomic.Int32
	k := memKeyOf("/big", "glb", 1)
	load := bigLoad(1<<20, &calls)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				e, err := c.GetSized(context.Background(), k, "x/glb", 1<<20, load)
				if err != nil || len(e.Part(0)) != 1<<20 {
					t.Errorf("get: %v", err)
					return
				}
				runtime.GC()
			}
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("loaded %d times, want 1", n)
	}
	st := c.Stats()
	if st.Held != 1 || st.HeldOutside < 1<<20 {
		t.Fatalf("held %d, outside %d bytes", st.Held, st.HeldOutside)
	}
	if st.Loads["x/glb"] != 1 {
		t.Fatalf("loads %v", st.Loads)
	}
}

// A hold ends once its grace has passed without a Get: the memory goes
// back, and a later reader loads again.
func TestHoldEndsAfterGrace(t *testing.T) {
	c := newMemCacheT(t, 64<<10)
	c.holds.grace = 50 * time.Millisecond
	var calls atomic.Int32
	k := memKeyOf("/big", "glb", 1)
	if _, err := c.GetSized(context.Background(), k, "x/glb", 1, bigLoad(1<<20, &calls)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for c.Stats().Held != 0 {
		if time.Now().After(deadline) {
			t.Fatal("still held 10 s after a 50 ms grace")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for range 3 {
		runtime.GC() // the weak pointer goes with the last reference
	}
	if _, ok := c.Peek(k); ok {
		t.Fatal("an entry bigger than the budget is still there after its hold")
	}
	if _, err := c.GetSized(context.Background(), k, "x/glb", 1, bigLoad(1<<20, &calls)); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("loaded %d times, want 2", n)
	}
}

// A load waits while the bytes held outside the budget leave no room, and
// starts once a hold goes idle; the bytes held never pass the limit by
// more than the one entry that was admitted with nothing else held.
func TestLoadWaitsForRoom(t *testing.T) {
	c := newMemCacheT(t, 64<<10)
	c.holds.limit = 1 << 20
	var calls atomic.Int32
	a, b := memKeyOf("/a", "glb", 1), memKeyOf("/b", "glb", 1)
	ea, err := c.GetSized(context.Background(), a, "x/glb", 700<<10, bigLoad(700<<10, &calls))
	if err != nil {
		t.Fatal(err)
	}
	// a's reader keeps reading for a while, then stops.
	stop := make(chan struct{})
	var reads sync.WaitGroup
	reads.Add(1)
	go func() {
		defer reads.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				c.GetSized(context.Background(), a, "x/glb", 700<<10, bigLoad(700<<10, &calls))
			}
		}
	}()
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		if _, err := c.GetSized(context.Background(), b, "x/glb", 700<<10, bigLoad(700<<10, &calls)); err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-loaded:
		t.Fatal("b loaded while a, held outside the budget, left no room")
	case <-time.After(300 * time.Millisecond):
	}
	if st := c.Stats(); st.HoldWaits != 1 || st.HeldOutside > 1<<20 {
		t.Fatalf("waits %d, outside %d", st.HoldWaits, st.HeldOutside)
	}
	close(stop)
	reads.Wait()
	select {
	case <-loaded:
	case <-time.After(10 * time.Second):
		t.Fatal("b still waiting 10 s after a's reader stopped")
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("loaded %d times, want 2 (a once, b once)", n)
	}
	if st := c.Stats(); st.HeldOutside > 1<<20 || st.Held != 1 {
		t.Fatalf("held %d, outside %d bytes: a should have been let go for b", st.Held, st.HeldOutside)
	}
	runtime.KeepAlive(ea)
}

// A reader that never pauses cannot keep a load waiting for ever: after
// HoldMaxWait the least recently used hold is let go.
func TestLoadTakesOldestHoldAfterMaxWait(t *testing.T) {
	c := newMemCacheT(t, 64<<10)
	c.holds.limit = 1 << 20
	c.holds.maxWait = 200 * time.Millisecond
	var calls atomic.Int32
	a, b := memKeyOf("/a", "glb", 1), memKeyOf("/b", "glb", 1)
	if _, err := c.GetSized(context.Background(), a, "x/glb", 1, bigLoad(700<<10, &calls)); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				c.Use(a)
			}
		}
	}()
	done := make(chan error, 1)
	go func() {
		_, err := c.GetSized(context.Background(), b, "x/glb", 700<<10, bigLoad(700<<10, &calls))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b still waiting 10 s with a 200 ms maximum wait")
	}
	if st := c.Stats(); st.HoldsReleased != 1 {
		t.Fatalf("holds released %d, want 1", st.HoldsReleased)
	}
}

// Small entries are left to the budget (a walk touches thousands), and
// loads without a size hint never wait.
func TestSmallNotHeld(t *testing.T) {
	c := newMemCacheT(t, 1<<20)
	c.holds.limit = 1
	var calls atomic.Int32
	if _, err := c.GetSized(context.Background(), memKeyOf("/big", "glb", 1), "x/glb", 1, bigLoad(256<<10, &calls)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(context.Background(), memKeyOf("/s", "scan", 1), "x/scan", bigLoad(100, &calls)); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Held != 1 || st.HoldWaits != 0 {
		t.Fatalf("held %d, waits %d", st.Held, st.HoldWaits)
	}
}

// Invalidate lets go of the source's holds at once.
func TestInvalidateEndsHolds(t *testing.T) {
	c := newMemCacheT(t, 64<<10)
	var calls atomic.Int32
	if _, err := c.GetSized(context.Background(), memKeyOf("/big", "glb", 1), "x/glb", 1, bigLoad(1<<20, &calls)); err != nil {
		t.Fatal(err)
	}
	c.Invalidate("/big")
	if st := c.Stats(); st.Held != 0 {
		t.Fatalf("held %d after Invalidate", st.Held)
	}
}
