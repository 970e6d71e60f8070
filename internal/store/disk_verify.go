package store

import (
	"hash/crc32"
	"io"
)

// Verify checks the pinned entry's file against the size and CRC-32C its
// index record holds, reading it once; a damaged entry is discarded. It is
// what a caller does before handing the file itself to a reader (FUSE
// passthrough), where Get's checked read into memory is not wanted.
func (h *diskHandle) Verify() bool {
	fi, err := h.Stat()
	if err == nil && fi.Size() == h.e.total {
		crc := crc32.New(castagnoli)
		n, err := io.Copy(crc, io.NewSectionReader(h.File, 0, h.e.total))
		if err == nil && n == h.e.total && crc.Sum32() == h.e.sum {
			return true
		}
	}
	h.c.discard(h.e)
	return false
}
