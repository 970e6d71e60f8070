package unigine

import (
	"bytes"
	"io"
	"os"
	"sync"
	"weak"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/internal/version"
)

// A cold first read of a mesh's .glb through the mount scans the file (for
// the mesh folder's header.json and chunks/) and then decodes it, and both
// decompress the same geometry blocks: for a large mesh, decompression is
// the largest serial step of each. So Scan leaves the last large geometry
// block it decompressed for a Decode that follows, through a weak pointer:
// the garbage collector may take it at any time, so no memory is held for
// long. Decode takes the decompressed bytes only when the file name and
// the block's place and sizes are those Scan saw and the file is still the
// version Scan read: when the source is an open file (the mount's and the
// CLI's), the same version.Ident, the mount's own test of a changed
// source; otherwise every compressed byte must compare equal (a file
// changed in between fails the comparison). It decompresses otherwise.
//
// Scan gives up its buffers to the block it leaves; the decode that takes
// the block removes it from here and owns the buffers, which then return
// to the pool (so the next scan reuses them rather than zeroing new ones).

// scannedBlock is one geometry block as Scan read and decompressed it.
type scannedBlock struct {
	name    string
	b       block
	packed  []byte        // the compressed bytes; nil when decompressed from a mapping of the file
	raw     []byte        // what they decompress to
	version version.Ident // the file's when the source is an open file
	known   bool          // version is set
}

// statter is an open file's Stat (an *os.File's).
type statter interface{ Stat() (os.FileInfo, error) }

// versionOf returns the version of the file r reads, and false when r is
// not an open file or cannot tell.
func versionOf(r io.ReaderAt) (version.Ident, bool) {
	f, ok := r.(statter)
	if !ok {
		return version.Ident{}, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return version.Ident{}, false
	}
	return version.Of(fi), true
}

// readsVersion reports whether r reads the very file version sb was
// scanned from.
func (sb *scannedBlock) readsVersion(r io.ReaderAt) bool {
	now, ok := versionOf(r)
	return sb.known && ok && now.Same(sb.version)
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

// leaveBlock hands block b of file src, just decompressed into bb by a
// scan, to a decode that may follow; bb's buffers go with it, and the
// file's version when src is an open file.
func leaveBlock(src *decode.Source, b block, bb *blockBuffers) {
	sb := &scannedBlock{name: src.Name, b: b, raw: bb.raw[:b.raw]}
	sb.version, sb.known = versionOf(src.R)
	if !bb.mapped {
		sb.packed = bb.packed[:b.packed]
	}
	bb.packed, bb.raw = nil, nil
	handoff.Lock()
	handoff.p = weak.Make(sb)
	handoff.Unlock()
	if leftHook != nil {
		leftHook(sb)
	}
}

// leaves reports whether a scan of layout l will leave a block: its last
// surface's geometry block is compressed and large.
func leaves(l *fileLayout) bool {
	if len(l.geom) == 0 {
		return false
	}
	b := l.geom[len(l.geom)-1]
	return !b.stored() && b.raw >= minHandoff
}

// reclaimBlock gives bb the buffers of a block an earlier scan left and no
// decode has taken, for a scan that is about to leave its own block in
// its place anyway: a run of scans (header.json of one mesh after another)
// then reuses one set of buffers instead of zeroing new ones each time.
func reclaimBlock(bb *blockBuffers) {
	handoff.Lock()
	sb := handoff.p.Value()
	handoff.p = weak.Pointer[scannedBlock]{}
	handoff.Unlock()
	if sb == nil {
		return
	}
	if cap(sb.packed) > cap(bb.packed) {
		bb.packed = sb.packed
	}
	if cap(sb.raw) > cap(bb.raw) {
		bb.raw = sb.raw
	}
}

// takeBlock returns the block a scan left for block b of file name, if
// any, and removes it: the caller owns its buffers from then on (it must
// still compare the compressed bytes, see sameBytes).
func takeBlock(name string, b block) *scannedBlock {
	handoff.Lock()
	defer handoff.Unlock()
	sb := handoff.p.Value()
	if sb == nil || sb.name != name || sb.b != b {
		return nil
	}
	handoff.p = weak.Pointer[scannedBlock]{}
	return sb
}

// sameBytes reports whether the source holds want at off, reading it a
// chunk at a time through bb.packed (so no second copy of a large block
// is allocated).
func sameBytes(src *decode.Source, off int64, want []byte, bb *blockBuffers) (bool, error) {
	bb.packed = grow(bb.packed, min(int64(len(want)), 1<<20))
	chunk := bb.packed
	for at := 0; at < len(want); at += len(chunk) {
		n := min(len(chunk), len(want)-at)
		if err := readAt(src, chunk[:n], off+int64(at)); err != nil {
			return false, err
		}
		if !bytes.Equal(chunk[:n], want[at:at+n]) {
			return false, nil
		}
	}
	return true, nil
}
