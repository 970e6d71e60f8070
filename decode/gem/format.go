package gem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/meshfs/meshfs/decode"
)

// Format is the GEM .ply format for meshfs.
type Format struct{}

var _ decode.Format = Format{}

// Name implements decode.Format.
func (Format) Name() string { return "gem-ply" }

// Extensions implements decode.Extensions.
func (Format) Extensions() []string { return []string{".ply"} }

// Sniff accepts a ".ply" file (any case) that starts with EPLY, BPLY or
// PM01. A Stanford PLY file starts with "ply\n" and is not ours.
func (Format) Sniff(name string, head []byte) bool {
	if !strings.EqualFold(filepath.Ext(name), ".ply") || len(head) < 4 {
		return false
	}
	switch string(head[:4]) {
	case MagicEPLY, MagicBPLY, MagicPM01:
		return true
	}
	return false
}

// StripExt removes the final ".ply": "a.b.ply" → "a.b".
func (Format) StripExt(name string) string {
	if ext := filepath.Ext(name); strings.EqualFold(ext, ".ply") && len(name) > len(ext) {
		return name[:len(name)-len(ext)]
	}
	return name
}

// Scan walks the chunks without reading index or other arrays; of VERT it
// reads the float geometry fields, for header.json's "repairs" (see
// scanRepairs).
func (Format) Scan(ctx context.Context, src *decode.Source) (*decode.Structure, error) {
	f, err := scanFile(ctx, src.Name, src.R, src.Size)
	st := structure(f)
	if err == nil {
		if rs, ok := scanRepairs(ctx, src, f); ok {
			st.Header.Add("repairs", rs)
		}
	}
	return st, err
}

// Decode reads the file, arrays included, and builds its scene. A small
// file is read whole and parsed in memory. A larger one is walked through
// its reader (loadFile): the arrays are read straight into the slices the
// parse keeps, and VERT's records stay in the file, to be converted from
// there when the submeshes use (nearly) disjoint ranges of them
// (builder.stream) or read whole otherwise. Nothing else sees the parse,
// so the scene may take its index values over (see builder.own).
func (Format) Decode(ctx context.Context, src *decode.Source) (*decode.Scene, error) {
	return decodeSource(ctx, src, src.Size <= smallFile)
}

// decodeSource is Decode, reading the file whole or through its reader.
func decodeSource(ctx context.Context, src *decode.Source, whole bool) (*decode.Scene, error) {
	if src.Size < 0 {
		return nil, &decode.FormatError{File: src.Name, Msg: fmt.Sprintf("negative size %d", src.Size)}
	}
	if whole {
		b, err := readAll(src)
		if err != nil {
			return nil, err
		}
		f, err := Parse(ctx, src.Name, b)
		if err != nil {
			return nil, err
		}
		return (&builder{file: src.Name, f: f, own: true}).build(ctx)
	}
	f, err := loadFile(ctx, src.Name, src.R, src.Size, true)
	if err != nil {
		return nil, err
	}
	return (&builder{file: src.Name, f: f, own: true, src: src.R}).build(ctx)
}

// smallFile is the size up to which Decode reads the whole file at once:
// one read costs less than the several of a walk through the reader.
const smallFile = 256 << 10

func readAll(src *decode.Source) ([]byte, error) {
	b := make([]byte, src.Size)
	n, err := src.R.ReadAt(b, 0)
	if int64(n) == src.Size {
		return b, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return nil, &decode.FormatError{File: src.Name, Offset: int64(n), Msg: fmt.Sprintf("reading %d bytes", src.Size), Err: err}
}

// structure turns a (possibly partial) scan into header fields and chunks.
func structure(f *File) *decode.Structure {
	st := &decode.Structure{Format: Format{}.Name(), Header: headerFields(f)}
	width := 2
	if n := len(f.Chunks); n > 100 {
		width = len(fmt.Sprint(n - 1))
	}
	for _, c := range f.Chunks {
		sp := c.Where()
		st.Chunks = append(st.Chunks, decode.Chunk{
			Name:   fmt.Sprintf("%0*d_%s.bin", width, sp.Index, c.FourCC()),
			Offset: sp.Offset, Length: sp.Length, Size: sp.Length,
		})
		if s, ok := c.(*Submesh); ok {
			st.Materials = append(st.Materials, material(len(st.Materials), s))
		}
	}
	return st
}
