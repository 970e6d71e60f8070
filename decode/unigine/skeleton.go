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
	global := make([]decode.Mat4, n)
	done := make([]bool, n)
	// chain computes model-space matrices from parent-relative ones,
	// parents first whatever the joint order (parents were checked to form
	// a tree by the reader).
	var chain func(i int) decode.Mat4
	chain = func(i int) decode.Mat4 {
		if done[i] {
			return global[i]
		}
		m := local[i].Matrix()
		if p := f.Joints[i].Parent; p >= 0 {
			m = chain(int(p)).Mul(m)
		}
		global[i], done[i] = m, true
		return m
	}
	switch {
	case skin && len(f.Bind) == n && n > 0:
		for i := range n {
			global[i], done[i] = trsYUp(f.Bind[i]).Matrix(), true
		}
		for i := range n {
			if len(f.Rest) == n {
				local[i] = trsYUp(f.Rest[i])
				continue
			}
			m := global[i]
			if p := f.Joints[i].Parent; p >= 0 {
				pi, ok := global[p].InverseAffine()
				if !ok {
					return nil, 0, decode.Errorf(file, "skeleton", fmt.Sprintf("joint[%d].bind", p), 0, "bind transform is singular")
				}
				m = pi.Mul(m)
			}
			local[i] = m.TRS()
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
		inv, ok := global[i].InverseAffine()
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
