package store

import (
	"context"
	"errors"
	"os"
	"syscall"

	"github.com/meshfs/meshfs/decode"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
)

// What a mesh folder shows for one version of its source, as far as the
// store knows it: the mount's nodes ask these and translate the answers.

// Listing is the folder table of m for version v given what is known
// (outputs.Mesh.Files), the scan it was made from, whether that scan was
// in memory already (warm), and whether the listing is final for v:
// error.txt is listed once a conversion is known to fail, so the listing
// is final when error.txt is listed or when the geometry outputs the
// folder has are known to have converted (in memory or in the disk cache).
func (s *Store) Listing(ctx context.Context, m *outputs.Mesh, v source.Version) (files []outputs.Entry, r *ScanResult, warm, final bool, err error) {
	_, warm = s.cache.Peek(keyOf(m, v, OutScan))
	if r, err = s.Scan(ctx, m, v); err != nil {
		return nil, nil, warm, false, err
	}
	broken := s.knownBroken(m, v, r)
	animated := !broken && r.ScanErr == nil && s.animated(ctx, m, v)
	files = m.Files(outputs.State{Chunks: len(r.Chunks) > 0, Broken: broken, Animated: animated})
	final = broken || (s.converted(m, v, OutGLB) && (!m.HasOBJ() || s.converted(m, v, OutOBJ)) &&
		(!m.HasPreview() || s.converted(m, v, OutPreview)))
	return files, r, warm, final, nil
}

// geometryGone reports whether the geometry outputs are not in the folder
// of version v because it is known broken (their names are not found, as
// the listing shows). Nothing known is not gone: the lookup's conversion
// will tell, and a scan made here would be made apart from that
// conversion's decoding, which makes it in one pass where it can.
func (s *Store) geometryGone(ctx context.Context, m *outputs.Mesh, v source.Version) bool {
	if _, ok := s.cache.Peek(keyOf(m, v, OutScan)); !ok && !s.failedOnDisk(m, v) {
		return false
	}
	r, err := s.Scan(ctx, m, v)
	return err == nil && s.knownBroken(m, v, r)
}

// Holds reports whether the folder of version v holds entry e, as far as
// is known without converting (outputs.State.Holds): chunks/ when the scan
// found chunks; not the geometry outputs of a mesh known broken
// (geometryGone), nor NAME.animated.glb without an animation of the mesh.
// keep is false for an absence the kernel must not keep as a negative
// entry: no event may come to drop it when a fixed source converts or an
// animation file comes.
func (s *Store) Holds(ctx context.Context, m *outputs.Mesh, v source.Version, e outputs.Entry) (holds, keep bool, err error) {
	switch {
	case e.Output == outputs.OutChunks:
		r, err := s.Scan(ctx, m, v)
		if err != nil {
			return false, false, err
		}
		return len(r.Chunks) > 0, true, nil
	case e.Converted() && s.geometryGone(ctx, m, v):
		return false, false, nil
	case e.Output == outputs.OutAnimated && !s.animated(ctx, m, v):
		return false, false, nil
	}
	return true, true, nil
}

// CheapSize is the size of entry e of m's folder (or of chunk, when set)
// for version v when it is known without converting, loading or rendering
// it: a converted output's from the disk cache's index (from memory too
// when fromMemory), header.json's and a chunk's from the scan, and a
// preview's fixed length after one (previewSize) (scanned is
// then set: the scan may have found files that narrow the folder's
// permissions). A converted output unknown with fromMemory is notCheap:
// its size would cost a conversion.
func (s *Store) CheapSize(ctx context.Context, m *outputs.Mesh, v source.Version, e outputs.Entry, chunk string, fromMemory bool) (size int64, scanned, ok, notCheap bool) {
	if chunk == "" && e.Output == outputs.OutPreview {
		// Fixed before it is drawn: told after a scan, no conversion.
		if size, ok := s.previewSize(ctx, m, v); ok {
			return size, true, true, false
		}
		return 0, false, false, fromMemory
	}
	if chunk == "" && e.Converted() {
		if size, ok := s.convertedSize(m, v, e, fromMemory); ok {
			return size, false, true, false
		}
		return 0, false, false, fromMemory
	}
	if chunk != "" || e.Output == outputs.OutHeader {
		size, ok := s.knownSize(ctx, m, v, chunk == "", chunk)
		return size, true, ok, false
	}
	return 0, false, false, false
}

// InMemory returns the bytes of converted entry e of m's folder for
// version v while memory still holds them.
func (s *Store) InMemory(m *outputs.Mesh, v source.Version, e outputs.Entry) ([]byte, bool) {
	if !e.Converted() {
		return nil, false
	}
	output, part := Conversion(e)
	g, ok := s.cache.Use(keyOf(m, v, output))
	if !ok || g.Err != nil {
		return nil, false
	}
	if output == OutPreview {
		b, err := m.PaddedPreview(g.Part(part))
		return b, err == nil
	}
	return g.Part(part), true
}

// PassFile returns the pinned disk-cache entry of m's .glb for version v
// and its size, converting first when neither cache has it, when the
// kernel's passthrough may read it: the kernel reads a backing file to its
// end, so only an entry that is exactly the .glb serves (a single part; the
// .obj shares its entry with the .mtl), of at least PassMin bytes, checked
// whole. ok is false when the open
// must be served otherwise: a conversion error, an output below PassMin or
// not in the disk cache (yet: a fresh conversion is saved once its readers
// pause), or a damaged entry. The caller closes h.
func (s *Store) PassFile(ctx context.Context, m *outputs.Mesh, v source.Version) (h *diskHandle, size int64, ok bool) {
	return s.disk.Pass(keyOf(m, v, OutGLB), func() bool {
		e, err := s.geometry(ctx, m, v, OutGLB)
		return err == nil && e.Err == nil
	})
}

// PushMax bounds the header.json pushed into the kernel's page cache.
const PushMax = 64 << 10

// Pushable returns header.json's bytes from scan r of version v when they
// may be pushed into the kernel's page cache with the folder's listing
// (so a walker reading it next needs no request): only a header in memory
// (a persisted one would be read from the disk cache for a reader who may
// never come), of at most PushMax bytes, and not one that carries a
// conversion's error instead.
func (s *Store) Pushable(m *outputs.Mesh, v source.Version, r *ScanResult) ([]byte, bool) {
	data, inMemory := r.headerInMemory()
	if !inMemory || len(data) == 0 || len(data) > PushMax {
		return nil, false
	}
	if err, scan := s.failure(m, v, r); err != nil && !scan {
		return nil, false
	}
	return data, true
}

// ErrNotCheap is the answer (ChunkCheap's, a mount's node's size) when the
// size would cost a conversion and only a cheap one was asked for.
var ErrNotCheap = errors.New("the size is known only by converting")

// ChunkCheap reports (nil) whether the attributes of chunk name of
// version v are known without loading it: a raw chunk's, or a loaded
// chunk's in memory; else ErrNotCheap, or os.ErrNotExist when the scan has
// no such chunk.
func (s *Store) ChunkCheap(ctx context.Context, m *outputs.Mesh, v source.Version, name string) error {
	r, err := s.Scan(ctx, m, v)
	if err != nil {
		return err
	}
	ch, ok := r.chunk(name)
	if !ok {
		return os.ErrNotExist
	}
	if ch.Load != nil {
		if _, ok := s.cache.Peek(keyOf(m, v, OutChunk+"/"+name)); !ok {
			return ErrNotCheap
		}
	}
	return nil
}

// ScanAhead scans the mesh at path (stat st, format) ahead of a walker,
// unless memory holds its scan, and reports whether it did.
func (s *Store) ScanAhead(ctx context.Context, path string, st *syscall.Stat_t, format decode.Format) bool {
	m := s.NewMesh(path, format)
	v := s.versions.Version(path, source.FromStat(st))
	if _, ok := s.cache.Peek(keyOf(m, v, OutScan)); ok {
		return false
	}
	_, err := s.Scan(ctx, m, v)
	return err == nil
}
