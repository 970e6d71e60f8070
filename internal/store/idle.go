package store

// Activity is when the mount's readers last asked anything, for the
// work that stands aside while they are active (a big disk-cache save, the
// pre-warmer), and the lowest scheduling priority that work runs at.

import (
	"context"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
)

// Clock is what the waits for a quiet moment tell the time by: the real
// clock, or a test's that moves only when told to.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// activity is when readers last asked anything, for the work that stands
// aside while they are active (a big disk-cache save, the pre-warmer).
type activity struct {
	clk  Clock
	last atomic.Int64 // unix ns of the last Touch
}

// newActivity is the activity of readers told by clock c (nil: the real clock).
func newActivity(c Clock) *activity {
	if c == nil {
		c = realClock{}
	}
	return &activity{clk: c}
}

// Touch records a reader's request.
func (a *activity) Touch() { a.last.Store(a.clk.Now().UnixNano()) }

// waitQuiet waits until no reader has asked anything for quiet, for at
// most max (0: no bound), or until ctx is done. waited reports whether it
// had to wait; ok is false when ctx ended the wait.
func (a *activity) waitQuiet(ctx context.Context, quiet, max time.Duration) (waited, ok bool) {
	clk := a.clk
	deadline := clk.Now().Add(max)
	for {
		now := clk.Now()
		idle := time.Duration(now.UnixNano() - a.last.Load())
		if idle >= quiet || (max > 0 && now.After(deadline)) {
			return waited, true
		}
		waited = true
		select {
		case <-ctx.Done():
			return waited, false
		case <-clk.After(quiet - idle):
		}
	}
}

// lowPriority runs the calling goroutine, until it returns, on a thread of
// its own at the lowest scheduling priority. The thread is never handed
// back to the runtime (no UnlockOSThread): a goroutine that exits locked
// takes its thread with it, so no request is ever served on a niced thread.
func lowPriority() {
	runtime.LockOSThread()
	syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 19)
}
