// Package requests is what a server's requests share, apart from any
// protocol: handles held between the requests of one listing (Held), a
// listing served an entry per request (Listing), a rendering several
// requests share (Snapshot), and the line a request's panic is logged as
// (PanicLine).
package requests

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Held keeps handles of type H between the requests of one listing, keyed
// by node and the offset the listing's next request asks for, so a folder
// read in many requests is listed once. A handle not taken within Idle (a
// reader that stopped half way) is released.
type Held[H any] struct {
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
func (t *Held[H]) Take(node, off uint64) (H, bool) {
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
// closed or when one is held for that place already.
func (t *Held[H]) Keep(node, off uint64, h H) {
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
// makes (none: false). read returns the offset after what it read (off
// itself: the end) or false for an error; the handle is then held for the
// request that goes on from there, or released.
func (t *Held[H]) Serve(node, off uint64, open func() (H, bool), read func(H) (next uint64, ok bool)) {
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

// Drop releases every handle held for node.
func (t *Held[H]) Drop(node uint64) {
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
func (t *Held[H]) Close() {
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
func (t *Held[H]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// Listing serves one listing made at open, an entry per call.
type Listing[E any] struct {
	List []E
	// AtEnd, if set, runs once, when the end is reached the second time:
	// in a request of its own, after the client took in every entry.
	AtEnd func()

	next, ends int
	read       bool
}

// Next returns the next entry (ok false at the end); first is set on the
// first call.
func (l *Listing[E]) Next() (e E, first, ok bool) {
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
func (l *Listing[E]) Seek(off uint64) { l.next = int(min(off, uint64(len(l.List)))) }

// Snapshot is a file rendered anew on demand whose last rendering several
// requests share.
type Snapshot struct {
	Render func() []byte

	mu   sync.Mutex
	snap []byte
	at   time.Time
}

// Take returns a new rendering when fresh (or none was made yet), else
// the last one, and when it was made.
func (s *Snapshot) Take(fresh bool) ([]byte, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fresh || s.snap == nil {
		s.snap, s.at = s.Render(), time.Now()
	}
	return s.snap, s.at
}

// Last is the last rendering (nil: none).
func (s *Snapshot) Last() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap
}

// PanicLine is the line a request's panic is logged as: the first line of
// its value, "[…]" marking the lines left out (a value may carry a whole
// stack).
func PanicLine(v any) string {
	msg := fmt.Sprint(v)
	if first, _, multi := strings.Cut(msg, "\n"); multi {
		msg = first + " […]"
	}
	return msg
}
