package unigine

import (
	"fmt"
	"math"

	"github.com/meshfs/meshfs/decode"
)

// How the transforms are read (FORMATS.md §3.3, §3.4):
//   - sk10: the bind transforms are model-space joint transforms, so each
//     inverse bind matrix is the inverse of its bind transform; the rest
//     transforms are parent-relative and become the joints' glTF TRS.
//   - ms14 (and ms11): one transform per bone, parent-relative. The real
//     ms14_capsule_skinned.mesh proves it: its first bone is rotated so its
//     x axis points up +Z, and every child sits at (≈2, 0, 0) from its
//     parent, a chain up the capsule's Z extent only in parent space. They
//     are both the rest pose and, chained, the bind pose.
// Everything is converted to Y-up by conjugating with the Z-up → Y-up
// rotation C: M' = C·M·C⁻¹ keeps a TRS a TRS (t' = C·t, the quaternion's
// axis rotated by C, the scale's y and z swapped).

type mat4 [16]float64 // column-major

func trsYUp(t Transform) decode.TRS {
	q := [4]float64{float64(t.Rotation[0]), float64(t.Rotation[2]), -float64(t.Rotation[1]), float64(t.Rotation[3])}
	l := math.Sqrt(q[0]*q[0] + q[1]*q[1] + q[2]*q[2] + q[3]*q[3])
	if !(l > 1e-9) {
		q, l = [4]float64{0, 0, 0, 1}, 1
	}
	return decode.TRS{
		Translation: decode.ZUpToYUp(t.Position),
		Rotation:    [4]float32{float32(q[0] / l), float32(q[1] / l), float32(q[2] / l), float32(q[3] / l)},
		Scale:       [3]float32{t.Scale[0], t.Scale[2], t.Scale[1]},
	}
}

func matOf(t decode.TRS) mat4 {
	x, y, z, w := float64(t.Rotation[0]), float64(t.Rotation[1]), float64(t.Rotation[2]), float64(t.Rotation[3])
	sx, sy, sz := float64(t.Scale[0]), float64(t.Scale[1]), float64(t.Scale[2])
	return mat4{
		(1 - 2*(y*y+z*z)) * sx, 2 * (x*y + w*z) * sx, 2 * (x*z - w*y) * sx, 0,
		2 * (x*y - w*z) * sy, (1 - 2*(x*x+z*z)) * sy, 2 * (y*z + w*x) * sy, 0,
		2 * (x*z + w*y) * sz, 2 * (y*z - w*x) * sz, (1 - 2*(x*x+y*y)) * sz, 0,
		float64(t.Translation[0]), float64(t.Translation[1]), float64(t.Translation[2]), 1,
	}
}

func mul(a, b mat4) (m mat4) {
	for c := 0; c < 4; c++ {
		for r := 0; r < 4; r++ {
			var s float64
			for k := 0; k < 4; k++ {
				s += a[k*4+r] * b[c*4+k]
			}
			m[c*4+r] = s
		}
	}
	return m
}

// invAffine inverts a matrix whose last row is (0, 0, 0, 1); ok is false
// when its 3×3 part is singular.
func invAffine(m mat4) (inv mat4, ok bool) {
	a, b, c := m[0], m[4], m[8]
	d, e, f := m[1], m[5], m[9]
	g, h, i := m[2], m[6], m[10]
	det := a*(e*i-f*h) - b*(d*i-f*g) + c*(d*h-e*g)
	if !(math.Abs(det) > 1e-30) {
		return inv, false
	}
	r := 1 / det
	// Rows of the inverse 3×3, stored column-major.
	inv[0], inv[4], inv[8] = (e*i-f*h)*r, (c*h-b*i)*r, (b*f-c*e)*r
	inv[1], inv[5], inv[9] = (f*g-d*i)*r, (a*i-c*g)*r, (c*d-a*f)*r
	inv[2], inv[6], inv[10] = (d*h-e*g)*r, (b*g-a*h)*r, (a*e-b*d)*r
	tx, ty, tz := m[12], m[13], m[14]
	inv[12] = -(inv[0]*tx + inv[4]*ty + inv[8]*tz)
	inv[13] = -(inv[1]*tx + inv[5]*ty + inv[9]*tz)
	inv[14] = -(inv[2]*tx + inv[6]*ty + inv[10]*tz)
	inv[15] = 1
	return inv, true
}

// decompose splits an affine matrix into translation, rotation and scale
// (any shear is dropped): for sk10 files that store bind but no rest
// transforms, whose parent-relative rest pose is derived from the binds.
func decompose(m mat4) decode.TRS {
	t := decode.TRS{Translation: [3]float32{float32(m[12]), float32(m[13]), float32(m[14])}}
	var cols [3][3]float64
	for c := 0; c < 3; c++ {
		v := [3]float64{m[c*4], m[c*4+1], m[c*4+2]}
		s := math.Sqrt(v[0]*v[0] + v[1]*v[1] + v[2]*v[2])
		if s < 1e-12 {
			s = 1
		}
		t.Scale[c] = float32(s)
		cols[c] = [3]float64{v[0] / s, v[1] / s, v[2] / s}
	}
	// A mirroring matrix: put the reflection in the scale.
	det := cols[0][0]*(cols[1][1]*cols[2][2]-cols[2][1]*cols[1][2]) - cols[1][0]*(cols[0][1]*cols[2][2]-cols[2][1]*cols[0][2]) + cols[2][0]*(cols[0][1]*cols[1][2]-cols[1][1]*cols[0][2])
	if det < 0 {
		t.Scale[0] = -t.Scale[0]
		cols[0] = [3]float64{-cols[0][0], -cols[0][1], -cols[0][2]}
	}
	// Rotation matrix R[r][c] = cols[c][r] → quaternion (Shepperd's method).
	r00, r11, r22 := cols[0][0], cols[1][1], cols[2][2]
	var x, y, z, w float64
	switch tr := r00 + r11 + r22; {
	case tr > 0:
		s := math.Sqrt(tr+1) * 2
		w, x, y, z = s/4, (cols[1][2]-cols[2][1])/s, (cols[2][0]-cols[0][2])/s, (cols[0][1]-cols[1][0])/s
	case r00 > r11 && r00 > r22:
		s := math.Sqrt(1+r00-r11-r22) * 2
		w, x, y, z = (cols[1][2]-cols[2][1])/s, s/4, (cols[1][0]+cols[0][1])/s, (cols[2][0]+cols[0][2])/s
	case r11 > r22:
		s := math.Sqrt(1+r11-r00-r22) * 2
		w, x, y, z = (cols[2][0]-cols[0][2])/s, (cols[1][0]+cols[0][1])/s, s/4, (cols[2][1]+cols[1][2])/s
	default:
		s := math.Sqrt(1+r22-r00-r11) * 2
		w, x, y, z = (cols[0][1]-cols[1][0])/s, (cols[2][0]+cols[0][2])/s, (cols[2][1]+cols[1][2])/s, s/4
	}
	l := math.Sqrt(x*x + y*y + z*z + w*w)
	t.Rotation = [4]float32{float32(x / l), float32(y / l), float32(z / l), float32(w / l)}
	return t
}

// skeleton builds the joints: rest TRS relative to the parent, inverse bind
// matrices, and a synthetic root in front when the file has several roots
// (glTF wants one skeleton root; the file's joints then shift by one, the
// returned shift).
func skeleton(f *File, file string) (*decode.Skeleton, int, error) {
	n := len(f.Joints)
	if i, msg := jointTreeError(f.Joints); i >= 0 {
		return nil, 0, decode.Errorf(file, "skeleton", fmt.Sprintf("joint[%d].parent", i), 0, "%s", msg)
	}
	if n > 32768 || (len(f.Bind) != 0 && len(f.Bind) != n) || (len(f.Rest) != 0 && len(f.Rest) != n) {
		return nil, 0, decode.Errorf(file, "skeleton", "joint_count", 0, "%d joints, %d bind and %d rest transforms", n, len(f.Bind), len(f.Rest))
	}
	roots := 0
	for _, j := range f.Joints {
		if j.Parent < 0 {
			roots++
		}
	}
	shift := 0
	if roots > 1 {
		shift = 1
	}
	skin := f.Magic == MagicSK10
	local := make([]decode.TRS, n)
	global := make([]mat4, n)
	done := make([]bool, n)
	// chain computes model-space matrices from parent-relative ones,
	// parents first whatever the joint order (parents were checked to form
	// a tree by the reader).
	var chain func(i int) mat4
	chain = func(i int) mat4 {
		if done[i] {
			return global[i]
		}
		m := matOf(local[i])
		if p := f.Joints[i].Parent; p >= 0 {
			m = mul(chain(int(p)), m)
		}
		global[i], done[i] = m, true
		return m
	}
	switch {
	case skin && len(f.Bind) == n && n > 0:
		for i := range n {
			global[i], done[i] = matOf(trsYUp(f.Bind[i])), true
		}
		for i := range n {
			if len(f.Rest) == n {
				local[i] = trsYUp(f.Rest[i])
				continue
			}
			m := global[i]
			if p := f.Joints[i].Parent; p >= 0 {
				pi, ok := invAffine(global[p])
				if !ok {
					return nil, 0, decode.Errorf(file, "skeleton", fmt.Sprintf("joint[%d].bind", p), 0, "bind transform is singular")
				}
				m = mul(pi, m)
			}
			local[i] = decompose(m)
		}
	case skin: // no bind transforms: the rest pose is the bind pose
		for i := range n {
			local[i] = decode.Identity()
			if len(f.Rest) == n {
				local[i] = trsYUp(f.Rest[i])
			}
		}
		for i := range n {
			chain(i)
		}
	default: // ms14/ms11 bones: parent-relative transforms
		for i := range n {
			local[i] = decode.Identity()
			if len(f.Bind) == n {
				local[i] = trsYUp(f.Bind[i])
			}
		}
		for i := range n {
			chain(i)
		}
	}
	sk := &decode.Skeleton{Joints: make([]decode.Joint, 0, n+shift)}
	if shift == 1 {
		sk.Joints = append(sk.Joints, decode.Joint{Name: rootName(f.Joints), Parent: -1, Rest: decode.Identity()})
	}
	for i, j := range f.Joints {
		inv, ok := invAffine(global[i])
		if !ok {
			return nil, 0, decode.Errorf(file, "skeleton", fmt.Sprintf("joint[%d]", i), 0, "bind pose is singular")
		}
		ib := new([16]float32)
		for k := range ib {
			ib[k] = float32(inv[k])
		}
		// glTF requires the last row to be exactly (0, 0, 0, 1).
		ib[3], ib[7], ib[11], ib[15] = 0, 0, 0, 1
		parent := int(j.Parent)
		if parent >= 0 {
			parent += shift
		} else if shift == 1 {
			parent = 0
		}
		sk.Joints = append(sk.Joints, decode.Joint{Name: j.Name, Parent: parent, Rest: local[i], InverseBind: ib})
	}
	return sk, shift, nil
}

// rootName is a name for the synthetic root that no joint has.
func rootName(js []Joint) string {
	names := map[string]bool{}
	for _, j := range js {
		names[j.Name] = true
	}
	n := "root"
	for k := 2; names[n]; k++ {
		n = fmt.Sprintf("root_%d", k)
	}
	return n
}
