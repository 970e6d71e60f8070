package fs

import (
	"slices"
	"time"
)

// dropOrder is the order in which the kernel is told to drop a folder's
// names when its source changed: held, the names it holds nodes of, with
// last (header.json) after the others, since the kernel takes the
// notifications in order and a reader who sees the new header.json (the
// version a walker greps) must find every other file of the folder dropped
// already; then negative, the names of the folder's table it holds no node
// of, for which it may hold a negative entry (error.txt of a healthy mesh,
// the .glb of a broken one) that the new version may not deserve.
func dropOrder(children, table []string, last string) (held, negative []string) {
	held = make([]string, 0, len(children))
	hasLast := false
	for _, n := range children {
		if n == last {
			hasLast = true
		} else {
			held = append(held, n)
		}
	}
	if hasLast {
		held = append(held, last)
	}
	for _, n := range table {
		if !slices.Contains(children, n) {
			negative = append(negative, n)
		}
	}
	return held, negative
}

// notifyWait bounds how long a request waits for a notification it sent.
const notifyWait = 100 * time.Millisecond

// beside runs first, then rest, on a goroutine of their own, and returns
// once first has run or notifyWait has passed: a notification sent from
// within a request may wait for a lock that request holds, so the request
// goes on and the notifications complete beside it.
func beside(first, rest func()) {
	done := make(chan struct{})
	go func() {
		first()
		close(done)
		rest()
	}()
	select {
	case <-done:
	case <-time.After(notifyWait):
	}
}
