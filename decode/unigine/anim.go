package unigine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"path/filepath"
	"strings"

	"github.com/meshfs/meshfs/decode"
)

// Animation magics.
const (
	MagicAN10 = "an10"
	MagicAN11 = "an11"
	MagicAN12 = "an12"
)

// DefaultFPS is the rate of an10 and an11 animations, which store none.
const DefaultFPS = 30

// AnimName is the animation format's identifier.
const AnimName = "unigine-anim"

// Anim is one .anim file, field for field, or one animation a mesh stream
// stores after its bone transforms (File.Anims: Magic is the mesh's, and
// only Animated, Mask, Frames, Flags and Values are set).
type Anim struct {
	Magic  string
	Bounds Bounds // an10
	Joints []Joint
	// Names is an10's name list (the animation's name).
	Names []string
	// Bind is one parent-relative transform per joint (an10, an11).
	Bind []Transform
	// SkeletonGUID and SkeletonPath name an12's shared .skeleton file.
	SkeletonGUID, SkeletonPath string
	// Animated lists the joints the frames animate, in record order.
	Animated []int16
	// FPS and RootMotion are an12's.
	FPS        int32
	RootMotion bool
	// Quant is an10's quantisation ranges; Mask the byte after them.
	Quant AnimQuant
	Mask  uint8
	// Frames is the frame count. Flags has one flag byte per record
	// (Frames × len(Animated), frame by frame), Values the flagged values
	// of every record in turn, each record's in the order position x, y,
	// z, rotation x, y, z, w, scale x, y, z: an11 and an12's floats, an10's
	// stored integers (u16, or short for the rotation; exact in a float32),
	// a mesh's floats with the rotation's stored shorts.
	Frames int
	Flags  []uint8
	Values []float32
}

// AnimQuant holds an10's ranges: a stored u16 q means min + q/65535·range.
type AnimQuant struct {
	PosMin, PosRange, ScaleMin, ScaleRange [3]float32
}

// An10 flag bits: 0–2 position x, y, z; 3 rotation; 4–6 scale x, y, z.
// An11/an12: 0 position, 1 rotation, 2 scale.
const (
	an10Flags = 0x7f
	an11Flags = 0x07
)

// isAnimMagic reports whether m is an .anim magic meshfs reads.
func isAnimMagic(m string) bool { return m == MagicAN10 || m == MagicAN11 || m == MagicAN12 }

// inMesh reports whether m is a mesh magic: the animation is one a mesh
// stream stores (ms12, ms11, ms10), whose records have an10's flag bits.
func inMesh(m string) bool { return m == MagicMS12 || m == MagicMS11 || m == MagicMS10 }

// ReadAnim parses an .anim file.
func ReadAnim(ctx context.Context, src *decode.Source) (*Anim, error) {
	r := newFileReader(src.Name, "header", src.R, src.Size)
	a, _, err := parseAnim(ctx, r, true)
	return a, err
}

// parseAnim reads the file from r (at its start), keeping the records
// when keep is set; on error it returns what it read so far with the
// error, and framesAt, the offset of the frame data (0 when not reached).
func parseAnim(ctx context.Context, r *reader, keep bool) (a *Anim, framesAt int64, err error) {
	m := r.bytes("magic", 4)
	if m == nil {
		return nil, 0, r.err
	}
	a = &Anim{Magic: string(m)}
	if !isAnimMagic(a.Magic) {
		return a, 0, decode.Errorf(r.file, "header", "magic", 0, "unsupported version %q (meshfs reads an10, an11, an12)", m)
	}
	v10, v12 := a.Magic == MagicAN10, a.Magic == MagicAN12
	if v10 {
		a.Bounds = r.bounds("bounds")
	}
	var n int
	if v12 {
		at := r.pos
		c := int64(int32(r.u32("joint_count")))
		if r.err == nil && c < 0 {
			r.pos = at
			r.fail("joint_count", nil, "negative count %d", c)
		}
		if r.need("joint_count", c, minJointSize) {
			n = int(c)
		}
	} else {
		n = r.count("joint_count", minJointSize)
	}
	var f File
	r.readJoints(&f, n)
	a.Joints = f.Joints
	if v10 {
		k := r.count("name_count", 1)
		for i := 0; i < k && r.err == nil; i++ {
			a.Names = append(a.Names, r.str(fmt.Sprintf("name[%d]", i), false))
		}
	}
	if v12 {
		a.SkeletonGUID = r.str("skeleton_guid", true)
		a.SkeletonPath = r.str("skeleton_path", true)
	} else {
		r.magic("second magic", a.Magic)
		if r.need("joint transforms", int64(len(a.Joints)), transformSize) && len(a.Joints) > 0 {
			a.Bind = make([]Transform, len(a.Joints))
			for i := range a.Bind {
				a.Bind[i] = r.transform(fmt.Sprintf("joint[%d].transform", i))
			}
		}
	}
	if r.err != nil {
		return a, 0, r.err
	}
	r.section = "animated joints"
	r.animatedJoints(a, len(a.Joints))
	if v12 {
		a.FPS = int32(r.u32("fps"))
		a.RootMotion = r.u8("root_motion") != 0
		r.magic("third magic", a.Magic)
	}
	if v10 {
		q := &a.Quant
		for _, v := range []*[3]float32{&q.PosMin, &q.PosRange, &q.ScaleMin, &q.ScaleRange} {
			at := r.pos
			r.f32s("quantisation", v[:])
			if r.err == nil && !finite(v[:]...) {
				r.pos = at
				r.fail("quantisation", nil, "not finite: %v", *v)
			}
		}
		a.Mask = r.u8("mask")
	}
	r.section = "frames"
	if framesAt, err = r.animFrames(ctx, a, keep); err != nil {
		return a, framesAt, err
	}
	r.section = "end"
	r.magic("final magic", a.Magic)
	if r.err == nil && r.left() != 0 {
		r.fail("", nil, "%d bytes after the final magic", r.left())
	}
	return a, framesAt, r.err
}

// animatedJoints reads the animated joint list (a compact count, a short
// joint index each) into a.Animated; each must be one of the joints, once.
func (r *reader) animatedJoints(a *Anim, joints int) {
	na := r.count("animated_joint_count", 2)
	if na == 0 || r.err != nil {
		return
	}
	a.Animated = make([]int16, 0, na)
	seen := make([]bool, joints)
	for k := 0; k < na && r.err == nil; k++ {
		at := r.pos
		j := int16(r.u16(fmt.Sprintf("animated_joint[%d]", k)))
		if r.err != nil {
			break
		}
		if j < 0 || int(j) >= joints || seen[j] {
			r.pos = at
			r.fail(fmt.Sprintf("animated_joint[%d]", k), nil, "joint %d is not one of the %d joints or is given twice", j, joints)
			break
		}
		seen[j] = true
		a.Animated = append(a.Animated, j)
	}
}

// animFrames reads the frame count and the records (kept when keep is
// set) and returns the offset of the first record.
func (r *reader) animFrames(ctx context.Context, a *Anim, keep bool) (int64, error) {
	// Every record is at least its flag byte.
	nf := r.count("frame_count", int64(max(1, len(a.Animated))))
	if r.err != nil {
		return 0, r.err
	}
	a.Frames = nf
	at := r.offset()
	return at, r.readRecords(ctx, a, keep)
}

// writeAnimFrames writes what animFrames reads.
func (w *writer) animFrames(a *Anim) {
	w.compact(int32(a.Frames))
	v := a.Values
	for _, fl := range a.Flags {
		w.b = append(w.b, fl)
		n := valueCount(a.Magic, fl)
		for j, x := range v[:n] {
			switch {
			case a.Magic == MagicAN10:
				// Rotation shorts are negative where position and scale
				// u16s are not: int32 then uint16 writes both.
				w.u16(uint16(int32(x)))
			case inMesh(a.Magic) && isRotation(fl, j):
				w.u16(uint16(int16(x)))
			default:
				w.f32s(x)
			}
		}
		v = v[n:]
	}
}

// isRotation reports whether value j of a record with an10's flag bits
// fl is one of the rotation's four (bit 3, after the flagged position
// components of bits 0–2).
func isRotation(fl uint8, j int) bool {
	p := bits.OnesCount8(fl & 7)
	return fl&8 != 0 && j >= p && j < p+4
}

// valueCount is how many values a record with these flags holds.
func valueCount(magic string, flags uint8) int {
	if magic == MagicAN10 || inMesh(magic) {
		return bits.OnesCount8(flags&0x77) + 4*int(flags>>3&1)
	}
	return 3*int(flags&1) + 4*int(flags>>1&1) + 3*int(flags>>2&1)
}

// readRecords reads the frames' records, into a.Flags and a.Values when
// keep is set (Scan only checks them).
func (r *reader) readRecords(ctx context.Context, a *Anim, keep bool) error {
	na := len(a.Animated)
	if na == 0 || a.Frames == 0 {
		return nil
	}
	n := a.Frames * na // at most the bytes left: each record has its flag byte
	v10, mesh := a.Magic == MagicAN10, inMesh(a.Magic)
	if keep {
		// Values are at most a float per 4 bytes left (an10, a mesh's
		// rotations: per 2).
		per := int64(4)
		if v10 || mesh {
			per = 2
		}
		a.Flags = make([]uint8, 0, n)
		a.Values = make([]float32, 0, r.left()/per)
	}
	var v [10]float32 // one record's floats (an11, an12)
	allowed := uint8(an11Flags)
	if v10 || mesh {
		allowed = an10Flags
	}
	for i := 0; i < n; i++ {
		if i%na == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		// Fields are named per record only once one fails (see
		// recordError): a name per record would cost more than the data.
		at := r.pos
		fl := r.u8("flags")
		if r.err == nil && fl&^allowed != 0 {
			r.pos = at
			r.fail("flags", nil, "flags 0x%02x: bits outside 0x%02x", fl, allowed)
		}
		if r.err != nil {
			return recordError(r.err, i, na)
		}
		nv := valueCount(a.Magic, fl)
		if mesh {
			if !r.meshRecord(fl, nv, v[:0], &a.Values, keep) {
				return recordError(r.err, i, na)
			}
		} else if v10 {
			b := r.bytes("values", 2*int64(nv))
			if b == nil {
				return recordError(r.err, i, na)
			}
			if keep {
				j := 0
				for bit := range 7 {
					if fl>>bit&1 == 0 {
						continue
					}
					m := 1 // a u16 component
					if bit == 3 {
						m = 4 // the rotation's shorts
					}
					for range m {
						u := binary.LittleEndian.Uint16(b[2*j:])
						v := float32(u)
						if bit == 3 {
							v = float32(int16(u))
						}
						a.Values = append(a.Values, v)
						j++
					}
				}
			}
		} else {
			at := r.pos
			r.f32s("values", v[:nv])
			if r.err == nil && !finite(v[:nv]...) {
				r.pos = at
				r.fail("", nil, "values are not finite: %v", v[:nv])
			}
			if r.err != nil {
				return recordError(r.err, i, na)
			}
			if keep {
				a.Values = append(a.Values, v[:nv]...)
			}
		}
		if keep {
			a.Flags = append(a.Flags, fl)
		}
	}
	return nil
}

// meshRecord reads the values of a mesh animation's record with flags
// fl (nv values): floats for the position and scale components, the
// rotation as 4 shorts (kept as their integers, as an10's); into *values
// when keep is set. Non-finite floats are errors.
func (r *reader) meshRecord(fl uint8, nv int, scratch []float32, values *[]float32, keep bool) bool {
	at := r.pos
	b := r.bytes("values", 4*int64(nv)-8*int64(fl>>3&1)) // the rotation: 8 bytes for 4 values
	if b == nil {
		return false
	}
	v := scratch
	for bit := range 7 {
		if fl>>bit&1 == 0 {
			continue
		}
		if bit == 3 {
			for range 4 {
				v = append(v, float32(int16(binary.LittleEndian.Uint16(b))))
				b = b[2:]
			}
			continue
		}
		v = append(v, math.Float32frombits(binary.LittleEndian.Uint32(b)))
		b = b[4:]
	}
	if !finite(v...) {
		r.pos = at
		r.fail("", nil, "values are not finite: %v", v)
		return false
	}
	if keep {
		*values = append(*values, v...)
	}
	return true
}

// recordError names record i's frame and joint in err's field.
func recordError(err error, i, na int) error {
	var fe *decode.FormatError
	if errors.As(err, &fe) {
		f := fmt.Sprintf("frame[%d].joint[%d]", i/na, i%na)
		if fe.Field != "" {
			f += "." + fe.Field
		}
		fe.Field = f
	}
	return err
}

// identityTransform is the default of an unflagged component.
var identityTransform = Transform{Rotation: [4]float32{0, 0, 0, 1}, Scale: [3]float32{1, 1, 1}}

// offsets returns, per record, the index in a.Values of its first value.
func (a *Anim) offsets() []uint32 {
	offs := make([]uint32, len(a.Flags))
	o := 0
	for i, fl := range a.Flags {
		offs[i] = uint32(o)
		o += valueCount(a.Magic, fl)
	}
	return offs
}

// record returns the parent-relative transform record i gives, in the
// file's axes: prev with an10's (and a mesh's) flagged components
// replaced; the defaults with an11/an12's.
func (a *Anim) record(i int, offs []uint32, prev Transform) Transform {
	fl, v := a.Flags[i], a.Values[offs[i]:]
	t := identityTransform
	if a.Magic != MagicAN10 && !inMesh(a.Magic) {
		j := 0
		if fl&1 != 0 {
			t.Position = [3]float32(v[j : j+3])
			j += 3
		}
		if fl&2 != 0 {
			t.Rotation = [4]float32(v[j : j+4])
			j += 4
		}
		if fl&4 != 0 {
			t.Scale = [3]float32(v[j : j+3])
		}
		return t
	}
	t, q, j := prev, a.Quant, 0
	mesh := inMesh(a.Magic)
	for bit := range 7 {
		if fl>>bit&1 == 0 {
			continue
		}
		switch {
		case bit < 3 && mesh:
			t.Position[bit] = v[j]
			j++
		case bit < 3:
			t.Position[bit] = q.PosMin[bit] + v[j]/65535*q.PosRange[bit]
			j++
		case bit == 3:
			for c := range 4 {
				t.Rotation[c] = v[j+c] / 32767
			}
			j += 4
		case mesh:
			t.Scale[bit-4] = v[j]
			j++
		default:
			c := bit - 4
			t.Scale[c] = q.ScaleMin[c] + v[j]/65535*q.ScaleRange[c]
			j++
		}
	}
	return t
}

// track returns animated joint k's transform in every frame (an10's frame
// 0 starts from the defaults), in out when it has room.
func (a *Anim) track(k int, offs []uint32, out []Transform) []Transform {
	na := len(a.Animated)
	if cap(out) < a.Frames {
		out = make([]Transform, a.Frames)
	}
	out = out[:a.Frames]
	prev := identityTransform
	for f := range out {
		prev = a.record(f*na+k, offs, prev)
		out[f] = prev
	}
	return out
}

// Rate is the animation's frames per second.
func (a *Anim) Rate() int {
	if a.Magic == MagicAN12 && a.FPS > 0 {
		return int(a.FPS)
	}
	return DefaultFPS
}

// AnimScene converts an animation: its skeleton and one animation named
// name with a translation, rotation and scale channel per animated joint.
// A channel whose value never changes has one key, at time 0.
func AnimScene(a *Anim, file, name string) (*decode.Scene, error) {
	na := len(a.Animated)
	if len(a.Flags) != a.Frames*na || len(a.Values) != valueTotal(a) {
		return nil, decode.Errorf(file, "frames", "frame_count", 0, "%d records and %d values for %d frames of %d joints", len(a.Flags), len(a.Values), a.Frames, na)
	}
	offs := a.offsets()
	bind := a.Bind
	if len(bind) != len(a.Joints) {
		// an12 stores no transforms: frame 0 is the rest pose.
		bind = make([]Transform, len(a.Joints))
		for i := range bind {
			bind[i] = identityTransform
		}
		if a.Frames > 0 {
			for k, j := range a.Animated {
				bind[j] = a.record(k, offs, identityTransform)
			}
		}
	}
	sk, shift, err := skeleton(&File{Magic: a.Magic, Joints: a.Joints, Bind: bind}, file)
	if err != nil {
		return nil, err
	}
	sc := &decode.Scene{}
	if len(sk.Joints) > 0 {
		sc.Skeleton = sk
	}
	if na == 0 || a.Frames == 0 {
		return sc, nil
	}
	chans, err := animChannels(a, shift, file)
	if err != nil {
		return nil, err
	}
	sc.Animations = []decode.Animation{{Name: name, Channels: chans}}
	return sc, nil
}

// animChannels turns a's records into a translation, rotation and scale
// channel per animated joint, for the skeleton whose joints are a's joints
// shifted by shift (its synthetic root). A channel whose value never
// changes has one key, at time 0.
func animChannels(a *Anim, shift int, file string) ([]decode.Channel, error) {
	na := len(a.Animated)
	if len(a.Flags) != a.Frames*na || len(a.Values) != valueTotal(a) {
		return nil, decode.Errorf(file, "frames", "frame_count", 0, "%d records and %d values for %d frames of %d joints", len(a.Flags), len(a.Values), a.Frames, na)
	}
	if na == 0 || a.Frames == 0 {
		return nil, nil
	}
	offs := a.offsets()
	times := make([]float32, a.Frames)
	rate := float64(a.Rate())
	for f := range times {
		times[f] = float32(float64(f) / rate)
	}
	if !increasing(times) {
		return nil, decode.Errorf(file, "frames", "frame_count", 0, "%d frames at %v per second do not fit float32 times", a.Frames, rate)
	}
	chans := make([]decode.Channel, 0, 3*na)
	var tr []Transform // one joint's track at a time
	for k, j := range a.Animated {
		tr = a.track(k, offs, tr)
		node := int(j) + shift
		var pos, rot, scl bool // the component changes
		for _, t := range tr[1:] {
			pos = pos || t.Position != tr[0].Position
			rot = rot || t.Rotation != tr[0].Rotation
			scl = scl || t.Scale != tr[0].Scale
		}
		keys := func(changes bool) int {
			if changes {
				return a.Frames
			}
			return 1
		}
		tc := decode.Channel{Kind: decode.TargetJoint, Index: node, Path: decode.PathTranslation, Times: times[:keys(pos)], Values: make([]float32, 0, 3*keys(pos))}
		rc := decode.Channel{Kind: decode.TargetJoint, Index: node, Path: decode.PathRotation, Times: times[:keys(rot)], Values: make([]float32, 0, 4*keys(rot))}
		sc := decode.Channel{Kind: decode.TargetJoint, Index: node, Path: decode.PathScale, Times: times[:keys(scl)], Values: make([]float32, 0, 3*keys(scl))}
		var prev [4]float32
		for f, t := range tr {
			y := trsYUp(t)
			if f < len(tc.Times) {
				tc.Values = append(tc.Values, y.Translation[:]...)
			}
			if f < len(rc.Times) {
				q := y.Rotation
				// Keep each rotation on the side of the previous one, so
				// that interpolation takes the short way.
				if f > 0 && prev[0]*q[0]+prev[1]*q[1]+prev[2]*q[2]+prev[3]*q[3] < 0 {
					q = [4]float32{-q[0], -q[1], -q[2], -q[3]}
				}
				prev = q
				rc.Values = append(rc.Values, q[:]...)
			}
			if f < len(sc.Times) {
				sc.Values = append(sc.Values, y.Scale[:]...)
			}
		}
		chans = append(chans, tc, rc, sc)
	}
	return chans, nil
}

// valueTotal is how many values a's flags call for.
func valueTotal(a *Anim) int {
	n := 0
	for _, fl := range a.Flags {
		n += valueCount(a.Magic, fl)
	}
	return n
}

// increasing reports whether times increase strictly from 0.
func increasing(t []float32) bool {
	for i := 1; i < len(t); i++ {
		if !(t[i] > t[i-1]) {
			return false
		}
	}
	return true
}

// AnimFormat is the UNIGINE animation format.
type AnimFormat struct{}

func (AnimFormat) Name() string { return AnimName }

// Extensions implements decode.Extensions.
func (AnimFormat) Extensions() []string { return []string{".anim"} }

// AnimationOnly implements decode.AnimationOnly.
func (AnimFormat) AnimationOnly() {}

// Sniff claims .anim files whose magic is "an" and two digits, so that an
// unknown version shows error.txt; other .anim files (Maya's text
// animations begin "animVersion") are left alone.
func (AnimFormat) Sniff(name string, head []byte) bool {
	if !strings.HasSuffix(strings.ToLower(filepath.Base(name)), ".anim") || len(head) < 4 {
		return false
	}
	return head[0] == 'a' && head[1] == 'n' && isDigit(head[2]) && isDigit(head[3])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// StripExt removes .anim.
func (AnimFormat) StripExt(name string) string {
	if strings.HasSuffix(strings.ToLower(name), ".anim") {
		return name[:len(name)-len(".anim")]
	}
	return name
}

// Scan reads the whole file (the frames are its bulk, and their count of
// records needs every flag) and reports the header: joints, animated
// joints, frames, rate and duration; chunks/ holds the frame data.
func (f AnimFormat) Scan(ctx context.Context, src *decode.Source) (*decode.Structure, error) {
	st := &decode.Structure{Format: f.Name()}
	r := newFileReader(src.Name, "header", src.R, src.Size)
	a, framesAt, err := parseAnim(ctx, r, false)
	if a == nil {
		return nil, err
	}
	h := &st.Header
	h.Add("magic", a.Magic)
	if a.Magic == MagicAN10 {
		h.Add("bounds", boundsFields(a.Bounds))
	}
	h.Add("joint_count", len(a.Joints))
	joints := make([]decode.Fields, len(a.Joints))
	for i, j := range a.Joints {
		var jf decode.Fields
		jf.Add("name", j.Name)
		jf.Add("parent", j.Parent)
		if i < len(a.Bind) {
			jf.Add("transform", transformFields(a.Bind[i]))
		}
		joints[i] = jf
	}
	h.Add("joints", joints)
	if a.Magic == MagicAN10 {
		names := a.Names
		if names == nil {
			names = []string{}
		}
		h.Add("names", names)
	}
	if a.Magic == MagicAN12 {
		h.Add("skeleton_guid", a.SkeletonGUID)
		h.Add("skeleton_path", a.SkeletonPath)
		h.Add("fps", a.FPS)
		h.Add("root_motion", a.RootMotion)
	}
	animated := make([]string, len(a.Animated))
	for k, j := range a.Animated {
		animated[k] = a.Joints[j].Name
	}
	h.Add("animated_joint_count", len(a.Animated))
	h.Add("animated_joints", animated)
	if a.Magic == MagicAN10 {
		q := a.Quant
		h.Add("quantisation", decode.Fields{{Key: "position_min", Value: q.PosMin}, {Key: "position_range", Value: q.PosRange},
			{Key: "scale_min", Value: q.ScaleMin}, {Key: "scale_range", Value: q.ScaleRange}, {Key: "mask", Value: a.Mask}})
	}
	h.Add("frames", a.Frames)
	h.Add("rate", a.Rate())
	if a.Magic != MagicAN12 {
		h.Add("rate_stored", false)
	}
	dur := 0.0
	if a.Frames > 1 {
		dur = float64(a.Frames-1) / float64(a.Rate())
	}
	h.Add("duration_seconds", dur)
	anims := 0
	if len(a.Animated) > 0 && a.Frames > 0 {
		anims = 1
	}
	h.Add("counts", decode.SummaryFields(0, 0, 0, len(a.Joints), 0, anims))
	if framesAt > 0 {
		end := src.Size
		if err == nil {
			end -= 4
		}
		if end > framesAt {
			st.Chunks = append(st.Chunks, decode.Chunk{Name: "frames.bin", Offset: framesAt, Length: end - framesAt, Size: end - framesAt})
		}
	}
	return st, err
}

// Decode reads the animation and builds its scene.
func (f AnimFormat) Decode(ctx context.Context, src *decode.Source) (*decode.Scene, error) {
	a, err := ReadAnim(ctx, src)
	if err != nil {
		return nil, err
	}
	name := f.StripExt(filepath.Base(src.Name))
	if len(a.Names) == 1 && a.Names[0] != "" {
		name = a.Names[0]
	}
	return AnimScene(a, src.Name, name)
}

// EncodeAnim writes a in the version its Magic names, for fixtures and
// round trips. Counts come from the slices; Flags must hold Frames ×
// len(Animated) records and Values the values they call for.
func EncodeAnim(a *Anim) ([]byte, error) {
	if !isAnimMagic(a.Magic) {
		return nil, fmt.Errorf("unigine: cannot write animation magic %q", a.Magic)
	}
	if len(a.Flags) != a.Frames*len(a.Animated) || len(a.Values) != valueTotal(a) {
		return nil, fmt.Errorf("unigine: %d records and %d values for %d frames of %d joints", len(a.Flags), len(a.Values), a.Frames, len(a.Animated))
	}
	v10, v12 := a.Magic == MagicAN10, a.Magic == MagicAN12
	w := &writer{}
	w.raw([]byte(a.Magic))
	if v10 {
		w.bounds(a.Bounds)
	}
	if v12 {
		w.u32(uint32(len(a.Joints)))
	} else {
		w.compact(int32(len(a.Joints)))
	}
	w.joints(a.Joints)
	if v10 {
		w.compact(int32(len(a.Names)))
		for _, n := range a.Names {
			w.str(n)
		}
	}
	if v12 {
		w.str32(a.SkeletonGUID)
		w.str32(a.SkeletonPath)
	} else {
		if len(a.Bind) != len(a.Joints) {
			return nil, fmt.Errorf("unigine: %s needs one transform per joint: %d for %d", a.Magic, len(a.Bind), len(a.Joints))
		}
		w.raw([]byte(a.Magic))
		for _, t := range a.Bind {
			w.transform(t)
		}
	}
	w.compact(int32(len(a.Animated)))
	for _, j := range a.Animated {
		w.u16(uint16(j))
	}
	if v12 {
		w.u32(uint32(a.FPS))
		rm := byte(0)
		if a.RootMotion {
			rm = 1
		}
		w.b = append(w.b, rm)
		w.raw([]byte(a.Magic))
	}
	if v10 {
		q := a.Quant
		w.f32s(q.PosMin[:]...)
		w.f32s(q.PosRange[:]...)
		w.f32s(q.ScaleMin[:]...)
		w.f32s(q.ScaleRange[:]...)
		w.b = append(w.b, a.Mask)
	}
	w.animFrames(a)
	w.raw([]byte(a.Magic))
	return w.b, nil
}
