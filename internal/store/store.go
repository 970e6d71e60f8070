// Package store is where a mount's outputs come from: the memory tier
// (memory.go: byte-bounded, one load per key, holds for readers), else the
// disk tier (disktier.go over the DiskCache of disk.go: an earlier mount's
// scan or conversion of this very version, saved when readers pause), else
// a scan or a conversion now, paced for the collector (gcpace.go) and, in
// the background, the pre-warmer (prewarm.go) standing aside while readers
// are active (idle.go). Its parts off the read path are packages of their
// own: record (what the disk cache keeps of scans and failures, and its
// keys' version), failures (the broken meshes), stats (stats.json and
// errors.txt). It knows nothing of FUSE; it is tested without a mount.
package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/logonce"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store/failures"
	"github.com/meshfs/meshfs/internal/store/record"
)

// Store is where a mount's outputs come from: the memory cache, else the
// disk cache (an earlier mount's scan or conversion of this very version),
// else a scan or a conversion now, bounded in number (the semaphore) and
// saved to the disk cache once the readers pause. It keeps the failures of
// the versions it made and knows which files each mesh read
// (source.Tracker). It knows nothing of FUSE: the mount tells it of
// readers' requests (Touch) and is told, through Config.Events,
// of what the kernel must learn. Everything it holds is set by Open.
type Store struct {
	cache    *memCache
	disk     *tier
	dc       *DiskCache // the disk tier's cache (closed by the caller)
	sem      *outputs.Semaphore
	gc       *pacer
	failed   *failures.List
	versions *source.Tracker
	activity *activity
	events   Events

	log  *log.Logger
	once *logonce.Log // failures logged once each
	// view is how the store reaches sources (Config.Limits.View, else its
	// own): every mesh it makes reads through it, whatever Limits say.
	view *source.Packed

	folderDeps folderDeps
	// onePass counts scans made in one pass with a .glb's decoding.
	onePass atomic.Int64

	mu          sync.Mutex
	convLatency ring
	warm        *Warmer // nil: not started

	// limits bound every conversion; tree is the source folder asset roots
	// are looked for in, and the pre-warmer walks.
	limits outputs.Limits
	tree   string
}

// Events are what the mount does when the store finds something the kernel
// must learn (Config.Events).
type Events interface {
	// DepsFound: a scan of the mesh at path found the files its outputs
	// are made from besides its folder's, set, which the Tracker was told;
	// changed is set when they differ from the last scan's (the mount
	// watches their folders).
	DepsFound(path string, set source.Set, changed bool)
	// Broken: a conversion of the mesh at path just failed, and its folder
	// changes shape (error.txt in, geometry out).
	Broken(path string)
}

// noEvents is the Events of a store nobody listens to.
type noEvents struct{}

func (noEvents) DepsFound(string, source.Set, bool) {}
func (noEvents) Broken(string)                      {}

// recordedDeps is the set the persisted scan of src's version v found.
func (s *Store) recordedDeps(src string, v source.Version) (source.Set, bool) {
	rec := s.disk.Scan(memKey{Path: src, Version: v, Output: OutScan})
	if rec == nil {
		return nil, false
	}
	return rec.Deps, true
}

// logOnce logs a failure the first time it is seen for key.
func (s *Store) logOnce(key any, format string, args ...any) { s.once.Printf(key, format, args...) }

// keyOf is the memory cache key of output of mesh m's version v.
func keyOf(m *outputs.Mesh, v source.Version, output string) memKey {
	return memKey{Path: m.Path, Version: v, Output: output}
}

// Label names an output of m's format in the statistics ("gem/glb").
func Label(m *outputs.Mesh, output string) string { return m.Format.Name() + "/" + output }

// recordConversion counts a conversion that took d.
func (s *Store) recordConversion(d time.Duration) {
	s.mu.Lock()
	s.convLatency.Add(d)
	s.mu.Unlock()
}

// Changed records a change of the source at path and returns the meshes
// whose versions it made again. A file (folder false): every mesh whose
// set names it gets its version made again; the outputs of the version
// before stay in memory until the budget needs the room (a node the kernel
// still holds for that version tells its size and serves its bytes:
// Output.Size, Output.Serve). A folder (folder true) holding a file that
// its meshes depend on (path "": every folder, after lost events): the
// folder is listed again and the versions of its meshes are made again
// (source.Tracker).
func (s *Store) Changed(path string, folder bool) []string {
	switch {
	case !folder:
		s.limits.Projects.Changed(path)
		return s.versions.Changed(path)
	case path == "":
		s.folderDeps.changed("")
		s.versions.ChangedAll()
		return nil
	}
	s.folderDeps.changed(path)
	return s.versions.Changed(path)
}

// Cache output names (the last part of a statistics label).
const (
	OutScan  = "scan"
	OutGLB   = "glb"
	OutOBJ   = "obj" // NAME.obj and NAME.mtl, made by one export
	OutChunk = "chunk"
	// OutAnimated is NAME.animated.glb; OutAnims the animation files it
	// attaches (the listing's State.Animated).
	OutAnimated = "animated"
	OutAnims    = "anims"
	// OutPreview is NAME.preview.png, drawn by a conversion of its own
	// (or in the one pass of a scan that decodes).
	OutPreview = "preview"
)

// conversions are the outputs whose failure breaks a folder (the folder
// table's rule for error.txt), in the order error.txt reports them.
func conversions() []string { return []string{OutGLB, OutOBJ, OutPreview} }

// ScanResult is a cached structure scan of one source version, fresh or
// persisted in the disk cache by an earlier mount (scanrecord.go).
type ScanResult struct {
	// St is the structure (nil when the scan failed before finding one),
	// ScanErr the scan's error, HdrErr header.json's.
	St      *decode.Structure
	ScanErr error
	HdrErr  error
	// header is header.json's bytes; use headerData, which reads those of
	// a persisted scan on demand (hdrLoad, hdrSize) the first time.
	header  []byte
	hdrMu   sync.Mutex
	hdrLoad func() ([]byte, error)
	hdrSize int64
	disk    bool // persisted by an earlier mount
	// deps are the files besides the source the scan found its outputs
	// read (recorded with a persisted scan: source.Tracker.Recorded).
	deps source.Set
	// Chunks are the names under chunks/, unique, in the order of the scan;
	// chunkIdx picks the chunk a name shows (the last of that name, as
	// `convert` would have overwritten the earlier ones).
	Chunks   []string
	chunkIdx map[string]int
}

// persisted reports whether r came from the disk cache's index.
func (r *ScanResult) persisted() bool { return r.disk }

// headerData returns header.json's bytes, or the error rendering it gave.
func (r *ScanResult) headerData() ([]byte, error) {
	if r.HdrErr != nil {
		return nil, r.HdrErr
	}
	r.hdrMu.Lock()
	defer r.hdrMu.Unlock()
	if r.hdrLoad != nil {
		b, err := r.hdrLoad()
		if err != nil {
			return nil, err
		}
		r.header, r.hdrLoad = b, nil
	}
	return r.header, nil
}

// headerInMemory returns header.json's bytes when they are in memory (not
// a persisted scan's still on disk) and rendered without error.
func (r *ScanResult) headerInMemory() ([]byte, bool) {
	r.hdrMu.Lock()
	defer r.hdrMu.Unlock()
	return r.header, r.hdrLoad == nil && r.HdrErr == nil
}

// headerSize is header.json's size, known without reading it.
func (r *ScanResult) headerSize() int64 {
	r.hdrMu.Lock()
	defer r.hdrMu.Unlock()
	if r.hdrLoad != nil {
		return r.hdrSize
	}
	return int64(len(r.header))
}

// chunk is the chunk the name under chunks/ shows.
func (r *ScanResult) chunk(name string) (*decode.Chunk, bool) {
	i, ok := r.chunkIdx[name]
	if !ok {
		return nil, false
	}
	return &r.St.Chunks[i], true
}

// Scan returns the structure scan of source version fp: from memory, else
// from the disk cache's index (an earlier mount's scan of this very
// version: counted as a disk load, "fmt/scan" in disk_loads), else scanned
// now and persisted on the way.
func (s *Store) Scan(ctx context.Context, m *outputs.Mesh, fp source.Version) (*ScanResult, error) {
	return s.scanAnd(ctx, m, fp, nil)
}

// oneScene is the scene of a scan made in one pass with the decoding, and
// how long that pass took.
type oneScene struct {
	scene *decode.Scene
	took  time.Duration
}

// scanAnd is scan. With sc, a scan made now (in memory nor on disk) is
// made in one pass with the decoding where the format can
// (outputs.Mesh.ScanDecode), under the conversions' semaphore, and sc
// receives the scene: the first read of a .glb then reads and decompresses
// the source once, not once for the scan and once for the scene.
func (s *Store) scanAnd(ctx context.Context, m *outputs.Mesh, fp source.Version, sc *oneScene) (*ScanResult, error) {
	key, label := keyOf(m, fp, OutScan), Label(m, OutScan)
	var rec *record.Scan
	if _, ok := s.cache.Peek(key); !ok {
		if rec = s.disk.Scan(key); rec != nil {
			label += DiskSuffix
		}
	}
	e, err := s.cache.Get(ctx, key, label, func(ctx context.Context) (*memEntry, error) {
		if rec != nil {
			r := s.fromRecord(m, fp, rec)
			// Header bytes not in memory yet: weigh them in anyway.
			aux := 512 + rec.HdrSize
			for _, n := range r.Chunks {
				aux += 128 + int64(len(n))
			}
			return &memEntry{Aux: r, AuxWeight: aux}, nil
		}
		var st *decode.Structure
		var scanErr error
		if sc != nil {
			if err := s.sem.Acquire(ctx); err != nil {
				return nil, err
			}
			start := time.Now()
			endGC := s.gc.Begin(fp.Size)
			one, scene, ok := m.ScanDecode(ctx)
			endGC()
			s.sem.Release()
			if ok {
				st, sc.scene, sc.took = one, scene, time.Since(start)
				s.onePass.Add(1)
			}
		}
		if st == nil {
			st, scanErr = m.Scan(ctx)
		}
		if st == nil && errors.Is(scanErr, os.ErrNotExist) {
			return nil, scanErr // gone: nothing to cache
		}
		hdr, deps, hdrErr := m.HeaderDeps(st, scanErr)
		set := make(source.Set, len(deps))
		for i, d := range deps {
			set[i] = source.Read(d)
		}
		s.events.DepsFound(m.Path, set, s.versions.Track(m.Path, set))
		r := &ScanResult{St: st, ScanErr: scanErr, HdrErr: hdrErr, header: hdr, chunkIdx: map[string]int{}, deps: set}
		aux := int64(512)
		if st != nil {
			for i := range st.Chunks {
				name := decode.SafeName(st.Chunks[i].Name)
				if _, dup := r.chunkIdx[name]; !dup {
					r.Chunks = append(r.Chunks, name)
				}
				r.chunkIdx[name] = i
				aux += 128 + int64(len(name))
			}
		}
		if scanErr != nil {
			s.logOnce(keyOf(m, fp, "scan-error"), "meshfs: %v", scanErr)
		}
		s.saveScan(key, r)
		return &memEntry{Parts: [][]byte{hdr}, Aux: r, AuxWeight: aux}, nil
	})
	if err != nil {
		return nil, err
	}
	r := e.Aux.(*ScanResult)
	if r.ScanErr != nil {
		s.failed.Note(m.Path, fp, true, r.ScanErr)
	} else if r.HdrErr != nil {
		s.failed.Note(m.Path, fp, true, r.HdrErr)
	}
	return r, nil
}

// geometry returns the cached entry of a geometry output (OutGLB: one part;
// OutOBJ: the obj and the mtl), converting on a miss. A failed conversion is
// an entry with Err.
func (s *Store) geometry(ctx context.Context, m *outputs.Mesh, fp source.Version, output string) (*memEntry, error) {
	key, label := keyOf(m, fp, output), Label(m, output)
	if e, ok := s.cache.Use(key); ok {
		// Converted (or failed) already and still in memory: the scan
		// that a conversion needs is not needed.
		return e, nil
	}
	// An output in the disk cache was converted from this very source
	// version (so its scan succeeded): load it instead of converting. So
	// is a conversion that failed: its error comes back without a retry.
	sizes, onDisk := s.disk.Sizes(key)
	// What the load will hold in memory, about: the disk entry's sizes,
	// or for a conversion the source's size.
	hint := fp.Size
	if onDisk {
		hint = 0
		for _, n := range sizes {
			hint += n
		}
	}
	var diskErr error
	if !onDisk {
		diskErr, onDisk = s.disk.Failure(key)
	}
	var sc *oneScene
	if onDisk {
		label += DiskSuffix
	} else {
		if fp.Size >= bigConversionSize {
			// A big conversion to come: the outputs of the versions
			// before fp go, so that its tens of MB can reuse theirs.
			s.cache.InvalidateOthers(m.Path, fp)
		}
		if (output == OutGLB || output == OutPreview) && m.CanScanDecode() {
			// One pass only for a conversion to come: a .glb in memory
			// whose scan was evicted wants the scan alone.
			if _, inMem := s.cache.Peek(key); !inMem {
				sc = &oneScene{}
			}
		}
		r, err := s.scanAnd(ctx, m, fp, sc)
		if err != nil {
			return nil, err
		}
		if r.ScanErr != nil {
			// `convert` does not decode a file whose structure is broken.
			return &memEntry{Err: r.ScanErr}, nil
		}
	}
	var failed atomic.Bool
	e, err := s.cache.GetSized(ctx, key, label, max(hint, 1), func(ctx context.Context) (*memEntry, error) {
		if diskErr != nil {
			// Listings already show error.txt (knownBroken): no notice.
			return &memEntry{Err: diskErr}, nil
		}
		if onDisk {
			if e := s.disk.Load(key); e != nil {
				return e, nil
			}
			// Damaged or evicted since: convert after all.
			s.disk.Fallback(Label(m, output))
		}
		// Bounded concurrency: waiters share this load, others queue here.
		if err := s.sem.Acquire(ctx); err != nil {
			return nil, err
		}
		defer s.sem.Release()
		defer s.gc.Begin(fp.Size)()
		start := time.Now()
		var e *memEntry
		var err error
		switch output {
		case OutGLB:
			if sc != nil && sc.scene != nil {
				var b []byte
				b, err = m.GLBOf(ctx, sc.scene)
				sc.scene, start = nil, start.Add(-sc.took)
				e = &memEntry{Parts: [][]byte{b}}
			} else {
				// A model's LOD files are the parts of its one conversion.
				var parts [][]byte
				parts, err = m.GLBFiles(ctx)
				e = &memEntry{Parts: parts}
			}
		case OutOBJ:
			var o, l []byte
			o, l, err = m.OBJFiles(ctx)
			e = &memEntry{Parts: [][]byte{o, l}}
		case OutAnimated:
			var b []byte
			b, err = m.AnimatedGLBFile(ctx)
			e = &memEntry{Parts: [][]byte{b}}
		case OutPreview:
			// Drawn from its own decoding, not from the .glb's bytes:
			// its first read converts nothing else (its stat draws
			// nothing: previewSize).
			var b []byte
			if sc != nil && sc.scene != nil {
				b, err = m.PreviewFromScan(ctx, sc.scene)
				sc.scene, start = nil, start.Add(-sc.took)
			} else {
				b, err = m.PreviewFile(ctx)
			}
			e = &memEntry{Parts: [][]byte{b}}
		}
		s.recordConversion(time.Since(start))
		// The reader who asked reads the output next: the quiet that a
		// big disk-cache save (and the pre-warmer) wait for starts now,
		// not when the request that converted began.
		if !isWarming(ctx) {
			s.activity.Touch()
		}
		if !errors.Is(err, os.ErrNotExist) && !s.still(key.Path, key.Version.Ident) {
			// Changed while it was read: these bytes may be of another
			// version, or of two. Not cached; the reader gets ESTALE.
			return nil, syscall.ESTALE
		}
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
			s.logOnce(keyOf(m, fp, "error:"+err.Error()), "meshfs: %v", err)
			e = &memEntry{Err: err}
			failed.Store(true)
		}
		// Passthrough opens (passthrough.go) wait for this save: the
		// opens before it is done read from the daemon, which for a first
		// read is faster than writing the disk-cache file first.
		s.disk.Save(key, e)
		return e, nil
	})
	if err == nil && e.Err != nil {
		s.failed.Note(m.Path, fp, false, e.Err)
	}
	if failed.Load() {
		s.events.Broken(m.Path)
	}
	return e, err
}

// still is source.Still of a source file, an archive's entry too
// (source.Packed.SysStat).
func (s *Store) still(path string, id source.Ident) bool {
	var st syscall.Stat_t
	return s.view.SysStat(path, &st) == nil && source.FromStat(&st).Same(id)
}

// chunkData returns a loaded chunk's bytes, or (nil, c) for a raw chunk,
// which is read from the source file itself.
func (s *Store) chunkData(ctx context.Context, m *outputs.Mesh, fp source.Version, r *ScanResult, name string) ([]byte, *decode.Chunk, error) {
	c, ok := r.chunk(name)
	if !ok {
		return nil, nil, os.ErrNotExist
	}
	if err := m.CheckChunk(c); err != nil {
		// Over a limit: `convert` writes no file for it either.
		s.logOnce(keyOf(m, fp, "chunk:"+name), "meshfs: %s: %v", m.Path, err)
		return nil, nil, err
	}
	// A raw chunk of an archive's entry has no window of a file of its
	// own: it is read and kept as a loaded chunk is.
	packed := c.Load == nil && m.Packed()
	if c.Load == nil && !packed {
		if c.Offset < 0 || c.Length < 0 || c.Offset > fp.Size || c.Length > fp.Size-c.Offset {
			// Get the error `convert` reports for this chunk.
			_, err := m.ChunkBytes(c)
			if err == nil {
				err = errors.New("chunk " + name + " lies outside the file")
			}
			return nil, nil, err
		}
		return nil, c, nil
	}
	size := c.Size
	if packed {
		size = c.Length
	}
	e, err := s.cache.GetSized(ctx, keyOf(m, fp, OutChunk+"/"+name), Label(m, OutChunk), size, func(ctx context.Context) (*memEntry, error) {
		b, err := m.ChunkBytes(c)
		if err != nil {
			s.logOnce(keyOf(m, fp, "chunk:"+name), "meshfs: %s: %v", m.Path, err)
			return &memEntry{Err: err}, nil
		}
		return &memEntry{Parts: [][]byte{b}}, nil
	})
	if err != nil {
		return nil, nil, err
	}
	if e.Err != nil {
		return nil, nil, e.Err
	}
	return e.Part(0), nil, nil
}

// errorText is error.txt: the errors `convert` would record, in its order
// (scan, header, chunks, then decoding and export). Empty when nothing fails.
func (s *Store) errorText(ctx context.Context, m *outputs.Mesh, fp source.Version) ([]byte, error) {
	r, err := s.Scan(ctx, m, fp)
	if err != nil {
		return nil, err
	}
	var errs []error
	if r.ScanErr != nil {
		errs = append(errs, r.ScanErr)
	}
	if r.HdrErr != nil {
		errs = append(errs, r.HdrErr)
	}
	if r.St != nil {
		for i := range r.St.Chunks {
			c := &r.St.Chunks[i]
			if idx := r.chunkIdx[decode.SafeName(c.Name)]; idx != i {
				// Shadowed by a later chunk of the same name: `convert`
				// still loads it, and so reports its error.
				if _, err := m.ChunkBytes(c); err != nil {
					errs = append(errs, err)
				}
				continue
			}
			if _, _, err := s.chunkData(ctx, m, fp, r, decode.SafeName(c.Name)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if r.ScanErr == nil {
		g, err := s.geometry(ctx, m, fp, OutGLB)
		if err != nil {
			return nil, err
		}
		o, err := s.geometry(ctx, m, fp, OutOBJ)
		if err != nil {
			return nil, err
		}
		if g.Err != nil {
			errs = append(errs, g.Err)
		}
		// A decoding error fails both exports: `convert` reports it once.
		if o.Err != nil && (g.Err == nil || o.Err.Error() != g.Err.Error()) {
			errs = append(errs, o.Err)
		}
		if m.HasPreview() && g.Err == nil && o.Err == nil {
			// `convert` draws the preview once the exports succeeded.
			p, err := s.geometry(ctx, m, fp, OutPreview)
			if err != nil {
				return nil, err
			}
			if p.Err != nil {
				errs = append(errs, p.Err)
			}
		}
	}
	return outputs.ErrorText(errs...), nil
}

// failure returns what broke source version fp of the mesh (scan r), as
// far as is known without converting anything: the scan's or header's
// error (scan true), else a conversion that failed in this mount or, for
// this version, in an earlier one. nil: nothing known to fail. A failure
// found is entered in the mount's failure list (.meshfs/errors.txt).
func (s *Store) failure(m *outputs.Mesh, fp source.Version, r *ScanResult) (err error, scan bool) {
	switch {
	case r.ScanErr != nil:
		err, scan = r.ScanErr, true
	case r.HdrErr != nil:
		err, scan = r.HdrErr, true
	default:
		for _, out := range conversions() {
			key := keyOf(m, fp, out)
			if e, ok := s.cache.Peek(key); ok {
				err = e.Err
			} else {
				err, _ = s.disk.Failure(key)
			}
			if err != nil {
				break
			}
		}
	}
	if err != nil {
		s.failed.Note(m.Path, fp, scan, err)
	}
	return err, scan
}

// knownBroken reports whether the folder of version fp is broken (the
// folder table's rule: error.txt listed, no geometry outputs), as far as is
// known without converting anything.
func (s *Store) knownBroken(m *outputs.Mesh, fp source.Version, r *ScanResult) bool {
	err, _ := s.failure(m, fp, r)
	return err != nil
}

// converted reports whether output converted without error for fp, as far
// as the caches know.
func (s *Store) converted(m *outputs.Mesh, fp source.Version, output string) bool {
	key := keyOf(m, fp, output)
	if e, ok := s.cache.Peek(key); ok {
		return e.Err == nil
	}
	// diskSizes knows successful conversions only (not failure records).
	_, ok := s.disk.Sizes(key)
	return ok
}

// failedOnDisk reports whether the disk cache records a failure of version
// fp: a scan's, or a conversion's.
func (s *Store) failedOnDisk(m *outputs.Mesh, fp source.Version) bool {
	if !s.disk.Enabled() {
		return false
	}
	for _, out := range conversions() {
		if _, failed := s.disk.Failure(keyOf(m, fp, out)); failed {
			return true
		}
	}
	rec := s.disk.Scan(keyOf(m, fp, OutScan))
	return rec != nil && rec.Failed()
}

// IsConversion reports whether a statistics label counts as a conversion.
func IsConversion(label string) bool {
	i := strings.LastIndexByte(label, '/')
	out := label[i+1:]
	return out == OutGLB || out == OutOBJ || out == OutAnimated || out == OutPreview
}

// animated reports whether some animation file of the folder belongs to
// version fp of the mesh (outputs' rule for NAME.animated.glb), as the
// memory cache remembers it: fp's Gen changes with any animation file of
// the folder (formats.IsDependency), so a change there asks again.
func (s *Store) animated(ctx context.Context, m *outputs.Mesh, fp source.Version) bool {
	if !m.TakesAnimations() {
		return false
	}
	e, err := s.cache.Get(ctx, keyOf(m, fp, OutAnims), Label(m, OutAnims), func(ctx context.Context) (*memEntry, error) {
		if err := s.sem.Acquire(ctx); err != nil {
			return nil, err
		}
		defer s.sem.Release()
		names, err := m.Animations(ctx)
		if err != nil {
			return &memEntry{Err: err}, nil
		}
		w := int64(0)
		for _, n := range names {
			w += int64(len(n)) + 16
		}
		return &memEntry{Aux: names, AuxWeight: w}, nil
	})
	if err != nil || e.Err != nil {
		return false
	}
	names, _ := e.Aux.([]string)
	return len(names) > 0
}

// saveScan persists a fresh scan beside the reader (Close waits for it).
func (s *Store) saveScan(key memKey, r *ScanResult) {
	if !s.disk.Enabled() || !record.Persistable(r.ScanErr) {
		return
	}
	hdr := r.header
	if r.HdrErr != nil {
		hdr = nil
	}
	s.disk.SaveScan(key, hdr, record.EncodeScan(r.St, r.ScanErr, r.HdrErr, r.deps))
}

// fromRecord builds the scan result of a persisted record: chunk names,
// sizes and errors from memory; header.json's bytes read from the disk
// cache when first asked for; loaded chunks' bytes through a live scan.
func (s *Store) fromRecord(m *outputs.Mesh, fp source.Version, rec *record.Scan) *ScanResult {
	r := &ScanResult{chunkIdx: map[string]int{}, hdrSize: rec.HdrSize, disk: true}
	if rec.HasScanErr {
		r.ScanErr = errors.New(rec.ScanErr)
	}
	if rec.HasHdrErr {
		r.HdrErr = errors.New(rec.HdrErr)
	}
	if rec.Structure {
		r.St = &decode.Structure{Format: rec.Format, Chunks: make([]decode.Chunk, len(rec.Chunks))}
		for i, c := range rec.Chunks {
			r.St.Chunks[i] = decode.Chunk{Name: c.Name, Offset: c.Offset, Length: c.Length, Size: c.Size}
			if c.Loaded {
				r.St.Chunks[i].Load = s.liveLoader(m, fp, i, c)
			}
			name := decode.SafeName(c.Name)
			if _, dup := r.chunkIdx[name]; !dup {
				r.Chunks = append(r.Chunks, name)
			}
			r.chunkIdx[name] = i
		}
	}
	if r.HdrErr == nil {
		key := keyOf(m, fp, OutScan)
		r.hdrLoad = func() ([]byte, error) {
			if e := s.disk.Load(key); e != nil && int64(len(e.Parts[0])) == rec.HdrSize {
				return e.Parts[0], nil
			}
			// Damaged (Get discarded it): render it from a live scan.
			live, err := s.liveScan(m, fp)
			if err != nil {
				return nil, err
			}
			hdr, err := m.Header(live.St, live.ScanErr)
			if err == nil && int64(len(hdr)) != rec.HdrSize {
				err = fmt.Errorf("%s: header.json is %d bytes, the disk cache's record said %d", m.Path, len(hdr), rec.HdrSize)
			}
			return hdr, err
		}
	}
	return r
}

// liveScan is a scan of fp made for a persisted scan result (its loaded
// chunks, or a damaged header), cached in memory and counted as a scan.
func (s *Store) liveScan(m *outputs.Mesh, fp source.Version) (*ScanResult, error) {
	e, err := s.cache.Get(context.Background(), keyOf(m, fp, outScanLive), Label(m, OutScan), func(ctx context.Context) (*memEntry, error) {
		st, scanErr := m.Scan(ctx)
		if st == nil && errors.Is(scanErr, fs.ErrNotExist) {
			return nil, scanErr
		}
		aux := int64(512)
		if st != nil {
			aux += 128 * int64(len(st.Chunks))
		}
		return &memEntry{Aux: &ScanResult{St: st, ScanErr: scanErr}, AuxWeight: aux}, nil
	})
	if err != nil {
		return nil, err
	}
	return e.Aux.(*ScanResult), nil
}

// liveLoader loads chunk i of a persisted scan through a live scan, after
// checking that the live scan found the recorded chunk there.
func (s *Store) liveLoader(m *outputs.Mesh, fp source.Version, i int, want record.Chunk) func() ([]byte, error) {
	return func() ([]byte, error) {
		live, err := s.liveScan(m, fp)
		if err != nil {
			return nil, err
		}
		if live.St == nil || i >= len(live.St.Chunks) {
			return nil, fmt.Errorf("%s: chunk %s: not found by a new scan (the disk cache's record is not this file's)", m.Path, want.Name)
		}
		c := &live.St.Chunks[i]
		if c.Name != want.Name || c.Offset != want.Offset || c.Length != want.Length || c.Size != want.Size || c.Load == nil {
			return nil, fmt.Errorf("%s: chunk %s: a new scan differs from the disk cache's record", m.Path, want.Name)
		}
		return c.Load()
	}
}

// knownSize returns the size of a mesh folder's header.json (header) or of
// one chunk (else, by its listed name) for the source version fp when it
// is known from the scan alone, without reading header.json's bytes from
// the disk cache or loading a chunk: false when the scan failed for
// another reason, the file does not exist (header.json after a header
// error), or the size is only known by producing it (a chunk outside the
// file, or over the output limit, whose stat reports the error; a loaded
// chunk of a fresh scan, loaded as before).
func (s *Store) knownSize(ctx context.Context, m *outputs.Mesh, fp source.Version, header bool, chunk string) (int64, bool) {
	r, err := s.Scan(ctx, m, fp)
	if err != nil {
		return 0, false
	}
	return s.KnownSizeIn(m, r, fp, header, chunk)
}

// KnownSizeIn is knownSize given the scan r of version fp.
func (s *Store) KnownSizeIn(m *outputs.Mesh, r *ScanResult, fp source.Version, header bool, chunk string) (int64, bool) {
	switch {
	case header:
		if r.HdrErr != nil {
			return 0, false
		}
		if err, scan := s.failure(m, fp, r); err != nil && !scan {
			// It carries the conversion's error: its size is known by
			// rendering it.
			return 0, false
		}
		return r.headerSize(), true
	default:
		c, ok := r.chunk(chunk)
		if !ok {
			return 0, false
		}
		if m.CheckChunk(c) != nil {
			return 0, false
		}
		if c.Load == nil {
			if c.Offset < 0 || c.Length < 0 || c.Offset > fp.Size || c.Length > fp.Size-c.Offset {
				return 0, false
			}
			return c.Length, true
		}
		if !r.persisted() {
			return 0, false
		}
		// A chunk that failed to load in this mount: its stat says so.
		if e, ok := s.cache.Peek(keyOf(m, fp, OutChunk+"/"+chunk)); ok && e.Err != nil {
			return 0, false
		}
		return c.Size, true
	}
}

// DiskSuffix ends the statistics label of a geometry output loaded from the
// disk cache ("gem/glb@disk"): a load, not a conversion.
const DiskSuffix = "@disk"

// folderDeps remembers the dependency files (formats.IsDependency) of each
// source folder as they are, until the watcher reports a change of one.
type folderDeps struct {
	mu  sync.Mutex
	gen map[string]uint64     // folder → changes reported
	set map[string]source.Set // folder → its dependency files, at gen
	at  map[string]uint64
}

// of returns the dependency files of the folder dir.
func (c *folderDeps) of(dir string) source.Set {
	c.mu.Lock()
	if c.gen == nil {
		c.gen, c.set, c.at = map[string]uint64{}, map[string]source.Set{}, map[string]uint64{}
	}
	gen := c.gen[dir]
	c.gen[dir] = gen
	if s, ok := c.set[dir]; ok && c.at[dir] == gen {
		c.mu.Unlock()
		return s
	}
	c.mu.Unlock()
	var s source.Set
	if ents, err := source.ReadDir(dir); err == nil {
		names := make([]string, len(ents))
		for i, e := range ents {
			names[i] = e.Name()
		}
		siblings := formats.Among(names)
		for _, e := range ents {
			if !e.Type().IsRegular() || !formats.IsDependency(e.Name(), siblings) {
				continue
			}
			p := filepath.Join(dir, e.Name())
			if id, _, err := source.Stat(p); err == nil {
				s = append(s, source.Read{Path: p, Ident: id})
			}
		}
	}
	c.mu.Lock()
	if c.gen[dir] == gen {
		c.set[dir], c.at[dir] = s, gen
	}
	c.mu.Unlock()
	return s[:len(s):len(s)]
}

// changed forgets what of knows of dir (every folder: dir "").
func (c *folderDeps) changed(dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == nil {
		return
	}
	if dir == "" {
		for d := range c.gen {
			c.gen[d]++
		}
		clear(c.set)
		return
	}
	c.gen[dir]++
	delete(c.set, dir)
}

// NewMesh describes the mesh file at p (format) as every part of the mount
// converts it: the store's limits (asset paths included), its tree as the
// folder asset roots are looked for in.
func (s *Store) NewMesh(p string, format decode.Format) *outputs.Mesh {
	m := outputs.New(p, format)
	m.Limits = s.limits
	m.Limits.Textures, m.Limits.View = textures{s}, s.view
	m.Tree = s.tree
	return m
}

// OutPNG is the cache's output name of a texture's PNG, and LabelPNG its
// label in the statistics.
const (
	OutPNG   = "png"
	LabelPNG = "texture/" + OutPNG
)

// textures is the store as outputs.Textures: the PNG of a texture version
// in memory, else in the disk cache, else made and saved there like any
// output (keyed by the texture's Ident alone: a PNG reads its texture
// alone), so that one encoding serves NAME.EXT.png and every .glb that
// embeds it, across mounts. It takes no slot of the semaphore: a .glb's
// conversion calling it holds one already.
type textures struct{ s *Store }

func (t textures) PNG(d outputs.Dep, make func() ([]byte, error)) ([]byte, error) {
	s := t.s
	key := memKey{Path: d.Path, Version: source.Version{Ident: d.Ident}, Output: OutPNG}
	label, onDisk := LabelPNG, false
	if sizes, ok := s.disk.Sizes(key); ok && len(sizes) == 1 {
		label, onDisk = label+DiskSuffix, true
	}
	e, err := s.cache.Get(context.Background(), key, label, func(context.Context) (*memEntry, error) {
		if onDisk {
			if e := s.disk.Load(key); e != nil && len(e.Parts) == 1 {
				return e, nil
			}
			s.disk.Fallback(LabelPNG)
		}
		start := time.Now()
		b, err := make()
		s.recordConversion(time.Since(start))
		if err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
			// Cut short by the deadline of the conversion that asked
			// (which may have had little of it left): not the texture's
			// failure, so not kept as one.
			return nil, err
		}
		if err != nil {
			s.logOnce(key, "meshfs: %v", err)
			return &memEntry{Err: err}, nil
		}
		e := &memEntry{Parts: [][]byte{b}}
		if source.Still(d.Path, d.Ident) {
			s.disk.Save(key, e)
		}
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	if e.Err != nil {
		return nil, e.Err
	}
	return e.Parts[0], nil
}

// TexturePNG returns the PNG of the texture at path as it is now, its stat
// and version, or syscall.ESTALE when it is no longer file (replaced: the
// caller's node stands for the old one). A texture that does not decode is
// a *failures.ConvError.
func (s *Store) TexturePNG(ctx context.Context, path string, file source.File) ([]byte, *syscall.Stat_t, source.Version, error) {
	st := new(syscall.Stat_t)
	if err := s.view.SysStat(path, st); err != nil {
		return nil, nil, source.Version{}, err
	}
	id := source.FromStat(st)
	if id.File != file {
		return nil, nil, source.Version{}, syscall.ESTALE
	}
	// The PNG is made from the file as the view reads it: an archive
	// entry's is its archive's version.
	_, read, err := s.view.Stat(path)
	if err != nil {
		return nil, nil, source.Version{}, err
	}
	v := source.Version{Ident: id}
	if e, ok := s.cache.Use(memKey{Path: path, Version: v, Output: OutPNG}); ok && e.Err == nil {
		return e.Parts[0], st, v, nil
	}
	// Made here, a PNG takes a slot of the semaphore as conversions do.
	if err := s.sem.Acquire(ctx); err != nil {
		return nil, nil, v, err
	}
	limits := s.limits
	limits.Textures, limits.View = textures{s}, s.view
	b, d, err := outputs.TexturePNG(ctx, path, limits)
	s.sem.Release()
	switch {
	case err != nil && (errors.Is(err, os.ErrNotExist) || errors.Is(err, fs.ErrPermission)):
		return nil, nil, v, err
	case err != nil && errors.Is(err, context.Canceled):
		// The request was given up (interrupted): not the texture's
		// failure, so neither recorded nor EIO.
		return nil, nil, v, err
	case err != nil:
		// Listed in .meshfs/errors.txt, and beside the texture as
		// NAME.EXT.error.txt in place of its PNG (TextureFailure).
		s.failed.Note(path, v, false, err)
		return nil, nil, v, &failures.ConvError{Err: err}
	case d.Ident != read.Ident:
		return nil, nil, v, syscall.ESTALE // changed since the stat
	}
	return b, st, v, nil
}

// TextureFailure returns the error of the PNG of the texture at path as
// it is now (stat st), when making it failed: "" when it did not, or is
// not known to.
func (s *Store) TextureFailure(path string, st *syscall.Stat_t) string {
	msg, _ := s.failed.Of(path, source.FromStat(st))
	return msg
}

// outScanLive is the memory cache output of a scan made to load a chunk of
// a persisted scan (labelled as a scan).
const outScanLive = "scan-live"

// Conversion names the conversion a converted entry's bytes come from (its
// cache output) and which of that conversion's files it is.
func Conversion(e outputs.Entry) (output string, part int) {
	switch e.Output {
	case outputs.OutOBJ:
		return OutOBJ, e.Part
	case outputs.OutAnimated:
		return OutAnimated, 0
	case outputs.OutPreview:
		return OutPreview, 0
	}
	return OutGLB, e.Part
}

// Content returns the bytes of entry e of m's folder for version v, or of
// the file chunk under chunks/ when chunk is set: header.json (carrying a
// conversion's failure), error.txt (os.ErrNotExist when nothing fails), a
// conversion's file, or a chunk's bytes (raw instead for a chunk read from
// the source itself). A conversion's failure is a *failures.ConvError.
func (s *Store) Content(ctx context.Context, m *outputs.Mesh, v source.Version, e outputs.Entry, chunk string) (data []byte, raw *decode.Chunk, err error) {
	switch {
	case chunk != "":
		r, err := s.Scan(ctx, m, v)
		if err != nil {
			return nil, nil, err
		}
		data, raw, err := s.chunkData(ctx, m, v, r, chunk)
		// A request given up (interrupted: its context cancelled while
		// the chunk loads or waits for a load) is no conversion failure:
		// its error stays the context's (EINTR, which the caller
		// retries, not EIO), as the geometry outputs' does.
		if err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, context.Canceled) {
			err = &failures.ConvError{Err: err}
		}
		return data, raw, err
	case e.Converted():
		output, part := Conversion(e)
		g, err := s.geometry(ctx, m, v, output)
		if err != nil {
			return nil, nil, err
		}
		if g.Err != nil {
			if output == OutPreview {
				// Its fixed length may have been told: blank, not EIO.
				if b, err := m.BlankPreview(); err == nil {
					return b, nil, nil
				}
			}
			return nil, nil, &failures.ConvError{Err: g.Err}
		}
		if output == OutPreview {
			// Kept compact; the file is padded to its fixed length.
			b, err := m.PaddedPreview(g.Part(part))
			if err != nil {
				return nil, nil, &failures.ConvError{Err: err}
			}
			return b, nil, nil
		}
		return g.Part(part), nil, nil
	case e.Output == outputs.OutError:
		b, err := s.errorText(ctx, m, v)
		if err == nil && len(b) == 0 {
			err = os.ErrNotExist
		}
		return b, nil, err
	}
	r, err := s.Scan(ctx, m, v)
	if err != nil {
		return nil, nil, err
	}
	if data, err = r.headerData(); err != nil {
		return nil, nil, err
	}
	if ferr, scan := s.failure(m, v, r); ferr != nil && !scan {
		data = outputs.HeaderWithError(data, ferr)
	}
	return data, nil, nil
}

// convertedSize is the size of converted entry e of m's folder for version
// v when it is known without converting: from the disk cache's index when
// memory does not hold the conversion, from memory when fromMemory. (A
// preview's is told by previewSize instead.)
func (s *Store) convertedSize(m *outputs.Mesh, v source.Version, e outputs.Entry, fromMemory bool) (int64, bool) {
	output, part := Conversion(e)
	key := keyOf(m, v, output)
	if got, inMem := s.cache.Peek(key); inMem {
		if fromMemory && got.Err == nil {
			return int64(len(got.Part(part))), true
		}
		return 0, false
	}
	if sizes, ok := s.disk.Sizes(key); ok && part < len(sizes) {
		return sizes[part], true
	}
	return 0, false
}

// previewSize is the size of NAME.preview.png of version v, its fixed
// length (outputs.Mesh.PreviewLen), told without drawing it while the
// folder holds it as far as the scan and the caches know: not when the
// scan failed or a conversion of v is known to have (knownBroken: the
// folder holds none), nor when the length is over the output limit (its
// conversion fails, at once). Then false: the size is the conversion's
// to tell (its error). It is told after a scan, as header.json's is, so
// that the files the preview is drawn from narrow its permissions.
func (s *Store) previewSize(ctx context.Context, m *outputs.Mesh, v source.Version) (int64, bool) {
	if e, ok := s.cache.Peek(keyOf(m, v, OutPreview)); ok && e.Err != nil {
		return 0, false
	}
	if n := m.Limits.MaxOutputSize; n > 0 && m.PreviewLen() > n {
		return 0, false
	}
	r, err := s.Scan(ctx, m, v)
	if err != nil || s.knownBroken(m, v, r) {
		return 0, false
	}
	return m.PreviewLen(), true
}

// Prewarm starts the pre-warmer, once: it converts every mesh under the
// source in the background (sniff returns the format of the source file at
// path, stat st, or nil); Close stops it. Its progress is Stats' Prewarm.
func (s *Store) Prewarm(sniff func(path string, st *syscall.Stat_t) decode.Format) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.warm == nil {
		s.warm = startWarmer(warmConfig{Tree: s.tree, View: s.view, Sniff: sniff, Outputs: s.warmOutputs, Activity: s.activity, Log: s.log})
	}
}

// warmer is the pre-warmer, or nil.
func (s *Store) warmer() *Warmer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.warm
}

// warmOutputs are the outputs the pre-warmer makes of the mesh at path.
func (s *Store) warmOutputs(path string, format decode.Format, st *syscall.Stat_t) ([]string, func(string) bool, func(context.Context, string) error) {
	m := s.NewMesh(path, format)
	fp := s.versions.Version(path, source.FromStat(st))
	var outs []string
	for _, out := range conversions() {
		if out != OutPreview || m.HasPreview() {
			outs = append(outs, out)
		}
	}
	cached := func(out string) bool {
		if _, ok := s.cache.Peek(keyOf(m, fp, out)); ok {
			return true
		}
		_, ok := s.disk.Sizes(keyOf(m, fp, out))
		return ok
	}
	convert := func(ctx context.Context, out string) error {
		e, err := s.geometry(ctx, m, fp, out)
		if err == nil && e.Err != nil {
			err = e.Err
		}
		return err
	}
	return outs, cached, convert
}

// Touch records a reader's request: the store's background work (big
// saves, the pre-warmer) stands aside while readers are active.
func (s *Store) Touch() { s.activity.Touch() }

// Close stops the pre-warmer, lets the saves waiting for a quiet moment go
// ahead, waits for every save and frees the memory cache. The caller
// closes the disk cache after.
func (s *Store) Close() {
	if w := s.warmer(); w != nil {
		w.halt()
	}
	s.disk.Close()
	s.cache.Close()
}
