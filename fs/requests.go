package fs

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The raw request layer's bookkeeping (kernel.go): how many requests of each kind came and how long their answers
// took (reqCounter, for stats.json and tests), and the listing handles held
// between the READDIRs of one listing that come without a handle (heldHandles).

// requestKinds are the requests a mount counts, by the kernel's names of them.
var requestKinds = []string{"LOOKUP", "FORGET", "GETATTR", "OPEN", "READ", "RELEASE", "FLUSH",
	"OPENDIR", "READDIR", "READDIRPLUS", "RELEASEDIR", "ACCESS", "STATFS", "GETXATTR", "LISTXATTR",
	"READLINK", "LSEEK", "STATX"}

// reqCounter counts requests by kind and adds up the time from each
// request's dispatch to its reply.
type reqCounter struct {
	names  []string
	index  map[string]int // name → its index in names; read-only
	counts []atomic.Int64
	nanos  []atomic.Int64
}

// newReqCounter counts the kinds named by names.
func newReqCounter(names []string) *reqCounter {
	c := &reqCounter{names: names, index: map[string]int{}, counts: make([]atomic.Int64, len(names)), nanos: make([]atomic.Int64, len(names))}
	for i, n := range names {
		c.index[n] = i
	}
	return c
}

// Count counts one request of kind, untimed (FORGET: the kernel waits
// for no answer). A kind not named at newReqCounter panics.
func (c *reqCounter) Count(kind string) { c.counts[c.of(kind)].Add(1) }

func (c *reqCounter) of(kind string) int {
	i, ok := c.index[kind]
	if !ok {
		panic("requests: kind " + kind + " is not counted")
	}
	return i
}

// Time counts a request of kind and starts its clock: defer
// c.Time("READ").Done().
func (c *reqCounter) Time(kind string) reqTiming {
	i := c.of(kind)
	c.counts[i].Add(1)
	return reqTiming{c: c, i: i, start: time.Now()}
}

// reqTiming is one request's clock (reqCounter.Time).
type reqTiming struct {
	c     *reqCounter
	i     int
	start time.Time
}

// Done adds the time since the request came to its kind.
func (t reqTiming) Done() { t.c.nanos[t.i].Add(int64(time.Since(t.start))) }

// Counts returns the number of requests by kind name (kinds never asked
// are left out).
func (c *reqCounter) Counts() map[string]int64 {
	m := map[string]int64{}
	for i := range c.counts {
		if n := c.counts[i].Load(); n != 0 {
			m[c.names[i]] = n
		}
	}
	return m
}

// Millis returns the time spent answering requests by kind name, in
// milliseconds (kinds never asked are left out).
func (c *reqCounter) Millis() map[string]float64 {
	m := map[string]float64{}
	for i := range c.nanos {
		if c.counts[i].Load() != 0 {
			m[c.names[i]] = float64(c.nanos[i].Load()) / 1e6
		}
	}
	return m
}

// heldHandles keeps handles of type H between the requests of one listing, keyed
// by node and the offset the next request of that listing asks for: a big
// folder read in many requests is listed once, not once per request. A
// handle not taken within Idle (a reader that stops half way: head, a
// killed ls) is released.
type heldHandles[H any] struct {
	Idle    time.Duration
	Release func(H)

	mu     sync.Mutex
	m      map[heldKey]*held[H]
	closed bool
}

type heldKey struct{ node, off uint64 }

type held[H any] struct {
	h     H
	timer *time.Timer
}

// Take removes and returns the handle held for node at offset off.
func (t *heldHandles[H]) Take(node, off uint64) (H, bool) {
	k := heldKey{node, off}
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.m[k]
	if e == nil {
		var zero H
		return zero, false
	}
	delete(t.m, k)
	e.timer.Stop()
	return e.h, true
}

// Keep holds h for node's next request at offset off, or releases it when
// Close was called or a concurrent reader of the same listing at the same
// place holds one already (one is kept).
func (t *heldHandles[H]) Keep(node, off uint64, h H) {
	k := heldKey{node, off}
	t.mu.Lock()
	if t.closed || t.m[k] != nil {
		t.mu.Unlock()
		t.Release(h)
		return
	}
	if t.m == nil {
		t.m = map[heldKey]*held[H]{}
	}
	e := &held[H]{h: h}
	t.m[k] = e
	e.timer = time.AfterFunc(t.Idle, func() {
		t.mu.Lock()
		mine := t.m[k] == e
		if mine {
			delete(t.m, k)
		}
		t.mu.Unlock()
		if mine {
			t.Release(h)
		}
	})
	t.mu.Unlock()
}

// Serve serves one request of node's listing at offset off that came
// without a handle: with the handle held for that place, else one open
// makes (none: false). read reads from it and returns the offset after
// what it read (off itself: the end) or false for an error; the handle is
// then held for the request that goes on from there, or released at the
// end or on an error.
func (t *heldHandles[H]) Serve(node, off uint64, open func() (H, bool), read func(H) (next uint64, ok bool)) {
	h, ok := t.Take(node, off)
	if !ok {
		if h, ok = open(); !ok {
			return
		}
	}
	next, ok := read(h)
	if !ok || next == off {
		t.Release(h)
		return
	}
	t.Keep(node, next, h)
}

// Drop releases every handle held for node (before the node is forgotten:
// releasing a handle of a forgotten node is an error).
func (t *heldHandles[H]) Drop(node uint64) {
	var drop []H
	t.mu.Lock()
	for k, e := range t.m {
		if k.node == node {
			delete(t.m, k)
			e.timer.Stop()
			drop = append(drop, e.h)
		}
	}
	t.mu.Unlock()
	for _, h := range drop {
		t.Release(h)
	}
}

// Close releases every handle held and holds none from now on.
func (t *heldHandles[H]) Close() {
	t.mu.Lock()
	t.closed = true
	var hs []H
	for k, e := range t.m {
		if e.timer.Stop() {
			hs = append(hs, e.h)
		}
		delete(t.m, k)
	}
	t.mu.Unlock()
	for _, h := range hs {
		t.Release(h)
	}
}

// Len is the number of handles held.
func (t *heldHandles[H]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// listing serves one listing made at open, an entry per call.
type listing[E any] struct {
	List []E
	// AtEnd, if set, runs once, when the end is reached the second time:
	// that is in a request of its own, after the kernel took in every
	// entry (and made an inode of each entry answered with attributes).
	AtEnd func()

	next, ends int
	read       bool
}

// Next returns the next entry (ok false at the end); first is set on the
// first call (the kernel asked for the entries: its cache did not serve
// them).
func (l *listing[E]) Next() (e E, first, ok bool) {
	first, l.read = !l.read, true
	if l.next >= len(l.List) {
		if l.ends++; l.ends == 2 && l.AtEnd != nil {
			l.AtEnd()
			l.AtEnd = nil
		}
		return e, first, false
	}
	l.next++
	return l.List[l.next-1], first, true
}

// Seek resumes after the off-th entry (entries are numbered from 1).
func (l *listing[E]) Seek(off uint64) { l.next = int(min(off, uint64(len(l.List)))) }

// statsSnapshot is a file rendered anew on demand (.meshfs/stats.json), whose
// last rendering several requests share.
type statsSnapshot struct {
	Render func() []byte

	mu   sync.Mutex
	snap []byte
	at   time.Time
}

// Take returns a new rendering when fresh (or none was made yet), else
// the last one, and when it was made.
func (s *statsSnapshot) Take(fresh bool) ([]byte, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fresh || s.snap == nil {
		s.snap, s.at = s.Render(), time.Now()
	}
	return s.snap, s.at
}

// Last is the last rendering (nil: none).
func (s *statsSnapshot) Last() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap
}

// panicLine is the line a request's panic is logged as: the first line of
// its value, "[…]" marking the lines left out (a panic in a conversion
// reaches the request wrapped by the cache's loader, whose value carries
// the loader's whole stack).
func panicLine(v any) string {
	msg := fmt.Sprint(v)
	if first, _, multi := strings.Cut(msg, "\n"); multi {
		msg = first + " […]"
	}
	return msg
}
