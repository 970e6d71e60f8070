package store

// The collector's policy, in one place (SetMemoryPolicy, pacer). Converted outputs are the daemon's
// memory, so the heap is bounded a little above the memory cache's budget;
// below that bound the collector runs at GOGC 400 (walks of a cold tree
// make garbage from listings and scans, and collecting at 4 × the live heap
// instead of 2 × spares them about 15 % of the daemon's CPU), and at the
// default 100 while a big conversion runs (Pacer).

import (
	"os"
	"runtime/debug"
	"sync"
)

// SetMemoryPolicy sets the process's memory limit for a memory cache of
// budget bytes and its GOGC, unless the environment sets them (GOMEMLIMIT,
// GOGC), and returns the GOGC a big conversion runs at (0: leave GOGC
// alone). The limit leaves 64 MiB over the budget for the heap that is not
// outputs; what is not heap (stacks, the runtime, FUSE buffers) stays
// within budget + 100 MiB of RSS.
func SetMemoryPolicy(budget int64) (convertGOGC int) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	debug.SetMemoryLimit(budget + 64<<20)
	if os.Getenv("GOGC") != "" {
		return 0
	}
	debug.SetGCPercent(400)
	return 100
}

// bigConversionSize is the source size from which a conversion counts as
// big for the collector (Pacer): its intermediates are then tens of MB.
const bigConversionSize = 4 << 20

// pacer collects at its setting while a big conversion runs and at the
// process's own setting otherwise.
//
// A big conversion allocates about four times its source in intermediates,
// freed when it ends. Memory the heap already holds is cheap to reuse;
// fresh memory is not: the kernel zeroes every new page at its first touch,
// and on a virtual machine that hands freed pages back to its host the host
// faults each one in again as well. At GOGC 400 the heap grows to five
// times what is live before a collection, so a conversion's intermediates
// land on fresh pages; at 100 they reuse the last one's.
type pacer struct {
	during int // GOGC while a big conversion runs; 0: leave GOGC alone

	mu      sync.Mutex
	running int // big conversions running
	saved   int // GOGC to restore once none runs
}

// newPacer is a pacer collecting at GOGC during while a big conversion runs (0:
// leave GOGC alone).
func newPacer(during int) *pacer { return &pacer{during: during} }

// During is the GOGC the pacer sets while a big conversion runs (0: none).
func (p *pacer) During() int { return p.during }

// Begin marks a conversion of a source of size bytes as running; the
// returned function marks its end.
func (p *pacer) Begin(size int64) (end func()) {
	if p.during == 0 || size < bigConversionSize {
		return func() {}
	}
	p.mu.Lock()
	if p.running++; p.running == 1 {
		p.saved = debug.SetGCPercent(p.during)
	}
	p.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			if p.running--; p.running == 0 {
				debug.SetGCPercent(p.saved)
			}
			p.mu.Unlock()
		})
	}
}
