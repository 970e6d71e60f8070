package decode

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// ParallelGrain is the number of elements below which Parallel runs fn on
// the calling goroutine: under it the goroutines cost more than they save.
const ParallelGrain = 1 << 14

// Parallel calls fn over [0, n) in contiguous ranges, spread over the CPUs
// when n is large, and returns the error of the lowest range that failed.
// Each fn call must touch only its own range's elements.
//
// A range that fails stops there, so the error returned is the one a
// sequential loop over [0, n) would have met first: every range below the
// failing one runs to completion. Ranges above a failure may or may not run;
// callers discard their results with the error.
func Parallel(n int, fn func(lo, hi int) error) error {
	if n < 2*ParallelGrain || runtime.GOMAXPROCS(0) < 2 {
		if n <= 0 {
			return nil
		}
		return fn(0, n)
	}
	return chunked(n, ParallelGrain, fn)
}

// ParallelEach calls fn(i) for each i in [0, n) on all CPUs, for items
// each worth a goroutine (a file's surfaces), and returns the error of
// the lowest i that failed: every item below it has run, as in a loop
// that stops at the first error.
func ParallelEach(n int, fn func(i int) error) error {
	each := func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	if n < 2 || runtime.GOMAXPROCS(0) < 2 {
		return each(0, n)
	}
	return chunked(n, 1, each)
}

// ForEach calls fn(i) for each i in [0, n) on workers goroutines taking
// the next i in turn (one loop when workers < 2): for calls that wait on
// the disk rather than the CPU, so workers may exceed the CPUs.
func ForEach(n, workers int, fn func(i int)) {
	each := func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			fn(i)
		}
		return nil
	}
	if workers < 2 || n < 2 {
		each(0, n)
		return
	}
	chunkedOn(workers, n, 1, each)
}

// chunked runs fn over [0, n) in ranges of chunk elements on all CPUs.
func chunked(n, chunk int, fn func(lo, hi int) error) error {
	return chunkedOn(runtime.GOMAXPROCS(0), n, chunk, fn)
}

// chunkedOn runs fn over [0, n) in ranges of chunk elements on workers
// goroutines.
func chunkedOn(workers, n, chunk int, fn func(lo, hi int) error) error {
	chunks := (n + chunk - 1) / chunk
	workers = min(workers, chunks)
	var (
		next     atomic.Int64
		failedAt atomic.Int64            // lowest failed chunk, chunks when none
		errs     = make([]error, chunks) // each chunk writes its own slot
		wg       sync.WaitGroup
	)
	failedAt.Store(int64(chunks))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1)) - 1
				if c >= chunks || int64(c) > failedAt.Load() {
					return // chunks are taken in order: all later ones are above the failure too
				}
				lo := c * chunk
				if err := fn(lo, min(lo+chunk, n)); err != nil {
					errs[c] = err
					for {
						f := failedAt.Load()
						if int64(c) >= f || failedAt.CompareAndSwap(f, int64(c)) {
							break
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	if f := int(failedAt.Load()); f < chunks {
		return errs[f]
	}
	return nil
}
