package fs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/fs/cache"
	"github.com/meshfs/meshfs/internal/srcfile"
)

// Cache output names (the last part of a statistics label).
const (
	outScan  = "scan"
	outGLB   = "glb"
	outOBJ   = "obj" // NAME.obj and NAME.mtl, made by one export
	outChunk = "chunk"
	// outAnimated is NAME.animated.glb; outAnims the animation files it
	// attaches (the listing's State.Animated).
	outAnimated = "animated"
	outAnims    = "anims"
)

// meshDir is a source mesh file shown as a folder of its outputs. Listing it
// and reading header.json or chunks/ use the structure scan only; the
// geometry outputs are converted on their first stat or open.
type meshDir struct {
	roDir
	fsys   *FS
	parent *dirNode
	abs    string
	ident  srcID
	mesh   *outputs.Mesh
	// recent is the source's last stat, which the requests of one burst
	// (a walker's lookup, listing, READDIRPLUS of 4 outputs and chunks/)
	// share instead of stat'ing the source ≈ 6 times (sourceStat).
	recent atomic.Pointer[recentStat]
}

// recentStat is a stat of a mesh folder's source, taken at nanotime at
// while the parent folder's change count was gen.
type recentStat struct {
	st  syscall.Stat_t
	at  int64
	gen uint64
}

// statReuse is how long a source stat stands for the next requests. Only
// while the source folder is watched, so a change within it is also pushed
// to the kernel: the reuse only spares the stats of
// requests already on their way, it does not delay a change. Any change the
// watcher reports in the folder bumps its change count: a stat taken before
// the bump (so possibly before the change) is never reused after it.
const statReuse = 200 * time.Millisecond

// sourceStat stats the source, or reuses a stat taken within statReuse.
func (m *meshDir) sourceStat() (*syscall.Stat_t, error) {
	reuse := m.parent.watched.Load() && !m.parent.unwatched.Load()
	gen := m.parent.changes.Load()
	now := time.Now().UnixNano()
	if reuse {
		if r := m.recent.Load(); r != nil && r.gen == gen && now-r.at >= 0 && now-r.at < int64(statReuse) {
			st := r.st
			return &st, nil
		}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(m.abs, &st); err != nil {
		return nil, err
	}
	narrowAccess(m.mesh, &st, m.fsys.depPaths(m.abs))
	if reuse {
		m.remember(&st, gen, now)
	}
	return &st, nil
}

// narrowAccess sets the permission bits of st, the stat of mesh's source
// file, to those its folder and outputs show: the source's, narrowed by
// every file the outputs are made from (outputs.Narrow): its companions,
// and deps, the material files and textures its last scan found (deps.go),
// so that nobody reads through an output what they could not read from its
// sources (each stat'ed as outputs.StatAccess does).
func narrowAccess(mesh *outputs.Mesh, st *syscall.Stat_t, deps []string) {
	srcs := append(mesh.Sources(), deps...)
	if len(srcs) < 2 {
		return
	}
	files := outputs.StatAccess([]outputs.Access{{Uid: st.Uid, Gid: st.Gid, Perm: st.Mode}}, srcs[1:]...)
	st.Mode = st.Mode&^0o777 | outputs.Narrow(files...).Perm
}

// remember keeps st (narrowed by narrowAccess), taken at now while the
// parent folder's change count was gen, for sourceStat.
func (m *meshDir) remember(st *syscall.Stat_t, gen uint64, now int64) {
	m.recent.Store(&recentStat{st: *st, at: now, gen: gen})
}

var (
	_ = (gofs.NodeLookuper)((*meshDir)(nil))
	_ = (gofs.NodeReaddirer)((*meshDir)(nil))
	_ = (gofs.NodeGetattrer)((*meshDir)(nil))
)

func (m *meshDir) id() srcID { return m.ident }

func (m *meshDir) label(output string) string { return m.mesh.Format.Name() + "/" + output }

// stat returns the source's stat and fingerprint now.
func (m *meshDir) stat() (*syscall.Stat_t, cache.Fingerprint, error) {
	st, err := m.sourceStat()
	if err != nil {
		return nil, cache.Fingerprint{}, err
	}
	if uint64(st.Dev) != m.ident.dev || st.Ino != m.ident.ino {
		// The source was replaced (a new file renamed over it, or deleted
		// and written again). This node and its outputs' inodes stand for
		// the old file, whose readers may still hold handles of its size:
		// the kernel keeps one size per inode, so serving the new file
		// here would cut their reads short (and fault their mappings).
		// ESTALE makes the kernel look the name up again, which gives the
		// new file fresh nodes.
		return nil, cache.Fingerprint{}, syscall.ESTALE
	}
	fp := cache.FromStat(st)
	fp.Gen = m.parent.companionGen.Load() + m.fsys.depGen(m.abs)
	return st, fp, nil
}

func (m *meshDir) key(fp cache.Fingerprint, output string) cache.Key {
	return cache.Key{Path: m.abs, FP: fp, Output: output}
}

func (m *meshDir) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	// No identity check (m.stat's ESTALE): a folder has no size to go
	// stale, and a reader holding the old folder open (grep -r, find)
	// fstats it and could not recover from ESTALE.
	st, err := m.sourceStat()
	if err != nil {
		return errno(err)
	}
	fillDirAttr(&out.Attr, st)
	m.fsys.shortTTL(m.parent, nil, out)
	return 0
}

// scanResult is a cached structure scan of one source version, fresh or
// persisted in the disk cache by an earlier mount (scanindex.go).
type scanResult struct {
	st      *decode.Structure
	scanErr error
	hdrErr  error
	// header is header.json's bytes; use headerData, which reads those of
	// a persisted scan on demand (hdrLoad, hdrSize) the first time.
	header  []byte
	hdrMu   sync.Mutex
	hdrLoad func() ([]byte, error)
	hdrSize int64
	disk    bool // persisted by an earlier mount
	// chunks are the names under chunks/, unique, in the order of the scan;
	// chunkIdx picks the chunk a name shows (the last of that name, as
	// `convert` would have overwritten the earlier ones).
	chunks   []string
	chunkIdx map[string]int
}

// persisted reports whether r came from the disk cache's index.
func (r *scanResult) persisted() bool { return r.disk }

// headerData returns header.json's bytes, or the error rendering it gave.
func (r *scanResult) headerData() ([]byte, error) {
	if r.hdrErr != nil {
		return nil, r.hdrErr
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

// headerSize is header.json's size, known without reading it.
func (r *scanResult) headerSize() int64 {
	r.hdrMu.Lock()
	defer r.hdrMu.Unlock()
	if r.hdrLoad != nil {
		return r.hdrSize
	}
	return int64(len(r.header))
}

func (r *scanResult) chunk(name string) (*decode.Chunk, bool) {
	i, ok := r.chunkIdx[name]
	if !ok {
		return nil, false
	}
	return &r.st.Chunks[i], true
}

// scan returns the structure scan of source version fp: from memory, else
// from the disk cache's index (an earlier mount's scan of this very
// version: counted as a disk load, "fmt/scan" in disk_loads), else scanned
// now and persisted on the way.
func (m *meshDir) scan(ctx context.Context, fp cache.Fingerprint) (*scanResult, error) {
	return m.scanAnd(ctx, fp, nil)
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
func (m *meshDir) scanAnd(ctx context.Context, fp cache.Fingerprint, sc *oneScene) (*scanResult, error) {
	key, label := m.key(fp, outScan), m.label(outScan)
	var rec *scanRecord
	if _, ok := m.fsys.cache.Peek(key); !ok {
		if rec = m.fsys.scanRecordOf(key); rec != nil {
			label += diskSuffix
		}
	}
	e, err := m.fsys.cache.Get(ctx, key, label, func(ctx context.Context) (*cache.Entry, error) {
		if rec != nil {
			r := m.fromRecord(fp, rec)
			// Header bytes not in memory yet: weigh them in anyway.
			aux := 512 + rec.hdrSize
			for _, n := range r.chunks {
				aux += 128 + int64(len(n))
			}
			return &cache.Entry{Aux: r, AuxWeight: aux}, nil
		}
		var st *decode.Structure
		var scanErr error
		if sc != nil {
			if err := m.fsys.sem.Acquire(ctx); err != nil {
				return nil, err
			}
			start := time.Now()
			endGC := m.fsys.gc.begin(fp.Size)
			s, scene, ok := m.mesh.ScanDecode(ctx)
			endGC()
			m.fsys.sem.Release()
			if ok {
				st, sc.scene, sc.took = s, scene, time.Since(start)
				m.fsys.onePass.Add(1)
			}
		}
		if st == nil {
			st, scanErr = m.mesh.Scan(ctx)
		}
		if st == nil && errors.Is(scanErr, os.ErrNotExist) {
			return nil, scanErr // gone: nothing to cache
		}
		hdr, deps, hdrErr := m.mesh.HeaderDeps(st, scanErr)
		m.fsys.trackDeps(m.abs, deps)
		r := &scanResult{st: st, scanErr: scanErr, hdrErr: hdrErr, header: hdr, chunkIdx: map[string]int{}}
		aux := int64(512)
		if st != nil {
			for i := range st.Chunks {
				name := decode.SafeName(st.Chunks[i].Name)
				if _, dup := r.chunkIdx[name]; !dup {
					r.chunks = append(r.chunks, name)
				}
				r.chunkIdx[name] = i
				aux += 128 + int64(len(name))
			}
		}
		if scanErr != nil {
			m.fsys.logOnce(m.key(fp, "scan-error"), "meshfs: %v", scanErr)
		}
		m.fsys.saveScan(key, r)
		return &cache.Entry{Parts: [][]byte{hdr}, Aux: r, AuxWeight: aux}, nil
	})
	if err != nil {
		return nil, err
	}
	r := e.Aux.(*scanResult)
	if r.scanErr != nil {
		m.fsys.failed.note(m.abs, fp, true, r.scanErr)
	} else if r.hdrErr != nil {
		m.fsys.failed.note(m.abs, fp, true, r.hdrErr)
	}
	return r, nil
}

// geometry returns the cached entry of a geometry output (outGLB: one part;
// outOBJ: the obj and the mtl), converting on a miss. A failed conversion is
// an entry with Err.
func (m *meshDir) geometry(ctx context.Context, fp cache.Fingerprint, output string) (*cache.Entry, error) {
	key, label := m.key(fp, output), m.label(output)
	if e, ok := m.fsys.cache.Use(key); ok {
		// Converted (or failed) already and still in memory: the scan
		// that a conversion needs is not needed.
		return e, nil
	}
	// An output in the disk cache was converted from this very source
	// version (so its scan succeeded): load it instead of converting. So
	// is a conversion that failed: its error comes back without a retry.
	sizes, onDisk := m.fsys.diskSizes(key)
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
		diskErr, onDisk = m.fsys.diskFailure(key)
	}
	var sc *oneScene
	if onDisk {
		label += diskSuffix
	} else {
		if output == outGLB && m.mesh.CanScanDecode() {
			// One pass only for a conversion to come: a .glb in memory
			// whose scan was evicted wants the scan alone.
			if _, inMem := m.fsys.cache.Peek(key); !inMem {
				sc = &oneScene{}
			}
		}
		r, err := m.scanAnd(ctx, fp, sc)
		if err != nil {
			return nil, err
		}
		if r.scanErr != nil {
			// `convert` does not decode a file whose structure is broken.
			return &cache.Entry{Err: r.scanErr}, nil
		}
	}
	var failed atomic.Bool
	e, err := m.fsys.cache.GetSized(ctx, key, label, max(hint, 1), func(ctx context.Context) (*cache.Entry, error) {
		if diskErr != nil {
			// Listings already show error.txt (knownBroken): no notice.
			return &cache.Entry{Err: diskErr}, nil
		}
		if onDisk {
			if e := m.fsys.loadFromDisk(key); e != nil {
				return e, nil
			}
			// Damaged or evicted since: convert after all.
			m.fsys.countDiskFallback(m.label(output))
		}
		// Bounded concurrency: waiters share this load, others queue here.
		if err := m.fsys.sem.Acquire(ctx); err != nil {
			return nil, err
		}
		defer m.fsys.sem.Release()
		defer m.fsys.gc.begin(fp.Size)()
		start := time.Now()
		var e *cache.Entry
		var err error
		switch output {
		case outGLB:
			var b []byte
			if sc != nil && sc.scene != nil {
				b, err = m.mesh.GLBOf(sc.scene)
				sc.scene, start = nil, start.Add(-sc.took)
				e = &cache.Entry{Parts: [][]byte{b}}
			} else {
				var parts [][]byte
				parts, err = m.mesh.GLBFiles(ctx)
				e = &cache.Entry{Parts: parts}
			}
		case outOBJ:
			var o, l []byte
			o, l, err = m.mesh.OBJFiles(ctx)
			e = &cache.Entry{Parts: [][]byte{o, l}}
		case outAnimated:
			var b []byte
			b, err = m.mesh.AnimatedGLBFile(ctx)
			e = &cache.Entry{Parts: [][]byte{b}}
		}
		m.fsys.recordConversion(time.Since(start))
		// The reader who asked reads the output next: the quiet that a
		// big disk-cache save (and the pre-warmer) wait for starts now,
		// not when the request that converted began.
		if !isPrewarm(ctx) {
			m.fsys.touch()
		}
		if !errors.Is(err, os.ErrNotExist) && !stillSource(key) {
			// Changed while it was read: these bytes may be of another
			// version, or of two. Not cached; the reader gets ESTALE.
			return nil, syscall.ESTALE
		}
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
			m.fsys.logOnce(m.key(fp, "error:"+err.Error()), "meshfs: %v", err)
			e = &cache.Entry{Err: err}
			failed.Store(true)
		}
		// Passthrough opens (passthrough.go) wait for this save: the
		// opens before it is done read from the daemon, which for a first
		// read is faster than writing the disk-cache file first.
		m.fsys.saveToDisk(key, e)
		return e, nil
	})
	if err == nil && e.Err != nil {
		m.fsys.failed.note(m.abs, fp, false, e.Err)
	}
	if failed.Load() {
		m.brokenNow()
	}
	return e, err
}

// brokenNow tells the kernel that the folder changed shape (a conversion
// just failed and its failure is cached): error.txt is in it, the geometry
// outputs are not, and header.json carries the error. The kernel may keep
// a listing of this folder made before (always, under no_opendir),
// entries for those names and header.json's size and pages. m may be a
// node the kernel never saw (the pre-warmer's): the node it knows under
// the mesh's name is notified, if any.
//
// The listing is dropped before returning, so that the reader who saw the
// failure sees error.txt when it lists next; its invalidation takes no lock
// a request here could hold (LOOKUP holds the folder's, READ a page of
// another inode) but, should one ever wait, the request goes on after
// notifyWait and the notification completes beside it. The names' entry
// invalidations lock the folder, which a LOOKUP in it holds: beside.
func (m *meshDir) brokenNow() {
	if m.parent == nil {
		return
	}
	ch := m.parent.GetChild(filepath.Base(m.abs))
	if ch == nil {
		return
	}
	live, ok := ch.Operations().(*meshDir)
	if !ok {
		return
	}
	done := make(chan struct{})
	go func() {
		m.fsys.notifyContent(&live.Inode)
		close(done)
		if hdr := live.GetChild(outputs.HeaderName); hdr != nil {
			m.fsys.notifyContent(hdr)
		}
		for _, e := range live.mesh.Entries() {
			if e.Converted() || e.Output == outputs.OutError {
				m.fsys.notifies.Add(1)
				live.NotifyEntry(e.Name)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(notifyWait):
	}
}

// notifyWait bounds how long a request waits for a notification it sent.
const notifyWait = 100 * time.Millisecond

// chunkData returns a loaded chunk's bytes, or (nil, c) for a raw chunk,
// which is read from the source file itself.
func (m *meshDir) chunkData(ctx context.Context, fp cache.Fingerprint, r *scanResult, name string) ([]byte, *decode.Chunk, error) {
	c, ok := r.chunk(name)
	if !ok {
		return nil, nil, os.ErrNotExist
	}
	if err := m.mesh.CheckChunk(c); err != nil {
		// Over a limit: `convert` writes no file for it either.
		m.fsys.logOnce(m.key(fp, "chunk:"+name), "meshfs: %s: %v", m.abs, err)
		return nil, nil, err
	}
	if c.Load == nil {
		if c.Offset < 0 || c.Length < 0 || c.Offset > fp.Size || c.Length > fp.Size-c.Offset {
			// Get the error `convert` reports for this chunk.
			_, err := m.mesh.ChunkBytes(c)
			if err == nil {
				err = errors.New("chunk " + name + " lies outside the file")
			}
			return nil, nil, err
		}
		return nil, c, nil
	}
	e, err := m.fsys.cache.GetSized(ctx, m.key(fp, outChunk+"/"+name), m.label(outChunk), c.Size, func(ctx context.Context) (*cache.Entry, error) {
		b, err := m.mesh.ChunkBytes(c)
		if err != nil {
			m.fsys.logOnce(m.key(fp, "chunk:"+name), "meshfs: %s: %v", m.abs, err)
			return &cache.Entry{Err: err}, nil
		}
		return &cache.Entry{Parts: [][]byte{b}}, nil
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
func (m *meshDir) errorText(ctx context.Context, fp cache.Fingerprint) ([]byte, error) {
	r, err := m.scan(ctx, fp)
	if err != nil {
		return nil, err
	}
	var errs []error
	if r.scanErr != nil {
		errs = append(errs, r.scanErr)
	}
	if r.hdrErr != nil {
		errs = append(errs, r.hdrErr)
	}
	if r.st != nil {
		for i := range r.st.Chunks {
			c := &r.st.Chunks[i]
			if idx := r.chunkIdx[decode.SafeName(c.Name)]; idx != i {
				// Shadowed by a later chunk of the same name: `convert`
				// still loads it, and so reports its error.
				if _, err := m.mesh.ChunkBytes(c); err != nil {
					errs = append(errs, err)
				}
				continue
			}
			if _, _, err := m.chunkData(ctx, fp, r, decode.SafeName(c.Name)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if r.scanErr == nil {
		g, err := m.geometry(ctx, fp, outGLB)
		if err != nil {
			return nil, err
		}
		o, err := m.geometry(ctx, fp, outOBJ)
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
	}
	return outputs.ErrorText(errs...), nil
}

// failure returns what broke source version fp of the mesh (scan r), as
// far as is known without converting anything: the scan's or header's
// error (scan true), else a conversion that failed in this mount or, for
// this version, in an earlier one. nil: nothing known to fail. A failure
// found is entered in the mount's failure list (.meshfs/errors.txt).
func (m *meshDir) failure(fp cache.Fingerprint, r *scanResult) (err error, scan bool) {
	switch {
	case r.scanErr != nil:
		err, scan = r.scanErr, true
	case r.hdrErr != nil:
		err, scan = r.hdrErr, true
	default:
		for _, out := range []string{outGLB, outOBJ} {
			key := m.key(fp, out)
			if e, ok := m.fsys.cache.Peek(key); ok {
				err = e.Err
			} else {
				err, _ = m.fsys.diskFailure(key)
			}
			if err != nil {
				break
			}
		}
	}
	if err != nil {
		m.fsys.failed.note(m.abs, fp, scan, err)
	}
	return err, scan
}

// knownBroken reports whether the folder of version fp is broken (the
// folder table's rule: error.txt listed, no geometry outputs), as far as is
// known without converting anything.
func (m *meshDir) knownBroken(fp cache.Fingerprint, r *scanResult) bool {
	err, _ := m.failure(fp, r)
	return err != nil
}

// replaced turns the ESTALE of a replaced source into what a folder that
// was deleted while open answers: nothing in it (ENOENT). A reader that
// walks by path gets ESTALE from an output instead, and the kernel walks
// again to the new file; one that holds this folder open (grep -r, find)
// would have no way to recover from ESTALE.
func replaced(e syscall.Errno) syscall.Errno {
	if e == syscall.ESTALE {
		return syscall.ENOENT
	}
	return e
}

func (m *meshDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	m.fsys.touch()
	list, _, _, e := m.listing(ctx)
	if e != 0 {
		return nil, e
	}
	return gofs.NewListDirStream(list), 0
}

// listing is the folder's entries, and whether they are final for this
// source version: error.txt is listed once a conversion is known to fail,
// so the listing is final when error.txt is listed or when both geometry
// outputs are known to have converted (in memory or in the disk cache).
func (m *meshDir) listing(ctx context.Context) ([]fuse.DirEntry, bool, *listedScan, syscall.Errno) {
	st, fp, err := m.stat()
	if errors.Is(err, syscall.ESTALE) {
		return nil, false, nil, 0
	}
	if err != nil {
		return nil, false, nil, errno(err)
	}
	_, warm := m.fsys.cache.Peek(m.key(fp, outScan))
	r, err := m.scan(ctx, fp)
	if err != nil {
		return nil, false, nil, errno(err)
	}
	snap := &listedScan{st: st, fp: fp, r: r}
	if !warm {
		// A walker is probably entering this folder's siblings next.
		m.fsys.scanSiblings(m)
	}
	broken := m.knownBroken(fp, r)
	animated := !broken && r.scanErr == nil && m.animated(ctx, fp)
	files := m.mesh.Files(outputs.State{Chunks: len(r.chunks) > 0, Broken: broken, Animated: animated})
	list := make([]fuse.DirEntry, len(files))
	for i, e := range files {
		mode := uint32(syscall.S_IFREG)
		if e.Dir {
			mode = syscall.S_IFDIR
		}
		list[i] = fuse.DirEntry{Name: e.Name, Mode: mode, Ino: e.Ino}
	}
	return list, broken || (m.converted(fp, outGLB) && m.converted(fp, outOBJ)), snap, 0
}

// listedScan is what a listing was made from: the source's stat and the
// scan of that version. The READDIRPLUS lookups that follow the listing in
// the same request answer from it instead of stat'ing and looking the scan
// up again for every entry (chunks/ has one entry per chunk).
type listedScan struct {
	st *syscall.Stat_t
	fp cache.Fingerprint
	r  *scanResult
	// header is header.json's node when the lookups answered it.
	header *gofs.Inode
}

// converted reports whether output converted without error for fp, as far
// as the caches know.
func (m *meshDir) converted(fp cache.Fingerprint, output string) bool {
	key := m.key(fp, output)
	if e, ok := m.fsys.cache.Peek(key); ok {
		return e.Err == nil
	}
	// diskSizes knows successful conversions only (not failure records).
	_, ok := m.fsys.diskSizes(key)
	return ok
}

// noNegative is the entry timeout of an ENOENT the kernel must not keep
// (go-fuse then answers the error itself, which the kernel never caches).
const noNegative = time.Nanosecond

// outKindOf maps an entry of the folder table to the node kind serving it.
func outKindOf(e outputs.Entry) outKind {
	switch {
	case e.Output == outputs.OutGLB:
		return kGLB
	case e.Output == outputs.OutAnimated:
		return kAnimated
	case e.Output == outputs.OutOBJ && e.Part == 1:
		return kMTL
	case e.Output == outputs.OutOBJ:
		return kOBJ
	case e.Output == outputs.OutError:
		return kError
	}
	return kHeader
}

// geometryGone reports whether the geometry outputs are not in the folder
// of the source's present version because it is known broken (lookups of
// their names answer ENOENT, as the listing shows). Errors are left to the
// output's own lookup.
func (m *meshDir) geometryGone(ctx context.Context) bool {
	_, fp, err := m.stat()
	if err != nil {
		return false
	}
	if _, ok := m.fsys.cache.Peek(m.key(fp, outScan)); !ok && !m.failedOnDisk(fp) {
		// Nothing known: the lookup's conversion will tell. A scan made
		// here would be made apart from that conversion's decoding,
		// which makes it in one pass where it can (scanAnd).
		return false
	}
	r, err := m.scan(ctx, fp)
	return err == nil && m.knownBroken(fp, r)
}

// failedOnDisk reports whether the disk cache records a failure of version
// fp: a scan's, or a conversion's.
func (m *meshDir) failedOnDisk(fp cache.Fingerprint) bool {
	if m.fsys.disk == nil {
		return false
	}
	for _, out := range []string{outGLB, outOBJ} {
		if _, failed := m.fsys.diskFailure(m.key(fp, out)); failed {
			return true
		}
	}
	rec := m.fsys.scanRecordOf(m.key(fp, outScan))
	return rec != nil && (rec.hasScanErr || rec.hasHdrErr)
}

func (m *meshDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	m.fsys.touch()
	e, ok := m.mesh.Entry(name)
	if !ok {
		return nil, syscall.ENOENT
	}
	if e.Converted() && m.geometryGone(ctx) {
		// Not kept by the kernel as a negative entry: the folder gets its
		// geometry back as soon as a fixed source converts, and no event
		// may come to drop such an entry.
		out.SetEntryTimeout(noNegative)
		return nil, syscall.ENOENT
	}
	if e.Output == outputs.OutAnimated && !m.animatedNow(ctx) {
		// Not kept as a negative entry: an animation file may come.
		out.SetEntryTimeout(noNegative)
		return nil, syscall.ENOENT
	}
	if e.Output == outputs.OutChunks {
		st, fp, err := m.stat()
		if err != nil {
			return nil, replaced(errno(err))
		}
		r, err := m.scan(ctx, fp)
		if err != nil {
			return nil, errno(err)
		}
		if len(r.chunks) == 0 {
			return nil, syscall.ENOENT
		}
		fillDirAttr(&out.Attr, st)
		m.fsys.shortTTL(m.parent, out, nil)
		if ch := m.GetChild(name); ch != nil {
			return ch, 0
		}
		return m.NewInode(ctx, &chunksDir{m: m}, gofs.StableAttr{Mode: syscall.S_IFDIR}), 0
	}
	ch, en := lookupOutput(ctx, &m.Inode, name, &outFile{m: m, kind: outKindOf(e), ent: e}, out, false)
	m.fsys.shortTTL(m.parent, out, nil)
	return ch, replaced(en)
}

// lookupOutput sizes an output (converting it if need be, unless cheapOnly:
// then a geometry output whose size is not known yet answers notCheap) and
// returns its node, reusing the existing one.
func lookupOutput(ctx context.Context, parent *gofs.Inode, name string, f *outFile, out *fuse.EntryOut, cheapOnly bool) (*gofs.Inode, syscall.Errno) {
	fresh := f
	ch, f := outputChild(parent, name, f)
	if ch != nil && f.m.fsys.noOpen() {
		if _, fp, err := f.m.stat(); err == nil && !f.mayTell(fp) {
			// The node stands for another version of the source.
			ch, f = nil, fresh
		}
	}
	if ch != nil && f.kind == kGLB {
		if _, fp, err := f.m.stat(); err == nil && f.pass.busyOther(fp) {
			// Its inode is passed through to another version's file
			// and still open: this version needs an inode of its own.
			ch, f = nil, &outFile{m: f.m, kind: kGLB, ent: f.ent}
		}
	}
	var a fuse.AttrOut
	e := f.getattr(ctx, &a, cheapOnly)
	if e == syscall.ESTALE && ch != nil && f.m.fsys.noOpen() {
		// Changed since the check above: a node for this version.
		ch, f = nil, fresh
		e = f.getattr(ctx, &a, cheapOnly)
	}
	if e != 0 {
		return nil, e
	}
	out.Attr = a.Attr
	if ch != nil {
		return ch, 0
	}
	return parent.NewInode(ctx, f, gofs.StableAttr{Mode: syscall.S_IFREG}), 0
}

// outputChild returns parent's existing output node called name and its
// outFile, or (nil, f) when there is none.
func outputChild(parent *gofs.Inode, name string, f *outFile) (*gofs.Inode, *outFile) {
	if ch := parent.GetChild(name); ch != nil {
		if of, ok := ch.Operations().(*outFile); ok {
			return ch, of
		}
	}
	return nil, f
}

// lookupKnown is lookupOutput for an output other than the .glb whose
// size the caller knows for source version fp (stat st).
func lookupKnown(ctx context.Context, parent *gofs.Inode, name string, f *outFile, out *fuse.EntryOut, st *syscall.Stat_t, fp cache.Fingerprint, size int64) *gofs.Inode {
	fresh := f
	ch, f := outputChild(parent, name, f)
	fillFileAttr(&out.Attr, st, size)
	if !f.tell(fp) {
		// The node stands for another version of the source.
		ch, f = nil, fresh
		f.tell(fp)
	}
	if ch != nil {
		return ch
	}
	return parent.NewInode(ctx, f, gofs.StableAttr{Mode: syscall.S_IFREG})
}

// chunksDir is chunks/ of a mesh folder.
type chunksDir struct {
	roDir
	m *meshDir
}

var (
	_ = (gofs.NodeLookuper)((*chunksDir)(nil))
	_ = (gofs.NodeReaddirer)((*chunksDir)(nil))
	_ = (gofs.NodeGetattrer)((*chunksDir)(nil))
)

func (c *chunksDir) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	return c.m.Getattr(ctx, fh, out)
}

func (c *chunksDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	list, _, e := c.listing(ctx)
	if e != 0 {
		return nil, e
	}
	return gofs.NewListDirStream(list), 0
}

func (c *chunksDir) listing(ctx context.Context) ([]fuse.DirEntry, *listedScan, syscall.Errno) {
	st, fp, err := c.m.stat()
	if errors.Is(err, syscall.ESTALE) {
		return nil, nil, 0
	}
	if err != nil {
		return nil, nil, errno(err)
	}
	r, err := c.m.scan(ctx, fp)
	if err != nil {
		return nil, nil, errno(err)
	}
	list := make([]fuse.DirEntry, len(r.chunks))
	for i, n := range r.chunks {
		list[i] = fuse.DirEntry{Name: n, Mode: syscall.S_IFREG, Ino: uint64(i + 1)}
	}
	return list, &listedScan{st: st, fp: fp, r: r}, 0
}

func (c *chunksDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	ch, e := lookupOutput(ctx, &c.Inode, name, &outFile{m: c.m, kind: kChunk, chunk: name}, out, false)
	c.m.fsys.shortTTL(c.m.parent, out, nil)
	return ch, replaced(e)
}

type outKind int

const (
	kHeader outKind = iota
	kError
	kGLB
	kOBJ
	kMTL
	kChunk
	kAnimated // NAME.animated.glb
)

// outFile is one output file of a mesh.
type outFile struct {
	roNode
	m     *meshDir
	kind  outKind
	chunk string
	ent   outputs.Entry // its entry in the folder table (not for chunks)

	// What the kernel was last told: the fingerprint whose size it holds
	// (attr) and whose bytes may be in its page cache (pages). Under
	// no_open the node stands for the version of the first size told
	// (tell): the kernel keeps one page cache per node, shared by every
	// reader, so a node never serves two versions.
	mu        sync.Mutex
	attrFP    cache.Fingerprint
	pagesFP   cache.Fingerprint
	pagesSeen bool

	pass passState // passthrough of the .glb (passthrough.go)
}

var (
	_ = (gofs.NodeOpener)((*outFile)(nil))
	_ = (gofs.NodeGetattrer)((*outFile)(nil))
	_ = (gofs.NodeReader)((*outFile)(nil))
)

// conversion names the conversion a geometry output's bytes come from
// (its cache output) and which of that conversion's files it is: the
// folder table's Output and Part.
func (o *outFile) conversion() (output string, part int) {
	switch o.ent.Output {
	case outputs.OutOBJ:
		return outOBJ, o.ent.Part
	case outputs.OutAnimated:
		return outAnimated, 0
	}
	return outGLB, o.ent.Part
}

// produced is an output's content: bytes in memory, or a window of the
// source file (raw chunks).
type produced struct {
	st   *syscall.Stat_t
	fp   cache.Fingerprint
	data []byte
	raw  *decode.Chunk
}

func (p *produced) size() int64 {
	if p.raw != nil {
		return p.raw.Length
	}
	return int64(len(p.data))
}

// tell records that the kernel is told the size of source version fp, and
// reports whether it may be: under no_open a node told one version's size
// stands for that version only (a source overwritten in place keeps its
// inode, so the mesh folder and its outputs' names stay; the outputs get
// new nodes, see lookupOutput). With handles every open re-checks the
// version (opened), so any version may be told.
func (o *outFile) tell(fp cache.Fingerprint) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m.fsys.noOpen() && o.attrFP != (cache.Fingerprint{}) && o.attrFP != fp {
		return false
	}
	o.attrFP = fp
	return true
}

// mayTell reports whether tell(fp) would succeed, recording nothing.
func (o *outFile) mayTell(fp cache.Fingerprint) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.m.fsys.noOpen() || o.attrFP == (cache.Fingerprint{}) || o.attrFP == fp
}

func (o *outFile) produce(ctx context.Context) (*produced, error) {
	st, fp, err := o.m.stat()
	if err != nil {
		return nil, err
	}
	return o.produceAt(ctx, st, fp)
}

// produceAt is produce for source version fp (stat st), stat'ed just now.
func (o *outFile) produceAt(ctx context.Context, st *syscall.Stat_t, fp cache.Fingerprint) (*produced, error) {
	m := o.m
	p := &produced{st: st, fp: fp}
	switch o.kind {
	case kHeader:
		r, err := m.scan(ctx, fp)
		if err != nil {
			return nil, err
		}
		if p.data, err = r.headerData(); err != nil {
			return nil, err
		}
		if ferr, scan := m.failure(fp, r); ferr != nil && !scan {
			p.data = outputs.HeaderWithError(p.data, ferr)
		}
	case kError:
		b, err := m.errorText(ctx, fp)
		if err != nil {
			return nil, err
		}
		if len(b) == 0 {
			return nil, os.ErrNotExist
		}
		p.data = b
	case kGLB, kOBJ, kMTL, kAnimated:
		output, part := o.conversion()
		e, err := m.geometry(ctx, fp, output)
		if err != nil {
			return nil, err
		}
		if e.Err != nil {
			return nil, &convError{e.Err}
		}
		p.data = e.Part(part)
	case kChunk:
		r, err := m.scan(ctx, fp)
		if err != nil {
			return nil, err
		}
		data, raw, err := m.chunkData(ctx, fp, r, o.chunk)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
			return nil, &convError{err}
		}
		p.data, p.raw = data, raw
	}
	return p, nil
}

// convError marks a conversion failure: the reader gets EIO even when the
// underlying cause is, say, a missing sibling file.
type convError struct{ err error }

func (e *convError) Error() string { return e.err.Error() }

func outErrno(err error) syscall.Errno {
	var ce *convError
	if errors.As(err, &ce) {
		return syscall.EIO
	}
	return errno(err)
}

func (o *outFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	defer o.m.fsys.shortTTL(o.m.parent, nil, out)
	switch h := fh.(type) {
	case *bytesHandle:
		fillFileAttr(&out.Attr, h.st, int64(len(h.data)))
		return 0
	case *fdHandle:
		fillFileAttr(&out.Attr, h.st, h.length)
		return 0
	case *passHandle:
		fillFileAttr(&out.Attr, h.st, h.size)
		return 0
	}
	return o.getattr(ctx, out, false)
}

// getattr sizes the output without a handle; with cheapOnly, a geometry
// output converts nothing: its size comes from a conversion in memory or in
// the disk cache, else notCheap (plainLookup).
func (o *outFile) getattr(ctx context.Context, out *fuse.AttrOut, cheapOnly bool) syscall.Errno {
	o.m.fsys.touch()
	if o.ent.Converted() {
		// Sizes of outputs converted by an earlier mount come from the
		// disk cache's index: stat'ing (ls -l) converts nothing.
		st, fp, err := o.m.stat()
		if err != nil {
			return errno(err)
		}
		output, part := o.conversion()
		key := o.m.key(fp, output)
		size := int64(-1)
		if e, inMem := o.m.fsys.cache.Peek(key); !inMem {
			if sizes, ok := o.m.fsys.diskSizes(key); ok && part < len(sizes) {
				size = sizes[part]
			}
		} else if cheapOnly && e.Err == nil {
			// What produce would serve: this version's bytes.
			size = int64(len(e.Part(part)))
		}
		if size >= 0 {
			if !o.tell(fp) {
				return syscall.ESTALE
			}
			fillFileAttr(&out.Attr, st, size)
			return 0
		}
		if cheapOnly {
			return notCheap
		}
	}
	if o.kind == kHeader || o.kind == kChunk {
		// header.json's and chunks' sizes come from the scan: stat'ing
		// reads nothing more (a persisted scan's header stays on disk).
		st, fp, err := o.m.stat()
		if err != nil {
			return errno(err)
		}
		if size, ok := o.m.knownSize(ctx, fp, o.kind, o.chunk); ok {
			if !o.tell(fp) {
				return syscall.ESTALE
			}
			fillFileAttr(&out.Attr, o.m.narrowedSince(st, fp), size)
			return 0
		}
	}
	st, fp, err := o.m.stat()
	if err != nil {
		return errno(err)
	}
	if !o.mayTell(fp) {
		// Changed since this node's size was told: convert nothing for
		// a node that cannot show it. ESTALE makes a path walk look the
		// name up again (a new node).
		return syscall.ESTALE
	}
	p, err := o.produceAt(ctx, st, fp)
	if err != nil {
		return outErrno(err)
	}
	if !o.tell(p.fp) {
		return syscall.ESTALE
	}
	fillFileAttr(&out.Attr, o.m.narrowedSince(p.st, p.fp), p.size())
	return 0
}

// narrowedSince returns st, the source's stat for version fp taken before
// a scan, with the permissions narrowed as they are now: the scan may have
// found files the outputs are made from (deps.go), and the first stat of
// an output must already show their narrowing.
func (m *meshDir) narrowedSince(st *syscall.Stat_t, fp cache.Fingerprint) *syscall.Stat_t {
	now, nfp, err := m.stat()
	if err != nil || nfp != fp {
		return st
	}
	out := *st
	out.Mode = out.Mode&^0o777 | now.Mode&0o777
	return &out
}

func (o *outFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	o.m.fsys.touch()
	if flags&writeFlags != 0 {
		return nil, 0, syscall.EROFS
	}
	ptNode := o.kind == kGLB && o.m.fsys.passthroughWanted() && o.m.fsys.disk != nil
	if ptNode {
		if fh, fp, ok := o.openPassthrough(ctx); ok {
			o.opened(fp)
			return fh, noFlush, 0
		}
	}
	p, err := o.produce(ctx)
	if err != nil {
		return nil, 0, outErrno(err)
	}
	if ptNode {
		// Not passed through: see passState for why the io mode matters.
		stale, done := o.pass.fallback(p.fp)
		if stale {
			return nil, 0, syscall.ESTALE
		}
		o.m.fsys.openHandles.Add(1)
		fh := &bytesHandle{fsys: o.m.fsys, data: p.data, st: p.st, done: done}
		if o.opened(p.fp) {
			return fh, fuse.FOPEN_KEEP_CACHE | noFlush, 0
		}
		return fh, noFlush, 0
	}
	var fh gofs.FileHandle
	if p.raw != nil {
		f, err := srcfile.Open(o.m.abs)
		if err != nil {
			return nil, 0, errno(err)
		}
		var st syscall.Stat_t
		if err := syscall.Fstat(int(f.Fd()), &st); err != nil || cache.FromStat(&st).Ino != p.fp.Ino || st.Size != p.fp.Size || st.Mtim.Nano() != p.fp.MtimeNs {
			// Replaced between the scan and the open: its chunk table is
			// not this file's. ESTALE makes the kernel walk the path again
			// (EAGAIN reached the reader); that open sees the new version.
			f.Close()
			return nil, 0, syscall.ESTALE
		}
		fh = &fdHandle{fsys: o.m.fsys, f: f, base: p.raw.Offset, length: p.raw.Length, st: p.st}
	} else {
		fh = &bytesHandle{fsys: o.m.fsys, data: p.data, st: p.st}
	}
	o.m.fsys.openHandles.Add(1)
	if o.opened(p.fp) {
		// Same source version as the pages the kernel may hold: keep them,
		// so warm reads never reach this daemon.
		return fh, fuse.FOPEN_KEEP_CACHE | noFlush, 0
	}
	// A new version (or the first open): no KEEP_CACHE, so the kernel drops
	// any pages it holds for this file.
	return fh, noFlush, 0
}

// opened records that an open serves version fp and reports whether the
// kernel's pages of the file are of that version (so may be kept).
func (o *outFile) opened(fp cache.Fingerprint) (keep bool) {
	o.mu.Lock()
	keep = o.pagesSeen && o.pagesFP == fp
	staleAttr := o.attrFP != (cache.Fingerprint{}) && o.attrFP != fp
	o.pagesFP, o.pagesSeen = fp, true
	o.attrFP = fp
	o.mu.Unlock()
	if staleAttr {
		// The kernel may still hold the old size; it must not cut or pad
		// the new bytes by it. Notifying from inside a request risks a
		// deadlock with the kernel, so do it beside this one.
		go o.m.fsys.notifyContent(&o.Inode)
	}
	return keep
}

// openPassthrough opens the .glb on its disk-cache file for the kernel's
// passthrough, converting first when neither cache has it. ok is false
// when this open must be served by the daemon: a conversion error (produce
// reports it), an output below passMin or not in the disk cache (yet: a
// fresh conversion is saved once its readers pause), a damaged entry, or
// another version passed through and still open.
func (o *outFile) openPassthrough(ctx context.Context) (fh gofs.FileHandle, fp cache.Fingerprint, ok bool) {
	m, fsys := o.m, o.m.fsys
	st, fp, err := m.stat()
	if err != nil {
		return nil, fp, false
	}
	key := m.key(fp, outGLB)
	dk := fsys.diskKey(key)
	if _, onDisk := fsys.disk.Sizes(dk); !onDisk {
		if e, err := m.geometry(ctx, fp, outGLB); err != nil || e.Err != nil {
			return nil, fp, false
		}
	}
	h, pinned := fsys.disk.Pin(dk)
	if !pinned {
		return nil, fp, false
	}
	sizes := h.Sizes()
	if len(sizes) != 1 || sizes[0] < passMin || !fsys.diskVerified(dk, h) {
		h.Close()
		return nil, fp, false
	}
	fh = fsys.passthroughHandle(&o.pass, fp, h.File, sizes[0], st, func() { h.Close() })
	return fh, fp, fh != nil
}

// noFlush spares the kernel's FLUSH on every close of a read-only file (a
// round trip per file grep reads; nothing here has anything to flush).
const noFlush = fuse.FOPEN_NOFLUSH

var _ = (gofs.NodeFlusher)((*outFile)(nil))

// Flush only counts: with noFlush the kernel should not ask.
func (o *outFile) Flush(ctx context.Context, fh gofs.FileHandle) syscall.Errno {
	o.m.fsys.flushes.Add(1)
	return 0
}

func (o *outFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	o.m.fsys.touch()
	switch h := fh.(type) {
	case *bytesHandle:
		return h.Read(ctx, dest, off)
	case *fdHandle:
		return h.Read(ctx, dest, off)
	case *passHandle:
		return h.Read(ctx, dest, off)
	case nil:
		if o.m.fsys.noOpen() {
			return o.readNoHandle(ctx, dest, off)
		}
	}
	return nil, syscall.EBADF
}

// readNoHandle serves a READ without a handle (no_open): the output of the
// source version of this moment, the whole request from that one version.
func (o *outFile) readNoHandle(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off < 0 {
		return nil, syscall.EINVAL
	}
	// This node serves the version whose size the kernel was told, or
	// nothing: the reader's earlier pages, held by the kernel or already
	// returned, are of that version, so bytes of another one would splice
	// two versions into one read.
	st, fp, err := o.m.stat()
	if err != nil {
		return nil, outErrno(err)
	}
	if !o.mayTell(fp) {
		return o.readOld(dest, off)
	}
	p, err := o.produceAt(ctx, st, fp)
	if err != nil {
		return nil, outErrno(err)
	}
	if !o.tell(p.fp) {
		return o.readOld(dest, off)
	}
	o.mu.Lock()
	o.pagesFP, o.pagesSeen = p.fp, true
	o.mu.Unlock()
	if p.raw == nil {
		if off >= int64(len(p.data)) {
			return memResult(nil), 0
		}
		end := min(off+int64(len(dest)), int64(len(p.data)))
		return memResult(p.data[off:end]), 0
	}
	// A raw chunk: read its window of the source, checking that the file
	// opened is the version whose chunk table says where the window is.
	k := srcKey{path: o.m.abs, dev: o.m.ident.dev, ino: p.fp.Ino, size: p.fp.Size, mtimeNs: p.fp.MtimeNs}
	return o.m.fsys.srcFDs.readWindow(k, func(st *syscall.Stat_t) bool {
		return uint64(st.Dev) == k.dev && st.Ino == k.ino && st.Size == k.size && st.Mtim.Nano() == k.mtimeNs
	}, dest, off, p.raw.Offset, p.raw.Length)
}

// readOld serves a READ of a node whose source changed after the kernel
// was told its size: the bytes of that version while memory still holds
// them (a geometry output read moments ago), else ESTALE. The watcher's
// invalidation (or, without it, the attribute timeout and ESTALE from
// GETATTR) makes a path walk look the name up again, which gives the new
// version a node of its own.
func (o *outFile) readOld(dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	o.mu.Lock()
	fp := o.attrFP
	o.mu.Unlock()
	if !o.ent.Converted() {
		return nil, syscall.ESTALE
	}
	output, part := o.conversion()
	e, ok := o.m.fsys.cache.Use(o.m.key(fp, output))
	if !ok || e.Err != nil {
		return nil, syscall.ESTALE
	}
	data := e.Part(part)
	if off >= int64(len(data)) {
		return memResult(nil), 0
	}
	return memResult(data[off:min(off+int64(len(dest)), int64(len(data)))]), 0
}

// isConversion reports whether a statistics label counts as a conversion.
func isConversion(label string) bool {
	i := strings.LastIndexByte(label, '/')
	out := label[i+1:]
	return out == outGLB || out == outOBJ || out == outAnimated
}

// animated reports whether some animation file of the folder belongs to
// version fp of the mesh (outputs' rule for NAME.animated.glb), as the
// memory cache remembers it: fp's Gen changes with any animation file of
// the folder (formats.IsDependency), so a change there asks again.
func (m *meshDir) animated(ctx context.Context, fp cache.Fingerprint) bool {
	if !m.mesh.TakesAnimations() {
		return false
	}
	e, err := m.fsys.cache.Get(ctx, m.key(fp, outAnims), m.label(outAnims), func(ctx context.Context) (*cache.Entry, error) {
		if err := m.fsys.sem.Acquire(ctx); err != nil {
			return nil, err
		}
		defer m.fsys.sem.Release()
		names, err := m.mesh.Animations(ctx)
		if err != nil {
			return &cache.Entry{Err: err}, nil
		}
		w := int64(0)
		for _, n := range names {
			w += int64(len(n)) + 16
		}
		return &cache.Entry{Aux: names, AuxWeight: w}, nil
	})
	if err != nil || e.Err != nil {
		return false
	}
	names, _ := e.Aux.([]string)
	return len(names) > 0
}

// animatedNow is animated for the source's present version.
func (m *meshDir) animatedNow(ctx context.Context) bool {
	_, fp, err := m.stat()
	return err == nil && m.animated(ctx, fp)
}
