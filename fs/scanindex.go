package fs

// Structure scans persisted in the disk cache (the record's format and
// rules: store.EncodeScan), so that a remount lists, stats and reads
// header.json without scanning anything. Raw chunks are read from the
// source window as before. A loaded chunk's bytes need the decoder's
// loader, which a record cannot carry: reading one scans the source then
// (a "live" scan, counted in stats.json as a scan) and checks that the
// live chunk table is the recorded one.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/fs/cache"
	"github.com/meshfs/meshfs/fs/diskcache"
	"github.com/meshfs/meshfs/internal/store"
	"github.com/meshfs/meshfs/internal/version"
)

// outScanLive is the memory cache output of a scan made to load a chunk of
// a persisted scan (labelled as a scan).
const outScanLive = "scan-live"

// scanRecordOf returns the persisted scan of key, decoded, or nil. A record
// that does not decode is removed from the disk cache.
func (f *FS) scanRecordOf(key cache.Key) *store.ScanRecord {
	if f.disk == nil {
		return nil
	}
	dk := f.diskKey(key)
	blob, sizes, ok := f.disk.Meta(dk)
	if !ok {
		return nil
	}
	rec, err := store.DecodeScan(blob, sizes)
	if err != nil {
		f.disk.Remove(dk)
		f.logOnce("scan-record-damaged", "meshfs: disk cache: %s: %v (scanned again)", key.Path, err)
		return nil
	}
	return rec
}

// saveScan persists a fresh scan beside the reader (Close waits for it).
func (f *FS) saveScan(key cache.Key, r *scanResult) {
	if f.disk == nil || !store.Persistable(r.scanErr) {
		return
	}
	blob := store.EncodeScan(r.st, r.scanErr, r.hdrErr)
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
func (m *meshDir) fromRecord(fp version.Version, rec *store.ScanRecord) *scanResult {
	r := &scanResult{chunkIdx: map[string]int{}, hdrSize: rec.HdrSize, disk: true}
	if rec.HasScanErr {
		r.scanErr = errors.New(rec.ScanErr)
	}
	if rec.HasHdrErr {
		r.hdrErr = errors.New(rec.HdrErr)
	}
	if rec.Structure {
		r.st = &decode.Structure{Format: rec.Format, Chunks: make([]decode.Chunk, len(rec.Chunks))}
		for i, c := range rec.Chunks {
			r.st.Chunks[i] = decode.Chunk{Name: c.Name, Offset: c.Offset, Length: c.Length, Size: c.Size}
			if c.Loaded {
				r.st.Chunks[i].Load = m.liveLoader(fp, i, c)
			}
			name := decode.SafeName(c.Name)
			if _, dup := r.chunkIdx[name]; !dup {
				r.chunks = append(r.chunks, name)
			}
			r.chunkIdx[name] = i
		}
	}
	if r.hdrErr == nil {
		dk := m.fsys.diskKey(m.key(fp, outScan))
		r.hdrLoad = func() ([]byte, error) {
			if parts, ok := m.fsys.disk.Get(dk); ok && int64(len(parts[0])) == rec.HdrSize {
				return parts[0], nil
			}
			// Damaged (Get discarded it): render it from a live scan.
			live, err := m.liveScan(fp)
			if err != nil {
				return nil, err
			}
			hdr, err := m.mesh.Header(live.st, live.scanErr)
			if err == nil && int64(len(hdr)) != rec.HdrSize {
				err = fmt.Errorf("%s: header.json is %d bytes, the disk cache's record said %d", m.abs, len(hdr), rec.HdrSize)
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
func (m *meshDir) liveLoader(fp version.Version, i int, want store.RecChunk) func() ([]byte, error) {
	return func() ([]byte, error) {
		live, err := m.liveScan(fp)
		if err != nil {
			return nil, err
		}
		if live.st == nil || i >= len(live.st.Chunks) {
			return nil, fmt.Errorf("%s: chunk %s: not found by a new scan (the disk cache's record is not this file's)", m.abs, want.Name)
		}
		c := &live.st.Chunks[i]
		if c.Name != want.Name || c.Offset != want.Offset || c.Length != want.Length || c.Size != want.Size || c.Load == nil {
			return nil, fmt.Errorf("%s: chunk %s: a new scan differs from the disk cache's record", m.abs, want.Name)
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
