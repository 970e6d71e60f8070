package decode

import (
	"math"
	"slices"
)

// RigidRest returns s with a skeleton whose rest pose carries no scale, for
// importers that cannot hold scale in a rest pose (Blender's glTF importer
// builds its bones from the rest pose and skins the vertices wrong where a
// joint's model-space rest transform is scaled). s itself is returned when
// no joint's rest transform is scaled, or when the joints do not form a
// tree or a transform is singular; otherwise a copy whose Skeleton and
// Animations are new (s is not changed).
//
// The rule: each joint's new model-space rest transform G' is the rotation
// and translation of its old one G, without the scale. A joint's new rest
// TRS is inverse(G' of its parent)·G', and its inverse bind matrix becomes
// inverse(G')·G·IB, so that at rest (G'·IB' = G·IB) and in every pose the
// vertices skin where they did. A pose of the old hierarchy, A, becomes
// A' = A·C with C = inverse(G)·G', so an animated joint's local transform L
// becomes inverse(C of its parent)·L·C: its channels are resampled at the
// times of any of its channels (linear keys stay linear, step keys step),
// and a channel whose value never changes keeps one key.
func (s *Scene) RigidRest() *Scene {
	if s == nil || s.Skeleton == nil {
		return s
	}
	js := s.Skeleton.Joints
	n := len(js)
	global := make([]Mat4, n)
	state := make([]uint8, n) // 0 unseen, 1 being computed, 2 done
	var chain func(i int) bool
	chain = func(i int) bool {
		switch state[i] {
		case 1:
			return false
		case 2:
			return true
		}
		state[i] = 1
		m := restOf(js[i]).Matrix()
		if p := js[i].Parent; p >= 0 {
			if p >= n || !chain(p) {
				return false
			}
			m = global[p].Mul(m)
		}
		global[i], state[i] = m, 2
		return true
	}
	scaled := false
	for i := range js {
		if !chain(i) {
			return s
		}
		for c := 0; c < 3; c++ {
			l := math.Sqrt(global[i][4*c]*global[i][4*c] + global[i][4*c+1]*global[i][4*c+1] + global[i][4*c+2]*global[i][4*c+2])
			if math.Abs(l-1) > 1e-4 {
				scaled = true
			}
		}
	}
	if !scaled {
		return s
	}
	rigid := make([]Mat4, n)
	rigidInv := make([]Mat4, n)
	corr := make([]Mat4, n) // C = inverse(G)·G'
	for i := range js {
		t := global[i].TRS()
		t.Scale = [3]float32{1, 1, 1}
		rigid[i] = t.Matrix()
		gi, ok := global[i].InverseAffine()
		ri, ok2 := rigid[i].InverseAffine()
		if !ok || !ok2 {
			return s
		}
		rigidInv[i], corr[i] = ri, gi.Mul(rigid[i])
	}
	out := *s
	sk := &Skeleton{Joints: make([]Joint, n)}
	for i, j := range js {
		m := rigid[i]
		if p := j.Parent; p >= 0 {
			m = rigidInv[p].Mul(m)
		}
		j.Rest = m.TRS()
		j.Rest.Scale = [3]float32{1, 1, 1}
		ib := Mat4{0: 1, 5: 1, 10: 1, 15: 1}
		if j.InverseBind != nil {
			for k, v := range j.InverseBind {
				ib[k] = float64(v)
			}
		}
		ib = rigidInv[i].Mul(global[i]).Mul(ib)
		nb := new([16]float32)
		for k := range nb {
			nb[k] = float32(ib[k])
		}
		// glTF requires the last row to be exactly (0, 0, 0, 1).
		nb[3], nb[7], nb[11], nb[15] = 0, 0, 0, 1
		j.InverseBind = nb
		sk.Joints[i] = j
	}
	out.Skeleton = sk
	if len(s.Animations) > 0 {
		out.Animations = make([]Animation, len(s.Animations))
		for k, a := range s.Animations {
			out.Animations[k] = Animation{Name: a.Name, Channels: rigidChannels(a.Channels, js, corr)}
		}
	}
	return &out
}

// rigidChannels re-expresses the joint channels of one animation for the
// rigid rest pose (RigidRest's rule); other channels are kept. A joint's
// new channels take the place of its first old one.
func rigidChannels(chans []Channel, js []Joint, corr []Mat4) []Channel {
	byJoint := map[int][]Channel{}
	for _, c := range chans {
		if c.Kind == TargetJoint && c.Index >= 0 && c.Index < len(js) && len(c.Times) > 0 && len(c.Values) == c.width()*len(c.Times) {
			byJoint[c.Index] = append(byJoint[c.Index], c)
		}
	}
	out := make([]Channel, 0, len(chans))
	emitted := map[int]bool{}
	for _, c := range chans {
		own, ok := byJoint[c.Index]
		if c.Kind != TargetJoint || !ok || !slices.ContainsFunc(own, func(o Channel) bool { return o.Path == c.Path }) {
			out = append(out, c)
			continue
		}
		if emitted[c.Index] {
			continue
		}
		emitted[c.Index] = true
		out = append(out, rigidJoint(c.Index, own, js, corr)...)
	}
	return out
}

// rigidJoint resamples one joint's channels as inverse(C_parent)·L·C.
func rigidJoint(j int, own []Channel, js []Joint, corr []Mat4) []Channel {
	var times []float32
	step := true
	for _, c := range own {
		times = append(times, c.Times...)
		step = step && c.Step
	}
	slices.Sort(times)
	times = slices.Compact(times)
	pre := Mat4{0: 1, 5: 1, 10: 1, 15: 1}
	if p := js[j].Parent; p >= 0 {
		pre, _ = corr[p].InverseAffine()
	}
	t := Channel{Kind: TargetJoint, Index: j, Path: PathTranslation, Times: times, Step: step, Values: make([]float32, 0, 3*len(times))}
	r := Channel{Kind: TargetJoint, Index: j, Path: PathRotation, Times: times, Step: step, Values: make([]float32, 0, 4*len(times))}
	sc := Channel{Kind: TargetJoint, Index: j, Path: PathScale, Times: times, Step: step, Values: make([]float32, 0, 3*len(times))}
	var prev [4]float32
	for f, at := range times {
		l := restOf(js[j])
		for _, c := range own {
			v := c.sample(at)
			switch c.Path {
			case PathTranslation:
				l.Translation = [3]float32(v)
			case PathRotation:
				l.Rotation = [4]float32(v)
			case PathScale:
				l.Scale = [3]float32(v)
			}
		}
		y := pre.Mul(l.Matrix()).Mul(corr[j]).TRS()
		q := y.Rotation
		// Keep each rotation on the side of the previous one, so that
		// interpolation takes the short way.
		if f > 0 && prev[0]*q[0]+prev[1]*q[1]+prev[2]*q[2]+prev[3]*q[3] < 0 {
			q = [4]float32{-q[0], -q[1], -q[2], -q[3]}
		}
		prev = q
		t.Values = append(t.Values, y.Translation[:]...)
		r.Values = append(r.Values, q[:]...)
		sc.Values = append(sc.Values, y.Scale[:]...)
	}
	return []Channel{constantOnce(t), constantOnce(r), constantOnce(sc)}
}

// constantOnce keeps one key of a channel whose values never change.
func constantOnce(c Channel) Channel {
	w := len(c.Values) / len(c.Times)
	for k := w; k < len(c.Values); k++ {
		if c.Values[k] != c.Values[k%w] {
			return c
		}
	}
	c.Times, c.Values = c.Times[:1], c.Values[:w]
	return c
}

// sample is c's value at time t: clamped outside its keys, linear between
// them (rotations spherical linear), or the key before t when c steps.
func (c Channel) sample(t float32) []float32 {
	w := c.width()
	k, found := slices.BinarySearch(c.Times, t)
	switch {
	case found:
		return c.Values[w*k : w*k+w]
	case k == 0:
		return c.Values[:w]
	case k == len(c.Times):
		return c.Values[w*(k-1) : w*k]
	case c.Step:
		return c.Values[w*(k-1) : w*k]
	}
	a, b := c.Values[w*(k-1):w*k], c.Values[w*k:w*k+w]
	u := float64((t - c.Times[k-1]) / (c.Times[k] - c.Times[k-1]))
	v := make([]float32, w)
	if w == 3 {
		for i := range v {
			v[i] = float32(float64(a[i]) + u*float64(b[i]-a[i]))
		}
		return v
	}
	return slerp(a, b, u)
}

// slerp interpolates unit quaternions a and b the short way.
func slerp(a, b []float32, u float64) []float32 {
	var d float64
	for i := range 4 {
		d += float64(a[i]) * float64(b[i])
	}
	sign := 1.0
	if d < 0 {
		d, sign = -d, -1
	}
	wa, wb := 1-u, u
	if d < 0.9995 {
		th := math.Acos(d)
		wa, wb = math.Sin((1-u)*th)/math.Sin(th), math.Sin(u*th)/math.Sin(th)
	}
	v := make([]float32, 4)
	var l float64
	q := make([]float64, 4)
	for i := range 4 {
		q[i] = wa*float64(a[i]) + sign*wb*float64(b[i])
		l += q[i] * q[i]
	}
	l = math.Sqrt(l)
	for i := range 4 {
		v[i] = float32(q[i] / l)
	}
	return v
}

// width is how many floats one key of c holds.
func (c Channel) width() int {
	if c.Path == PathRotation {
		return 4
	}
	return 3
}

// restOf is j's rest transform, the zero TRS read as identity.
func restOf(j Joint) TRS {
	if j.Rest == (TRS{}) {
		return Identity()
	}
	return j.Rest
}
