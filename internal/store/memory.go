package store

// The memory tier (memCache) keeps converted outputs in memory, bounded in bytes, and makes
// concurrent requests for one output share one computation. It knows nothing
// of FUSE or of file formats: a key names a source file version and an output,
// a loader produces the bytes.
//
// A key holds the version of the sources its output is made from
// (internal/source), so a changed source simply misses and the old entries
// age out by weight (or are dropped at once by Invalidate).

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/maypok86/otter/v2"

	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store/stats"
)

// memKey names one output of one version of one source file.
type memKey struct {
	Path    string
	Version source.Version
	Output  string
}

// memEntry is a produced output: its bytes (one or more parts, as one
// conversion may make several files), or the error producing them gave.
// Failed conversions are entries too, so a broken source fails once and is
// then answered from the cache until it changes.
type memEntry struct {
	Parts [][]byte
	Err   error
	// Aux is a value kept with the entry (a parsed structure, say) and
	// AuxWeight what it costs in bytes, as the owner estimates it.
	Aux       any
	AuxWeight int64
}

// entryOverhead is what an entry costs beside its bytes (key, struct, the
// cache's node): it keeps many tiny entries from looking free.
const entryOverhead = 256

// Weight is what the entry counts against the budget, in bytes.
func (e *memEntry) Weight() int64 {
	w := int64(entryOverhead) + e.AuxWeight
	for _, p := range e.Parts {
		w += int64(len(p))
	}
	if e.Err != nil {
		w += int64(len(e.Err.Error()))
	}
	return w
}

// Part returns part i, or nil.
func (e *memEntry) Part(i int) []byte {
	if i < 0 || i >= len(e.Parts) {
		return nil
	}
	return e.Parts[i]
}

// memLoader produces an entry. Returning an error instead of an entry with Err
// means "do not cache" (the source vanished, the request was cancelled).
type memLoader func(ctx context.Context) (*memEntry, error)

// memCache is a byte-bounded cache of entries.
type memCache struct {
	c      *otter.Cache[memKey, *memEntry]
	budget int64

	hits, misses, failures, revived atomic.Int64

	// alive remembers, weakly, every entry loaded: one evicted from the
	// budget but still held (by an open file, or not yet collected) is
	// revived instead of computed again. The kernel stats a file and then
	// opens it; a big output evicted in between would otherwise convert
	// twice. Weak pointers keep nothing alive, so the bound still holds.
	alive sync.Map // Key → weak.Pointer[Entry]

	// holds keep the entries being read alive, in the budget or not
	// (hold.go).
	holds *holds

	mu    sync.Mutex
	loads map[string]int64 // label → completed loads
	fails map[string]int64 // label → loads that produced an error entry
	lat   map[string]*ring // label → recent load latencies
	all   ring
}

// newMemCache returns a cache that holds at most budget bytes (by Entry.Weight).
func newMemCache(budget int64) (*memCache, error) {
	if budget <= 0 {
		return nil, fmt.Errorf("cache budget must be positive, got %d", budget)
	}
	c := &memCache{
		budget: budget,
		loads:  map[string]int64{},
		fails:  map[string]int64{},
		lat:    map[string]*ring{},
	}
	oc, err := otter.New(&otter.Options[memKey, *memEntry]{
		MaximumWeight: uint64(budget),
		Weigher: func(_ memKey, e *memEntry) uint32 {
			return uint32(min(e.Weight(), math.MaxUint32))
		},
	})
	if err != nil {
		return nil, err
	}
	c.c = oc
	c.holds = newHolds(defaultHoldLimit, c.resident)
	return c, nil
}

// Budget is the configured size bound in bytes.
func (c *memCache) Budget() int64 { return c.budget }

// Get returns the entry for key, calling load when it is absent. Concurrent
// Gets of one key wait for a single load, and the entry stays held while
// Gets of it keep coming (hold.go), however big. label names the kind of
// work ("fmt/glb") in the statistics. The loader runs with a context that is
// not cancelled when ctx is: other callers may be waiting for its result.
func (c *memCache) Get(ctx context.Context, key memKey, label string, load memLoader) (*memEntry, error) {
	return c.GetSized(ctx, key, label, 0, load)
}

// GetSized is Get for a load expected to make about hint bytes: when hint
// is positive the load waits, before it starts, for room among the bytes
// held outside the budget (hold.go). A hint of 0 never waits.
func (c *memCache) GetSized(ctx context.Context, key memKey, label string, hint int64, load memLoader) (*memEntry, error) {
	if e := c.holds.get(key); e != nil {
		c.hits.Add(1)
		return e, nil
	}
	loaded := false
	e, err := c.c.Get(ctx, key, otter.LoaderFunc[memKey, *memEntry](func(lctx context.Context, _ memKey) (*memEntry, error) {
		if wp, ok := c.alive.Load(key); ok {
			if e := wp.(weak.Pointer[memEntry]).Value(); e != nil {
				c.revived.Add(1)
				c.holds.hold(key, e)
				return e, nil
			}
		}
		loaded = true
		if hint > 0 {
			done := c.holds.admit(hint)
			defer done()
		}
		start := time.Now()
		e, err := load(context.WithoutCancel(lctx))
		if err != nil {
			return nil, err
		}
		if e == nil {
			return nil, fmt.Errorf("cache: loader for %s returned no entry", label)
		}
		c.record(label, time.Since(start), e.Err != nil)
		wp := weak.Make(e)
		c.alive.Store(key, wp)
		runtime.AddCleanup(e, func(k memKey) { c.alive.CompareAndDelete(k, wp) }, key)
		// Held before the reservation ends: the bytes are counted
		// throughout.
		c.holds.hold(key, e)
		return e, nil
	}))
	if loaded {
		c.misses.Add(1)
	} else if err == nil {
		c.hits.Add(1)
		c.holds.hold(key, e)
	}
	return e, err
}

// Peek returns the entry for key when it is cached or held, without
// loading (and without holding it longer).
func (c *memCache) Peek(key memKey) (*memEntry, bool) {
	if e := c.holds.peek(key); e != nil {
		return e, true
	}
	return c.c.GetIfPresent(key)
}

// Use returns the entry for key when it is cached or held, as a Get that
// finds it would (a hit, held on), without loading.
func (c *memCache) Use(key memKey) (*memEntry, bool) {
	if e := c.holds.get(key); e != nil {
		c.hits.Add(1)
		return e, true
	}
	e, ok := c.c.GetIfPresent(key)
	if ok {
		c.hits.Add(1)
		c.holds.hold(key, e)
	}
	return e, ok
}

// resident reports whether the cache itself keeps e as key's entry (one
// over the budget may still be there, on its way out: it is not kept).
func (c *memCache) resident(key memKey, e *memEntry) bool {
	if e.Weight() > c.budget {
		return false
	}
	got, ok := c.c.GetEntryQuietly(key)
	return ok && got.Value == e
}

func (c *memCache) record(label string, d time.Duration, failed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loads[label]++
	if failed {
		c.fails[label]++
		c.failures.Add(1)
	}
	r := c.lat[label]
	if r == nil {
		r = &ring{}
		c.lat[label] = r
	}
	r.Add(d)
	c.all.Add(d)
}

// Invalidate drops every entry of the source at path, whatever its
// version.
func (c *memCache) Invalidate(path string) int {
	return c.invalidate(func(k memKey) bool { return k.Path == path })
}

// InvalidateOthers drops the entries of the source at path made from
// another version than v: outdated, once v is what the source is. Their
// readers keep reading the bytes they have; the collector can reuse the
// memory once they are done, instead of the next conversion's taking
// fresh pages while they wait for eviction.
func (c *memCache) InvalidateOthers(path string, v source.Version) int {
	return c.invalidate(func(k memKey) bool { return k.Path == path && k.Version != v })
}

// invalidate drops the entries whose key matches.
func (c *memCache) invalidate(match func(memKey) bool) int {
	var keys []memKey
	for k := range c.c.Keys() {
		if match(k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		c.c.Invalidate(k)
	}
	c.holds.forget(match)
	c.alive.Range(func(k, _ any) bool {
		if match(k.(memKey)) {
			c.alive.Delete(k)
		}
		return true
	})
	return len(keys)
}

// Close stops the cache's background goroutine and drops every entry.
func (c *memCache) Close() {
	c.holds.close()
	c.alive.Clear()
	c.c.InvalidateAll()
	c.c.StopAllGoroutines()
}

// memStats is a snapshot of the cache's counters.
type memStats struct {
	Budget      int64 `json:"budget_bytes"`
	BytesCached int64 `json:"bytes_cached"`
	Entries     int   `json:"entries"`
	Hits        int64 `json:"hits"`
	Misses      int64 `json:"misses"`
	Failures    int64 `json:"failures"`
	Revived     int64 `json:"revived"`
	// Held counts the entries held for their readers (hold.go) and
	// HeldOutside the bytes of those the budget does not keep; HoldWaits
	// counts loads that waited for room and HoldsReleased the holds let go
	// early to make it.
	Held          int                      `json:"held"`
	HeldOutside   int64                    `json:"held_outside_bytes"`
	HoldWaits     int64                    `json:"hold_waits"`
	HoldsReleased int64                    `json:"holds_released"`
	Loads         map[string]int64         `json:"loads"`
	Failed        map[string]int64         `json:"failed"`
	Latency       map[string]stats.Latency `json:"latency"`
	All           stats.Latency            `json:"latency_all"`
}

// Stats returns a snapshot of the counters.
func (c *memCache) Stats() memStats {
	c.c.CleanUp()
	s := memStats{
		Budget:      c.budget,
		BytesCached: int64(c.c.WeightedSize()),
		Entries:     c.c.EstimatedSize(),
		Hits:        c.hits.Load(),
		Misses:      c.misses.Load(),
		Failures:    c.failures.Load(),
		Revived:     c.revived.Load(),
		Loads:       map[string]int64{},
		Failed:      map[string]int64{},
		Latency:     map[string]stats.Latency{},
	}
	s.Held, s.HeldOutside, s.HoldWaits, s.HoldsReleased = c.holds.stats()
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range c.loads {
		s.Loads[k] = v
	}
	for k, v := range c.fails {
		s.Failed[k] = v
	}
	for k, r := range c.lat {
		s.Latency[k] = r.Summary()
	}
	s.All = c.all.Summary()
	return s
}

// ring keeps the most recent latencies, enough for stable p50/p99 figures
// without growing with the daemon's lifetime. It is not safe for concurrent
// use: callers lock.
type ring struct {
	buf   [1024]time.Duration
	n     int64 // total recorded
	stamp int   // next slot
}

// Add records one duration.
func (r *ring) Add(d time.Duration) {
	r.buf[r.stamp] = d
	r.stamp = (r.stamp + 1) % len(r.buf)
	r.n++
}

// Summary returns the count and percentiles of the recorded durations.
func (r *ring) Summary() stats.Latency {
	k := int(min(r.n, int64(len(r.buf))))
	if k == 0 {
		return stats.Latency{}
	}
	v := slices.Clone(r.buf[:k])
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	pick := func(p float64) time.Duration { return v[min(k-1, int(p*float64(k)))] }
	return stats.Latency{Count: r.n, P50Ms: ms(pick(0.50)), P99Ms: ms(pick(0.99)), MaxMs: ms(v[k-1])}
}
