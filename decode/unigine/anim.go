package unigine

import (
	"context"
	"fmt"
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

// Anim is one .anim file, field for field.
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
	// Frames is the frame count; Keys holds Frames × len(Animated)
	// records, frame by frame.
	Frames int
	Keys   []Key
}

// AnimQuant holds an10's ranges: a stored u16 q means min + q/65535·range.
type AnimQuant struct {
	PosMin, PosRange, ScaleMin, ScaleRange [3]float32
}

// Key is one joint's record in one frame, as stored. V holds the flagged
// values in the order position x, y, z, rotation x, y, z, w, scale x, y, z:
// an11 and an12's floats, an10's stored integers (u16 or short, exact in a
// float32); unflagged entries are 0.
type Key struct {
	Flags uint8
	V     [10]float32
}

// An10 flag bits: 0–2 position x, y, z; 3 rotation; 4–6 scale x, y, z.
// An11/an12: 0 position, 1 rotation, 2 scale.
const (
	an10Flags = 0x7f
	an11Flags = 0x07
)

// isAnimMagic reports whether m is an .anim magic meshfs reads.
func isAnimMagic(m string) bool { return m == MagicAN10 || m == MagicAN11 || m == MagicAN12 }

// ReadAnim parses an .anim file.
func ReadAnim(ctx context.Context, src *decode.Source) (*Anim, error) {
	r := newFileReader(src.Name, "header", src.R, src.Size)
	a, _, err := parseAnim(ctx, r)
	return a, err
}

// parseAnim reads the file from r (at its start); on error it returns what
// it read so far with the error, and framesAt, the offset of the frame
// data (0 when not reached).
func parseAnim(ctx context.Context, r *reader) (a *Anim, framesAt int64, err error) {
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
	na := r.count("animated_joint_count", 2)
	if na > 0 {
		a.Animated = make([]int16, 0, na)
		seen := make([]bool, len(a.Joints))
		for k := 0; k < na && r.err == nil; k++ {
			at := r.pos
			j := int16(r.u16(fmt.Sprintf("animated_joint[%d]", k)))
			if r.err != nil {
				break
			}
			if j < 0 || int(j) >= len(a.Joints) || seen[j] {
				r.pos = at
				r.fail(fmt.Sprintf("animated_joint[%d]", k), nil, "joint %d is not one of the %d joints or is given twice", j, len(a.Joints))
				break
			}
			seen[j] = true
			a.Animated = append(a.Animated, j)
		}
	}
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
	// Every record is at least its flag byte.
	nf := r.count("frame_count", int64(max(1, len(a.Animated))))
	if r.err != nil {
		return a, 0, r.err
	}
	a.Frames = nf
	framesAt = r.offset()
	if err := r.readKeys(ctx, a); err != nil {
		return a, framesAt, err
	}
	r.section = "end"
	r.magic("final magic", a.Magic)
	if r.err == nil && r.left() != 0 {
		r.fail("", nil, "%d bytes after the final magic", r.left())
	}
	return a, framesAt, r.err
}

// readKeys reads the frames' records.
func (r *reader) readKeys(ctx context.Context, a *Anim) error {
	na := len(a.Animated)
	if na == 0 || a.Frames == 0 {
		return nil
	}
	a.Keys = make([]Key, a.Frames*na)
	v10 := a.Magic == MagicAN10
	allowed := uint8(an11Flags)
	if v10 {
		allowed = an10Flags
	}
	for i := range a.Keys {
		if i%na == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		field := fmt.Sprintf("frame[%d].joint[%d]", i/na, i%na)
		k := &a.Keys[i]
		at := r.pos
		k.Flags = r.u8(field + ".flags")
		if r.err == nil && k.Flags&^allowed != 0 {
			r.pos = at
			r.fail(field+".flags", nil, "flags 0x%02x: bits outside 0x%02x", k.Flags, allowed)
		}
		if r.err != nil {
			a.Keys = a.Keys[:i]
			return r.err
		}
		if v10 {
			for b := range 7 {
				if k.Flags>>b&1 == 0 {
					continue
				}
				switch {
				case b < 3:
					k.V[b] = float32(r.u16(field + ".position"))
				case b == 3:
					for c := range 4 {
						k.V[3+c] = float32(int16(r.u16(field + ".rotation")))
					}
				default:
					k.V[7+b-4] = float32(r.u16(field + ".scale"))
				}
			}
		} else {
			at := r.pos
			if k.Flags&1 != 0 {
				r.f32s(field+".position", k.V[0:3])
			}
			if k.Flags&2 != 0 {
				r.f32s(field+".rotation", k.V[3:7])
			}
			if k.Flags&4 != 0 {
				r.f32s(field+".scale", k.V[7:10])
			}
			if r.err == nil && !finite(k.V[:]...) {
				r.pos = at
				r.fail(field, nil, "values are not finite: %v", k.V)
			}
		}
		if r.err != nil {
			a.Keys = a.Keys[:i]
			return r.err
		}
	}
	return nil
}

// identityTransform is the default of an unflagged component.
var identityTransform = Transform{Rotation: [4]float32{0, 0, 0, 1}, Scale: [3]float32{1, 1, 1}}

// Locals returns every frame's parent-relative transforms of the animated
// joints (frame f, animated joint k at f·len(Animated)+k), in the file's
// axes, with the defaults and an10's carried values filled in.
func (a *Anim) Locals() []Transform {
	na := len(a.Animated)
	out := make([]Transform, len(a.Keys))
	for i, k := range a.Keys {
		t := identityTransform
		if a.Magic == MagicAN10 {
			if i >= na {
				t = out[i-na]
			}
			q := a.Quant
			for b := range 3 {
				if k.Flags>>b&1 != 0 {
					t.Position[b] = q.PosMin[b] + k.V[b]/65535*q.PosRange[b]
				}
				if k.Flags>>(4+b)&1 != 0 {
					t.Scale[b] = q.ScaleMin[b] + k.V[7+b]/65535*q.ScaleRange[b]
				}
			}
			if k.Flags&8 != 0 {
				for c := range 4 {
					t.Rotation[c] = k.V[3+c] / 32767
				}
			}
		} else {
			if k.Flags&1 != 0 {
				t.Position = [3]float32(k.V[0:3])
			}
			if k.Flags&2 != 0 {
				t.Rotation = [4]float32(k.V[3:7])
			}
			if k.Flags&4 != 0 {
				t.Scale = [3]float32(k.V[7:10])
			}
		}
		out[i] = t
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
func AnimScene(a *Anim, file, name string) (*decode.Scene, error) {
	locals := a.Locals()
	na := len(a.Animated)
	bind := a.Bind
	if len(bind) != len(a.Joints) {
		// an12 stores no transforms: frame 0 is the rest pose.
		bind = make([]Transform, len(a.Joints))
		for i := range bind {
			bind[i] = identityTransform
		}
		if len(locals) >= na {
			for k, j := range a.Animated {
				bind[j] = locals[k]
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
	times := make([]float32, a.Frames)
	rate := float64(a.Rate())
	for f := range times {
		times[f] = float32(float64(f) / rate)
	}
	if !increasing(times) {
		return nil, decode.Errorf(file, "frames", "frame_count", 0, "%d frames at %v per second do not fit float32 times", a.Frames, rate)
	}
	chans := make([]decode.Channel, 0, 3*na)
	for k, j := range a.Animated {
		node := int(j) + shift
		tr := decode.Channel{Kind: decode.TargetJoint, Index: node, Path: decode.PathTranslation, Times: times, Values: make([]float32, 0, 3*a.Frames)}
		rc := decode.Channel{Kind: decode.TargetJoint, Index: node, Path: decode.PathRotation, Times: times, Values: make([]float32, 0, 4*a.Frames)}
		sl := decode.Channel{Kind: decode.TargetJoint, Index: node, Path: decode.PathScale, Times: times, Values: make([]float32, 0, 3*a.Frames)}
		var prev [4]float32
		for f := range a.Frames {
			t := trsYUp(locals[f*na+k])
			q := t.Rotation
			// Keep each rotation on the side of the previous one, so
			// that interpolation takes the short way.
			if f > 0 && prev[0]*q[0]+prev[1]*q[1]+prev[2]*q[2]+prev[3]*q[3] < 0 {
				q = [4]float32{-q[0], -q[1], -q[2], -q[3]}
			}
			prev = q
			tr.Values = append(tr.Values, t.Translation[:]...)
			rc.Values = append(rc.Values, q[:]...)
			sl.Values = append(sl.Values, t.Scale[:]...)
		}
		chans = append(chans, tr, rc, sl)
	}
	sc.Animations = []decode.Animation{{Name: name, Channels: chans}}
	return sc, nil
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
	a, framesAt, err := parseAnim(ctx, r)
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
// round trips. Counts come from the slices; Keys must hold Frames ×
// len(Animated) records.
func EncodeAnim(a *Anim) ([]byte, error) {
	if !isAnimMagic(a.Magic) {
		return nil, fmt.Errorf("unigine: cannot write animation magic %q", a.Magic)
	}
	if len(a.Keys) != a.Frames*len(a.Animated) {
		return nil, fmt.Errorf("unigine: %d keys for %d frames of %d joints", len(a.Keys), a.Frames, len(a.Animated))
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
	w.compact(int32(a.Frames))
	for _, k := range a.Keys {
		w.b = append(w.b, k.Flags)
		if v10 {
			for b := range 7 {
				if k.Flags>>b&1 == 0 {
					continue
				}
				switch {
				case b < 3:
					w.u16(uint16(k.V[b]))
				case b == 3:
					for c := range 4 {
						w.u16(uint16(int16(k.V[3+c])))
					}
				default:
					w.u16(uint16(k.V[7+b-4]))
				}
			}
			continue
		}
		if k.Flags&1 != 0 {
			w.f32s(k.V[0:3]...)
		}
		if k.Flags&2 != 0 {
			w.f32s(k.V[3:7]...)
		}
		if k.Flags&4 != 0 {
			w.f32s(k.V[7:10]...)
		}
	}
	w.raw([]byte(a.Magic))
	return w.b, nil
}
