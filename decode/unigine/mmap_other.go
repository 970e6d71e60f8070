//go:build !unix

package unigine

import "github.com/meshfs/meshfs/decode"

// mapBlock maps nothing here: blocks are read (see mmap_unix.go).
func mapBlock(src *decode.Source, b block) (data []byte, unmap func(), ok bool) {
	return nil, nil, false
}
