package gem

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/meshfs/meshfs/decode"
)

// Vol mirrors a GEM .vol collision polyhedron (EVLM): its vertices, its
// triangles and a side number per triangle.
type Vol struct {
	Vertices [][3]float32
	Indices  []uint16
	Sides    []byte
}

type volSection struct {
	Tag         string
	Off, Length int64
}

// maxVol bounds the .vol read: real polyhedra are a few hundred bytes.
const maxVol = 16 << 20

// ParseVol reads a .vol file: EVLM, then VERT, INDX and SIDE sections,
// each a u32 count and its items.
func ParseVol(file string, b []byte) (*Vol, error) {
	v, _, err := parseVol(file, b)
	return v, err
}

func parseVol(file string, b []byte) (*Vol, []volSection, error) {
	r := &anmReader{file: file, b: b}
	if err := r.need(4, "header", "magic"); err != nil {
		return nil, nil, err
	}
	if string(b[:4]) != "EVLM" {
		return nil, nil, r.errf("header", "magic", 0, "%q is not EVLM", b[:4])
	}
	r.off = 4
	v := &Vol{}
	var secs []volSection
	seen := map[string]bool{}
	for r.off < len(b) {
		start := r.off
		if err := r.need(8, "sections", "tag"); err != nil {
			return v, secs, err
		}
		t := r.tag()
		n := r.u32()
		size := map[string]uint64{"VERT": 12, "INDX": 2, "SIDE": 1}[t]
		if size == 0 {
			return v, secs, r.errf(t, "tag", start, "unknown section %q (want VERT, INDX or SIDE)", t)
		}
		if seen[t] {
			return v, secs, r.errf(t, "tag", start, "a second %s", t)
		}
		seen[t] = true
		if uint64(n)*size > uint64(len(b)-r.off) {
			e := r.errf(t, "count", start+4, "%d items of %d bytes, %d bytes left", n, size, len(b)-r.off)
			e.Err = decode.ErrTruncated
			return v, secs, e
		}
		switch t {
		case "VERT":
			v.Vertices = make([][3]float32, n)
			for i := range v.Vertices {
				v.Vertices[i] = r.f3()
			}
		case "INDX":
			if n%3 != 0 {
				return v, secs, r.errf(t, "count", start+4, "%d indices are not whole triangles", n)
			}
			v.Indices = make([]uint16, n)
			for i := range v.Indices {
				v.Indices[i] = r.u16()
			}
		case "SIDE":
			v.Sides = append([]byte(nil), b[r.off:r.off+int(n)]...)
			r.off += int(n)
		}
		secs = append(secs, volSection{t, int64(start), int64(r.off - start)})
	}
	return v, secs, nil
}

// EncodeVol writes v as a .vol file: EVLM, VERT, INDX, then SIDE when v
// has sides.
func EncodeVol(v *Vol) []byte {
	w := &writer{}
	w.b = append(w.b, "EVLM"...)
	w.b = append(w.b, "VERT"...)
	w.u32(uint32(len(v.Vertices)))
	for _, p := range v.Vertices {
		w.f3(p)
	}
	w.b = append(w.b, "INDX"...)
	w.u32(uint32(len(v.Indices)))
	for _, i := range v.Indices {
		w.u16(i)
	}
	if v.Sides != nil {
		w.b = append(w.b, "SIDE"...)
		w.u32(uint32(len(v.Sides)))
		w.b = append(w.b, v.Sides...)
	}
	return w.b
}

// VolFormat is the GEM .vol collision polyhedron for meshfs: one mesh of
// its triangles, without material.
type VolFormat struct{}

var _ decode.Format = VolFormat{}

// Name implements decode.Format.
func (VolFormat) Name() string { return "gem-vol" }

// Extensions implements decode.Extensions.
func (VolFormat) Extensions() []string { return []string{".vol"} }

// Sniff accepts ".vol" files that start with EVLM.
func (VolFormat) Sniff(name string, head []byte) bool {
	return strings.EqualFold(filepath.Ext(name), ".vol") && len(head) >= 4 && string(head[:4]) == "EVLM"
}

// StripExt removes the final ".vol".
func (VolFormat) StripExt(name string) string {
	if ext := filepath.Ext(name); strings.EqualFold(ext, ".vol") && len(name) > len(ext) {
		return name[:len(name)-len(ext)]
	}
	return name
}

func readVol(src *decode.Source) ([]byte, error) {
	if src.Size < 0 || src.Size > maxVol {
		return nil, &decode.FormatError{File: src.Name, Msg: fmt.Sprintf("polyhedron of %d bytes (limit %d)", src.Size, maxVol), Err: decode.ErrLimit}
	}
	return readAll(src)
}

// Scan reports the sections and the polyhedron's counts.
func (f VolFormat) Scan(ctx context.Context, src *decode.Source) (*decode.Structure, error) {
	st := &decode.Structure{Format: f.Name()}
	b, err := readVol(src)
	if err != nil {
		return st, err
	}
	v, secs, err := parseVol(src.Name, b)
	for i, s := range secs {
		st.Chunks = append(st.Chunks, decode.Chunk{Name: fmt.Sprintf("%02d_%s.bin", i, s.Tag), Offset: s.Off, Length: s.Length, Size: s.Length})
	}
	if v == nil {
		return st, err
	}
	st.Header.Add("vertex_count", len(v.Vertices))
	st.Header.Add("triangle_count", len(v.Indices)/3)
	sides := map[byte]bool{}
	for _, s := range v.Sides {
		sides[s] = true
	}
	st.Header.Add("side_count", len(sides))
	st.Header.Add("unit", "GEM unit")
	st.Header.Add("counts", decode.SummaryFields(1, len(v.Indices)/3, len(v.Vertices), 0, 0, 0))
	return st, err
}

// Decode gives the polyhedron as one mesh, positions converted as the
// .ply decoder converts them ((x, y, z) → (x, z, y), GEM units). The
// files' triangles are clockwise seen from outside, as Direct3D's fronts
// (measured on every real .vol), so after that mirror they are
// counter-clockwise: the winding is kept.
func (f VolFormat) Decode(ctx context.Context, src *decode.Source) (*decode.Scene, error) {
	b, err := readVol(src)
	if err != nil {
		return nil, err
	}
	v, err := ParseVol(src.Name, b)
	if err != nil {
		return nil, err
	}
	if v.Sides != nil && len(v.Sides) != len(v.Indices)/3 {
		return nil, decode.Errorf(src.Name, "SIDE", "count", 0, "%d sides for %d triangles", len(v.Sides), len(v.Indices)/3)
	}
	p := decode.Primitive{Material: -1}
	for _, q := range v.Vertices {
		if !decode.Finite(q[:]...) {
			return nil, decode.Errorf(src.Name, "VERT", "", 0, "vertex %v is not finite", q)
		}
		p.Positions = append(p.Positions, [3]float32{q[0], q[2], q[1]})
	}
	p.Indices = make([]uint32, len(v.Indices))
	for i, x := range v.Indices {
		if int(x) >= len(v.Vertices) {
			return nil, decode.Errorf(src.Name, "INDX", "", int64(i), "index %d of %d vertices", x, len(v.Vertices))
		}
		p.Indices[i] = uint32(x)
	}
	m := decode.Mesh{Name: decode.SafeName(f.StripExt(filepath.Base(src.Name)))}
	if len(p.Indices) > 0 {
		m.Primitives = []decode.Primitive{p}
	}
	return &decode.Scene{Meshes: []decode.Mesh{m}}, nil
}
