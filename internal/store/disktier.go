package store

// The disk tier (tier) is what an earlier mount converted
// or scanned of the very same source version (the DiskCache keyed by
// record.CacheVersion), failed conversions' records, archives' listings,
// and the saves of fresh outputs, made beside the reader and, for a big
// one, once the readers pause.

import (
	"context"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store/record"
	"github.com/meshfs/meshfs/internal/store/stats"
	"sync"
	"sync/atomic"
	"time"
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
	defaultQuiet    = 50 * time.Millisecond
	defaultQuietMax = 2 * time.Second
)

// tierConfig is what a tier is made of.
type tierConfig struct {
	// Disk is the disk cache (nil: no disk tier; every lookup misses and
	// nothing is saved).
	Disk *DiskCache
	// Activity is the readers' activity a big save waits out.
	Activity *activity
	// Still reports whether the source file at path is still version id:
	// a save that waited is dropped otherwise.
	Still func(path string, id source.Ident) bool
	// LogOnce logs a failure the first time key is seen.
	LogOnce func(key any, format string, args ...any)
	// Quiet and QuietMax are a big save's waits (0: DefaultQuiet,
	// DefaultQuietMax).
	Quiet, QuietMax time.Duration
}

// tier is the disk tier of one store.
type tier struct {
	cfg tierConfig
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

// newTier is the tier cfg describes.
func newTier(cfg tierConfig) *tier {
	if cfg.Quiet == 0 {
		cfg.Quiet = defaultQuiet
	}
	if cfg.QuietMax == 0 {
		cfg.QuietMax = defaultQuietMax
	}
	t := &tier{cfg: cfg}
	t.ctx, t.stop = context.WithCancel(context.Background())
	return t
}

// toDiskKey is the disk cache key of a memory cache key: the same path, Version
// and output (source.Version: one value in memory and on disk).
func toDiskKey(k memKey) diskKey {
	return diskKey{Path: k.Path, Version: k.Version, Output: k.Output}
}

// Enabled reports whether there is a disk cache.
func (t *tier) Enabled() bool { return t.cfg.Disk != nil }

// Sizes returns the part sizes of an output converted successfully by an
// earlier mount, from the disk cache index (a failure record has none).
func (t *tier) Sizes(k memKey) ([]int64, bool) {
	if t.cfg.Disk == nil {
		return nil, false
	}
	sizes, ok := t.cfg.Disk.sizes(toDiskKey(k))
	if !ok || len(sizes) == 0 {
		return nil, false
	}
	return sizes, true
}

// Failure returns the conversion failure the disk cache holds for an
// output's key: the error of an earlier mount's conversion of this very
// source version, with its text.
func (t *tier) Failure(k memKey) (error, bool) {
	if t.cfg.Disk == nil {
		return nil, false
	}
	meta, _, ok := t.cfg.Disk.meta(toDiskKey(k))
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
func (t *tier) Load(k memKey) *memEntry {
	if t.cfg.Disk == nil {
		return nil
	}
	parts, ok := t.cfg.Disk.get(toDiskKey(k))
	if !ok {
		return nil
	}
	return &memEntry{Parts: parts}
}

// Fallback counts a disk load labelled label that converted after all (the
// entry damaged or evicted since its lookup); Fallbacks returns the counts.
func (t *tier) Fallback(label string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fallbacks == nil {
		t.fallbacks = map[string]int64{}
	}
	t.fallbacks[label]++
}

// Fallbacks returns the disk loads that converted after all, by label.
func (t *tier) Fallbacks() map[string]int64 {
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
func (t *tier) Save(k memKey, e *memEntry) {
	if t.cfg.Disk == nil || (e.Err != nil && !record.Persistable(e.Err)) {
		return
	}
	dk := toDiskKey(k)
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
			lowPriority()
			t.cfg.Activity.waitQuiet(t.ctx, t.cfg.Quiet, t.cfg.QuietMax)
			if !t.cfg.Still(k.Path, k.Version.Ident) {
				return // replaced while waiting: never to be served
			}
		}
		var err error
		if e.Err != nil {
			err = t.cfg.Disk.putMeta(dk, nil, record.EncodeFailure(e.Err))
		} else {
			err = t.cfg.Disk.putParts(dk, e.Parts)
		}
		if err != nil && err != errTooBig {
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
func (t *tier) Scan(k memKey) *record.Scan {
	if t.cfg.Disk == nil {
		return nil
	}
	dk := toDiskKey(k)
	blob, sizes, ok := t.cfg.Disk.meta(dk)
	if !ok {
		return nil
	}
	rec, err := record.DecodeScan(blob, sizes)
	if err != nil {
		t.cfg.Disk.remove(dk)
		t.cfg.LogOnce("scan-record-damaged", "meshfs: disk cache: %s: %v (scanned again)", k.Path, err)
		return nil
	}
	return rec
}

// SaveScan persists a fresh scan beside the reader (Close waits for it):
// header.json's bytes hdr and the record blob.
func (t *tier) SaveScan(k memKey, hdr, blob []byte) {
	if t.cfg.Disk == nil {
		return
	}
	dk := toDiskKey(k)
	t.writes.Add(1)
	go func() {
		defer t.writes.Done()
		if err := t.cfg.Disk.putMeta(dk, [][]byte{hdr}, blob); err != nil && err != errTooBig {
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
func (t *tier) Pass(k memKey, convert func() bool) (h *diskHandle, size int64, ok bool) {
	if t.cfg.Disk == nil {
		return nil, 0, false
	}
	dk := toDiskKey(k)
	if _, onDisk := t.cfg.Disk.sizes(dk); !onDisk && !convert() {
		return nil, 0, false
	}
	h, pinned := t.cfg.Disk.pin(dk)
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

func (t *tier) verify(k diskKey, h *diskHandle) bool {
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
func (t *tier) Pending() int64 { return t.pending.Load() }

// Stats is the disk cache's state (nil without one).
func (t *tier) Stats() *stats.Disk {
	if t.cfg.Disk == nil {
		return nil
	}
	ds := t.cfg.Disk.stats()
	return &ds
}

// Close lets the saves waiting for a quiet moment go ahead and waits for
// every save. The caller closes the disk cache after.
func (t *tier) Close() {
	t.stop()
	t.writes.Wait()
}

// outListing is the disk cache's output name of an archive's listing.
const outListing = "archive-listing"

// Listings keeps the archives' listings in the disk cache, to outlive the
// mount with the outputs (source.Keeper); nil without a disk cache.
func (t *tier) Listings() source.Keeper {
	if t.cfg.Disk == nil {
		return nil
	}
	return listings{t.cfg.Disk}
}

type listings struct{ disk *DiskCache }

func listingKey(path string, id source.Ident) diskKey {
	return diskKey{Path: path, Version: source.Version{Ident: id}, Output: outListing}
}

// ArchiveListing is the listing the disk cache keeps of the archive file
// at path, version id.
func (l listings) ArchiveListing(path string, id source.Ident) ([]byte, bool) {
	parts, ok := l.disk.get(listingKey(path, id))
	if !ok || len(parts) != 1 {
		return nil, false
	}
	return parts[0], true
}

// KeepArchiveListing keeps listing in the disk cache. A listing not kept
// (the cache full or closed) is only read again at the next mount: nothing
// is logged.
func (l listings) KeepArchiveListing(path string, id source.Ident, listing []byte) {
	l.disk.putParts(listingKey(path, id), [][]byte{listing})
}
