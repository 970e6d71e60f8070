// Package record is what the disk cache keeps of a conversion besides its
// bytes, and what its keys are versioned by: the record of a structure scan
// (EncodeScan, DecodeScan), the record of a failed conversion
// (EncodeFailure, DecodeFailure), which failures belong to the files and so
// may be recorded (Persistable), and the version string every disk cache
// entry is keyed by (CacheVersion). It knows nothing of caches or FUSE.
package record

// Structure scans persisted in the disk cache, so that a remount lists,
// stats and reads header.json without scanning anything.
//
// A scan of one source version (the disk key of output "scan": path, dev,
// ino, size, mtime, companion files, converter version and options) is one
// disk cache entry (diskcache.PutMeta): its part is header.json's bytes,
// stored inline in the index line and read by offset on demand, never held
// in memory; its metadata blob, kept in memory, holds everything a listing
// or a stat needs (the scan and header errors, the chunk table). Measured
// on a small GEM mesh: an 81-byte blob against a 2.6 KB header.json, so
// keeping headers out of memory is what keeps a 10 000-mesh index small;
// and inline rather than one data file each, as a data file costs 0.4 ms
// to create and rename on ext4 (during the first walk, beside the reader)
// against 0.04 ms for the append. The blob, little-endian, varints:
//
//	byte     ScanVersion
//	byte     flags: 1 structure present, 2 scan error, 4 header error
//	string   structure's format name
//	string   scan error text (when flag 2)
//	string   header error text (when flag 4)
//	uvarint  chunk count, then per chunk in scan order:
//	string   name (as the scan gave it; listed through decode.SafeName)
//	varint   offset, length, size
//	byte     1 when loaded (decompressed), 0 when raw
//	uvarint  count of the files besides the source the scan found its
//	         outputs read, then per file:
//	string   path
//	uvarint  device, inode
//	varint   size, modification time (ns)
//
// with string = uvarint length + bytes. The index checks the blob's CRC and
// the data file's; DecodeScan checks every count against the bytes
// left before allocating and refuses trailing bytes, so a damaged record is
// discarded (and the source scanned again), never served.
//
// Raw chunks are read from the source window as before. A loaded chunk's
// bytes need the decoder's loader, which a record cannot carry: reading
// one scans the source then (a "live" scan, counted in stats.json as a
// scan) and checks that the live chunk table is the recorded one.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/tfever/luasandbox"
	"github.com/meshfs/meshfs/internal/source"
)

// ScanVersion is a scan blob's first byte.
const ScanVersion = 2

// A scan blob's flags.
const (
	FlagStructure = 1 << iota
	FlagScanErr
	FlagHdrErr
)

// Scan is a decoded persisted scan.
type Scan struct {
	Structure bool
	Format    string
	// ScanErr and HdrErr are the errors' texts, when HasScanErr, HasHdrErr.
	ScanErr, HdrErr       string
	HasScanErr, HasHdrErr bool
	Chunks                []Chunk
	// HdrSize is header.json's size (the entry's one part).
	HdrSize int64
	// Deps are the files besides the source the scan found its outputs
	// read, as it found them.
	Deps source.Set
}

// Chunk is one chunk of a persisted scan.
type Chunk struct {
	Name                 string
	Offset, Length, Size int64
	Loaded               bool
}

// Failed reports whether the scan or the header failed.
func (r *Scan) Failed() bool { return r.HasScanErr || r.HasHdrErr }

// Persistable reports whether a scan's outcome belongs to the source
// version (and so may be persisted): not when the source could not be
// opened or read (an I/O error, a permission), nor when the scan ran out
// of time (the machine was busy; a later scan may finish), nor for another
// limit (decode.ErrLimit). A Lua script stopped by its sandbox's budget
// (instructions, bytes, values, stack: luasandbox.ErrLimit, never its
// deadline) is: the budget runs out alike on every run of the same files,
// so the failure is recorded and no later mount runs the script again
// until one of the files it read changes.
func Persistable(scanErr error) bool {
	if scanErr == nil {
		return true
	}
	var pe *fs.PathError
	var errno syscall.Errno
	if errors.As(scanErr, &pe) || errors.As(scanErr, &errno) ||
		errors.Is(scanErr, context.Canceled) || errors.Is(scanErr, context.DeadlineExceeded) ||
		errors.Is(scanErr, luasandbox.ErrTimeout) {
		return false
	}
	return errors.Is(scanErr, luasandbox.ErrLimit) || !errors.Is(scanErr, decode.ErrLimit)
}

// EncodeScan encodes the blob of a fresh scan: its structure (nil: none),
// the scan's error and header.json's, and the files it found the outputs
// read.
func EncodeScan(st *decode.Structure, scanErr, hdrErr error, deps source.Set) []byte {
	var b []byte
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	flags := byte(0)
	if st != nil {
		flags |= FlagStructure
	}
	if scanErr != nil {
		flags |= FlagScanErr
	}
	if hdrErr != nil {
		flags |= FlagHdrErr
	}
	b = append(b, ScanVersion, flags)
	format := ""
	if st != nil {
		format = st.Format
	}
	str(format)
	if scanErr != nil {
		str(scanErr.Error())
	}
	if hdrErr != nil {
		str(hdrErr.Error())
	}
	var chunks []decode.Chunk
	if st != nil {
		chunks = st.Chunks
	}
	b = binary.AppendUvarint(b, uint64(len(chunks)))
	for i := range chunks {
		c := &chunks[i]
		str(c.Name)
		b = binary.AppendVarint(b, c.Offset)
		b = binary.AppendVarint(b, c.Length)
		b = binary.AppendVarint(b, c.Size)
		if c.Load != nil {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(deps)))
	for _, d := range deps {
		str(d.Path)
		b = binary.AppendUvarint(b, d.Dev)
		b = binary.AppendUvarint(b, d.Ino)
		b = binary.AppendVarint(b, d.Size)
		b = binary.AppendVarint(b, d.MtimeNs)
	}
	return b
}

// MinDep is the fewest bytes one dependency takes in a blob (an empty
// path, four one-byte varints).
const MinDep = 5

// MinChunk is the fewest bytes one chunk takes in a blob (empty name,
// one-byte varints, the loaded byte).
const MinChunk = 5

// recReader reads a blob with a sticky error.
type recReader struct {
	b   []byte
	off int
	err error
}

func (r *recReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("scan record: %s at byte %d", what, r.off)
	}
}

func (r *recReader) byte_(what string) byte {
	if r.err != nil || r.off >= len(r.b) {
		r.fail(what + ": truncated")
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

func (r *recReader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.fail(what + ": bad varint")
		return 0
	}
	r.off += n
	return v
}

func (r *recReader) varint(what string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.off:])
	if n <= 0 {
		r.fail(what + ": bad varint")
		return 0
	}
	r.off += n
	return v
}

func (r *recReader) str(what string) string {
	n := r.uvarint(what)
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)-r.off) {
		r.fail(fmt.Sprintf("%s: %d bytes, %d left", what, n, len(r.b)-r.off))
		return ""
	}
	s := string(r.b[r.off : r.off+int(n)])
	r.off += int(n)
	return s
}

// DecodeScan decodes a blob; sizes are the entry's part sizes (one:
// header.json's). Any inconsistency is an error: the record is not served.
func DecodeScan(blob []byte, sizes []int64) (*Scan, error) {
	if len(sizes) != 1 {
		return nil, fmt.Errorf("scan record: %d parts, want 1", len(sizes))
	}
	r := &recReader{b: blob}
	if v := r.byte_("version"); r.err == nil && v != ScanVersion {
		return nil, fmt.Errorf("scan record: version %d, want %d", v, ScanVersion)
	}
	flags := r.byte_("flags")
	if flags&^(FlagStructure|FlagScanErr|FlagHdrErr) != 0 {
		r.fail("unknown flags")
	}
	rec := &Scan{Structure: flags&FlagStructure != 0, HdrSize: sizes[0]}
	rec.Format = r.str("format")
	if flags&FlagScanErr != 0 {
		rec.HasScanErr = true
		rec.ScanErr = r.str("scan error")
	}
	if flags&FlagHdrErr != 0 {
		rec.HasHdrErr = true
		rec.HdrErr = r.str("header error")
	}
	n := r.uvarint("chunk count")
	// Check the count against the bytes left before allocating.
	if r.err == nil && n > uint64((len(r.b)-r.off)/MinChunk) {
		r.fail(fmt.Sprintf("chunk count %d for %d bytes", n, len(r.b)-r.off))
	}
	if r.err == nil && n > 0 && !rec.Structure {
		r.fail("chunks without a structure")
	}
	if r.err != nil {
		return nil, r.err
	}
	rec.Chunks = make([]Chunk, n)
	for i := range rec.Chunks {
		c := &rec.Chunks[i]
		c.Name = r.str("chunk name")
		c.Offset = r.varint("chunk offset")
		c.Length = r.varint("chunk length")
		c.Size = r.varint("chunk size")
		switch r.byte_("chunk kind") {
		case 0:
		case 1:
			c.Loaded = true
		default:
			r.fail("chunk kind")
		}
		if r.err == nil && (c.Size < 0 || !c.Loaded && c.Size != c.Length) {
			r.fail(fmt.Sprintf("chunk %d: size %d, length %d", i, c.Size, c.Length))
		}
	}
	nd := r.uvarint("dependency count")
	if r.err == nil && nd > uint64((len(r.b)-r.off)/MinDep) {
		r.fail(fmt.Sprintf("dependency count %d for %d bytes", nd, len(r.b)-r.off))
	}
	if r.err != nil {
		return nil, r.err
	}
	if nd > 0 {
		rec.Deps = make(source.Set, nd)
	}
	for i := range rec.Deps {
		d := &rec.Deps[i]
		d.Path = r.str("dependency path")
		d.Dev = r.uvarint("dependency device")
		d.Ino = r.uvarint("dependency inode")
		d.Size = r.varint("dependency size")
		d.MtimeNs = r.varint("dependency mtime")
	}
	if r.err == nil && r.off != len(r.b) {
		r.fail("trailing bytes")
	}
	if rec.HasHdrErr && rec.HdrSize != 0 {
		r.fail("a header error with header bytes")
	}
	if r.err != nil {
		return nil, r.err
	}
	return rec, nil
}
