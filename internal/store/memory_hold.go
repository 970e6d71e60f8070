package store

import (
	"sync"
	"time"
)

// Holds keep the entries readers are using alive whatever the budget, so an
// output is produced once per version while it is being read, never once per
// read. A reader of the mount may hold no handle (the kernel's no-open mode:
// READs arrive without one), so "in use" means "asked for recently": every
// Get holds its entry for HoldGrace after the last Get of its key.
//
// An entry held while the cache itself keeps it costs nothing more; one the
// cache has evicted (or never admitted: bigger than the budget) is held
// outside it, and those bytes are bounded: a load (a conversion, a read of
// the disk cache) waits, before it starts, while the bytes held outside the
// budget and those reserved by the loads in flight leave no room for it.
// While a load waits, holds idle for HoldPressureIdle are let go; one that
// has waited HoldMaxWait lets go of the least recently used hold, so a
// reader that never pauses cannot keep another waiting for ever.
const (
	// holdGrace is how long an entry stays held after the last Get of it:
	// long enough for the readers of a folder of meshes, reading them in
	// different orders, to come back to one while the others convert.
	// Idle holds cost nothing when no load waits for room (they go after
	// HoldPressureIdle when one does).
	holdGrace = 10 * time.Second
	// holdPressureIdle is how long an entry must have gone unasked to be
	// let go early for a load that is waiting.
	holdPressureIdle = 200 * time.Millisecond
	// holdMaxWait is how long a load waits before it takes the place of
	// the least recently used hold.
	holdMaxWait = 5 * time.Second
	// defaultHoldLimit bounds the bytes held outside the budget.
	defaultHoldLimit = 64 << 20
	// holdMin is the weight below which an entry is not held: recomputing
	// a small entry is cheap, and a walk touches thousands of them.
	holdMin = 64 << 10
)

type hold struct {
	e    *memEntry
	w    int64
	last time.Time
}

// holds is the table of held entries. resident reports whether the cache
// itself keeps an entry (so holding it costs nothing).
type holds struct {
	resident func(memKey, *memEntry) bool
	now      func() time.Time
	limit    int64
	grace    time.Duration
	idle     time.Duration
	maxWait  time.Duration

	mu       sync.Mutex
	m        map[memKey]*hold
	reserved int64         // bytes reserved by loads in flight
	loads    int           // loads in flight
	changed  chan struct{} // closed (and replaced) when room may have appeared
	timer    *time.Timer
	closed   bool
	released int64 // holds let go under pressure (stats)
	waits    int64 // loads that waited for room (stats)
}

func newHolds(limit int64, resident func(memKey, *memEntry) bool) *holds {
	return &holds{resident: resident, now: time.Now, limit: limit, grace: holdGrace, idle: holdPressureIdle,
		maxWait: holdMaxWait, m: map[memKey]*hold{}, changed: make(chan struct{})}
}

// get returns the entry held for k, if any, and holds it on.
func (h *holds) get(k memKey) *memEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	if x := h.m[k]; x != nil {
		x.last = h.now()
		return x.e
	}
	return nil
}

// peek returns the entry held for k without holding it longer.
func (h *holds) peek(k memKey) *memEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	if x := h.m[k]; x != nil {
		return x.e
	}
	return nil
}

// hold holds e as k's entry from now on, for grace.
func (h *holds) hold(k memKey, e *memEntry) {
	w := e.Weight()
	if w < holdMin {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	if x := h.m[k]; x != nil {
		x.e, x.w, x.last = e, w, h.now()
		return
	}
	h.m[k] = &hold{e: e, w: w, last: h.now()}
	if h.timer == nil {
		h.timer = time.AfterFunc(h.grace, h.sweepTimer)
	}
}

// outsideLocked is the bytes held that the cache does not keep itself.
func (h *holds) outsideLocked() int64 {
	var n int64
	for k, x := range h.m {
		if !h.resident(k, x.e) {
			n += x.w
		}
	}
	return n
}

// sweepLocked lets go of the holds idle for at least idle, and reports
// whether it let go of any.
func (h *holds) sweepLocked(idle time.Duration) bool {
	now := h.now()
	any := false
	for k, x := range h.m {
		if now.Sub(x.last) >= idle {
			delete(h.m, k)
			any = true
		}
	}
	if any {
		h.signalLocked()
	}
	return any
}

func (h *holds) signalLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// sweepTimer ends the holds whose grace has passed and runs again while
// any is left.
func (h *holds) sweepTimer() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.timer = nil
	if h.closed {
		return
	}
	h.sweepLocked(h.grace)
	if len(h.m) > 0 {
		h.timer = time.AfterFunc(h.grace/4, h.sweepTimer)
	}
}

// admit waits until a load of about hint bytes has room (see holds), then
// reserves it; call the returned function once the load is done (and its
// entry held). A load is always admitted when nothing is held outside the
// budget and no other load is in flight, so one output bigger than the
// limit is still served.
func (h *holds) admit(hint int64) (done func()) {
	hint = max(hint, 0)
	h.mu.Lock()
	start := h.now()
	waited := false
	for !h.closed {
		used := h.reserved + h.outsideLocked()
		if used+hint <= h.limit || (used == 0 && h.loads == 0) {
			break
		}
		if !waited {
			waited = true
			h.waits++
		}
		if h.sweepLocked(h.idle) {
			continue
		}
		if h.now().Sub(start) >= h.maxWait && h.dropOldestLocked() {
			continue
		}
		ch := h.changed
		h.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(h.idle / 2):
		}
		h.mu.Lock()
	}
	h.reserved += hint
	h.loads++
	h.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			h.reserved -= hint
			h.loads--
			h.signalLocked()
			h.mu.Unlock()
		})
	}
}

// dropOldestLocked lets go of the least recently used hold held outside
// the budget, and reports whether there was one.
func (h *holds) dropOldestLocked() bool {
	var oldest memKey
	var at time.Time
	found := false
	for k, x := range h.m {
		if h.resident(k, x.e) {
			continue
		}
		if !found || x.last.Before(at) {
			oldest, at, found = k, x.last, true
		}
	}
	if found {
		delete(h.m, oldest)
		h.released++
		h.signalLocked()
	}
	return found
}

// forget lets go of every hold whose key matches.
func (h *holds) forget(match func(memKey) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k := range h.m {
		if match(k) {
			delete(h.m, k)
		}
	}
	h.signalLocked()
}

// stats returns the number of holds, the bytes held outside the budget,
// the loads that waited for room and the holds let go to make it.
func (h *holds) stats() (n int, outside, waits, released int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.m), h.outsideLocked(), h.waits, h.released
}

func (h *holds) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
	clear(h.m)
	h.signalLocked()
}
