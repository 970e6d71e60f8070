// Package disktier is a store's disk tier: what an earlier mount converted
// or scanned of the very same source version (internal/diskcache keyed by
// record.CacheVersion), failed conversions' records, archives' listings,
// and the saves of fresh outputs, made beside the reader and, for a big
// one, once the readers pause.
package disktier

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshfs/meshfs/internal/cache"
	"github.com/meshfs/meshfs/internal/diskcache"
	"github.com/meshfs/meshfs/internal/srcview"
	"github.com/meshfs/meshfs/internal/store/idle"
	"github.com/meshfs/meshfs/internal/store/record"
	"github.com/meshfs/meshfs/internal/version"
)

// PassMin is the smallest output the mount serves by passthrough: below
// it the kernel's page cache (FOPEN_KEEP_CACHE) already makes warm reads
// free, and a first read crosses /dev/fuse in one or two requests. A save
// of one this big marks it verified.
const PassMin = 1 << 20

// A big entry is saved once the mount's readers have paused (at most
// Config.QuietMax later): its write and checksum (≈ 20 ms of CPU for a
// 36 MB .glb) would otherwise run beside the reader that asked for it, who
// is still reading it on a 2-CPU machine.
const SaveQuietMin = 1 << 20

// The default waits of a big save: for readers quiet this long, at most
// this long.
const (
	DefaultQuiet    = 50 * time.Millisecond
	DefaultQuietMax = 2 * time.Second
)

// Config is what a tier is made of.
type Config struct {
	// Disk is the disk cache (nil: no disk tier; every lookup misses and
	// nothing is saved).
	Disk *diskcache.Cache
	// Activity is the readers' activity a big save waits out.
	Activity *idle.Activity
	// Still reports whether the source file at path is still version id:
	// a save that waited is dropped otherwise.
	Still func(path string, id version.Ident) bool
	// LogOnce logs a failure the first time key is seen.
	LogOnce func(key any, format string, args ...any)
	// Quiet and QuietMax are a big save's waits (0: DefaultQuiet,
	// DefaultQuietMax).
	Quiet, QuietMax time.Duration
}

// Tier is the disk tier of one store.
type Tier struct {
	cfg Config
	// ctx ends with Close: saves waiting for a quiet moment go ahead.
	ctx  context.Context
	stop context.CancelFunc
	// writes are the saves in flight (Close waits for them); pending
	// counts converted outputs not yet in the disk cache.
	writes  sync.WaitGroup
	pending atomic.Int64
	// verified holds the keys whose files were checked for passthrough.
	verified sync.Map

	mu        sync.Mutex
	fallbacks map[string]int64 // disk loads that converted after all
}

// New is the tier cfg describes.
func New(cfg Config) *Tier {
	if cfg.Quiet == 0 {
		cfg.Quiet = DefaultQuiet
	}
	if cfg.QuietMax == 0 {
		cfg.QuietMax = DefaultQuietMax
	}
	t := &Tier{cfg: cfg}
	t.ctx, t.stop = context.WithCancel(context.Background())
	return t
}

// Key is the disk cache key of a memory cache key: the same path, Version
// and output (version.Version: one value in memory and on disk).
func Key(k cache.Key) diskcache.Key {
	return diskcache.Key{Path: k.Path, Version: k.Version, Output: k.Output}
}

// Enabled reports whether there is a disk cache.
func (t *Tier) Enabled() bool { return t.cfg.Disk != nil }

// Sizes returns the part sizes of an output converted successfully by an
// earlier mount, from the disk cache index (a failure record has none).
func (t *Tier) Sizes(k cache.Key) ([]int64, bool) {
	if t.cfg.Disk == nil {
		return nil, false
	}
	sizes, ok := t.cfg.Disk.Sizes(Key(k))
	if !ok || len(sizes) == 0 {
		return nil, false
	}
	return sizes, true
}

// Failure returns the conversion failure the disk cache holds for an
// output's key: the error of an earlier mount's conversion of this very
// source version, with its text.
func (t *Tier) Failure(k cache.Key) (error, bool) {
	if t.cfg.Disk == nil {
		return nil, false
	}
	meta, _, ok := t.cfg.Disk.Meta(Key(k))
	if !ok {
		return nil, false
	}
	return record.DecodeFailure(meta)
}

// Load returns the disk cache's entry for k, checked, or nil.
// Cached bytes are served from memory once loaded: warm reads are answered
// by the kernel's page cache (FOPEN_KEEP_CACHE) and never reach the daemon,
// so the daemon's copy only serves first reads after a remount, and reading
// the entry whole (one sequential read, CRC-checked) is what lets a damaged
// entry be refused before any byte of it is served.
func (t *Tier) Load(k cache.Key) *cache.Entry {
	if t.cfg.Disk == nil {
		return nil
	}
	parts, ok := t.cfg.Disk.Get(Key(k))
	if !ok {
		return nil
	}
	return &cache.Entry{Parts: parts}
}

// Fallback counts a disk load labelled label that converted after all (the
// entry damaged or evicted since its lookup); Fallbacks returns the counts.
func (t *Tier) Fallback(label string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fallbacks == nil {
		t.fallbacks = map[string]int64{}
	}
	t.fallbacks[label]++
}

// Fallbacks returns the disk loads that converted after all, by label.
func (t *Tier) Fallbacks() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := make(map[string]int64, len(t.fallbacks))
	for k, v := range t.fallbacks {
		m[k] = v
	}
	return m
}

// Save writes a converted entry to the disk cache beside the reader
// (Close waits for it). A failed conversion is kept too, as its error's
// text (record.EncodeFailure), when the failure belongs to the source
// version (record.Persistable): otherwise a remount's `ls -lR` would
// convert every broken mesh again just to learn that it still fails, and
// to list its error.txt.
func (t *Tier) Save(k cache.Key, e *cache.Entry) {
	if t.cfg.Disk == nil || (e.Err != nil && !record.Persistable(e.Err)) {
		return
	}
	dk := Key(k)
	t.writes.Add(1)
	t.pending.Add(1)
	go func() {
		defer t.writes.Done()
		defer t.pending.Add(-1)
		if e.Err == nil && e.Weight() >= SaveQuietMin {
			// A big one at the lowest priority (on a thread of its own:
			// not worth it for the many small ones): its write and
			// checksum, ≈ 15 ms of CPU for a 36 MB .glb, take what the
			// readers and conversions leave of the CPUs.
			idle.LowPriority()
			t.cfg.Activity.WaitQuiet(t.ctx, t.cfg.Quiet, t.cfg.QuietMax)
			if !t.cfg.Still(k.Path, k.Version.Ident) {
				return // replaced while waiting: never to be served
			}
		}
		var err error
		if e.Err != nil {
			err = t.cfg.Disk.PutMeta(dk, nil, record.EncodeFailure(e.Err))
		} else {
			err = t.cfg.Disk.Put(dk, e.Parts)
		}
		if err != nil && err != diskcache.ErrTooBig {
			t.cfg.LogOnce("disk-put-error", "meshfs: disk cache: %v", err)
		}
		if err == nil && e.Err == nil && e.Weight() >= PassMin {
			// Written whole by this process: passthrough needs no check.
			t.verified.Store(dk, struct{}{})
		}
	}()
}

// Scan returns the persisted scan of k, decoded, or nil. A record that
// does not decode is removed from the disk cache.
func (t *Tier) Scan(k cache.Key) *record.Scan {
	if t.cfg.Disk == nil {
		return nil
	}
	dk := Key(k)
	blob, sizes, ok := t.cfg.Disk.Meta(dk)
	if !ok {
		return nil
	}
	rec, err := record.DecodeScan(blob, sizes)
	if err != nil {
		t.cfg.Disk.Remove(dk)
		t.cfg.LogOnce("scan-record-damaged", "meshfs: disk cache: %s: %v (scanned again)", k.Path, err)
		return nil
	}
	return rec
}

// SaveScan persists a fresh scan beside the reader (Close waits for it):
// header.json's bytes hdr and the record blob.
func (t *Tier) SaveScan(k cache.Key, hdr, blob []byte) {
	if t.cfg.Disk == nil {
		return
	}
	dk := Key(k)
	t.writes.Add(1)
	go func() {
		defer t.writes.Done()
		if err := t.cfg.Disk.PutMeta(dk, [][]byte{hdr}, blob); err != nil && err != diskcache.ErrTooBig {
			t.cfg.LogOnce("disk-put-error", "meshfs: disk cache: %v", err)
		}
	}()
}

// Pass returns the pinned disk-cache entry of k and its size when the
// kernel's passthrough may read it: the kernel reads a backing file to its
// end, so only an entry of a single part of at least PassMin bytes serves,
// checked against its CRC once per process unless this process wrote it
// whole (a crash of an earlier daemon may have left any file short).
// convert is called first when the disk cache has no entry for k (it
// reports whether the conversion succeeded). The caller closes h.
func (t *Tier) Pass(k cache.Key, convert func() bool) (h *diskcache.Handle, size int64, ok bool) {
	if t.cfg.Disk == nil {
		return nil, 0, false
	}
	dk := Key(k)
	if _, onDisk := t.cfg.Disk.Sizes(dk); !onDisk && !convert() {
		return nil, 0, false
	}
	h, pinned := t.cfg.Disk.Pin(dk)
	if !pinned {
		return nil, 0, false
	}
	sizes := h.Sizes()
	if len(sizes) != 1 || sizes[0] < PassMin || !t.verify(dk, h) {
		h.Close()
		return nil, 0, false
	}
	return h, sizes[0], true
}

func (t *Tier) verify(k diskcache.Key, h *diskcache.Handle) bool {
	if _, ok := t.verified.Load(k); ok {
		return true
	}
	if !h.Verify() {
		return false
	}
	t.verified.Store(k, struct{}{})
	return true
}

// Pending counts converted outputs not yet saved.
func (t *Tier) Pending() int64 { return t.pending.Load() }

// Stats is the disk cache's state (nil without one).
func (t *Tier) Stats() *diskcache.Stats {
	if t.cfg.Disk == nil {
		return nil
	}
	ds := t.cfg.Disk.Stats()
	return &ds
}

// Close lets the saves waiting for a quiet moment go ahead and waits for
// every save. The caller closes the disk cache after.
func (t *Tier) Close() {
	t.stop()
	t.writes.Wait()
}

// OutListing is the disk cache's output name of an archive's listing.
const OutListing = "archive-listing"

// Listings keeps the archives' listings in the disk cache, to outlive the
// mount with the outputs (srcview.Keeper); nil without a disk cache.
func (t *Tier) Listings() srcview.Keeper {
	if t.cfg.Disk == nil {
		return nil
	}
	return listings{t.cfg.Disk}
}

type listings struct{ disk *diskcache.Cache }

func listingKey(path string, id version.Ident) diskcache.Key {
	return diskcache.Key{Path: path, Version: version.Version{Ident: id}, Output: OutListing}
}

// ArchiveListing is the listing the disk cache keeps of the archive file
// at path, version id.
func (l listings) ArchiveListing(path string, id version.Ident) ([]byte, bool) {
	parts, ok := l.disk.Get(listingKey(path, id))
	if !ok || len(parts) != 1 {
		return nil, false
	}
	return parts[0], true
}

// KeepArchiveListing keeps listing in the disk cache. A listing not kept
// (the cache full or closed) is only read again at the next mount: nothing
// is logged.
func (l listings) KeepArchiveListing(path string, id version.Ident, listing []byte) {
	l.disk.Put(listingKey(path, id), [][]byte{listing})
}
