package store

import (
	"io"
	"log"
	"runtime"
	"time"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/archive"
	"github.com/meshfs/meshfs/internal/logonce"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store/failures"
)

// DefaultCacheSize is the default memory cache budget (--cache-size).
const DefaultCacheSize = 512 << 20

// ArchiveBudget is what the archives' listings and entry readers
// (internal/source, archive.Budget) may hold for a memory cache of cacheSize
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
	// source.NewView); the store charges it to its archive budget and,
	// with a disk cache, keeps its listings there.
	Limits *outputs.Limits
	// Concurrency is how many conversions run at once (0: the number of
	// CPUs); the others wait, so a burst of readers cannot exhaust memory.
	Concurrency int
	// Build names the build that makes the outputs (record.Build, computed
	// once by the caller: it hashes the executable); it is part of every
	// output's version (vfs Info.Version) and of the disk cache's
	// (record.CacheVersion). "" tells no build apart: for tests, whose
	// versions live only as long as the process.
	Build string
	// DiskCache, when set, keeps converted outputs across mounts (opened by
	// the caller with record.CacheVersion of the same Build and Limits;
	// closed by the caller after the store's cache).
	DiskCache *DiskCache
	// ConvertGOGC, when not 0, is the collector's GOGC while a big mesh
	// converts (pacer); the process's own setting is restored after.
	ConvertGOGC int
	// Clock is the time the waits for a quiet moment read (nil: the real
	// one; tests set their own).
	Clock Clock
	// SaveQuiet and SaveQuietMax are how long a big save waits for the
	// readers to pause, and at most (0: DefaultQuiet,
	// DefaultQuietMax).
	SaveQuiet, SaveQuietMax time.Duration
	// Events are told what the store finds that the kernel must learn
	// (nil: nobody).
	Events Events
}

// Open makes the store cfg describes for the source folder tree, its
// failures logged to lg (nil: discarded), the versions of its sources
// kept by versions. The store tells versions of the dependency files of
// every folder and of the sets its persisted scans recorded. Close it.
func Open(cfg Config, tree string, versions *source.Tracker, lg *log.Logger) (*Store, error) {
	if cfg.CacheSize == 0 {
		cfg.CacheSize = DefaultCacheSize
	}
	c, err := newMemCache(cfg.CacheSize)
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
	s := &Store{cache: c, dc: cfg.DiskCache, sem: outputs.NewSemaphore(n), versions: versions, log: lg, once: logonce.New(lg), events: cfg.Events,
		gc: newPacer(cfg.ConvertGOGC), limits: outputs.DefaultLimits, tree: tree}
	if s.events == nil {
		s.events = noEvents{}
	}
	s.activity = newActivity(cfg.Clock)
	s.failed = failures.New(s.still)
	s.disk = newTier(tierConfig{Disk: cfg.DiskCache, Activity: s.activity, Still: s.still, LogOnce: s.logOnce,
		Quiet: cfg.SaveQuiet, QuietMax: cfg.SaveQuietMax})
	versions.Folder, versions.Recorded = s.folderDeps.of, s.recordedDeps
	if cfg.Limits != nil {
		s.limits = *cfg.Limits
	}
	// The caller's view of the sources, else the store's own.
	s.view = s.limits.View
	if s.view == nil {
		s.view = source.NewView()
	}
	if cfg.DiskCache != nil {
		// The archives' listings outlive the mount with the outputs.
		s.view.SetKeeper(s.disk.Listings())
	}
	s.limits.View = s.view
	// The view's listings and readers are charged to this store's budget.
	s.view.SetBudget(archive.NewBudget(ArchiveBudget(cfg.CacheSize)))
	if s.limits.Projects == nil {
		s.limits.Projects = outputs.NewProjects() // one index per project for the mount
	}
	if s.limits.Caches == nil {
		// The store's conversions share decodings; another store's do not.
		s.limits.Caches = outputs.NewCaches()
	}
	return s, nil
}
