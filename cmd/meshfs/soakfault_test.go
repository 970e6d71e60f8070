package main

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// faultRoot is a FUSE tree of one file, hot/x, of faultSize bytes whose
// every read fails with errno: a mapped page of it faults.
type faultRoot struct {
	gofs.Inode
	errno syscall.Errno
}

type faultFile struct {
	gofs.Inode
	errno syscall.Errno
}

const faultSize = 8192

func (r *faultRoot) OnAdd(ctx context.Context) {
	hot := r.NewPersistentInode(ctx, &gofs.Inode{}, gofs.StableAttr{Mode: syscall.S_IFDIR})
	r.AddChild("hot", hot, false)
	x := r.NewPersistentInode(ctx, &faultFile{errno: r.errno}, gofs.StableAttr{Mode: syscall.S_IFREG})
	hot.AddChild("x", x, false)
}

func (f *faultFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = syscall.S_IFREG | 0o444
	out.Size = faultSize
	return 0
}

func (f *faultFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	return nil, 0, 0
}

func (f *faultFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return nil, f.errno
}

var (
	_ = (gofs.NodeOnAdder)((*faultRoot)(nil))
	_ = (gofs.NodeGetattrer)((*faultFile)(nil))
	_ = (gofs.NodeOpener)((*faultFile)(nil))
	_ = (gofs.NodeReader)((*faultFile)(nil))
)

// TestSoakTellsEIOFromReplaced: the soak's mmap reader counts a mapped
// page that faults as a replaced file only when the same descriptor's read
// then says the version is gone (ESTALE); a fault whose read fails with
// EIO is an error, and counted as EIO.
func TestSoakTellsEIOFromReplaced(t *testing.T) {
	canMount(t)
	for _, c := range []struct {
		name                   string
		errno                  syscall.Errno
		replaced, errors, eios int64
	}{
		{"ESTALE", syscall.ESTALE, 1, 0, 0},
		{"EIO", syscall.EIO, 0, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			mnt := mountDir(t)
			srv, err := gofs.Mount(mnt, &faultRoot{errno: c.errno}, &gofs.Options{
				MountOptions: fuse.MountOptions{DirectMount: os.Geteuid() == 0, FsName: "soakfault"},
			})
			if err != nil {
				t.Fatalf("mounting the faulting tree: %v", err)
			}
			defer srv.Unmount()
			f, err := os.Open(filepath.Join(mnt, "hot", "x"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var counts soakCounts
			var msgs []string
			report := func(kind *atomic.Int64, format string, args ...any) {
				kind.Add(1)
				msgs = append(msgs, format)
			}
			soakMmap(f, filepath.Join("hot", "x"), faultSize, [][]byte{make([]byte, faultSize)}, &counts, report)
			if counts.replaced.Load() != c.replaced || counts.errors.Load() != c.errors || counts.eio.Load() != c.eios || counts.stale.Load() != 0 {
				t.Errorf("reads failing with %v: %d replaced, %d errors (%d EIO), %d stale; want %d, %d (%d), 0: %q",
					c.errno, counts.replaced.Load(), counts.errors.Load(), counts.eio.Load(), counts.stale.Load(), c.replaced, c.errors, c.eios, msgs)
			}
		})
	}
}
