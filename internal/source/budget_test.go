package source

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/internal/archive"

	"github.com/meshfs/meshfs/decode/decodetest"
)

// TestListingsBudget: listing 64 archives of 200 000 entries each (one
// file, 64 names) keeps what the view's budget allows, not 64 listings:
// the least recently used go, the charge follows, and the one just used
// stays.
func TestListingsBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and lists 64 archives of 200 000 entries")
	}
	dir := t.TempDir()
	first := filepath.Join(dir, "p00.pak")
	decodetest.ManyEntriesZip(t, first, 200000)
	paths := []string{first}
	for i := 1; i < 64; i++ {
		p := filepath.Join(dir, fmt.Sprintf("p%02d.pak", i))
		if err := os.Link(first, p); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	budget := archive.NewBudget(64 << 20)
	v := New(archive.Limits{MemInflate: 1 << 20})
	v.SetBudget(budget)
	before := decodetest.LiveHeap()
	var one int64
	for _, p := range paths {
		a, _, _, err := v.Archive(p)
		if err != nil || a == nil || a.Len() < 200000 {
			t.Fatalf("%s: %v", p, err)
		}
		one = a.MemSize()
	}
	held := decodetest.LiveHeap() - before
	t.Logf("64 listings of 200 000 entries (%.1f MiB each by MemSize): %d kept, %.1f MiB charged, heap +%.1f MiB",
		float64(one)/(1<<20), len(v.open), float64(budget.Used())/(1<<20), float64(held)/(1<<20))
	if budget.Used() > budget.Limit()+one || len(v.open) > int(budget.Limit()/one)+1 {
		t.Errorf("%d bytes charged for %d listings, budget %d", budget.Used(), len(v.open), budget.Limit())
	}
	if held > budget.Limit()+100<<20 {
		t.Errorf("the view holds %d bytes, more than its budget of %d and 100 MiB", held, budget.Limit())
	}
	if held < budget.Used()/2 {
		t.Errorf("the view holds %d bytes, %d charged: MemSize overstates", held, budget.Used())
	}
	listed := v.Listed.Load()
	v.Archive(paths[63])
	if v.Listed.Load() != listed {
		t.Error("the listing used last was dropped")
	}
	v.Archive(paths[0])
	if v.Listed.Load() != listed+1 {
		t.Error("the listing used first was kept")
	}
}
