package fs

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store"
	"github.com/meshfs/meshfs/internal/store/failures"
)

func TestErrno(t *testing.T) {
	for _, c := range []struct {
		err        error
		want, read syscall.Errno
	}{
		{nil, 0, 0},
		{fmt.Errorf("open: %w", os.ErrNotExist), syscall.ENOENT, syscall.ENOENT},
		{&failures.ConvError{Err: os.ErrNotExist}, syscall.EIO, syscall.EIO},
		{os.ErrPermission, syscall.EACCES, syscall.EACCES},
		{source.ErrNotRegular, syscall.EACCES, syscall.EACCES},
		{source.ErrSymlink, syscall.ESTALE, syscall.ESTALE},
		{context.Canceled, syscall.EINTR, syscall.EINTR},
		{store.ErrNotCheap, syscall.EAGAIN, syscall.EAGAIN},
		{fmt.Errorf("bad"), syscall.EIO, syscall.EIO},
	} {
		if got := errno(c.err); got != c.want {
			t.Errorf("errno(%v) = %v, want %v", c.err, got, c.want)
		}
		if got := outErrno(c.err); got != c.read {
			t.Errorf("outErrno(%v) = %v, want %v", c.err, got, c.read)
		}
	}
}

func TestReplaced(t *testing.T) {
	if replaced(syscall.ESTALE) != syscall.ENOENT || replaced(syscall.EIO) != syscall.EIO || replaced(0) != 0 {
		t.Fatal("a replaced source's folder does not answer as a deleted folder does")
	}
}
