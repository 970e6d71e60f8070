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

// scanSiblings starts a pass over the meshes of m's source folder, unless
// one is already running or queued for that folder.
func (f *FS) scanSiblings(m *meshDir) {
	d := m.parent
	if d == nil || !d.dir.ScanningAhead.CompareAndSwap(false, true) {
		return
	}
	f.ahead.Go(walk.Scans, func(ctx context.Context) {
		// The sniffs are cached by the listing the walker just read.
		walk.ScanAhead(ctx, d.dir.Abs, filepath.Base(m.abs), walk.ScanAheadWindow, walk.ScanAheadMax, d.dir.MeshFormat,
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
	next := pd.dir.Subdirs().After(name, walk.ListAheadWindow)
	if len(next) == 0 {
		return
	}
	f.ahead.Go(walk.Lists, func(ctx context.Context) {
		walk.SniffFolders(ctx, f.sniffer, pd.dir.Abs, next, &f.ahead.Sniffs)
	}, nil)
}
