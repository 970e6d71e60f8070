package unigine

import (
	"bytes"
	"sync"
	"weak"
)

// A cold first read of a mesh's .glb through the mount scans the file (for
// the mesh folder's header.json and chunks/) and then decodes it, and both
// decompress the same geometry blocks: for a large mesh, decompression is
// the largest serial step of each. So Scan leaves the last large geometry
// block it decompressed for a Decode that follows, through a weak pointer:
// the garbage collector may take it at any time, so no memory is held for
// long. Decode reads the block's compressed bytes anyway; it takes the
// decompressed ones only when the file name, the block's place and sizes
// and every compressed byte are those Scan saw (a file changed in between
// fails the comparison), and decompresses otherwise.
//
// A block left here is never written again: Scan gives up its buffers to
// it, and decoders only read it, so concurrent decodes may share it.

// scannedBlock is one geometry block as Scan read and decompressed it.
type scannedBlock struct {
	name   string
	b      block
	packed []byte // the compressed bytes
	raw    []byte // what they decompress to
}

// minHandoff is the smallest block worth leaving: below it, decompressing
// again costs little, and Scan keeps its reused buffers instead.
const minHandoff = 1 << 20

var handoff struct {
	sync.Mutex
	p weak.Pointer[scannedBlock]
}

// leftHook, when set (by tests), is given every block left.
var leftHook func(*scannedBlock)

// leaveBlock hands block b of file name, just decompressed into bb by a
// scan, to a decode that may follow; bb's buffers go with it.
func leaveBlock(name string, b block, bb *blockBuffers) {
	sb := &scannedBlock{name: name, b: b, packed: bb.packed[:b.packed], raw: bb.raw[:b.raw]}
	bb.packed, bb.raw = nil, nil
	handoff.Lock()
	handoff.p = weak.Make(sb)
	handoff.Unlock()
	if leftHook != nil {
		leftHook(sb)
	}
}

// takeBlock returns the decompressed bytes of block b of file name when a
// scan left them and its compressed bytes equal packed; otherwise nil.
func takeBlock(name string, b block, packed []byte) []byte {
	handoff.Lock()
	sb := handoff.p.Value()
	handoff.Unlock()
	if sb == nil || sb.name != name || sb.b != b || !bytes.Equal(sb.packed, packed) {
		return nil
	}
	return sb.raw
}
