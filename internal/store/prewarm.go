package store

// The pre-warmer (Warmer) converts every mesh under
// the source in the background, one at a time, at low priority, standing
// aside while readers are active (--prewarm).

import (
	"context"
	"io/fs"
	"log"
	pathpkg "path"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/archive"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store/stats"
)

// warmQuiet is how long no reader must have asked anything before the
// pre-warmer starts its next conversion.
const warmQuiet = 100 * time.Millisecond

// warmConfig is what a pre-warmer walks and converts with.
type warmConfig struct {
	// Tree is the source folder walked, through View (archives as the
	// mount shows them, vfs.Folder).
	Tree string
	View *source.Packed
	// Sniff returns the format of the source file at path (stat st), or
	// nil: the mount's sniff cache.
	Sniff func(path string, st *syscall.Stat_t) decode.Format
	// Outputs returns the outputs of the mesh at path (format, stat st)
	// the pre-warmer makes, in order, whether either cache holds one, and
	// how to convert one (its error: the conversion's failure).
	Outputs func(path string, format decode.Format, st *syscall.Stat_t) (outs []string, cached func(out string) bool, convert func(ctx context.Context, out string) error)
	// Activity is the readers' activity it stands aside for.
	Activity *activity
	Log      *log.Logger
}

// Warmer is one running pre-warmer.
type Warmer struct {
	cfg                                warmConfig
	running                            atomic.Bool
	found, done, cached, failed, waits atomic.Int64
	stop                               context.CancelFunc
	wg                                 sync.WaitGroup
}

// warmKey marks the context of the pre-warmer's conversions, which are no
// reader's activity: were their ends touches, the pre-warmer would wait
// out the quiet after each of its own conversions.
type warmKey struct{}

// isWarming reports whether ctx is a pre-warmer's conversion's.
func isWarming(ctx context.Context) bool { return ctx.Value(warmKey{}) != nil }

// startWarmer starts the pre-warmer cfg describes. It returns at once; halt
// stops it.
func startWarmer(cfg warmConfig) *Warmer {
	w := &Warmer{cfg: cfg}
	w.running.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	w.stop = cancel
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer w.running.Store(false)
		// This goroutine's thread runs at the lowest priority; the
		// conversion's own helper goroutines do not inherit it, hence also
		// the quiet-time wait.
		lowPriority()
		start := time.Now()
		cfg.Log.Printf("meshfs: prewarm: started on %s", cfg.Tree)
		w.walk(ctx)
		cfg.Log.Printf("meshfs: prewarm: %s: %d meshes, %d converted, %d already cached, %d failed, in %v",
			map[bool]string{true: "stopped", false: "finished"}[ctx.Err() != nil],
			w.found.Load(), w.done.Load()-w.cached.Load(), w.cached.Load(), w.failed.Load(), time.Since(start).Round(time.Millisecond))
	}()
	return w
}

// halt stops the pre-warmer and waits for it.
func (w *Warmer) halt() {
	w.stop()
	w.wg.Wait()
}

// progress is the pre-warmer's progress (stats.json's prewarm).
func (w *Warmer) progress() *stats.Prewarm {
	return &stats.Prewarm{Running: w.running.Load(), Found: w.found.Load(), Done: w.done.Load(),
		Cached: w.cached.Load(), Failed: w.failed.Load(), Waits: w.waits.Load()}
}

func (w *Warmer) walk(ctx context.Context) {
	ctx = context.WithValue(ctx, warmKey{}, true)
	lastLog := time.Now()
	// warm converts the source at path if it is a mesh (its
	// not-yet-cached outputs), and reports whether it is one.
	warm := func(path string) (bool, error) {
		var st syscall.Stat_t
		if w.cfg.View.SysStat(path, &st) != nil {
			return false, nil
		}
		format := w.cfg.Sniff(path, &st)
		if format == nil {
			return false, nil
		}
		w.found.Add(1)
		outs, isCached, convert := w.cfg.Outputs(path, format, &st)
		cached := true
		for _, out := range outs {
			if isCached(out) {
				continue
			}
			cached = false
			if !w.waitQuiet(ctx) {
				return true, fs.SkipAll
			}
			if err := convert(ctx, out); err != nil {
				w.failed.Add(1)
				break
			}
		}
		if cached {
			w.cached.Add(1)
		}
		w.done.Add(1)
		if time.Since(lastLog) > 10*time.Second {
			lastLog = time.Now()
			w.cfg.Log.Printf("meshfs: prewarm: %d of %d meshes found so far", w.done.Load(), w.found.Load())
		}
		return true, nil
	}
	source.WalkDir(w.cfg.Tree, func(path string, de fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return fs.SkipAll
		}
		if err != nil || !de.Type().IsRegular() {
			return nil
		}
		if outputs.IsCompanion(path) {
			return nil
		}
		mesh, err := warm(path)
		if mesh || err != nil {
			return err
		}
		return warmArchive(w.cfg.View, path, warm)
	})
}

// warmArchive warms the meshes of the archive at path, as the mount shows
// them (vfs.Folder): its nested archives' too, as far as
// source.Packed.Descends says.
func warmArchive(v *source.Packed, path string, warm func(string) (bool, error)) error {
	a, _, _, _ := v.Archive(path)
	if a == nil {
		return nil
	}
	return a.Walk(func(e *archive.Entry) error {
		dir, name := pathpkg.Split(e.Path)
		if e.IsDir() || formats.IsCompanion(name, func(n string) bool { _, ok := a.Lookup(pathpkg.Join(dir, n)); return ok }) {
			return nil
		}
		at := path + "/" + e.Path
		mesh, err := warm(at)
		if !mesh && err == nil && v.Descends(at) {
			return warmArchive(v, at, warm)
		}
		return err
	})
}

// waitQuiet waits until no reader has asked anything for Quiet.
func (w *Warmer) waitQuiet(ctx context.Context) bool {
	waited, ok := w.cfg.Activity.waitQuiet(ctx, warmQuiet, 0)
	if waited {
		w.waits.Add(1)
	}
	return ok
}
