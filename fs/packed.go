package fs

// An archive is a folder of its entries (internal/mirror's archive.go),
// read with srcview.Packed.ReadEntry (a deflated one resumes at a checkpoint).

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// textFile is an archive folder's error.txt (the archive's stat st).
type textFile struct {
	gofs.Inode
	data []byte
	st   syscall.Stat_t
}

func (t *textFile) Open(context.Context, uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	return nil, noFlush, 0
}

func (t *textFile) Getattr(ctx context.Context, _ gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	fillFileAttr(&out.Attr, &t.st, int64(len(t.data)))
	return 0
}

func (t *textFile) Read(ctx context.Context, _ gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return memAt(t.data, dest, off)
}
