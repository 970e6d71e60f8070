package fs

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
//	byte     scanRecordVersion
//	byte     flags: 1 structure present, 2 scan error, 4 header error
//	string   structure's format name
//	string   scan error text (when flag 2)
//	string   header error text (when flag 4)
//	uvarint  chunk count, then per chunk in scan order:
//	string   name (as the scan gave it; listed through decode.SafeName)
//	varint   offset, length, size
//	byte     1 when loaded (decompressed), 0 when raw
//
// with string = uvarint length + bytes. The index checks the blob's CRC and
// the data file's; decodeScanRecord checks every count against the bytes
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
	"github.com/meshfs/meshfs/fs/cache"
	"github.com/meshfs/meshfs/fs/diskcache"
	"github.com/meshfs/meshfs/internal/version"
)

const scanRecordVersion = 1

const (
	recStructure = 1 << iota
	recScanErr
	recHdrErr
)

// outScanLive is the memory cache output of a scan made to load a chunk of
// a persisted scan (labelled as a scan).
const outScanLive = "scan-live"

// scanRecord is a decoded persisted scan.
type scanRecord struct {
	structure bool
	format    string
	// scanErr and hdrErr are the errors' texts, when hasScanErr, hasHdrErr.
	scanErr, hdrErr       string
	hasScanErr, hasHdrErr bool
	chunks                []recChunk
	hdrSize               int64
}

type recChunk struct {
	name                 string
	offset, length, size int64
	loaded               bool
}

// persistable reports whether a scan's outcome belongs to the source
// version (and so may be persisted): not when the source could not be
// opened or read (an I/O error, a permission), nor when the scan ran out
// of time (the machine was busy; a later scan may finish).
func persistable(scanErr error) bool {
	if scanErr == nil {
		return true
	}
	var pe *fs.PathError
	var errno syscall.Errno
	return !errors.Is(scanErr, decode.ErrLimit) && !errors.As(scanErr, &pe) && !errors.As(scanErr, &errno) &&
		!errors.Is(scanErr, context.Canceled) && !errors.Is(scanErr, context.DeadlineExceeded)
}

// encodeScanRecord encodes a fresh scan's blob.
func encodeScanRecord(r *scanResult) []byte {
	var b []byte
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	flags := byte(0)
	if r.st != nil {
		flags |= recStructure
	}
	if r.scanErr != nil {
		flags |= recScanErr
	}
	if r.hdrErr != nil {
		flags |= recHdrErr
	}
	b = append(b, scanRecordVersion, flags)
	format := ""
	if r.st != nil {
		format = r.st.Format
	}
	str(format)
	if r.scanErr != nil {
		str(r.scanErr.Error())
	}
	if r.hdrErr != nil {
		str(r.hdrErr.Error())
	}
	var chunks []decode.Chunk
	if r.st != nil {
		chunks = r.st.Chunks
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
	return b
}

// minRecChunk is the fewest bytes one chunk takes in a blob (empty name,
// one-byte varints, the loaded byte).
const minRecChunk = 5

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

// decodeScanRecord decodes a blob; sizes are the entry's part sizes (one:
// header.json's). Any inconsistency is an error: the record is not served.
func decodeScanRecord(blob []byte, sizes []int64) (*scanRecord, error) {
	if len(sizes) != 1 {
		return nil, fmt.Errorf("scan record: %d parts, want 1", len(sizes))
	}
	r := &recReader{b: blob}
	if v := r.byte_("version"); r.err == nil && v != scanRecordVersion {
		return nil, fmt.Errorf("scan record: version %d, want %d", v, scanRecordVersion)
	}
	flags := r.byte_("flags")
	if flags&^(recStructure|recScanErr|recHdrErr) != 0 {
		r.fail("unknown flags")
	}
	rec := &scanRecord{structure: flags&recStructure != 0, hdrSize: sizes[0]}
	rec.format = r.str("format")
	if flags&recScanErr != 0 {
		rec.hasScanErr = true
		rec.scanErr = r.str("scan error")
	}
	if flags&recHdrErr != 0 {
		rec.hasHdrErr = true
		rec.hdrErr = r.str("header error")
	}
	n := r.uvarint("chunk count")
	// Check the count against the bytes left before allocating.
	if r.err == nil && n > uint64((len(r.b)-r.off)/minRecChunk) {
		r.fail(fmt.Sprintf("chunk count %d for %d bytes", n, len(r.b)-r.off))
	}
	if r.err == nil && n > 0 && !rec.structure {
		r.fail("chunks without a structure")
	}
	if r.err != nil {
		return nil, r.err
	}
	rec.chunks = make([]recChunk, n)
	for i := range rec.chunks {
		c := &rec.chunks[i]
		c.name = r.str("chunk name")
		c.offset = r.varint("chunk offset")
		c.length = r.varint("chunk length")
		c.size = r.varint("chunk size")
		switch r.byte_("chunk kind") {
		case 0:
		case 1:
			c.loaded = true
		default:
			r.fail("chunk kind")
		}
		if r.err == nil && (c.size < 0 || !c.loaded && c.size != c.length) {
			r.fail(fmt.Sprintf("chunk %d: size %d, length %d", i, c.size, c.length))
		}
	}
	if r.err == nil && r.off != len(r.b) {
		r.fail("trailing bytes")
	}
	if rec.hasHdrErr && rec.hdrSize != 0 {
		r.fail("a header error with header bytes")
	}
	if r.err != nil {
		return nil, r.err
	}
	return rec, nil
}

// scanRecordOf returns the persisted scan of key, decoded, or nil. A record
// that does not decode is removed from the disk cache.
func (f *FS) scanRecordOf(key cache.Key) *scanRecord {
	if f.disk == nil {
		return nil
	}
	dk := f.diskKey(key)
	blob, sizes, ok := f.disk.Meta(dk)
	if !ok {
		return nil
	}
	rec, err := decodeScanRecord(blob, sizes)
	if err != nil {
		f.disk.Remove(dk)
		f.logOnce("scan-record-damaged", "meshfs: disk cache: %s: %v (scanned again)", key.Path, err)
		return nil
	}
	return rec
}

// saveScan persists a fresh scan beside the reader (Close waits for it).
func (f *FS) saveScan(key cache.Key, r *scanResult) {
	if f.disk == nil || !persistable(r.scanErr) {
		return
	}
	blob := encodeScanRecord(r)
	hdr := r.header
	if r.hdrErr != nil {
		hdr = nil
	}
	dk := f.diskKey(key)
	f.diskWrites.Add(1)
	go func() {
		defer f.diskWrites.Done()
		if err := f.disk.PutMeta(dk, [][]byte{hdr}, blob); err != nil && err != diskcache.ErrTooBig {
			f.logOnce("disk-put-error", "meshfs: disk cache: %v", err)
		}
	}()
}

// fromRecord builds the scan result of a persisted record: chunk names,
// sizes and errors from memory; header.json's bytes read from the disk
// cache when first asked for; loaded chunks' bytes through a live scan.
func (m *meshDir) fromRecord(fp version.Version, rec *scanRecord) *scanResult {
	r := &scanResult{chunkIdx: map[string]int{}, hdrSize: rec.hdrSize, disk: true}
	if rec.hasScanErr {
		r.scanErr = errors.New(rec.scanErr)
	}
	if rec.hasHdrErr {
		r.hdrErr = errors.New(rec.hdrErr)
	}
	if rec.structure {
		r.st = &decode.Structure{Format: rec.format, Chunks: make([]decode.Chunk, len(rec.chunks))}
		for i, c := range rec.chunks {
			r.st.Chunks[i] = decode.Chunk{Name: c.name, Offset: c.offset, Length: c.length, Size: c.size}
			if c.loaded {
				r.st.Chunks[i].Load = m.liveLoader(fp, i, c)
			}
			name := decode.SafeName(c.name)
			if _, dup := r.chunkIdx[name]; !dup {
				r.chunks = append(r.chunks, name)
			}
			r.chunkIdx[name] = i
		}
	}
	if r.hdrErr == nil {
		dk := m.fsys.diskKey(m.key(fp, outScan))
		r.hdrLoad = func() ([]byte, error) {
			if parts, ok := m.fsys.disk.Get(dk); ok && int64(len(parts[0])) == rec.hdrSize {
				return parts[0], nil
			}
			// Damaged (Get discarded it): render it from a live scan.
			live, err := m.liveScan(fp)
			if err != nil {
				return nil, err
			}
			hdr, err := m.mesh.Header(live.st, live.scanErr)
			if err == nil && int64(len(hdr)) != rec.hdrSize {
				err = fmt.Errorf("%s: header.json is %d bytes, the disk cache's record said %d", m.abs, len(hdr), rec.hdrSize)
			}
			return hdr, err
		}
	}
	return r
}

// liveScan is a scan of fp made for a persisted scan result (its loaded
// chunks, or a damaged header), cached in memory and counted as a scan.
func (m *meshDir) liveScan(fp version.Version) (*scanResult, error) {
	e, err := m.fsys.cache.Get(context.Background(), m.key(fp, outScanLive), m.label(outScan), func(ctx context.Context) (*cache.Entry, error) {
		st, scanErr := m.mesh.Scan(ctx)
		if st == nil && errors.Is(scanErr, fs.ErrNotExist) {
			return nil, scanErr
		}
		aux := int64(512)
		if st != nil {
			aux += 128 * int64(len(st.Chunks))
		}
		return &cache.Entry{Aux: &scanResult{st: st, scanErr: scanErr}, AuxWeight: aux}, nil
	})
	if err != nil {
		return nil, err
	}
	return e.Aux.(*scanResult), nil
}

// liveLoader loads chunk i of a persisted scan through a live scan, after
// checking that the live scan found the recorded chunk there.
func (m *meshDir) liveLoader(fp version.Version, i int, want recChunk) func() ([]byte, error) {
	return func() ([]byte, error) {
		live, err := m.liveScan(fp)
		if err != nil {
			return nil, err
		}
		if live.st == nil || i >= len(live.st.Chunks) {
			return nil, fmt.Errorf("%s: chunk %s: not found by a new scan (the disk cache's record is not this file's)", m.abs, want.name)
		}
		c := &live.st.Chunks[i]
		if c.Name != want.name || c.Offset != want.offset || c.Length != want.length || c.Size != want.size || c.Load == nil {
			return nil, fmt.Errorf("%s: chunk %s: a new scan differs from the disk cache's record", m.abs, want.name)
		}
		return c.Load()
	}
}

// knownSize returns the size of a mesh folder's header.json (kHeader) or of
// one chunk (kChunk, by its listed name) for the source version fp when it
// is known from the scan alone, without reading header.json's bytes from
// the disk cache or loading a chunk: false when the scan failed for
// another reason, the file does not exist (header.json after a header
// error), or the size is only known by producing it (a chunk outside the
// file, or over the output limit, whose stat reports the error; a loaded
// chunk of a fresh scan, loaded as before).
func (m *meshDir) knownSize(ctx context.Context, fp version.Version, kind outKind, chunk string) (int64, bool) {
	r, err := m.scan(ctx, fp)
	if err != nil {
		return 0, false
	}
	return m.knownSizeIn(r, fp, kind, chunk)
}

// knownSizeIn is knownSize given the scan r of version fp.
func (m *meshDir) knownSizeIn(r *scanResult, fp version.Version, kind outKind, chunk string) (int64, bool) {
	switch kind {
	case kHeader:
		if r.hdrErr != nil {
			return 0, false
		}
		if err, scan := m.failure(fp, r); err != nil && !scan {
			// It carries the conversion's error: its size is known by
			// rendering it.
			return 0, false
		}
		return r.headerSize(), true
	case kChunk:
		c, ok := r.chunk(chunk)
		if !ok {
			return 0, false
		}
		if m.mesh.CheckChunk(c) != nil {
			return 0, false
		}
		if c.Load == nil {
			if c.Offset < 0 || c.Length < 0 || c.Offset > fp.Size || c.Length > fp.Size-c.Offset {
				return 0, false
			}
			return c.Length, true
		}
		if !r.persisted() {
			return 0, false
		}
		// A chunk that failed to load in this mount: its stat says so.
		if e, ok := m.fsys.cache.Peek(m.key(fp, outChunk+"/"+chunk)); ok && e.Err != nil {
			return 0, false
		}
		return c.Size, true
	}
	return 0, false
}
