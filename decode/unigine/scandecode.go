package unigine

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/meshfs/meshfs/decode"
)

// ScanDecode is Scan and Decode of a sound file in one pass: each block is
// read and decompressed once, and header.json's counts are taken from the
// arrays Decode reads (the collision blocks are read too, for the spatial
// tree's node counts). Scan followed by Decode reads and decompresses every
// geometry block twice: Scan to count its arrays, Decode to copy them. It
// is the one way a block is decompressed once for both: the first read of
// a mesh's .glb, when neither has run yet, and `convert`.
//
// It returns Scan's structure and Decode's scene, the same as the two
// calls give for a file that both accept. A file that either refuses is
// not handled here: the error is returned (with a nil structure and scene)
// and the caller runs Scan and Decode as usual, which give the partial
// header.json and the errors in their own terms.
func (Format) ScanDecode(ctx context.Context, src *decode.Source) (*decode.Structure, *decode.Scene, error) {
	r := newFileReader(src.Name, "header", src.R, src.Size)
	h, err := parseHeader(r)
	if err != nil {
		return nil, nil, err
	}
	if !h.lay.blocks {
		// ms11/ms10: small old files in one stream; nothing to share.
		return nil, nil, errNoOnePass
	}
	l, err := locate(src, h)
	if err != nil {
		return nil, nil, err
	}
	f := &h.file
	counts := make([]*surfCounts, len(f.Surfaces))
	err = readBlocks(ctx, src, h, l, func(i int) error {
		if err := readSurface(src, h, l, i, false); err != nil {
			return err
		}
		c, err := countsOf(src, h, l, i)
		counts[i] = c
		return err
	})
	if err != nil {
		release(f)
		return nil, nil, err
	}
	st := &decode.Structure{Format: Name, Header: headerFields(h, l, counts), Chunks: blockChunks(src, h, l)}
	sc, err := Scene(f, src.Name, Format{}.StripExt(filepath.Base(src.Name)))
	release(f)
	if err != nil {
		return nil, nil, err
	}
	st.Header.Add("repairs", decode.RepairFields(sc.Repairs))
	st.Materials = append([]decode.Material(nil), sc.Materials...) // the resolver fills each apart
	return st, sc, nil
}

// errNoOnePass: the format has no blocks to share between Scan and Decode.
var errNoOnePass = errors.New("unigine: ScanDecode reads blocked files only; use Scan and Decode")

// countsOf is what Scan counts in surface i's blocks, from the arrays
// readSurface has just read (which checked every count Scan checks, and
// more) and from its collision block, which it reads.
func countsOf(src *decode.Source, h *header, l *fileLayout, i int) (*surfCounts, error) {
	s := &h.file.Surfaces[i]
	c := newSurfCounts(h.surf[i])
	for k, t := range s.Targets {
		c.targets[k] = targetCounts{vertices: len(t.Positions), tangents: len(t.Tangents)}
	}
	c.cIndices, c.tIndices = len(s.CIndices), len(s.TIndices)
	c.weights, c.uv0, c.uv1, c.colors = len(s.Weights), len(s.UV0), len(s.UV1), len(s.Colors)
	if !h.lay.weights {
		c.weights = -1
	}
	if !h.lay.collision {
		return c, nil
	}
	bb := getBuffers()
	defer putBuffers(bb)
	sec := collisionSection(i)
	data, err := bb.load(src, l.coll[i], sec)
	if err != nil {
		return c, err
	}
	r := newMemReader(src.Name, blockSection(sec), data, 0)
	countCollision(r, c)
	return c, r.err
}
