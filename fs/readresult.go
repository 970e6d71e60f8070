package fs

import (
	"os"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/hanwen/go-fuse/v2/splice"

	"github.com/meshfs/meshfs/internal/source"
)

// How a READ's reply reaches the kernel. go-fuse v2.12 tries to splice
// every reply that is not a list of slices: for a fuse.ReadResultData it
// grows a pipe and writes the reply's header into it before finding that
// there is no file to splice from, then empties the pipe again (about
// three wasted system calls per READ). When the reply does not fit in a
// pipe at all (a 1 MiB READ: the data, its header and a page are more than
// /proc/sys/fs/pipe-max-size, 1 MiB by default) it also logs a line, for
// every such READ, before falling back to a copy. So bytes in memory go
// out as a slice list (one writev), and a file window is spliced only when
// it fits in a pipe and otherwise read into the request's buffer here.

// memResult replies with bytes held in memory, written with one writev.
func memResult(b []byte) fuse.ReadResult { return fuse.ReadResultVector([][]byte{b}) }

// memAt replies to a READ of dest's size at off of data.
func memAt(data, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n, e := span(dest, off, int64(len(data)))
	if e != 0 || n == 0 {
		return noBytes(e)
	}
	return memResult(data[off : off+int64(n)]), 0
}

// noBytes replies to a READ with nothing: errno e, or the end of the file.
func noBytes(e syscall.Errno) (fuse.ReadResult, syscall.Errno) {
	if e != 0 {
		return nil, e
	}
	return memResult(nil), 0
}

// span is source.Span for a READ into dest.
func span(dest []byte, off, length int64) (int, syscall.Errno) {
	return source.Span(len(dest), off, length)
}

// spliceFits reports whether go-fuse can splice an n-byte reply: its pipe
// must hold the reply's 16-byte header, the data and one more page.
func spliceFits(n int) bool {
	return n+16+os.Getpagesize() <= splice.MaxPipeSize()
}

// fdResult replies with n bytes of fd from off: spliced when they fit in a
// pipe, else read into dest (the request's buffer) and written from there.
// A short read (the file shrank) replies with what was there, as a splice
// would.
func fdResult(fd int, off int64, n int, dest []byte) (fuse.ReadResult, syscall.Errno) {
	if spliceFits(n) {
		return fuse.ReadResultFd(uintptr(fd), off, n), 0
	}
	if len(dest) < n {
		dest = make([]byte, n)
	}
	got, err := source.PreadFull(fd, dest[:n], off)
	if err != nil {
		return nil, gofs.ToErrno(err)
	}
	return memResult(dest[:got]), 0
}
