package fs

import (
	"context"
	"io/fs"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/fs/cache"
	"github.com/meshfs/meshfs/fs/diskcache"
	"github.com/meshfs/meshfs/internal/srcfile"
	"github.com/meshfs/meshfs/internal/store"
	"github.com/meshfs/meshfs/internal/version"
)

// loadFromDisk returns the disk cache's entry for key, checked, or nil.
// Cached bytes are served from memory once loaded: warm reads are answered
// by the kernel's page cache (FOPEN_KEEP_CACHE) and never reach the daemon,
// so the daemon's copy only serves first reads after a remount, and reading
// the entry whole (one sequential read, CRC-checked) is what lets a damaged
// entry be refused before any byte of it is served.
func (f *FS) loadFromDisk(key cache.Key) *cache.Entry {
	if f.disk == nil {
		return nil
	}
	parts, ok := f.disk.Get(f.diskKey(key))
	if !ok {
		return nil
	}
	return &cache.Entry{Parts: parts}
}

// saveToDisk writes a converted entry to the disk cache beside the reader
// (Close waits for it). A failed conversion is kept too, as its error's
// text (store.EncodeFailure), when the failure belongs to the source version:
// otherwise a remount's `ls -lR` would convert every broken mesh again just
// to learn that it still fails, and to list its error.txt.
func (f *FS) saveToDisk(key cache.Key, e *cache.Entry) {
	if f.disk == nil || (e.Err != nil && !store.Persistable(e.Err)) {
		return
	}
	dk := f.diskKey(key)
	f.diskWrites.Add(1)
	f.savesPending.Add(1)
	go func() {
		defer f.diskWrites.Done()
		defer f.savesPending.Add(-1)
		if e.Err == nil && e.Weight() >= saveQuietMin {
			// A big one at the lowest priority (on a thread of its own:
			// not worth it for the many small ones): its write and
			// checksum, ≈ 15 ms of CPU for a 36 MB .glb, take what the
			// readers and conversions leave of the CPUs.
			store.LowPriority()
			f.activity.WaitQuiet(f.ahead.ctx, saveQuiet, saveQuietMax)
			if !version.Still(key.Path, key.Version.Ident) {
				return // replaced while waiting: never to be served
			}
		}
		var err error
		if e.Err != nil {
			err = f.disk.PutMeta(dk, nil, store.EncodeFailure(e.Err))
		} else {
			err = f.disk.Put(dk, e.Parts)
		}
		if err != nil && err != diskcache.ErrTooBig {
			f.logOnce("disk-put-error", "meshfs: disk cache: %v", err)
		}
		if err == nil && e.Err == nil && e.Weight() >= passMin {
			// Written whole by this process: passthrough needs no check.
			f.verified.Store(dk, struct{}{})
		}
	}()
}

// A big entry is saved once the mount's readers have paused (at most
// saveQuietMax later): its write and checksum (≈ 20 ms of CPU for a 36 MB
// .glb) would otherwise run beside the reader that asked for it, who is
// still reading it on a 2-CPU machine.
const saveQuietMin = 1 << 20

var (
	saveQuiet    = 50 * time.Millisecond
	saveQuietMax = 2 * time.Second // (vars for tests)
)

// diskFailure returns the conversion failure the disk cache holds for a
// geometry output's key: the error of an earlier mount's conversion of this
// very source version, with its text.
func (f *FS) diskFailure(key cache.Key) (error, bool) {
	if f.disk == nil {
		return nil, false
	}
	meta, _, ok := f.disk.Meta(f.diskKey(key))
	if !ok {
		return nil, false
	}
	return store.DecodeFailure(meta)
}

// diskSizes returns the part sizes of an output converted successfully by
// an earlier mount, from the disk cache index (a failure record has none).
func (f *FS) diskSizes(key cache.Key) ([]int64, bool) {
	if f.disk == nil {
		return nil, false
	}
	sizes, ok := f.disk.Sizes(f.diskKey(key))
	if !ok || len(sizes) == 0 {
		return nil, false
	}
	return sizes, true
}

// touch records a reader's request: the pre-warmer waits for a quiet moment.
func (f *FS) touch() { f.activity.Touch() }

// prewarmKey marks the context of the pre-warmer's conversions, which are
// no reader's activity: were their ends touches, the pre-warmer would wait
// out the quiet after each of its own conversions.
type prewarmKey struct{}

func isPrewarm(ctx context.Context) bool { return ctx.Value(prewarmKey{}) != nil }

// prewarmQuiet is how long no reader must have asked anything before the
// pre-warmer starts its next conversion.
const prewarmQuiet = 100 * time.Millisecond

// PrewarmStats is the pre-warmer's progress in stats.json.
type PrewarmStats struct {
	Running bool `json:"running"`
	// Meshes found so far (the walk runs ahead of the conversions).
	Found int64 `json:"found"`
	// Done meshes were converted (or already cached); Failed ones failed.
	Done   int64 `json:"done"`
	Cached int64 `json:"already_cached"`
	Failed int64 `json:"failed"`
	// Waits counts the times it stood aside for a reader.
	Waits int64 `json:"waits"`
}

type prewarmState struct {
	running                            atomic.Bool
	found, done, cached, failed, waits atomic.Int64
}

func (p *prewarmState) stats() *PrewarmStats {
	return &PrewarmStats{Running: p.running.Load(), Found: p.found.Load(), Done: p.done.Load(),
		Cached: p.cached.Load(), Failed: p.failed.Load(), Waits: p.waits.Load()}
}

// Prewarm converts every mesh under the source in the background, one at a
// time, at low priority, standing aside while readers are active. It
// returns at once; Close stops it.
func (f *FS) Prewarm() {
	if f.prewarm != nil {
		return
	}
	p := &prewarmState{}
	f.prewarm = p
	p.running.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	f.stopPrewarm = cancel
	f.prewarmDone.Add(1)
	go func() {
		defer f.prewarmDone.Done()
		defer p.running.Store(false)
		// This goroutine's thread runs at the lowest priority; the
		// conversion's own helper goroutines do not inherit it, hence also
		// the quiet-time wait.
		store.LowPriority()
		start := time.Now()
		f.log.Printf("meshfs: prewarm: started on %s", f.source)
		f.prewarmWalk(ctx, p)
		f.log.Printf("meshfs: prewarm: %s: %d meshes, %d converted, %d already cached, %d failed, in %v",
			map[bool]string{true: "stopped", false: "finished"}[ctx.Err() != nil],
			p.found.Load(), p.done.Load()-p.cached.Load(), p.cached.Load(), p.failed.Load(), time.Since(start).Round(time.Millisecond))
	}()
}

func (f *FS) prewarmWalk(ctx context.Context, p *prewarmState) {
	ctx = context.WithValue(ctx, prewarmKey{}, true)
	lastLog := time.Now()
	srcfile.WalkDir(f.source, func(path string, de fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return fs.SkipAll
		}
		if err != nil || !de.Type().IsRegular() {
			return nil
		}
		if outputs.IsCompanion(path) {
			return nil
		}
		var st syscall.Stat_t
		if syscall.Stat(path, &st) != nil {
			return nil
		}
		format := f.sniff(path, &st)
		if format == nil {
			return nil
		}
		p.found.Add(1)
		dir := filepath.Dir(path)
		f.dirsMu.Lock()
		parent := f.dirs[dir]
		f.dirsMu.Unlock()
		if parent == nil {
			parent = &dirNode{fsys: f, abs: dir}
		}
		m := parent.newMeshDir(filepath.Base(path), &st, format)
		_, fp, err := m.stat()
		if err != nil {
			return nil
		}
		cached := true
		for _, out := range []string{outGLB, outOBJ} {
			if _, ok := f.cache.Peek(m.key(fp, out)); ok {
				continue
			}
			if _, ok := f.diskSizes(m.key(fp, out)); ok {
				continue
			}
			cached = false
			if !f.waitQuiet(ctx, p) {
				return fs.SkipAll
			}
			e, err := m.geometry(ctx, fp, out)
			if err == nil && e.Err != nil {
				err = e.Err
			}
			if err != nil {
				p.failed.Add(1)
				break
			}
		}
		if cached {
			p.cached.Add(1)
		}
		p.done.Add(1)
		if time.Since(lastLog) > 10*time.Second {
			lastLog = time.Now()
			f.log.Printf("meshfs: prewarm: %d of %d meshes found so far", p.done.Load(), p.found.Load())
		}
		return nil
	})
}

// waitQuiet waits until no reader has asked anything for prewarmQuiet.
func (f *FS) waitQuiet(ctx context.Context, p *prewarmState) bool {
	waited, ok := f.activity.WaitQuiet(ctx, prewarmQuiet, 0)
	if waited {
		p.waits.Add(1)
	}
	return ok
}

// diskSuffix ends the statistics label of a geometry output loaded from the
// disk cache ("gem/glb@disk"): a load, not a conversion.
const diskSuffix = "@disk"

var fallbackMu sync.Mutex

func (f *FS) countDiskFallback(label string) {
	fallbackMu.Lock()
	defer fallbackMu.Unlock()
	if f.fallbacks == nil {
		f.fallbacks = map[string]int64{}
	}
	f.fallbacks[label]++
}

func (f *FS) diskFallbacks() map[string]int64 {
	fallbackMu.Lock()
	defer fallbackMu.Unlock()
	m := make(map[string]int64, len(f.fallbacks))
	for k, v := range f.fallbacks {
		m[k] = v
	}
	return m
}
