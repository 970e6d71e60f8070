package decode

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestParallelCoversOnce: every element is visited exactly once, in ranges
// that do not overlap, for sizes around the grain.
func TestParallelCoversOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{0, 1, ParallelGrain, 2*ParallelGrain - 1, 2 * ParallelGrain, 5*ParallelGrain + 7} {
		seen := make([]int32, n)
		err := Parallel(n, func(lo, hi int) error {
			if lo < 0 || hi > n || lo >= hi {
				return fmt.Errorf("bad range [%d, %d) of %d", lo, hi, n)
			}
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&seen[i], 1)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: element %d visited %d times", n, i, c)
			}
		}
	}
}

// TestParallelFirstError: with failures at several elements, the error is
// the one a sequential loop meets first, whatever order ranges finish in.
func TestParallelFirstError(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	n := 9*ParallelGrain + 3
	for _, bad := range [][]int{{n - 1}, {3 * ParallelGrain, 7 * ParallelGrain}, {5, 8 * ParallelGrain}, {2*ParallelGrain + 1, 2*ParallelGrain + 2}} {
		isBad := map[int]bool{}
		for _, b := range bad {
			isBad[b] = true
		}
		for range 20 {
			err := Parallel(n, func(lo, hi int) error {
				for i := lo; i < hi; i++ {
					if isBad[i] {
						return fmt.Errorf("element %d", i)
					}
				}
				return nil
			})
			if want := fmt.Sprintf("element %d", bad[0]); err == nil || err.Error() != want {
				t.Fatalf("bad %v: error %v, want %s", bad, err, want)
			}
		}
	}
}

// TestParallelEach: every item runs once; the error is the lowest failing
// item's, and every item below it has run.
func TestParallelEach(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, n := range []int{0, 1, 2, 7, 100} {
		for bad := -1; bad < n; bad += 1 + n/5 {
			ran := make([]int32, n)
			err := ParallelEach(n, func(i int) error {
				atomic.AddInt32(&ran[i], 1)
				if bad >= 0 && (i == bad || i == n-1) {
					return fmt.Errorf("item %d", i)
				}
				return nil
			})
			switch {
			case bad < 0 && err != nil:
				t.Fatalf("n=%d: %v", n, err)
			case bad >= 0 && (err == nil || err.Error() != fmt.Sprintf("item %d", bad)):
				t.Fatalf("n=%d bad=%d: error %v", n, bad, err)
			}
			for i, c := range ran {
				if c > 1 || (c == 0 && (bad < 0 || i <= bad)) {
					t.Fatalf("n=%d bad=%d: item %d ran %d times", n, bad, i, c)
				}
			}
		}
	}
}

func TestForEach(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 64} {
		for _, n := range []int{0, 1, 2, 100} {
			var seen [100]atomic.Int32
			ForEach(n, workers, func(i int) { seen[i].Add(1) })
			for i := range 100 {
				if want := int32(b2i(i < n)); seen[i].Load() != want {
					t.Fatalf("workers %d, n %d: item %d called %d times", workers, n, i, seen[i].Load())
				}
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
