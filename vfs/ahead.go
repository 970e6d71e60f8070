package vfs

import (
	"context"
	"syscall"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/internal/walk"
)

// What a mount does ahead of a walker: the first cold mesh folder listed
// in a source folder scans that folder's next meshes, and a folder's first
// listing sniffs the files of the folders after it.

// ScanAhead starts on a a pass over the meshes of d after the one called
// after (walk.ScanAhead), unless one is running or queued for d: scan
// scans one mesh and reports whether it did (a.Scans counts those).
func (d *Folder) ScanAhead(a *walk.Ahead, after string, scan func(ctx context.Context, path string, st *syscall.Stat_t, format decode.Format) bool) {
	if !d.ScanningAhead.CompareAndSwap(false, true) {
		return
	}
	a.Go(walk.Scans, func(ctx context.Context) {
		// The sniffs are cached by the listing the walker just read.
		c := a.Config()
		walk.ScanAhead(ctx, d.Abs, after, c.ScanWindow, c.ScanMax, d.MeshFormat,
			func(p string, st *syscall.Stat_t, format decode.Format) {
				if scan(ctx, p, st, format) {
					a.Scans.Add(1)
				}
			})
	}, func() { d.ScanningAhead.Store(false) })
}

// ListAhead starts on a the sniffs ahead of a walker that has just listed
// child, the folder of d called name, for the first time: the files of
// the folders after it in d's last listing (none when d was not listed: no
// walker is going through it).
func (d *Folder) ListAhead(a *walk.Ahead, sn *walk.Sniffer, child *Folder, name string) {
	if !child.ListedAhead.CompareAndSwap(false, true) {
		return
	}
	c := a.Config()
	next := d.Subdirs().After(name, c.ListWindow)
	if len(next) == 0 {
		return
	}
	a.Go(walk.Lists, func(ctx context.Context) {
		walk.SniffFolders(ctx, sn, d.Abs, next, c.ListMax, c.ListWorkers, &a.Sniffs)
	}, nil)
}
