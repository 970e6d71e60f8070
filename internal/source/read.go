package source

import "syscall"

// Span is how many bytes a read of want bytes at off gets from a file of
// length bytes (-1: unknown, as many as asked); EINVAL for a negative off.
func Span(want int, off, length int64) (int, syscall.Errno) {
	if off < 0 {
		return 0, syscall.EINVAL
	}
	if length < 0 {
		return want, 0
	}
	return int(max(0, min(int64(want), length-off))), 0
}

// PreadFull reads len(buf) bytes of fd at off, or up to the end of the
// file, retrying interrupted reads.
func PreadFull(fd int, buf []byte, off int64) (int, error) {
	got := 0
	for got < len(buf) {
		k, err := syscall.Pread(fd, buf[got:], off+int64(got))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return got, err
		}
		if k == 0 {
			break // the end of the file
		}
		got += k
	}
	return got, nil
}
