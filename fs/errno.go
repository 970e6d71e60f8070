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

// errno maps the tree's and the store's errors to what a reader sees.
func errno(err error) syscall.Errno {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, os.ErrNotExist):
		return syscall.ENOENT
	case errors.Is(err, syscall.ESTALE), errors.Is(err, source.ErrSymlink):
		// A link since the lookup: the kernel looks it up again and
		// shows the link.
		return syscall.ESTALE
	case errors.Is(err, os.ErrPermission), errors.Is(err, source.ErrNotRegular):
		// A FIFO, device or socket is never opened: it cannot block.
		return syscall.EACCES
	case errors.Is(err, store.ErrNotCheap):
		return notCheap
	case errors.Is(err, context.Canceled):
		return syscall.EINTR
	}
	return syscall.EIO
}

// notCheap leaves a READDIRPLUS entry for a LOOKUP: its attributes would
// cost a conversion or a decompression.
const notCheap = syscall.EAGAIN

// replaced is what a lookup in a mesh folder answers: a replaced source's
// ESTALE becomes ENOENT, as in a folder deleted while open, since a reader
// holding the folder open (grep -r, find) could not recover from ESTALE.
func replaced(e syscall.Errno) syscall.Errno {
	if e == syscall.ESTALE {
		return syscall.ENOENT
	}
	return e
}

// outErrno is what a reader of an output gets: EIO for a conversion's
// failure, whatever its cause.
func outErrno(err error) syscall.Errno {
	if ce := (*failures.ConvError)(nil); errors.As(err, &ce) {
		return syscall.EIO
	}
	return errno(err)
}
