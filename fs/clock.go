package fs

import "time"

// clock is what the waits for a quiet moment (a big disk-cache save, the
// pre-warmer) and the readers' touches tell the time by: the real clock,
// or a test's that moves only when told to.
type clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// clock returns the configured clock, or the real one.
func (f *FS) clock() clock {
	if f.cfg.clock != nil {
		return f.cfg.clock
	}
	return realClock{}
}
