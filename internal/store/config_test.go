package store

import (
	"testing"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/version"
)

func TestOpenConfig(t *testing.T) {
	s, err := Open(Config{}, "/src", &version.Tracker{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Cache.Close()
	if s.Cache.Budget() != DefaultCacheSize || s.Limits.MaxOutputSize != outputs.DefaultMaxOutputSize || s.Tree != "/src" || s.GC.During() != 0 {
		t.Fatalf("defaults: budget %d, limits %+v, tree %q, GOGC %d", s.Cache.Budget(), s.Limits, s.Tree, s.GC.During())
	}
	lim := outputs.DefaultLimits
	lim.MaxOutputSize = 1234
	s2, err := Open(Config{CacheSize: 8 << 20, Limits: &lim, ConvertGOGC: 50}, "/src", &version.Tracker{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Cache.Close()
	if s2.Cache.Budget() != 8<<20 || s2.Limits.MaxOutputSize != 1234 || s2.GC.During() != 50 {
		t.Fatalf("configured: budget %d, limits %+v, GOGC %d", s2.Cache.Budget(), s2.Limits, s2.GC.During())
	}
	// The archives' listings and readers are charged to their share of it.
	if b := s2.Limits.View.Budget(); b.Limit() != 2<<20 {
		t.Fatalf("the archives' budget is %d bytes for a cache of 8 MiB, want 2 MiB", b.Limit())
	}
	// Another store has a view and budget of its own: opening it leaves
	// the first one's alone.
	s3, err := Open(Config{CacheSize: 64 << 20}, "/src", &version.Tracker{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Cache.Close()
	if s3.Limits.View == s2.Limits.View || s2.Limits.View.Budget().Limit() != 2<<20 || s3.Limits.View.Budget().Limit() != 16<<20 {
		t.Fatalf("two stores share a view (%v) or budgets: %d and %d bytes", s3.Limits.View == s2.Limits.View, s2.Limits.View.Budget().Limit(), s3.Limits.View.Budget().Limit())
	}
	if _, err := Open(Config{CacheSize: -1}, "/src", &version.Tracker{}, nil); err == nil {
		t.Fatal("a negative cache size made a store")
	}
}
