package fs

import (
	"context"
	"errors"
	"os"
	"syscall"

	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store"
	"github.com/meshfs/meshfs/internal/store/failures"
)

// The tree and the store speak Go errors; only the mount maps them to
// errnos.

// errno maps an error to what a reader sees: a vanished source is ENOENT,
// a special file EACCES, anything else that fails a conversion is EIO.
func errno(err error) syscall.Errno {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, os.ErrNotExist):
		return syscall.ENOENT
	case errors.Is(err, syscall.ESTALE):
		return syscall.ESTALE
	case errors.Is(err, os.ErrPermission):
		return syscall.EACCES
	case errors.Is(err, source.ErrNotRegular):
		// A FIFO, device or socket in the tree: never opened, so it can
		// never block the daemon.
		return syscall.EACCES
	case errors.Is(err, source.ErrSymlink):
		// Replaced by a link since the lookup: the kernel looks it up
		// again and shows the link.
		return syscall.ESTALE
	case errors.Is(err, store.ErrNotCheap):
		// A READDIRPLUS entry left for a LOOKUP.
		return syscall.EAGAIN
	case errors.Is(err, context.Canceled):
		return syscall.EINTR
	}
	return syscall.EIO
}

// replaced is what a lookup in a mesh folder answers for e: a replaced
// source's ESTALE becomes what a folder deleted while open answers,
// nothing in it (ENOENT). A reader that walks by path gets ESTALE from an
// output instead, and the kernel walks again to the new file; one that
// holds the folder open (grep -r, find) would have no way to recover from
// ESTALE.
func replaced(e syscall.Errno) syscall.Errno {
	if e == syscall.ESTALE {
		return syscall.ENOENT
	}
	return e
}

// outErrno is what a reader of an output gets for err: EIO for a
// conversion's failure (a *failures.ConvError), even when its cause is, say, a
// missing sibling file.
func outErrno(err error) syscall.Errno {
	var ce *failures.ConvError
	if errors.As(err, &ce) {
		return syscall.EIO
	}
	return errno(err)
}
