package fs

import "time"

// timeouts decide how long the kernel may trust a name and an attribute.
// Without a watcher (or inotify), one second bounds how long a change can
// go unseen. While the source is watched, the watcher pushes every change
// to the kernel, so the default timeout only bounds what a lost event could
// hide: a walk of a big tree (grep -r, ls -lR) takes longer than one
// second, and with one-second timeouts its second pass asked the daemon
// again for every name. Folders whose watch could not be added keep the
// one-second default for everything under them (Unwatched). Missing names
// keep one second: a created file is pushed too, but negative entries are
// cheap to re-ask.
type timeouts struct {
	// Entry and Attr are the configured timeouts (0: the defaults; a
	// negative value: none).
	Entry, Attr time.Duration
	// Negative is how long the kernel may trust a missing name (0:
	// defaultTimeout; a negative value: not at all).
	Negative time.Duration
	// Watched is set while the source is watched.
	Watched bool
}

// Kernel returns the entry, attribute and negative timeouts the kernel is
// given: those in effect (Effective, Negative), none (0) for a negative
// one.
func (t timeouts) Kernel() (entry, attr, negative time.Duration) {
	entry, attr = t.Effective()
	if negative = t.Negative; negative == 0 {
		negative = defaultTimeout
	}
	return max(entry, 0), max(attr, 0), max(negative, 0)
}

const (
	// defaultTimeout is the entry, attribute and negative timeout
	// without a watcher.
	defaultTimeout = time.Second
	// watchedTimeout is the default entry and attribute timeout while the
	// source is watched.
	watchedTimeout = time.Minute
)

// Effective returns the entry and attribute timeouts in effect.
func (t timeouts) Effective() (entry, attr time.Duration) {
	def := defaultTimeout
	if t.Watched {
		def = watchedTimeout
	}
	entry, attr = t.Entry, t.Attr
	if entry == 0 {
		entry = def
	}
	if attr == 0 {
		attr = def
	}
	return entry, attr
}

// UnwatchedAttr is the attribute timeout of a reply about a node in a
// folder whose watch failed (Unwatched's, else the one in effect): how
// long a change there may go unseen.
func (t timeouts) UnwatchedAttr() time.Duration {
	if _, a := t.Unwatched(); a != 0 {
		return a
	}
	_, a := t.Effective()
	return a
}

// Unwatched returns the timeouts of a reply about a node in (or below) a
// folder whose watch failed, while the mount assumes one: a change there
// would not be pushed, so it must show within defaultTimeout instead of a
// minute. A zero value leaves the reply's timeout as it is.
func (t timeouts) Unwatched() (entry, attr time.Duration) {
	if !t.Watched {
		return 0, 0
	}
	if t.Entry == 0 {
		entry = defaultTimeout
	}
	if t.Attr == 0 {
		attr = defaultTimeout
	}
	return entry, attr
}
