package fs

import (
	"context"
	"path/filepath"
	"syscall"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/internal/walk"
)

// What the mount does ahead of a walker (package walk): the first cold
// mesh folder listed in a source folder scans that folder's next meshes,
// and a folder's first listing sniffs the files of the folders after it.

// scanAheadMax is the largest source scanned ahead, and scanAheadWindow
// how many meshes after the one entered a pass covers: a walker that gets
// past them misses again and starts the next pass from there, so a huge
// folder is not scanned whole into memory for a walker that stops early
// (vars for tests).
var (
	scanAheadMax    int64 = 4 << 20
	scanAheadWindow       = 256
)

// listAheadWindow is how many folders after the one listed a pass covers,
// listAheadMax how many files it sniffs at most (a listing is not always a
// walk: `ls` of one folder must not make the daemon read a huge sibling
// folder's files), and listAheadWorkers how many sniffs it keeps in flight
// (the disk's queue, not the CPU, is what they wait for).
var (
	listAheadWindow  = 2
	listAheadMax     = 1024
	listAheadWorkers = 4
)

// scanSiblings starts a pass over the meshes of m's source folder, unless
// one is already running or queued for that folder.
func (f *FS) scanSiblings(m *meshDir) {
	d := m.parent
	if d == nil || !d.dir.ScanningAhead.CompareAndSwap(false, true) {
		return
	}
	f.ahead.Go(walk.Scans, func(ctx context.Context) {
		// The sniffs are cached by the listing the walker just read.
		walk.ScanAhead(ctx, d.dir.Abs, filepath.Base(m.abs), scanAheadWindow, scanAheadMax, d.dir.MeshFormat,
			func(p string, st *syscall.Stat_t, format decode.Format) {
				if f.st.ScanAhead(ctx, p, st, format) {
					f.ahead.Scans.Add(1)
				}
			})
	}, func() { d.dir.ScanningAhead.Store(false) })
}

// listAhead sniffs ahead of a walker that has just listed d for the first
// time: the files of the folders after d in its parent's last listing (none
// when the parent was not listed: no walker is going through it). It
// returns at once.
func (f *FS) listAhead(d *dirNode) {
	if d.dir.Abs == f.source || !d.dir.ListedAhead.CompareAndSwap(false, true) {
		return
	}
	name, parent := d.Parent()
	if parent == nil {
		return
	}
	pd, ok := parent.Operations().(*dirNode)
	if !ok {
		return
	}
	next := pd.dir.Subdirs().After(name, listAheadWindow)
	if len(next) == 0 {
		return
	}
	f.ahead.Go(walk.Lists, func(ctx context.Context) {
		budget := listAheadMax
		for _, n := range next {
			if budget <= 0 || ctx.Err() != nil {
				return
			}
			looked, read := walk.SniffFolder(ctx, f.sniffer, filepath.Join(pd.dir.Abs, n), budget, listAheadWorkers)
			budget -= looked
			f.ahead.Sniffs.Add(read)
		}
	}, nil)
}
