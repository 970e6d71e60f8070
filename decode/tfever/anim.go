package tfever

import (
	"context"
	"fmt"
	"math"
	"path/filepath"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/tfever/luasandbox"
)

// quat is a quaternion x, y, z, w in float64.
type quat [4]float64

func axisAngle(axis [3]float64, deg float64) quat {
	h := deg * math.Pi / 360 // half the angle in radians
	s := math.Sin(h)
	return quat{axis[0] * s, axis[1] * s, axis[2] * s, math.Cos(h)}
}

// mul returns a·b: b applied first, then a.
func (a quat) mul(b quat) quat {
	return quat{
		a[3]*b[0] + a[0]*b[3] + a[1]*b[2] - a[2]*b[1],
		a[3]*b[1] - a[0]*b[2] + a[1]*b[3] + a[2]*b[0],
		a[3]*b[2] + a[0]*b[1] - a[1]*b[0] + a[2]*b[3],
		a[3]*b[3] - a[0]*b[0] - a[1]*b[1] - a[2]*b[2],
	}
}

// rotate applies q to v.
func (q quat) rotate(v [3]float64) [3]float64 {
	p := q.mul(quat{v[0], v[1], v[2], 0}).mul(quat{-q[0], -q[1], -q[2], q[3]})
	return [3]float64{p[0], p[1], p[2]}
}

// zUpToYUp changes a rotation's basis from Z up to Y up: the rotation C·R·C⁻¹
// for C: (x, y, z) → (x, z, −y) has its axis rotated by C.
func (q quat) zUpToYUp() quat { return quat{q[0], q[2], -q[1], q[3]} }

func zUpToYUp64(v [3]float64) [3]float64 { return [3]float64{v[0], v[2], -v[1]} }

// keyframeRotation turns a KEYFRAME rot {z, y, x} (degrees about Z, Y and X,
// in that component order: FORMATS.md §2) into a quaternion. The order of
// application is open in the specification; meshfs takes the usual
// yaw-pitch-roll reading of a Z, Y, X list: R = Rz·Ry·Rx, so a vector is
// rotated about X first, then Y, then Z (fixed axes), which is the same as
// intrinsic rotations about Z, then the new Y, then the new X.
func keyframeRotation(rot [3]float64) quat {
	qz := axisAngle([3]float64{0, 0, 1}, rot[0])
	qy := axisAngle([3]float64{0, 1, 0}, rot[1])
	qx := axisAngle([3]float64{1, 0, 0}, rot[2])
	return qz.mul(qy).mul(qx)
}

// keyframeTRS is the node transform (in the source's Z-up frame) of one
// keyframe: the mesh turns by R about the animation's origin and moves by
// transl, v' = R·(v − origin) + origin + transl, so the node's translation is
// origin + transl − R·origin.
func keyframeTRS(origin [3]float64, k keyframe) ([3]float64, quat) {
	q := keyframeRotation(k.Rot)
	ro := q.rotate(origin)
	return [3]float64{origin[0] + k.Transl[0] - ro[0], origin[1] + k.Transl[1] - ro[1], origin[2] + k.Transl[2] - ro[2]}, q
}

// keyframeAnimation converts a KEYFRAME animation to channels on mesh node
// mesh, in the Y-up frame: translation C·t, rotation C·R·C⁻¹. It reports
// false for other types and for empty tracks, which header.json still shows.
func keyframeAnimation(a keyAnim, mesh int) (decode.Animation, bool) {
	if a.Type != "KEYFRAME" || len(a.Keyframes) == 0 {
		return decode.Animation{}, false
	}
	tr := decode.Channel{Kind: decode.TargetMesh, Index: mesh, Path: decode.PathTranslation}
	rc := decode.Channel{Kind: decode.TargetMesh, Index: mesh, Path: decode.PathRotation}
	var prev quat
	for i, k := range a.Keyframes {
		t, q := keyframeTRS(a.Origin, k)
		t = zUpToYUp64(t)
		q = continuous(prev, q.zUpToYUp(), i)
		prev = q
		sec := float32(k.Time / 1000)
		tr.Times = append(tr.Times, sec)
		rc.Times = append(rc.Times, sec)
		tr.Values = append(tr.Values, float32(t[0]), float32(t[1]), float32(t[2]))
		rc.Values = append(rc.Values, float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3]))
	}
	if !increasing(tr.Times) {
		return decode.Animation{}, false
	}
	return decode.Animation{Name: a.Name, Channels: []decode.Channel{tr, rc}}, true
}

// continuous flips q to the hemisphere of the previous key, so that
// spherical interpolation takes the short way.
func continuous(prev, q quat, i int) quat {
	if i > 0 && prev[0]*q[0]+prev[1]*q[1]+prev[2]*q[2]+prev[3]*q[3] < 0 {
		return quat{-q[0], -q[1], -q[2], -q[3]}
	}
	return q
}

// increasing reports whether float32 times still increase strictly (two
// millisecond times can round to one float32 second).
func increasing(t []float32) bool {
	for i := 1; i < len(t); i++ {
		if !(t[i] > t[i-1]) {
			return false
		}
	}
	return len(t) == 0 || t[0] >= 0
}

// aniData is what an .ani script's data() returns.
type aniData struct {
	Times   []float64     // ms
	Transfs [][16]float64 // column-major, translation at 12–14
	Extra   decode.Fields
}

func (r *reader) ani(v any) (*aniData, error) {
	t, ok := v.(*luasandbox.Table)
	if !ok {
		return nil, r.errf("", "data() returned a %s, want a table", typeName(v))
	}
	a := &aniData{}
	times, err := r.table(t.Get("times"), "times")
	if err != nil {
		return nil, err
	}
	for i, e := range times.Seq {
		f, err := r.number(e, fmt.Sprintf("times[%d]", i+1))
		if err != nil {
			return nil, err
		}
		if f < 0 || f > 1e30 || (i > 0 && !(float32(f/1000) > float32(a.Times[i-1]/1000))) {
			return nil, r.errf(fmt.Sprintf("times[%d]", i+1), "is %v ms; times must increase strictly from 0", f)
		}
		a.Times = append(a.Times, f)
	}
	tf, err := r.table(t.Get("transfs"), "transfs")
	if err != nil {
		return nil, err
	}
	if len(tf.Seq) != len(a.Times) {
		return nil, r.errf("transfs", "has %d matrices for %d times", len(tf.Seq), len(a.Times))
	}
	for i, e := range tf.Seq {
		field := fmt.Sprintf("transfs[%d]", i+1)
		mt, err := r.table(e, field)
		if err != nil {
			return nil, err
		}
		if len(mt.Seq) != 16 {
			return nil, r.errf(field, "has %d numbers, want 16", len(mt.Seq))
		}
		var m [16]float64
		for j, x := range mt.Seq {
			if m[j], err = r.number(x, fmt.Sprintf("%s[%d]", field, j+1)); err != nil {
				return nil, err
			}
		}
		a.Transfs = append(a.Transfs, m)
	}
	a.Extra = extra(t, "times", "transfs")
	return a, nil
}

func (f Ani) load(ctx context.Context, src *decode.Source) (*aniData, error) {
	script, err := readScript(src, f.Limits)
	if err != nil {
		return nil, err
	}
	v, err := runScript(ctx, src, script, f.Limits)
	if err != nil {
		return nil, err
	}
	r := reader{file: src.Name}
	return r.ani(v)
}

// Scan reports the track's times and matrix count.
func (f Ani) Scan(ctx context.Context, src *decode.Source) (*decode.Structure, error) {
	st := &decode.Structure{Format: f.Name()}
	st.Header.Add("scriptBytes", src.Size)
	st.Chunks = append(st.Chunks, scriptChunk(src.Size))
	a, err := f.load(ctx, src)
	if err != nil {
		return st, err
	}
	st.Header.Add("matrixCount", len(a.Transfs))
	dur := 0.0
	if n := len(a.Times); n > 0 {
		dur = a.Times[n-1]
	}
	st.Header.Add("durationMs", dur)
	st.Header.Add("times", nonNilF(a.Times))
	st.Header.Add("otherKeys", nonNilFields(a.Extra))
	st.Header.Add("counts", decode.SummaryFields(0, 0, 0, 0, 0, 1))
	return st, nil
}

func nonNilF(s []float64) []float64 {
	if s == nil {
		return []float64{}
	}
	return s
}

// Decode gives a scene of one node without geometry (a Mesh with no
// primitives, which the glTF exporter writes as a node without a mesh)
// animated by the track: each matrix, changed to the Y-up basis (C·M·C⁻¹),
// decomposed into translation, rotation and scale.
func (f Ani) Decode(ctx context.Context, src *decode.Source) (*decode.Scene, error) {
	a, err := f.load(ctx, src)
	if err != nil {
		return nil, err
	}
	name := decode.SafeName(f.StripExt(filepath.Base(src.Name)))
	s := &decode.Scene{Meshes: []decode.Mesh{{Name: name}}}
	if len(a.Times) == 0 {
		return s, nil
	}
	tr := decode.Channel{Kind: decode.TargetMesh, Index: 0, Path: decode.PathTranslation}
	rc := decode.Channel{Kind: decode.TargetMesh, Index: 0, Path: decode.PathRotation}
	sc := decode.Channel{Kind: decode.TargetMesh, Index: 0, Path: decode.PathScale}
	var prev quat
	for i, m := range a.Transfs {
		t, q, scale, err := decompose(decode.ZUpToYUpMatrix(m))
		if err != nil {
			return nil, decode.Errorf(src.Name, "data()", fmt.Sprintf("transfs[%d]", i+1), 0, "%v", err)
		}
		q = continuous(prev, q, i)
		prev = q
		sec := float32(a.Times[i] / 1000)
		tr.Times = append(tr.Times, sec)
		rc.Times = append(rc.Times, sec)
		sc.Times = append(sc.Times, sec)
		tr.Values = append(tr.Values, float32(t[0]), float32(t[1]), float32(t[2]))
		rc.Values = append(rc.Values, float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3]))
		sc.Values = append(sc.Values, float32(scale[0]), float32(scale[1]), float32(scale[2]))
	}
	s.Animations = []decode.Animation{{Name: name, Channels: []decode.Channel{tr, rc, sc}}}
	return s, nil
}

// at returns row r, column c of a column-major 4×4 matrix.
// decompose splits an affine matrix into translation, rotation and scale. A
// mirroring matrix (negative determinant) gets a negative X scale. The
// bottom row must be (0, 0, 0, 1): a projective matrix has no TRS.
func decompose(m [16]float64) (t [3]float64, q quat, s [3]float64, err error) {
	t = [3]float64{m[12], m[13], m[14]}
	if math.Abs(m[3]) > 1e-6 || math.Abs(m[7]) > 1e-6 || math.Abs(m[11]) > 1e-6 || math.Abs(m[15]-1) > 1e-6 {
		return t, q, s, fmt.Errorf("the matrix's last row is (%v, %v, %v, %v), not (0, 0, 0, 1)", m[3], m[7], m[11], m[15])
	}
	for _, v := range t {
		if math.Abs(v) > math.MaxFloat32 {
			return t, q, s, fmt.Errorf("translation %v does not fit a float32", v)
		}
	}
	var cols [3][3]float64
	for c := 0; c < 3; c++ {
		cols[c] = [3]float64{m[4*c], m[4*c+1], m[4*c+2]}
		s[c] = math.Sqrt(cols[c][0]*cols[c][0] + cols[c][1]*cols[c][1] + cols[c][2]*cols[c][2])
		if !(s[c] > 1e-12) || s[c] > math.MaxFloat32 {
			return t, q, s, fmt.Errorf("the matrix has a degenerate axis %d (length %v)", c, s[c])
		}
	}
	det := cols[0][0]*(cols[1][1]*cols[2][2]-cols[1][2]*cols[2][1]) -
		cols[1][0]*(cols[0][1]*cols[2][2]-cols[0][2]*cols[2][1]) +
		cols[2][0]*(cols[0][1]*cols[1][2]-cols[0][2]*cols[1][1])
	if det < 0 {
		s[0] = -s[0]
	}
	var r [3][3]float64 // r[row][col]
	for c := 0; c < 3; c++ {
		for row := 0; row < 3; row++ {
			r[row][c] = cols[c][row] / s[c]
		}
	}
	q = matToQuat(r)
	return t, q, s, nil
}

// matToQuat converts a rotation matrix (Shepperd's method) and normalizes.
func matToQuat(r [3][3]float64) quat {
	var q quat
	tr := r[0][0] + r[1][1] + r[2][2]
	switch {
	case tr > 0:
		s := math.Sqrt(tr+1) * 2
		q = quat{(r[2][1] - r[1][2]) / s, (r[0][2] - r[2][0]) / s, (r[1][0] - r[0][1]) / s, s / 4}
	case r[0][0] > r[1][1] && r[0][0] > r[2][2]:
		s := math.Sqrt(1+r[0][0]-r[1][1]-r[2][2]) * 2
		q = quat{s / 4, (r[0][1] + r[1][0]) / s, (r[0][2] + r[2][0]) / s, (r[2][1] - r[1][2]) / s}
	case r[1][1] > r[2][2]:
		s := math.Sqrt(1+r[1][1]-r[0][0]-r[2][2]) * 2
		q = quat{(r[0][1] + r[1][0]) / s, s / 4, (r[1][2] + r[2][1]) / s, (r[0][2] - r[2][0]) / s}
	default:
		s := math.Sqrt(1+r[2][2]-r[0][0]-r[1][1]) * 2
		q = quat{(r[0][2] + r[2][0]) / s, (r[1][2] + r[2][1]) / s, s / 4, (r[1][0] - r[0][1]) / s}
	}
	n := math.Sqrt(q[0]*q[0] + q[1]*q[1] + q[2]*q[2] + q[3]*q[3])
	if !(n > 0) || math.IsNaN(n) {
		return quat{0, 0, 0, 1}
	}
	return quat{q[0] / n, q[1] / n, q[2] / n, q[3] / n}
}
