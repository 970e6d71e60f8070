package tfever

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"github.com/meshfs/meshfs/decode"
)

// load reads and runs the script and reads its tables.
func (f Msh) load(ctx context.Context, src *decode.Source) ([]byte, *mshData, error) {
	script, err := readScript(src, f.Limits)
	if err != nil {
		return nil, nil, err
	}
	v, err := runScript(ctx, src, script, f.Limits)
	if err != nil {
		return script, nil, err
	}
	r := reader{file: src.Name}
	m, err := r.msh(v)
	if err != nil {
		return script, nil, err
	}
	return script, m, nil
}

// blob is the opened companion file.
type blob struct {
	name string
	r    io.ReaderAt
	size int64
}

func (b *blob) close() {
	if c, ok := b.r.(io.Closer); ok {
		c.Close()
	}
}

// openBlob opens NAME.msh.blob beside the script. A missing blob is a
// FormatError for this mesh, not a failure of the folder.
func openBlob(src *decode.Source) (*blob, error) {
	name := blobName(src)
	full := filepath.Join(filepath.Dir(src.Name), name)
	if src.OpenSibling == nil {
		return nil, decode.Errorf(full, "blob", "", 0, "cannot open the companion: no folder to look in")
	}
	r, size, err := src.OpenSibling(name)
	if err != nil {
		// The error names the blob once: File is its path.
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &decode.FormatError{File: full, Section: "blob", Msg: "cannot open the companion", Err: err}
	}
	return &blob{name: full, r: r, size: size}, nil
}

// checkLayout validates every region against the blob's size and the
// submeshes' index lists against each other (FORMATS.md §2): regions inside
// the blob, counts divisible by their element size, equal list lengths per
// submesh, triangle lists. Index values are checked when decoding.
func checkLayout(m *mshData, file, scriptName string, blobSize int64) error {
	checkRegion := func(section string, r region) error {
		if r.Count%r.itemSize() != 0 {
			return decode.Errorf(file, section, "count", r.Offset,
				"count %d bytes is not a multiple of the %d-byte element", r.Count, r.itemSize())
		}
		if r.Offset > blobSize || r.Count > blobSize-r.Offset {
			return &decode.FormatError{File: file, Section: section, Field: "offset", Offset: r.Offset,
				Msg: fmt.Sprintf("region of %d bytes at offset %d runs past the %d-byte blob", r.Count, r.Offset, blobSize),
				Err: decode.ErrTruncated}
		}
		return nil
	}
	pos := m.attr("position")
	if pos == nil {
		return decode.Errorf(scriptName, "data()", "vertexAttr.position", 0, "the mesh has no position attribute")
	}
	for _, a := range m.Attrs {
		if err := checkRegion("vertexAttr."+a.Name, a); err != nil {
			return err
		}
		if want := wantComp(a.Name); want != nil && !want(a.NumComp) {
			return decode.Errorf(file, "vertexAttr."+a.Name, "numComp", a.Offset,
				"numComp is %d, which a %s attribute cannot have", a.NumComp, a.Name)
		}
	}
	// Real blobs are covered by their regions exactly once. Index lists may
	// in principle be shared, but every submesh's lists become output
	// proportional to their length, so a short script naming one region
	// many times could make a small blob decode into gigabytes: the index
	// bytes of all submeshes together may be at most maxShare times the blob.
	var indexBytes int64
	for _, sm := range m.SubMeshes {
		for _, r := range sm.Indices {
			indexBytes += r.Count
			if indexBytes > maxShare*blobSize {
				return &decode.FormatError{File: file, Section: "subMeshes", Field: "count", Offset: r.Offset,
					Msg: fmt.Sprintf("index lists total more than %d times the %d-byte blob: regions are reused", maxShare, blobSize),
					Err: decode.ErrLimit}
			}
		}
	}
	for i, sm := range m.SubMeshes {
		sp := sm.index("position")
		if sp == nil {
			return decode.Errorf(scriptName, "data()", fmt.Sprintf("subMeshes[%d].indices.position", i+1), 0,
				"submesh %d has no position index list", i)
		}
		for _, r := range sm.Indices {
			section := fmt.Sprintf("submesh %d indices.%s", i, r.Name)
			if err := checkRegion(section, r); err != nil {
				return err
			}
			if m.attr(r.Name) == nil {
				return decode.Errorf(file, section, "", r.Offset, "index list for %q, which vertexAttr does not have", r.Name)
			}
			if r.Count != sp.Count {
				return decode.Errorf(file, section, "count", r.Offset,
					"%d indices, but the position list has %d: per-attribute lists of a submesh must have equal lengths",
					r.items(), sp.items())
			}
		}
		if sp.items()%3 != 0 {
			return decode.Errorf(file, fmt.Sprintf("submesh %d indices.position", i), "count", sp.Offset,
				"%d indices is not a whole number of triangles", sp.items())
		}
		for _, a := range m.Attrs {
			if sm.index(a.Name) == nil && a.items() != pos.items() && isGeometry(a.Name) {
				return decode.Errorf(file, fmt.Sprintf("submesh %d indices.%s", i, a.Name), "", a.Offset,
					"submesh %d has no index list for %q, and its %d items do not match the %d positions",
					i, a.Name, a.items(), pos.items())
			}
		}
	}
	return nil
}

// maxShare bounds how often the blob's bytes may be used as index lists.
const maxShare = 4

// wantComp returns the component counts allowed for a known attribute, nil
// for unknown ones.
func wantComp(name string) func(int64) bool {
	switch kind(name) {
	case kindPosition, kindNormal:
		return func(n int64) bool { return n == 3 }
	case kindTangent, kindColor:
		return func(n int64) bool { return n == 3 || n == 4 }
	case kindUV:
		return func(n int64) bool { return n == 2 }
	}
	return nil
}

const (
	kindOther = iota
	kindPosition
	kindNormal
	kindTangent
	kindUV
	kindColor
)

func kind(name string) int {
	switch name {
	case "position":
		return kindPosition
	case "normal":
		return kindNormal
	case "tangent":
		return kindTangent
	}
	if _, ok := setNumber(name, "uv"); ok {
		return kindUV
	}
	if _, ok := setNumber(name, "color"); ok {
		return kindColor
	}
	return kindOther
}

// isGeometry reports whether the attribute becomes a glTF vertex attribute;
// the others are decoded generically into header.json and chunks/.
func isGeometry(name string) bool { return kind(name) != kindOther }

// Scan runs the script and reports its tables and the blob's layout
// without reading geometry.
func (f Msh) Scan(ctx context.Context, src *decode.Source) (*decode.Structure, error) {
	st := &decode.Structure{Format: f.Name()}
	st.Header.Add("scriptBytes", src.Size)
	st.Chunks = append(st.Chunks, scriptChunk(src.Size))
	_, m, err := f.load(ctx, src)
	if err != nil {
		return st, err
	}
	header(&st.Header, m)
	st.Materials = sceneMaterials(m)
	b, err := openBlob(src)
	if err != nil {
		st.Header.Add("blob", blobName(src))
		st.Header.Add("blobBytes", nil)
		return st, err
	}
	defer b.close()
	st.Header.Add("blob", blobName(src))
	st.Header.Add("blobBytes", b.size)
	if err := checkLayout(m, b.name, src.Name, b.size); err != nil {
		return st, err
	}
	st.Header.Add("otherAttributes", otherStats(m, b))
	if rs, ok := scanRepairs(ctx, m, b, src.Name, decode.SafeName(f.StripExt(filepath.Base(src.Name)))); ok {
		st.Header.Add("repairs", decode.RepairFields(rs))
	}
	open := src.OpenSibling
	name := blobName(src)
	used := map[string]bool{"data.lua": true}
	add := func(chunk string, r region) {
		// Names from the script may sanitize alike ("a/b", "a_b"), or be
		// alike in the bytes SafeName keeps of long names: the suffix goes
		// within that length, or sanitizing would cut it off again.
		for base, k := chunk, 2; used[chunk]; k++ {
			suffix := fmt.Sprintf("~%d", k)
			chunk = decode.SafeName(cutTo(base, maxChunkName-len(suffix)) + suffix)
		}
		used[chunk] = true
		off, n := r.Offset, r.Count
		st.Chunks = append(st.Chunks, decode.Chunk{Name: chunk, Offset: off, Length: n, Size: n,
			// The bytes live in the blob, not in the script, so they are
			// loaded by reopening the companion when asked for.
			Load: func() ([]byte, error) {
				rd, size, err := open(name)
				if err != nil {
					return nil, err
				}
				if c, ok := rd.(io.Closer); ok {
					defer c.Close()
				}
				if off > size || n > size-off {
					return nil, decode.Errorf(name, chunk, "", off, "the blob shrank to %d bytes", size)
				}
				buf := make([]byte, n)
				if _, err := rd.ReadAt(buf, off); err != nil && !(err == io.EOF && n == 0) {
					return nil, err
				}
				return buf, nil
			}})
	}
	for _, a := range m.Attrs {
		add(decode.SafeName(a.Name+".bin"), a)
	}
	for i, sm := range m.SubMeshes {
		for _, r := range sm.Indices {
			add(decode.SafeName(fmt.Sprintf("submesh%d.%s.idx", i, r.Name)), r)
		}
	}
	return st, nil
}

// scanRepairs returns what Decode repairs (decode.Repair): nothing when
// the geometry attributes are all finite, else the repairs of the decoded
// scene. ok is false when the blob cannot be read or the scene cannot be
// built: Decode reports that error.
func scanRepairs(ctx context.Context, m *mshData, b *blob, script, name string) (rs []decode.Repair, ok bool) {
	sound := true
	for _, a := range m.Attrs {
		if !isGeometry(a.Name) {
			continue
		}
		buf := make([]byte, a.Count)
		if _, err := b.r.ReadAt(buf, a.Offset); err != nil && !(err == io.EOF && a.Count == 0) {
			return nil, false
		}
		for i := 0; i+4 <= len(buf); i += 4 {
			if binary.LittleEndian.Uint32(buf[i:])&0x7f800000 == 0x7f800000 {
				sound = false
				break
			}
		}
		if !sound {
			break
		}
	}
	if sound {
		return nil, true
	}
	s, err := buildScene(ctx, m, b.r, b.name, script, name)
	if err != nil {
		return nil, false
	}
	return s.Repairs, true
}

// maxChunkName is the length decode.SafeName keeps.
const maxChunkName = 96

// cutTo shortens s to at most n bytes at a rune boundary.
func cutTo(s string, n int) string {
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// header adds the script's tables to header.json in a stable order.
func header(h *decode.Fields, m *mshData) {
	style := "transport-fever-2"
	if m.HasMatCfg {
		style = "train-fever"
	}
	h.Add("style", style)
	attrs := []decode.Fields{}
	for _, a := range m.Attrs {
		var f decode.Fields
		f.Add("name", a.Name)
		f.Add("count", a.Count)
		f.Add("numComp", a.NumComp)
		f.Add("offset", a.Offset)
		f.Add("items", a.items())
		f = append(f, a.Extra...)
		attrs = append(attrs, f)
	}
	h.Add("vertexAttr", attrs)
	subs := []decode.Fields{}
	tris := int64(0)
	for _, sm := range m.SubMeshes {
		var f decode.Fields
		var lists []decode.Fields
		var ntri int64
		for _, r := range sm.Indices {
			var lf decode.Fields
			lf.Add("name", r.Name)
			lf.Add("count", r.Count)
			lf.Add("offset", r.Offset)
			lf.Add("items", r.items())
			lf = append(lf, r.Extra...)
			lists = append(lists, lf)
			if r.Name == "position" {
				ntri = r.items() / 3
			}
		}
		f.Add("indices", lists)
		f.Add("materials", nonNil(sm.Materials))
		f.Add("triangles", ntri)
		f = append(f, sm.Extra...)
		subs = append(subs, f)
		tris += ntri
	}
	h.Add("subMeshCount", len(m.SubMeshes))
	h.Add("subMeshes", subs)
	h.Add("triangles", tris)
	if m.HasMatCfg {
		h.Add("matConfigs", m.MatConfigs)
	}
	anims := []decode.Fields{}
	for _, a := range m.Animations {
		var f decode.Fields
		f.Add("name", a.Name)
		f.Add("type", a.Type)
		if a.Type == "KEYFRAME" {
			f.Add("origin", a.Origin)
			f.Add("keyframeCount", len(a.Keyframes))
			dur := 0.0
			if n := len(a.Keyframes); n > 0 {
				dur = a.Keyframes[n-1].Time
			}
			f.Add("durationMs", dur)
			var kfs []decode.Fields
			for _, k := range a.Keyframes {
				var kf decode.Fields
				kf.Add("time", k.Time)
				kf.Add("rot", k.Rot)
				kf.Add("transl", k.Transl)
				kfs = append(kfs, kf)
			}
			f.Add("keyframes", kfs)
		}
		f = append(f, a.Extra...)
		anims = append(anims, f)
	}
	h.Add("animations", anims)
	h.Add("otherKeys", nonNilFields(m.Extra))
	var verts int64
	for _, a := range m.Attrs {
		if a.Name == "position" {
			verts = a.items()
		}
	}
	keyframed := 0
	for _, a := range m.Animations {
		if a.Type == "KEYFRAME" {
			keyframed++
		}
	}
	h.Add("counts", decode.SummaryFields(len(m.SubMeshes), int(tris), int(verts), 0, 0, keyframed))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilFields(f decode.Fields) decode.Fields {
	if f == nil {
		return decode.Fields{}
	}
	return f
}

// otherStats decodes the attributes that glTF has no place for
// (jointWeights, attrOffsetLOD, ...) generically: items, and per component
// the minimum and maximum, for header.json. Their bytes are in chunks/.
func otherStats(m *mshData, b *blob) []decode.Fields {
	out := []decode.Fields{}
	for _, a := range m.Attrs {
		if isGeometry(a.Name) {
			continue
		}
		var f decode.Fields
		f.Add("name", a.Name)
		f.Add("items", a.items())
		buf := make([]byte, a.Count)
		if _, err := b.r.ReadAt(buf, a.Offset); err != nil && !(err == io.EOF && a.Count == 0) {
			f.Add("error", err.Error())
			out = append(out, f)
			continue
		}
		lo := make([]any, a.NumComp)
		hi := make([]any, a.NumComp)
		for c := int64(0); c < a.NumComp; c++ {
			mn, mx := math.Inf(1), math.Inf(-1)
			for i := c * 4; i+4 <= int64(len(buf)); i += 4 * a.NumComp {
				v := float64(math.Float32frombits(binary.LittleEndian.Uint32(buf[i:])))
				if math.IsNaN(v) {
					continue
				}
				mn, mx = math.Min(mn, v), math.Max(mx, v)
			}
			lo[c], hi[c] = jsonFloat(mn), jsonFloat(mx)
		}
		if a.items() > 0 {
			f.Add("min", lo)
			f.Add("max", hi)
		}
		out = append(out, f)
	}
	return out
}

func jsonFloat(v float64) any {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Sprint(v)
	}
	return v
}

// Decode builds one mesh whose primitives are the submeshes.
func (f Msh) Decode(ctx context.Context, src *decode.Source) (*decode.Scene, error) {
	_, m, err := f.load(ctx, src)
	if err != nil {
		return nil, err
	}
	b, err := openBlob(src)
	if err != nil {
		return nil, err
	}
	defer b.close()
	if err := checkLayout(m, b.name, src.Name, b.size); err != nil {
		return nil, err
	}
	return buildScene(ctx, m, b.r, b.name, src.Name, decode.SafeName(f.StripExt(filepath.Base(src.Name))))
}

// blobChunk is how much of the blob is read at a time: each region is
// decoded from one small buffer that stays in the CPU's cache, never from a
// copy of the whole blob (a copy that costs as much as the decoding).
const blobChunk = 64 << 10

// blobWords reads region r of the blob (little-endian 32-bit words) in
// chunks of buf, calling put(i, b) with the bytes b of words i, i+1, … in
// order; it stops at put's first error. file names the blob in errors.
func blobWords(rd io.ReaderAt, r region, buf []byte, file string, put func(i int, b []byte) error) error {
	for done := int64(0); done < r.Count; {
		k := min(int64(len(buf)), r.Count-done)
		if n, err := rd.ReadAt(buf[:k], r.Offset+done); int64(n) < k {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return &decode.FormatError{File: file, Section: "blob", Msg: "reading the blob", Err: err}
		}
		if err := put(int(done/4), buf[:k]); err != nil {
			return err
		}
		done += k
	}
	return nil
}

// floats decodes an attribute's region.
func floats(rd io.ReaderAt, r region, buf []byte, file string) ([]float32, error) {
	out := make([]float32, r.Count/4)
	err := blobWords(rd, r, buf, file, func(i int, b []byte) error {
		dst := out[i : i+len(b)/4]
		for k := range dst {
			dst[k] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*k:]))
		}
		return nil
	})
	return out, err
}

func buildScene(ctx context.Context, m *mshData, rd io.ReaderAt, file, script, name string) (*decode.Scene, error) {
	s := &decode.Scene{}
	// Only the attributes that become glTF attributes take part in the
	// vertex tuple; the others would only split vertices.
	var geo []region
	vals := map[string][]float32{}
	buf := make([]byte, blobChunk)
	for _, a := range m.Attrs {
		if !isGeometry(a.Name) {
			continue
		}
		v, err := floats(rd, a, buf, file)
		if err != nil {
			return nil, err
		}
		vals[a.Name] = v
		geo = append(geo, a)
	}
	matIndex := map[string]int{}
	mesh := decode.Mesh{Name: name}
	for si, sm := range m.SubMeshes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, err := buildPrimitive(m, &sm, si, geo, vals, rd, buf, file)
		if err != nil {
			return nil, err
		}
		p.Material = -1
		if len(sm.Materials) > 0 {
			ci := 0
			if m.HasMatCfg && len(m.MatConfigs) > 0 && si < len(m.MatConfigs[0]) {
				c := m.MatConfigs[0][si]
				if c < 0 || c >= float64(len(sm.Materials)) || c != math.Trunc(c) {
					return nil, decode.Errorf(script, "data()", fmt.Sprintf("matConfigs[1][%d]", si+1), 0,
						"material index %v is outside submesh %d's %d materials", c, si, len(sm.Materials))
				}
				ci = int(c)
			}
			mn := sm.Materials[ci]
			idx, ok := matIndex[mn]
			if !ok {
				idx = len(s.Materials)
				matIndex[mn] = idx
				s.Materials = append(s.Materials, decode.Material{Name: mn})
			}
			p.Material = idx
			p.MaterialConfigs = configMaterials(m, &sm, si)
		}
		mesh.Primitives = append(mesh.Primitives, *p)
	}
	s.Meshes = []decode.Mesh{mesh}
	s.JoinAndRepair()
	for _, a := range m.Animations {
		if anim, ok := keyframeAnimation(a, 0); ok {
			s.Animations = append(s.Animations, anim)
		}
	}
	return s, nil
}

// configMaterials names submesh si's material under each of the mesh's
// material configurations (matConfigs rows: one material index per
// submesh) when it has more than one, for a model to pick from; nil when
// it has one, or when a row gives this submesh no valid index (such a row
// cannot be shown, and the first configuration stands).
func configMaterials(m *mshData, sm *subMesh, si int) []string {
	if !m.HasMatCfg || len(m.MatConfigs) < 2 {
		return nil
	}
	out := make([]string, 0, len(m.MatConfigs))
	for _, row := range m.MatConfigs {
		if si >= len(row) {
			return nil
		}
		c := row[si]
		if c < 0 || c >= float64(len(sm.Materials)) || c != math.Trunc(c) {
			return nil
		}
		out = append(out, sm.Materials[int(c)])
	}
	return out
}

// sceneMaterials are the materials Decode's scene has, in its order: each
// submesh's material (the one its first material configuration picks),
// once per name. Old Train Fever meshes name them; others name none.
func sceneMaterials(m *mshData) []decode.Material {
	var out []decode.Material
	seen := map[string]bool{}
	for si, sm := range m.SubMeshes {
		if len(sm.Materials) == 0 {
			continue
		}
		ci := 0
		if m.HasMatCfg && len(m.MatConfigs) > 0 && si < len(m.MatConfigs[0]) {
			c := m.MatConfigs[0][si]
			if c < 0 || c >= float64(len(sm.Materials)) || c != math.Trunc(c) {
				return out // Decode fails there
			}
			ci = int(c)
		}
		if mn := sm.Materials[ci]; !seen[mn] {
			seen[mn] = true
			out = append(out, decode.Material{Name: mn})
		}
	}
	return out
}

// buildPrimitive joins submesh si's per-attribute index lists into glTF
// vertices: each distinct tuple of indices is one vertex, numbered in the
// order of first use, so the output is deterministic (buildScene then
// joins those by value). A normal or tangent with a non-finite component
// becomes nan3 or nan4 for decode.Repair.
func buildPrimitive(m *mshData, sm *subMesh, si int, geo []region, vals map[string][]float32, rd io.ReaderAt, buf []byte, file string) (*decode.Primitive, error) {
	n := int(sm.index("position").items())
	regs := make([]*region, len(geo)) // each attribute's index list
	for ai, a := range geo {
		if regs[ai] = sm.index(a.Name); regs[ai] == nil {
			// Same item count as the positions (checkLayout): shares their indices.
			regs[ai] = sm.index("position")
		}
	}
	// badIndex is the error for the first index out of range, in
	// attribute order, then corner order.
	badIndex := func() error {
		for ai, a := range geo {
			r, items := regs[ai], a.items()
			err := blobWords(rd, region{Offset: r.Offset, Count: 4 * int64(n)}, buf, file, func(i0 int, b []byte) error {
				for k := 0; 4*k < len(b); k++ {
					if v := binary.LittleEndian.Uint32(b[4*k:]); int64(v) >= items {
						i := i0 + k
						return decode.Errorf(file, fmt.Sprintf("submesh %d indices.%s", si, r.Name), fmt.Sprintf("index[%d]", i), r.Offset+4*int64(i),
							"index %d is out of range for the %d items of %s", v, items, a.Name)
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
	// The lists are read a stretch of corners at a time, all of them in
	// step, into the joiner: no list is held whole.
	w := len(geo)
	var items0 int
	if w > 0 {
		items0 = int(geo[0].items()) // every lists[0] index is below it
	}
	jn := newJoiner(w, n, items0)
	stretch := len(buf) / 4
	cols := make([][]uint32, w)
	for ai := range cols {
		cols[ai] = make([]uint32, min(stretch, n))
	}
	for i0 := 0; i0 < n && w > 0; i0 += stretch {
		k := min(stretch, n-i0)
		for ai, a := range geo {
			b, items, col := buf[:4*k], a.items(), cols[ai][:k]
			if err := blobWords(rd, region{Offset: regs[ai].Offset + 4*int64(i0), Count: 4 * int64(k)}, b, file, func(int, []byte) error { return nil }); err != nil {
				return nil, err
			}
			bad := false
			for c := range col {
				v := binary.LittleEndian.Uint32(b[4*c:])
				bad = bad || int64(v) >= items
				col[c] = v
			}
			if bad {
				return nil, badIndex()
			}
		}
		jn.add(i0, k, cols)
	}
	p := &decode.Primitive{Name: fmt.Sprintf("submesh%d", si)}
	// Vertex v's tuple is tuples[v*w : v*w+w]: the items its attributes
	// are gathered from.
	idx, tuples, nv := jn.done()
	p.Indices = idx
	p.Positions = make([][3]float32, nv)
	for ai, a := range geo {
		v := vals[a.Name]
		nc := int(a.NumComp)
		at := func(vertex int) []float32 {
			j := int(tuples[vertex*w+ai]) * nc
			return v[j : j+nc]
		}
		switch kind(a.Name) {
		case kindPosition:
			for vi := range nv {
				x := at(vi)
				p.Positions[vi] = decode.ZUpToYUp([3]float32{x[0], x[1], x[2]})
			}
		case kindNormal:
			p.Normals = make([][3]float32, nv)
			for vi := range nv {
				x := at(vi)
				if !decode.Finite(x...) {
					p.Normals[vi] = nan3 // decode.Repair recomputes it
					continue
				}
				p.Normals[vi] = decode.Normalize3(decode.ZUpToYUp([3]float32{x[0], x[1], x[2]}))
			}
		case kindTangent:
			p.Tangents = make([][4]float32, nv)
			for vi := range nv {
				x := at(vi)
				if !decode.Finite(x...) {
					p.Tangents[vi] = nan4 // decode.Repair recomputes it
					continue
				}
				t := decode.Normalize3(decode.ZUpToYUp([3]float32{x[0], x[1], x[2]}))
				w := float32(1)
				if nc == 4 && x[3] < 0 {
					w = -1
				}
				p.Tangents[vi] = [4]float32{t[0], t[1], t[2], w}
			}
		case kindUV:
			uv := make([][2]float32, nv)
			for vi := range nv {
				x := at(vi)
				uv[vi] = [2]float32{x[0], x[1]}
			}
			p.UVs = append(p.UVs, uv)
		case kindColor:
			col := make([][4]float32, nv)
			for vi := range nv {
				x := at(vi)
				rgba := [4]float32{0, 0, 0, 1}
				for k := 0; k < nc; k++ {
					rgba[k] = 0 // and so does NaN
					if x[k] > 0 {
						rgba[k] = min(x[k], 1)
					}
				}
				col[vi] = rgba
			}
			p.Colors = append(p.Colors, col)
		}
	}
	return p, nil
}

// nan3 and nan4 stand for a normal or tangent with a non-finite component,
// whatever its other components: one value, so such corners still join.
var (
	nan3 = [3]float32{float32(math.NaN()), float32(math.NaN()), float32(math.NaN())}
	nan4 = [4]float32{float32(math.NaN()), float32(math.NaN()), float32(math.NaN()), float32(math.NaN())}
)

// joinTuples numbers the distinct index tuples (lists[0][i], lists[1][i],
// …) of corners i < n in order of first use: idx[i] is corner i's vertex
// and order[v] the first corner of vertex v (a joiner fed all at once).
func joinTuples(lists [][]uint32, n int) (idx []uint32, order []int) {
	items := 0
	if len(lists) > 0 {
		for _, k := range lists[0][:n] {
			items = max(items, int(k)+1)
		}
	}
	j := newJoiner(len(lists), n, items)
	j.add(0, n, lists)
	idx, _, _ = j.done()
	return idx, j.order
}

// joiner numbers the distinct index tuples of n corners, fed a stretch of
// corners at a time, in order of first use. Each vertex's tuple is kept in
// one flat array. Most corners are answered by the first vertex made for
// their lists[0] index (the head; index buffers are local, so it is still
// in cache); the other vertices, which share a lists[0] index with their
// head (UV seams, hard edges), go in an open-addressing hash table. A new
// vertex costs no allocation, and no input makes the search quadratic.
type joiner struct {
	w, n  int
	idx   []uint32 // corner i's vertex
	order []int    // the first corner of each vertex
	head  []int32  // head[k] is the first vertex whose lists[0] index is k, or −1
	t     tupleTable
	cur   []uint32
}

// newJoiner returns a joiner of n corners of w lists each, whose lists[0]
// indices are below items.
func newJoiner(w, n, items int) *joiner {
	j := &joiner{w: w, n: n, idx: make([]uint32, n), cur: make([]uint32, w)}
	if w == 0 {
		return j
	}
	j.head = make([]int32, items)
	for k := range j.head {
		j.head[k] = -1
	}
	// Most meshes have about one vertex per lists[0] item (positions):
	// room for a quarter more saves the regrowth copies.
	guess := min(n, items+items/4)
	j.t = tupleTable{w: w, tuples: make([]uint32, 0, w*guess)}
	j.order = make([]int, 0, guess)
	return j
}

// add joins corners i0 … i0+k−1, whose indices are cols[a][0:k].
func (j *joiner) add(i0, k int, cols [][]uint32) {
	if j.w == 0 {
		return // every corner is vertex 0, the empty tuple
	}
	head, t, cur, idx := j.head, &j.t, j.cur, j.idx
	for c := range k {
		i := i0 + c
		for a, l := range cols {
			cur[a] = l[c]
		}
		h := head[cur[0]]
		switch {
		case h >= 0 && slices.Equal(t.tuple(int(h)), cur):
			idx[i] = uint32(h)
			continue
		case h >= 0:
			if v := t.find(cur); v >= 0 {
				idx[i] = uint32(v)
				continue
			}
		}
		v := t.add(cur)
		if h < 0 {
			head[cur[0]] = int32(v)
		} else {
			t.insert(v)
		}
		idx[i] = uint32(v)
		j.order = append(j.order, i)
	}
}

// done returns each corner's vertex, the vertices' tuples (vertex v's is
// tuples[v*w : v*w+w]) and the number of vertices.
func (j *joiner) done() (idx, tuples []uint32, nv int) {
	if j.w == 0 {
		if j.n > 0 {
			j.order = []int{0} // every corner is the empty tuple
		}
		return j.idx, nil, len(j.order)
	}
	return j.idx, j.t.tuples, len(j.order)
}

// tupleTable stores tuples of w indices by vertex number and indexes some
// of them (those inserted) in an open-addressing hash table.
type tupleTable struct {
	w      int
	tuples []uint32 // vertex v's tuple is tuples[v*w : v*w+w]
	slots  []int32  // vertex + 1; 0 is empty; length a power of two or 0
	used   int
	bits   uint
}

func (t *tupleTable) tuple(v int) []uint32 { return t.tuples[v*t.w : v*t.w+t.w] }

func (t *tupleTable) hash(tu []uint32) uint64 {
	h := uint64(len(tu))
	for _, x := range tu {
		h = (h ^ uint64(x)) * 0x9e3779b97f4a7c15
	}
	return (h ^ h>>31) >> (64 - t.bits)
}

// add stores a new vertex's tuple and returns its number.
func (t *tupleTable) add(tu []uint32) int {
	t.tuples = append(t.tuples, tu...)
	return len(t.tuples)/t.w - 1
}

// find returns the indexed vertex with tuple tu, or −1.
func (t *tupleTable) find(tu []uint32) int {
	if t.used == 0 {
		return -1
	}
	mask := uint64(len(t.slots) - 1)
	for s := t.hash(tu); ; s = (s + 1) & mask {
		e := int(t.slots[s])
		if e == 0 {
			return -1
		}
		if slices.Equal(t.tuple(e-1), tu) {
			return e - 1
		}
	}
}

// insert indexes vertex v, whose tuple is not indexed yet.
func (t *tupleTable) insert(v int) {
	if 2*(t.used+1) > len(t.slots) { // keep the load under ½: short probes
		old := t.slots
		t.bits = max(t.bits+1, 10)
		t.slots = make([]int32, 1<<t.bits)
		for _, e := range old {
			if e != 0 {
				t.place(int(e - 1))
			}
		}
	}
	t.place(v)
	t.used++
}

func (t *tupleTable) place(v int) {
	mask := uint64(len(t.slots) - 1)
	s := t.hash(t.tuple(v))
	for t.slots[s] != 0 {
		s = (s + 1) & mask
	}
	t.slots[s] = int32(v + 1)
}
