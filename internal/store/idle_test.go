package store

import (
	"context"
	"sync"
	"testing"
	"time"
)

// stepClock moves by step at every After.
type stepClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(min(d, c.step))
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

func TestWaitQuiet(t *testing.T) {
	clk := &stepClock{now: time.Unix(1000, 0), step: 10 * time.Millisecond}
	a := newActivity(clk)
	ctx := context.Background()
	if waited, ok := a.waitQuiet(ctx, 50*time.Millisecond, 0); waited || !ok {
		t.Fatalf("no reader ever: waited %v ok %v", waited, ok)
	}
	a.Touch()
	start := clk.Now()
	if waited, ok := a.waitQuiet(ctx, 50*time.Millisecond, 0); !waited || !ok {
		t.Fatalf("after a touch: waited %v ok %v", waited, ok)
	}
	if d := clk.Now().Sub(start); d < 50*time.Millisecond {
		t.Fatalf("quiet after %v, want 50ms", d)
	}
	// A reader that never pauses: the bound ends the wait.
	clk.step = time.Millisecond
	a.Touch()
	start = clk.Now()
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			default:
				a.Touch()
			}
		}
	}()
	a.waitQuiet(ctx, time.Hour, 20*time.Millisecond)
	close(done)
	if d := clk.Now().Sub(start); d > time.Hour {
		t.Fatalf("bounded wait took %v", d)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	a.Touch()
	if _, ok := a.waitQuiet(cctx, time.Hour, 0); ok {
		t.Fatal("a cancelled wait reported quiet")
	}
}
