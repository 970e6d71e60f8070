package store

import (
	"io"
	"log"
	"runtime"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/archive"
	"github.com/meshfs/meshfs/internal/cache"
	"github.com/meshfs/meshfs/internal/diskcache"
	"github.com/meshfs/meshfs/internal/store/gcpace"
	"github.com/meshfs/meshfs/internal/store/idle"
	"github.com/meshfs/meshfs/internal/version"
)

// DefaultCacheSize is the default memory cache budget (--cache-size).
const DefaultCacheSize = 512 << 20

// ArchiveBudget is what the archives' listings and entry readers
// (srcview, archive.Budget) may hold for a memory cache of cacheSize
// bytes: a quarter of it, charged apart from the outputs.
func ArchiveBudget(cacheSize int64) int64 { return cacheSize / 4 }

// Config is what a store is made of. Its zero value is a store with the
// defaults: DefaultCacheSize, a conversion per CPU, outputs.DefaultLimits,
// no disk cache, the real clock.
type Config struct {
	// CacheSize bounds the memory cache, in bytes (0: DefaultCacheSize).
	CacheSize int64
	// Limits bound each conversion (nil: outputs.DefaultLimits); a mesh
	// over a limit gets error.txt, the daemon carries on. Their View is
	// how the store reaches sources (nil: a view of its own,
	// srcview.NewView); the store charges it to its archive budget and,
	// with a disk cache, keeps its listings there.
	Limits *outputs.Limits
	// Concurrency is how many conversions run at once (0: the number of
	// CPUs); the others wait, so a burst of readers cannot exhaust memory.
	Concurrency int
	// DiskCache, when set, keeps converted outputs across mounts (opened by
	// the caller with CacheVersion; closed by the caller after the store's
	// cache).
	DiskCache *diskcache.Cache
	// ConvertGOGC, when not 0, is the collector's GOGC while a big mesh
	// converts (gcpace.Pacer); the process's own setting is restored after.
	ConvertGOGC int
	// Clock is the time the waits for a quiet moment read (nil: the real
	// one; tests set their own).
	Clock idle.Clock
}

// Open makes the store cfg describes for the source folder tree, its
// failures logged to lg (nil: discarded), the versions of its sources
// kept by versions. The caller closes s.Cache.
func Open(cfg Config, tree string, versions *version.Tracker, lg *log.Logger) (*Store, error) {
	if cfg.CacheSize == 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	c, err := cache.New(cfg.CacheSize)
	if err != nil {
		return nil, err
	}
	n := cfg.Concurrency
	if n <= 0 {
		n = runtime.NumCPU()
	}
	if lg == nil {
		lg = log.New(io.Discard, "", 0)
	}
	s := New(c, cfg.DiskCache, outputs.NewSemaphore(n), versions, lg)
	s.Limits, s.Tree = outputs.DefaultLimits, tree
	if cfg.Limits != nil {
		s.Limits = *cfg.Limits
	}
	if s.Limits.View != nil {
		s.view = s.Limits.View
		if cfg.DiskCache != nil {
			s.view.SetKeeper(s)
		}
	}
	s.Limits.View = s.view
	// The view's listings and readers are charged to this store's budget.
	s.view.SetBudget(archive.NewBudget(ArchiveBudget(cfg.CacheSize)))
	if s.Limits.Projects == nil {
		s.Limits.Projects = outputs.NewProjects() // one index per project for the mount
	}
	if s.Limits.Caches == nil {
		// The store's conversions share decodings; another store's do not.
		s.Limits.Caches = outputs.NewCaches()
	}
	s.GC = gcpace.New(cfg.ConvertGOGC)
	s.Activity = idle.New(cfg.Clock)
	return s, nil
}
