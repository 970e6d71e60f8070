package store

import (
	"testing"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
)

func TestOpenConfig(t *testing.T) {
	s, err := Open(Config{}, "/src", &source.Tracker{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.cache.Budget() != DefaultCacheSize || s.limits.MaxOutputSize != outputs.DefaultMaxOutputSize || s.tree != "/src" || s.gc.During() != 0 {
		t.Fatalf("defaults: budget %d, limits %+v, tree %q, GOGC %d", s.cache.Budget(), s.limits, s.tree, s.gc.During())
	}
	lim := outputs.DefaultLimits
	lim.MaxOutputSize = 1234
	s2, err := Open(Config{CacheSize: 8 << 20, Limits: &lim, ConvertGOGC: 50}, "/src", &source.Tracker{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.cache.Budget() != 8<<20 || s2.limits.MaxOutputSize != 1234 || s2.gc.During() != 50 {
		t.Fatalf("configured: budget %d, limits %+v, GOGC %d", s2.cache.Budget(), s2.limits, s2.gc.During())
	}
	// The archives' listings and readers are charged to their share of it.
	if b := s2.limits.View.Budget(); b.Limit() != 2<<20 {
		t.Fatalf("the archives' budget is %d bytes for a cache of 8 MiB, want 2 MiB", b.Limit())
	}
	// Another store has a view and budget of its own: opening it leaves
	// the first one's alone.
	s3, err := Open(Config{CacheSize: 64 << 20}, "/src", &source.Tracker{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if s3.limits.View == s2.limits.View || s2.limits.View.Budget().Limit() != 2<<20 || s3.limits.View.Budget().Limit() != 16<<20 {
		t.Fatalf("two stores share a view (%v) or budgets: %d and %d bytes", s3.limits.View == s2.limits.View, s2.limits.View.Budget().Limit(), s3.limits.View.Budget().Limit())
	}
	if _, err := Open(Config{CacheSize: -1}, "/src", &source.Tracker{}, nil); err == nil {
		t.Fatal("a negative cache size made a store")
	}
}
