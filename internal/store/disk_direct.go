package store

import (
	"bufio"
	"errors"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// directMin is the part size from which writeParts writes a part's bytes
// with O_DIRECT: a big output (a .glb of tens of MB) goes from its bytes in
// memory straight to the disk instead of being copied into the page cache
// first. That copy lands on fresh page-cache pages, which the kernel
// allocates, and on a virtual machine that hands freed pages back to its
// host the host faults in again: 36 MB cost 55–100 ms of the daemon's CPU
// that way (perf: copy_folio_from_iter_atomic, a quarter of a first read's
// CPU), 2–4 ms with O_DIRECT. What is read back later (a load after the
// memory cache let the output go, a passthrough open) then comes from the
// disk once.
const directMin = 4 << 20

// directAlign is the alignment O_DIRECT asks of the memory, the file
// offset and the length of a write (the logical block size of the disks
// it is used on is at most this).
const directAlign = 4096

// writeParts writes parts to f, a new empty file, in order: a part of
// directMin bytes or more that starts on a directAlign boundary of memory
// and of the file has its aligned bytes written with O_DIRECT, the rest of
// the parts through a buffer. A file system that refuses O_DIRECT gets
// those bytes through the buffer too.
func writeParts(f *os.File, parts [][]byte) error {
	w := bufio.NewWriterSize(f, 1<<16)
	var pos int64 // bytes written or buffered so far
	for _, p := range parts {
		if n := len(p) &^ (directAlign - 1); len(p) >= directMin && pos%directAlign == 0 && uintptr(unsafe.Pointer(&p[0]))%directAlign == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
			done, err := writeDirect(f, p[:n])
			if err != nil {
				return err
			}
			if done {
				p, pos = p[n:], pos+int64(n)
			}
		}
		if _, err := w.Write(p); err != nil {
			return err
		}
		pos += int64(len(p))
	}
	return w.Flush()
}

// writeDirect writes b (aligned as O_DIRECT asks) to f at its offset with
// O_DIRECT, and clears the flag again. done is false, with nothing
// written, when f's file system refuses O_DIRECT.
func writeDirect(f *os.File, b []byte) (done bool, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, nil
	}
	setDirect := func(on bool) (err error) {
		cerr := rc.Control(func(fd uintptr) {
			var fl int
			if fl, err = unix.FcntlInt(fd, unix.F_GETFL, 0); err != nil {
				return
			}
			if on {
				fl |= unix.O_DIRECT
			} else {
				fl &^= unix.O_DIRECT
			}
			_, err = unix.FcntlInt(fd, unix.F_SETFL, fl)
		})
		return errors.Join(cerr, err)
	}
	if setDirect(true) != nil {
		return false, nil
	}
	n, err := f.Write(b)
	if cerr := setDirect(false); err == nil && cerr != nil {
		err = cerr
	}
	if n == 0 && errors.Is(err, syscall.EINVAL) {
		return false, setDirect(false)
	}
	return err == nil, err
}
