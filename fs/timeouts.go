package fs

import (
	"cmp"
	"time"
)

// timeouts are how long the kernel may trust a name, an attribute and a
// missing name (DESIGN.md, "Talking to the kernel": the watcher pushes
// every change, so while it runs a timeout only bounds what a lost event
// hides).
type timeouts struct {
	// Entry, Attr and Negative are configured (0: the default; a
	// negative value: not at all).
	Entry, Attr, Negative time.Duration
	// Watched is set while the source is watched.
	Watched bool
}

const (
	defaultTimeout = time.Second // unwatched, and missing names
	watchedTimeout = time.Minute // names and attributes while watched
)

// Kernel returns the timeouts the kernel is given (a negative one: 0).
func (t timeouts) Kernel() (entry, attr, negative time.Duration) {
	entry, attr = t.Effective()
	negative = cmp.Or(t.Negative, defaultTimeout)
	return max(entry, 0), max(attr, 0), max(negative, 0)
}

// Effective returns the entry and attribute timeouts in effect.
func (t timeouts) Effective() (entry, attr time.Duration) {
	def := defaultTimeout
	if t.Watched {
		def = watchedTimeout
	}
	return cmp.Or(t.Entry, def), cmp.Or(t.Attr, def)
}

// Unwatched returns the timeouts of a reply about a node in or below a
// folder whose watch failed while the source is watched: a default one is
// defaultTimeout there (0: the reply's stays).
func (t timeouts) Unwatched() (entry, attr time.Duration) {
	if t.Watched && t.Entry == 0 {
		entry = defaultTimeout
	}
	if t.Watched && t.Attr == 0 {
		attr = defaultTimeout
	}
	return entry, attr
}

// UnwatchedAttr is how long a change under a failed watch may go unseen.
func (t timeouts) UnwatchedAttr() time.Duration { return cmp.Or(t.Attr, defaultTimeout) }
