package gem

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/meshfs/meshfs/decode"
)

// Anm mirrors a GEM .anm (EANM) file: its header sections and its frames
// in file order.
type Anm struct {
	Version uint32
	// FrameCount is FRMS's value: the frames the animation spans (stored
	// frames may be fewer). HasFrameCount is false when FRMS is absent.
	FrameCount    uint32
	HasFrameCount bool
	Comments      []string
	Bones         []string
	Frames        []AnmFrame
}

// AnmFrame is one FRM2 or FRMN record: the keys of one frame.
type AnmFrame struct {
	Legacy bool // FRMN (else FRM2)
	Number uint32
	Keys   []AnmKey
	// Offset is where the parser found the frame's tag; the encoder
	// ignores it.
	Offset int64
}

// Key flags of FRM2 (and what an FRMN key's sub-records amount to).
const (
	KeyPosition   = 0x01
	KeyRotation   = 0x02
	KeyMirrored   = 0x04
	KeyVisibleOn  = 0x08
	KeyVisibleOff = 0x10
	KeyMesh       = 0x20
	KeyScale      = 0x40
	knownKeyFlags = 0x7f
)

// AnmKey is one bone's key in a frame.
type AnmKey struct {
	Bone int
	// Flags say what an FRM2 key stores. For an FRMN key the parser sets
	// what its records amount to (MATR: position and rotation, VISI:
	// visible on or off, MESH) and the encoder ignores them.
	Flags uint16
	// Position, Rotation (quaternion x, y, z; w ≥ 0) and Scale hold what
	// the flags say is stored.
	Position, Rotation, Scale [3]float32
	// Matrix is an FRMN key's MATR (rotation rows, then the translation);
	// nil for FRM2 keys and FRMN keys without one.
	Matrix *[12]float32
	// Visible is an FRMN key's VISI value, nil when absent.
	Visible *uint32
	// Mesh is a MESH block's bytes after its size (vertex animation).
	Mesh []byte
}

// FrameRate is the rate meshfs plays GEM frames at. The files store frame
// numbers, not times, and no public source states the engine's rate;
// GEM's animations are exported from 3ds Max, whose default (NTSC) rate
// this is. A sequence's {speed} is not applied (the model's header.json
// and the animation's extras give it).
const FrameRate = 30

// maxAnm bounds the .anm read: real files are a few KiB to tens of KiB.
const maxAnm = 64 << 20

// ParseAnm reads a whole .anm file.
func ParseAnm(file string, b []byte) (*Anm, error) {
	a, _, err := parseAnm(file, b)
	return a, err
}

// anmSection is where a header section or the frames lie, for chunks/.
type anmSection struct {
	Name        string
	Off, Length int64
}

type anmReader struct {
	file string
	b    []byte
	off  int
}

func (r *anmReader) errf(section, field string, off int, format string, args ...any) *decode.FormatError {
	return decode.Errorf(r.file, section, field, int64(off), format, args...)
}

func (r *anmReader) need(n int, section, field string) error {
	if n < 0 || len(r.b)-r.off < n {
		e := r.errf(section, field, r.off, "%d bytes needed, %d left", n, len(r.b)-r.off)
		e.Err = decode.ErrTruncated
		return e
	}
	return nil
}

func (r *anmReader) u8() byte { v := r.b[r.off]; r.off++; return v }
func (r *anmReader) u16() uint16 {
	v := binary.LittleEndian.Uint16(r.b[r.off:])
	r.off += 2
	return v
}
func (r *anmReader) u32() uint32 {
	v := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}
func (r *anmReader) f3() [3]float32 {
	var v [3]float32
	for i := range v {
		v[i] = math.Float32frombits(r.u32())
	}
	return v
}
func (r *anmReader) tag() string { t := string(r.b[r.off : r.off+4]); r.off += 4; return t }
func (r *anmReader) peek() string {
	if len(r.b)-r.off < 4 {
		return ""
	}
	return string(r.b[r.off : r.off+4])
}

func parseAnm(file string, b []byte) (*Anm, []anmSection, error) {
	r := &anmReader{file: file, b: b}
	if err := r.need(8, "header", "magic"); err != nil {
		return nil, nil, err
	}
	if string(b[:4]) != "EANM" {
		return nil, nil, r.errf("header", "magic", 0, "%q is not EANM", b[:4])
	}
	r.off = 4
	a := &Anm{Version: r.u32()}
	var secs []anmSection
	// Header sections, until the first frame.
	for r.off < len(b) {
		start := r.off
		if err := r.need(4, "header", "section tag"); err != nil {
			return a, secs, err
		}
		t := r.peek()
		if t == "FRM2" || t == "FRMN" {
			break
		}
		r.off += 4
		switch t {
		case "FRMS":
			if err := r.need(4, t, "frame_count"); err != nil {
				return a, secs, err
			}
			a.FrameCount, a.HasFrameCount = r.u32(), true
		case "CMNT":
			if err := r.need(2, t, "length"); err != nil {
				return a, secs, err
			}
			n := int(r.u16())
			if err := r.need(n, t, "text"); err != nil {
				return a, secs, err
			}
			a.Comments = append(a.Comments, string(latin1(b[r.off:r.off+n])))
			r.off += n
		case "BMAP":
			if a.Bones != nil {
				return a, secs, r.errf(t, "", start, "a second BMAP")
			}
			if err := r.need(4, t, "bone_count"); err != nil {
				return a, secs, err
			}
			n := r.u32()
			// Each name takes at least its 4-byte length.
			if uint64(n)*4 > uint64(len(b)-r.off) {
				e := r.errf(t, "bone_count", r.off-4, "%d bones cannot fit in the %d bytes left", n, len(b)-r.off)
				e.Err = decode.ErrTruncated
				return a, secs, e
			}
			a.Bones = make([]string, 0, n)
			for i := uint32(0); i < n; i++ {
				if err := r.need(4, t, fmt.Sprintf("bone %d length", i)); err != nil {
					return a, secs, err
				}
				l := r.u32()
				if uint64(l) > uint64(len(b)-r.off) {
					e := r.errf(t, fmt.Sprintf("bone %d length", i), r.off-4, "name of %d bytes, %d left", l, len(b)-r.off)
					e.Err = decode.ErrTruncated
					return a, secs, e
				}
				a.Bones = append(a.Bones, latin1(b[r.off:r.off+int(l)]))
				r.off += int(l)
			}
		default:
			return a, secs, r.errf("header", "section tag", start, "unknown section %q", t)
		}
		secs = append(secs, anmSection{t, int64(start), int64(r.off - start)})
	}
	framesAt := r.off
	for r.off < len(b) {
		if err := r.need(4, "frames", "tag"); err != nil {
			return a, secs, err
		}
		start := r.off
		var fr AnmFrame
		var err error
		switch t := r.tag(); t {
		case "FRM2":
			fr, err = r.frm2(a, start)
		case "FRMN":
			fr, err = r.frmn(a, start)
		default:
			err = r.errf("frames", "tag", start, "unknown frame tag %q (want FRM2 or FRMN)", t)
		}
		if err != nil {
			return a, secs, err
		}
		fr.Offset = int64(start)
		a.Frames = append(a.Frames, fr)
	}
	if r.off > framesAt {
		secs = append(secs, anmSection{"frames", int64(framesAt), int64(r.off - framesAt)})
	}
	return a, secs, nil
}

// latin1 decodes ISO 8859-1 bytes (BMAP names, comments) to UTF-8.
func latin1(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

func (r *anmReader) frm2(a *Anm, start int) (AnmFrame, error) {
	sec := fmt.Sprintf("FRM2 at 0x%x", start)
	if err := r.need(3, sec, "frame"); err != nil {
		return AnmFrame{}, err
	}
	fr := AnmFrame{Number: uint32(r.u16())}
	n := int(r.u8())
	if n > 0 {
		fr.Keys = make([]AnmKey, 0, n)
	}
	for i := 0; i < n; i++ {
		at := r.off
		if err := r.need(3, sec, fmt.Sprintf("key %d", i)); err != nil {
			return fr, err
		}
		k := AnmKey{Bone: int(r.u8()), Flags: r.u16()}
		if k.Bone >= len(a.Bones) {
			return fr, r.errf(sec, fmt.Sprintf("key %d bone", i), at, "bone %d of %d in BMAP", k.Bone, len(a.Bones))
		}
		if k.Flags&^knownKeyFlags != 0 {
			return fr, r.errf(sec, fmt.Sprintf("key %d flags", i), at+1, "unknown flags 0x%04x", k.Flags)
		}
		for _, c := range []struct {
			flag uint16
			v    *[3]float32
			name string
		}{{KeyPosition, &k.Position, "position"}, {KeyRotation, &k.Rotation, "rotation"}, {KeyScale, &k.Scale, "scale"}} {
			if k.Flags&c.flag == 0 {
				continue
			}
			if err := r.need(12, sec, fmt.Sprintf("key %d %s", i, c.name)); err != nil {
				return fr, err
			}
			*c.v = r.f3()
		}
		if k.Flags&KeyMesh != 0 {
			m, err := r.mesh(sec)
			if err != nil {
				return fr, err
			}
			k.Mesh = m
		}
		fr.Keys = append(fr.Keys, k)
	}
	return fr, nil
}

// mesh reads a MESH block: u32 size, then size bytes.
func (r *anmReader) mesh(sec string) ([]byte, error) {
	if err := r.need(4, sec, "mesh size"); err != nil {
		return nil, err
	}
	n := r.u32()
	if uint64(n) > uint64(len(r.b)-r.off) {
		e := r.errf(sec, "mesh size", r.off-4, "block of %d bytes, %d left", n, len(r.b)-r.off)
		e.Err = decode.ErrTruncated
		return nil, e
	}
	m := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return m, nil
}

func (r *anmReader) frmn(a *Anm, start int) (AnmFrame, error) {
	sec := fmt.Sprintf("FRMN at 0x%x", start)
	if err := r.need(4, sec, "frame"); err != nil {
		return AnmFrame{}, err
	}
	fr := AnmFrame{Legacy: true, Number: r.u32()}
	for r.off < len(r.b) && r.peek() != "FRMN" {
		at := r.off
		if err := r.need(8, sec, "BONE"); err != nil {
			return fr, err
		}
		if t := r.tag(); t != "BONE" {
			return fr, r.errf(sec, "tag", at, "%q where BONE was expected", t)
		}
		idx := r.u32()
		if uint64(idx) >= uint64(len(a.Bones)) {
			return fr, r.errf(sec, "BONE", at+4, "bone %d of %d in BMAP", idx, len(a.Bones))
		}
		k := AnmKey{Bone: int(idx)}
	sub:
		for r.off < len(r.b) {
			sat := r.off
			switch r.peek() {
			case "BONE", "FRMN":
				break sub
			case "MATR":
				if k.Matrix != nil {
					return fr, r.errf(sec, "MATR", sat, "a second MATR for bone %d", k.Bone)
				}
				r.off += 4
				if err := r.need(48, sec, "MATR"); err != nil {
					return fr, err
				}
				var m [12]float32
				for i := range m {
					m[i] = math.Float32frombits(r.u32())
				}
				k.Matrix = &m
				k.Flags |= KeyPosition | KeyRotation
			case "VISI":
				if k.Visible != nil {
					return fr, r.errf(sec, "VISI", sat, "a second VISI for bone %d", k.Bone)
				}
				r.off += 4
				if err := r.need(4, sec, "VISI"); err != nil {
					return fr, err
				}
				v := r.u32()
				k.Visible = &v
				if v != 0 {
					k.Flags |= KeyVisibleOn
				} else {
					k.Flags |= KeyVisibleOff
				}
			case "MESH":
				if k.Mesh != nil {
					return fr, r.errf(sec, "MESH", sat, "a second MESH for bone %d", k.Bone)
				}
				r.off += 4
				m, err := r.mesh(sec)
				if err != nil {
					return fr, err
				}
				k.Mesh = m
				k.Flags |= KeyMesh
			default:
				if err := r.need(4, sec, "tag"); err != nil {
					return fr, err
				}
				return fr, r.errf(sec, "tag", sat, "unknown record %q in a bone key (want MATR, VISI or MESH)", r.peek())
			}
		}
		if k.Flags == 0 {
			return fr, r.errf(sec, "BONE", at, "bone %d has no MATR, VISI or MESH", k.Bone)
		}
		fr.Keys = append(fr.Keys, k)
	}
	return fr, nil
}

// AnmFormat is the GEM .anm format for meshfs: a lone animation becomes a
// skeleton of its bone names carrying the animation.
type AnmFormat struct{}

var _ decode.Format = AnmFormat{}

// Name implements decode.Format.
func (AnmFormat) Name() string { return "gem-anm" }

// Extensions implements decode.Extensions.
func (AnmFormat) Extensions() []string { return []string{".anm"} }

// AnimationOnly implements decode.AnimationOnly.
func (AnmFormat) AnimationOnly() {}

// Sniff accepts ".anm" files that start with EANM.
func (AnmFormat) Sniff(name string, head []byte) bool {
	return strings.EqualFold(filepath.Ext(name), ".anm") && len(head) >= 4 && string(head[:4]) == "EANM"
}

// StripExt removes the final ".anm".
func (AnmFormat) StripExt(name string) string {
	if ext := filepath.Ext(name); strings.EqualFold(ext, ".anm") && len(name) > len(ext) {
		return name[:len(name)-len(ext)]
	}
	return name
}

func readAnm(src *decode.Source) ([]byte, error) {
	if src.Size < 0 || src.Size > maxAnm {
		return nil, &decode.FormatError{File: src.Name, Msg: fmt.Sprintf("animation of %d bytes (limit %d)", src.Size, maxAnm), Err: decode.ErrLimit}
	}
	return readAll(src)
}

// Scan reads the file (its frames are its bulk) and reports the header,
// the bones with the components they key, and the frame range.
func (f AnmFormat) Scan(ctx context.Context, src *decode.Source) (*decode.Structure, error) {
	st := &decode.Structure{Format: f.Name()}
	b, err := readAnm(src)
	if err != nil {
		return st, err
	}
	a, secs, err := parseAnm(src.Name, b)
	for i, s := range secs {
		st.Chunks = append(st.Chunks, decode.Chunk{Name: fmt.Sprintf("%02d_%s.bin", i, s.Name), Offset: s.Off, Length: s.Length, Size: s.Length})
	}
	if a == nil {
		return st, err
	}
	st.Header = anmHeader(a)
	return st, err
}

func anmHeader(a *Anm) decode.Fields {
	var h decode.Fields
	h.Add("version", fmt.Sprintf("0x%08x", a.Version))
	if a.HasFrameCount {
		h.Add("frame_count", a.FrameCount)
	}
	h.Add("stored_frames", len(a.Frames))
	format := "none"
	if len(a.Frames) > 0 {
		format = "FRM2"
		if a.Frames[0].Legacy {
			format = "FRMN"
		}
	}
	h.Add("frame_format", format)
	h.Add("frame_rate", FrameRate)
	last := uint32(0)
	if a.HasFrameCount && a.FrameCount > 0 {
		last = a.FrameCount - 1
	}
	for _, fr := range a.Frames {
		last = max(last, fr.Number)
	}
	h.Add("duration_s", float64(last)/FrameRate)
	if len(a.Comments) > 0 {
		h.Add("comments", a.Comments)
	}
	h.Add("bone_count", len(a.Bones))
	type count struct{ keys, pos, rot, scale, mirrored, visibility, mesh int }
	counts := make([]count, len(a.Bones))
	meshKeys, visKeys := 0, 0
	for _, fr := range a.Frames {
		for _, k := range fr.Keys {
			c := &counts[k.Bone]
			c.keys++
			for _, x := range []struct {
				flag uint16
				n    *int
			}{{KeyPosition, &c.pos}, {KeyRotation, &c.rot}, {KeyScale, &c.scale}, {KeyMirrored, &c.mirrored},
				{KeyVisibleOn | KeyVisibleOff, &c.visibility}, {KeyMesh, &c.mesh}} {
				if k.Flags&x.flag != 0 {
					*x.n++
				}
			}
			if k.Flags&KeyMesh != 0 {
				meshKeys++
			}
			if k.Flags&(KeyVisibleOn|KeyVisibleOff) != 0 {
				visKeys++
			}
		}
	}
	bones := make([]decode.Fields, len(a.Bones))
	for i, name := range a.Bones {
		c := counts[i]
		bones[i].Add("name", name)
		bones[i].Add("keys", c.keys)
		bones[i].Add("position_keys", c.pos)
		bones[i].Add("rotation_keys", c.rot)
		bones[i].Add("scale_keys", c.scale)
		bones[i].Add("mirrored_keys", c.mirrored)
	}
	h.Add("bones", bones)
	h.Add("visibility_keys", visKeys)
	h.Add("mesh_keys", meshKeys)
	anims := 0
	for _, fr := range a.Frames {
		for _, k := range fr.Keys {
			if k.Flags&(KeyPosition|KeyRotation|KeyScale|KeyMirrored) != 0 {
				anims = 1
			}
		}
	}
	h.Add("counts", decode.SummaryFields(0, 0, 0, len(a.Bones), 0, anims))
	return h
}

// Decode builds a scene of the bones (one root joint each: the file has no
// hierarchy) animated by the file; see AnmScene.
func (f AnmFormat) Decode(ctx context.Context, src *decode.Source) (*decode.Scene, error) {
	b, err := readAnm(src)
	if err != nil {
		return nil, err
	}
	a, err := ParseAnm(src.Name, b)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return AnmScene(a, src.Name, decode.SafeName(f.StripExt(filepath.Base(src.Name))))
}

// anmTRS is one key's transform in GEM's space.
type anmTRS struct {
	T, S     [3]float64
	Q        [4]float64
	Mirrored bool
}

// keyTRS gives what a key says of its bone's transform: which components
// it sets, and their values.
func keyTRS(k AnmKey) (t anmTRS, pos, rot, scl bool) {
	t.S = [3]float64{1, 1, 1}
	t.Q = [4]float64{0, 0, 0, 1}
	if k.Matrix != nil {
		m := k.Matrix
		g := gemFrame{T: [3]float64{float64(m[9]), float64(m[10]), float64(m[11])}}
		for i := 0; i < 9; i++ {
			g.Rows[i/3][i%3] = float64(m[i])
		}
		t.T = g.T
		for i := 0; i < 3; i++ {
			r := g.Rows[i]
			t.S[i] = math.Sqrt(r[0]*r[0] + r[1]*r[1] + r[2]*r[2])
			if t.S[i] > 1e-12 {
				for j := range r {
					g.Rows[i][j] = r[j] / t.S[i]
				}
			}
		}
		// A mirrored matrix is a rotation after a mirror of local Z.
		if g.det() < 0 {
			t.Mirrored = true
			for j := 0; j < 3; j++ {
				g.Rows[2][j] = -g.Rows[2][j]
			}
		}
		t.Q = rowsQuat(g.Rows)
		return t, true, true, math.Abs(t.S[0]-1) > 1e-5 || math.Abs(t.S[1]-1) > 1e-5 || math.Abs(t.S[2]-1) > 1e-5
	}
	t.Mirrored = k.Flags&KeyMirrored != 0
	if k.Flags&KeyPosition != 0 {
		t.T = [3]float64{float64(k.Position[0]), float64(k.Position[1]), float64(k.Position[2])}
	}
	if k.Flags&KeyRotation != 0 {
		t.Q = gemQuat(k.Rotation)
	}
	if k.Flags&KeyScale != 0 {
		t.S = [3]float64{float64(k.Scale[0]), float64(k.Scale[1]), float64(k.Scale[2])}
	}
	return t, k.Flags&KeyPosition != 0, k.Flags&KeyRotation != 0, k.Flags&KeyScale != 0
}

// rowsQuat is the quaternion of a rotation given as GEM rows (row i is
// where axis i goes), with w ≥ 0.
func rowsQuat(rows [3][3]float64) [4]float64 {
	var m decode.Mat4
	for c := 0; c < 3; c++ {
		for r := 0; r < 3; r++ {
			m[c*4+r] = rows[c][r]
		}
	}
	m[15] = 1
	q := m.TRS().Rotation
	out := [4]float64{float64(q[0]), float64(q[1]), float64(q[2]), float64(q[3])}
	if out[3] < 0 {
		out = [4]float64{-out[0], -out[1], -out[2], -out[3]}
	}
	return out
}

// AnmScene turns a parsed animation into a scene: one root joint per BMAP
// bone, whose rest transform is its first key's (the identity for what
// no key sets), and one animation named name with TargetJoint channels.
// Frame n plays at n / FrameRate seconds. Keys are sparse: the channels
// hold only the keyed frames, and glTF's linear (rotation: spherical)
// interpolation fills the frames between, as the modders' importers
// evaluate GEM's keys (the engine's own rule is not public); before the
// first and after the last key a component holds, to the last of FRMS's
// frames. A mirrored key (flag 0x04) is
// a mirror of the bone's local Z before its rotation: it becomes a scale
// channel with Y negated in the scene's axes, stepped where the mirror
// changes. Translations are converted to metres (MetresPerUnit) and all
// of it to the scene's axes as bones are (C·M·C⁻¹). Visibility keys and
// MESH (vertex animation) blocks are not converted; header.json counts
// them.
func AnmScene(a *Anm, file, name string) (*decode.Scene, error) {
	sk := &decode.Skeleton{Joints: make([]decode.Joint, len(a.Bones))}
	for i, n := range a.Bones {
		sk.Joints[i] = decode.Joint{Name: n, Parent: -1, Rest: decode.Identity()}
	}
	sc := &decode.Scene{}
	if len(a.Bones) > 0 {
		sc.Skeleton = sk
	}
	type track struct {
		pos, rot, scl       decode.Channel
		restT, restR, restS bool
		mirror              []bool
		lastScale           [3]float64
		prevQ               [4]float64
	}
	tracks := make([]track, len(a.Bones))
	for i := range tracks {
		tracks[i].lastScale = [3]float64{1, 1, 1}
	}
	var prevTime float32 = -1
	for fi, fr := range a.Frames {
		if fr.Number > 1<<24 {
			return nil, decode.Errorf(file, "frames", "frame", fr.Offset, "frame %d is beyond 2^24 frames", fr.Number)
		}
		time := float32(float64(fr.Number) / FrameRate)
		if fi > 0 && !(time > prevTime) {
			return nil, decode.Errorf(file, "frames", "frame", fr.Offset, "frame %d does not follow frame %d", fr.Number, a.Frames[fi-1].Number)
		}
		prevTime = time
		seen := map[int]bool{}
		for _, k := range fr.Keys {
			if seen[k.Bone] {
				return nil, decode.Errorf(file, "frames", "bone", fr.Offset, "frame %d keys bone %d twice", fr.Number, k.Bone)
			}
			seen[k.Bone] = true
			tr, pos, rot, scl := keyTRS(k)
			if !(pos || rot || scl || k.Flags&KeyMirrored != 0) {
				continue
			}
			for _, v := range append(append(tr.T[:], tr.S[:]...), tr.Q[:]...) {
				if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > math.MaxFloat32/UnitsPerMetre {
					return nil, decode.Errorf(file, "frames", "key", fr.Offset, "frame %d bone %d holds %v", fr.Number, k.Bone, v)
				}
			}
			t := &tracks[k.Bone]
			j := &sk.Joints[k.Bone]
			if pos {
				v := [3]float64{tr.T[0] * MetresPerUnit, tr.T[2] * MetresPerUnit, tr.T[1] * MetresPerUnit}
				t.pos.Times = append(t.pos.Times, time)
				t.pos.Values = append(t.pos.Values, float32(v[0]), float32(v[1]), float32(v[2]))
				if !t.restT {
					t.restT = true
					j.Rest.Translation = [3]float32{float32(v[0]), float32(v[1]), float32(v[2])}
				}
			}
			if rot {
				q := sceneQuat(tr.Q)
				if len(t.rot.Times) > 0 && q[0]*t.prevQ[0]+q[1]*t.prevQ[1]+q[2]*t.prevQ[2]+q[3]*t.prevQ[3] < 0 {
					q = [4]float64{-q[0], -q[1], -q[2], -q[3]}
				}
				t.prevQ = q
				t.rot.Times = append(t.rot.Times, time)
				t.rot.Values = append(t.rot.Values, float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3]))
				if !t.restR {
					t.restR = true
					j.Rest.Rotation = [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
				}
			}
			if scl {
				t.lastScale = tr.S
			}
			// Every transform key restates the mirror; the scale channel
			// is keyed where the mirror or the scale is known.
			s := [3]float64{t.lastScale[0], t.lastScale[2], t.lastScale[1]}
			if tr.Mirrored {
				s[1] = -s[1]
			}
			t.mirror = append(t.mirror, tr.Mirrored)
			t.scl.Times = append(t.scl.Times, time)
			t.scl.Values = append(t.scl.Values, float32(s[0]), float32(s[1]), float32(s[2]))
			if !t.restS {
				t.restS = true
				j.Rest.Scale = [3]float32{float32(s[0]), float32(s[1]), float32(s[2])}
			}
		}
	}
	var chans []decode.Channel
	for i := range tracks {
		t := &tracks[i]
		if len(t.pos.Times) > 0 {
			t.pos.Kind, t.pos.Index, t.pos.Path = decode.TargetJoint, i, decode.PathTranslation
			chans = append(chans, t.pos)
		}
		if len(t.rot.Times) > 0 {
			t.rot.Kind, t.rot.Index, t.rot.Path = decode.TargetJoint, i, decode.PathRotation
			chans = append(chans, t.rot)
		}
		// Scale only where something is not 1: a scale key or a mirror.
		needed, flips := false, false
		for k, m := range t.mirror {
			needed = needed || m
			flips = flips || k > 0 && m != t.mirror[k-1]
		}
		for _, v := range t.scl.Values {
			needed = needed || v != 1
		}
		if needed {
			t.scl.Kind, t.scl.Index, t.scl.Path, t.scl.Step = decode.TargetJoint, i, decode.PathScale, flips
			chans = append(chans, t.scl)
		} else if t.restS {
			sk.Joints[i].Rest.Scale = [3]float32{1, 1, 1}
		}
	}
	// The animation lasts the FRMS frames even where the last ones key
	// nothing: every channel holds its last value to the end.
	if a.HasFrameCount && a.FrameCount > 1 && a.FrameCount-1 <= 1<<24 {
		end := float32(float64(a.FrameCount-1) / FrameRate)
		for i := range chans {
			c := &chans[i]
			if n := len(c.Times); n > 0 && end > c.Times[n-1] {
				w := len(c.Values) / n
				c.Times = append(c.Times, end)
				c.Values = append(c.Values, c.Values[len(c.Values)-w:]...)
			}
		}
	}
	if len(chans) > 0 {
		sc.Animations = []decode.Animation{{Name: name, Channels: chans}}
	}
	return sc, nil
}
