package fs

import (
	"runtime/debug"
	"sync"
)

// bigConversionSize is the source size from which a conversion counts as
// big for the collector (gcPacer): its intermediates are then tens of MB.
const bigConversionSize = 4 << 20

// gcPacer collects at Config.ConvertGOGC while a big conversion runs and at
// the process's own setting otherwise.
//
// A big conversion allocates about four times its source in intermediates
// (a 1 M-triangle UNIGINE mesh: ≈ 120 MB), freed when it ends. Memory the
// heap already holds is cheap to reuse; fresh memory is not: the kernel
// zeroes every new page at its first touch, and on a virtual machine that
// hands freed pages back to its host (virtio-balloon free page reporting,
// as on the test machine) the host faults each one in again as well. The
// mount sets GOGC 400, which spares a cold walk of a big tree about 15 %
// of the daemon's CPU (see cmd/meshfs), but lets the heap grow to five
// times what is live before a collection, so a conversion's intermediates
// land on fresh pages: measured on five first reads of a 1 M-triangle
// UNIGINE .glb in a new daemon, 34 000–38 000 page faults and 1.1–1.7 s of
// CPU at GOGC 400 against 17 000–23 000 and 0.74–0.99 s at GOGC 100.
type gcPacer struct {
	during int // GOGC while a big conversion runs; 0: leave GOGC alone

	mu      sync.Mutex
	running int // big conversions running
	saved   int // GOGC to restore once none runs
}

// begin marks a conversion of a source of size bytes as running; the
// returned function marks its end.
func (p *gcPacer) begin(size int64) (end func()) {
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
