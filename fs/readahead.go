package fs

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/meshfs/meshfs/internal/srcfile"
	"github.com/meshfs/meshfs/internal/version"
)

// Scanning ahead. A walker (grep -r, find, ls -lR) enters a source folder's
// mesh folders one after the other, and each cold one makes it wait for a
// structure scan: the daemon reads and scans the source and renders
// header.json while the walker, and the CPU it would use, sit idle. Measured
// on 2 000 small GEM meshes, the scan and header rendering were about a third
// of the daemon's CPU in a cold grep, all of it on the walker's path.
//
// So the first cold mesh folder listed in a source folder starts one
// background pass that scans that folder's next meshes (from the one after
// it, in listing order, scanAheadWindow of them) while the walker reads the
// first. The walker then
// finds most scans done, or joins the one in progress (the cache shares a
// load between callers). Only scans: a listing never converts. Sources over
// scanAheadMax are left to be scanned on demand, one pass runs at a time for
// the whole mount (one CPU at most), and a pass stops at unmount.

// scanAheadMax is the largest source scanned ahead, and scanAheadWindow
// how many meshes after the one entered a pass covers: a walker that gets
// past them misses again and starts the next pass from there, so a huge
// folder is not scanned whole into memory for a walker that stops early
// (vars for tests).
var (
	scanAheadMax    int64 = 4 << 20
	scanAheadWindow       = 256
)

// scanAhead is the mount's background scanning state.
type scanAhead struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
	// one serializes passes: a walker moving on to the next folder
	// queues its pass behind the current one.
	one chan struct{}
	// listOne serializes the passes of listAhead (listahead.go).
	listOne chan struct{}
	// scans counts scans made ahead (stats.json scans_ahead), sniffs the
	// sniffs (sniffs_ahead).
	sniffs atomic.Int64
	scans  atomic.Int64
}

func newScanAhead() *scanAhead {
	ctx, cancel := context.WithCancel(context.Background())
	return &scanAhead{ctx: ctx, cancel: cancel, one: make(chan struct{}, 1), listOne: make(chan struct{}, 1)}
}

// close stops the passes and waits for them.
func (a *scanAhead) close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.cancel()
	a.wg.Wait()
}

// scanSiblings starts a pass over the meshes of m's source folder, unless
// one is already running or queued for that folder.
func (f *FS) scanSiblings(m *meshDir) {
	d, a := m.parent, f.ahead
	if d == nil || !d.scanningAhead.CompareAndSwap(false, true) {
		return
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		d.scanningAhead.Store(false)
		return
	}
	a.wg.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.wg.Done()
		defer d.scanningAhead.Store(false)
		select {
		case a.one <- struct{}{}:
		case <-a.ctx.Done():
			return
		}
		defer func() { <-a.one }()
		d.scanAhead(a.ctx, filepath.Base(m.abs))
	}()
}

// scanAhead scans the meshes of this folder not scanned yet for their
// current version, starting after the entry named after.
func (d *dirNode) scanAhead(ctx context.Context, after string) {
	fd, err := srcfile.OpenFolder(d.abs)
	if err != nil {
		return
	}
	// Readdirnames: the order of the source listing, which is the order
	// of dirNode.Readdir (and so of a walker that does not sort).
	names, _ := fd.Readdirnames(-1)
	fd.Close()
	start := 0
	for i, n := range names {
		if n == after {
			start = i + 1
			break
		}
	}
	var known map[string]bool
	siblings := func(n string) bool {
		if known == nil {
			known = make(map[string]bool, len(names))
			for _, s := range names {
				known[s] = true
			}
		}
		return known[n]
	}
	meshes := 0
	for i := range names {
		if ctx.Err() != nil || meshes >= scanAheadWindow {
			return
		}
		name := names[(start+i)%len(names)]
		if name == after {
			continue
		}
		p := filepath.Join(d.abs, name)
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size > scanAheadMax {
			continue
		}
		// The sniff is cached by the listing the walker just read.
		kind, format, _ := d.entryKind(name, &st, siblings)
		if kind != kindMesh {
			continue
		}
		meshes++
		m := d.meshChild(name, &st)
		if m == nil {
			m = d.newMeshDir(name, &st, format)
		}
		fp := d.fsys.versions.Version(p, version.FromStat(&st))
		if _, ok := d.fsys.cache.Peek(m.key(fp, outScan)); ok {
			continue
		}
		if _, err := m.scan(ctx, fp); err == nil {
			d.fsys.ahead.scans.Add(1)
		}
	}
}

// meshChild is the mesh folder node of entry name if the kernel looked it
// up and it is still the source st, else nil.
func (d *dirNode) meshChild(name string, st *syscall.Stat_t) *meshDir {
	ch := d.GetChild(name)
	if ch == nil {
		return nil
	}
	m, ok := ch.Operations().(*meshDir)
	if !ok || m.ident.File != version.FromStat(st).File {
		return nil
	}
	return m
}
