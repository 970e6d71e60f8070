package decode

import (
	"math"
	"reflect"
	"testing"
)

// scaledRig is a chain of three joints whose rest pose is scaled the way
// the UNIGINE samples are (a root at 1/4 turned about an oblique axis, a
// bone under it at 40, one more at 1/10), bound where it rests, with one
// vertex on each joint and an animation that moves, turns and scales the
// middle joint over three keys and steps the last one's translation.
func scaledRig() *Scene {
	q := func(x, y, z, a float64) [4]float32 {
		l := math.Sqrt(x*x + y*y + z*z)
		s := math.Sin(a/2) / l
		return [4]float32{float32(x * s), float32(y * s), float32(z * s), float32(math.Cos(a / 2))}
	}
	js := []Joint{
		{Name: "mid", Parent: 2, Rest: TRS{Translation: [3]float32{0, 2, 0}, Rotation: q(1, 0, 0, 0.5), Scale: [3]float32{40, 40, 40}}},
		{Name: "tip", Parent: 0, Rest: TRS{Translation: [3]float32{0.05, 0, 0}, Rotation: q(0, 0, 1, -0.3), Scale: [3]float32{0.1, 0.1, 0.1}}},
		{Name: "root", Parent: -1, Rest: TRS{Translation: [3]float32{1, 0, 3}, Rotation: q(0, 1, -1, math.Pi), Scale: [3]float32{0.25, 0.25, 0.25}}},
	}
	sk := &Skeleton{Joints: js}
	g := restGlobals(sk, nil, 0)
	for i := range js {
		inv, _ := g[i].InverseAffine()
		ib := new([16]float32)
		for k := range ib {
			ib[k] = float32(inv[k])
		}
		sk.Joints[i].InverseBind = ib
	}
	p := Primitive{
		Positions: [][3]float32{{1, 2, 3}, {-2, 0.5, 1}, {0.3, -1, 2}},
		Joints:    [][4]uint16{{0, 1, 0, 0}, {1, 0, 0, 0}, {2, 0, 0, 0}},
		Weights:   [][4]float32{{0.5, 0.5, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}},
		Indices:   []uint32{0, 1, 2},
	}
	r1, r2 := q(1, 1, 0, 0.7), q(0, 1, 1, -1.2)
	anim := Animation{Name: "take", Channels: []Channel{
		{Kind: TargetJoint, Index: 0, Path: PathTranslation, Times: []float32{0, 0.5, 1}, Values: []float32{0, 2, 0, 0.1, 2.5, 0, 0, 3, 0.2}},
		{Kind: TargetJoint, Index: 0, Path: PathRotation, Times: []float32{0, 0.5, 1}, Values: append(append(append([]float32{}, js[0].Rest.Rotation[:]...), r1[:]...), r2[:]...)},
		{Kind: TargetJoint, Index: 0, Path: PathScale, Times: []float32{0, 1}, Values: []float32{40, 40, 40, 60, 60, 60}},
		{Kind: TargetJoint, Index: 1, Path: PathTranslation, Times: []float32{0, 0.25}, Values: []float32{0.05, 0, 0, 0.05, 0.02, 0}, Step: true},
	}}
	return &Scene{Skeleton: sk, Meshes: []Mesh{{Name: "m", Skinned: true, Primitives: []Primitive{p}}}, Animations: []Animation{anim}}
}

// restGlobals chains the joints' local transforms, each channel of anim
// (when not nil) sampled at time t in place of the rest value.
func restGlobals(sk *Skeleton, anim *Animation, t float32) []Mat4 {
	local := make([]TRS, len(sk.Joints))
	for i, j := range sk.Joints {
		local[i] = restOf(j)
	}
	if anim != nil {
		for _, c := range anim.Channels {
			v := c.sample(t)
			switch c.Path {
			case PathTranslation:
				local[c.Index].Translation = [3]float32(v)
			case PathRotation:
				local[c.Index].Rotation = [4]float32(v)
			case PathScale:
				local[c.Index].Scale = [3]float32(v)
			}
		}
	}
	g := make([]Mat4, len(local))
	var chain func(i int) Mat4
	chain = func(i int) Mat4 {
		m := local[i].Matrix()
		if p := sk.Joints[i].Parent; p >= 0 {
			m = chain(p).Mul(m)
		}
		return m
	}
	for i := range g {
		g[i] = chain(i)
	}
	return g
}

// skinned is where s's vertices skin at time t of its first animation (at
// rest when it has none).
func skinned(s *Scene, t float32) [][3]float64 {
	var anim *Animation
	if len(s.Animations) > 0 {
		anim = &s.Animations[0]
	}
	g := restGlobals(s.Skeleton, anim, t)
	p := s.Meshes[0].Primitives[0]
	out := make([][3]float64, len(p.Positions))
	for v, pos := range p.Positions {
		for k := range 4 {
			w := float64(p.Weights[v][k])
			if w == 0 {
				continue
			}
			j := p.Joints[v][k]
			var ib Mat4
			for c, x := range s.Skeleton.Joints[j].InverseBind {
				ib[c] = float64(x)
			}
			m := g[j].Mul(ib)
			for r := range 3 {
				out[v][r] += w * (m[r]*float64(pos[0]) + m[4+r]*float64(pos[1]) + m[8+r]*float64(pos[2]) + m[12+r])
			}
		}
	}
	return out
}

// TestRigidRest: the new rest pose has no scale in any joint's model-space
// transform, and the vertices skin where they did, at rest and at every
// key and between keys of the animation; the input scene is unchanged.
func TestRigidRest(t *testing.T) {
	s := scaledRig()
	before := scaledRig()
	r := s.RigidRest()
	if r == s {
		t.Fatal("RigidRest returned the scaled scene itself")
	}
	if !reflect.DeepEqual(s, before) {
		t.Fatal("RigidRest changed its input")
	}
	for i, g := range restGlobals(r.Skeleton, nil, 0) {
		for c := 0; c < 3; c++ {
			if l := math.Sqrt(g[4*c]*g[4*c] + g[4*c+1]*g[4*c+1] + g[4*c+2]*g[4*c+2]); math.Abs(l-1) > 1e-5 {
				t.Errorf("joint %d: rest column %d has length %v, want 1", i, c, l)
			}
		}
	}
	for _, at := range []float32{0, 0.1, 0.25, 0.3, 0.5, 0.8, 1, 2} {
		want, got := skinned(s, at), skinned(r, at)
		for v := range want {
			for k := range 3 {
				if d := math.Abs(want[v][k] - got[v][k]); d > 1e-4*(1+math.Abs(want[v][k])) {
					t.Errorf("t=%v vertex %d: skins to %v, was %v", at, v, got[v], want[v])
					break
				}
			}
		}
	}
	// The stepping channel still steps; the constant ones keep one key.
	var tip []Channel
	for _, c := range r.Animations[0].Channels {
		if c.Index == 1 {
			tip = append(tip, c)
		}
	}
	if len(tip) != 3 {
		t.Fatalf("tip has %d channels, want translation, rotation and scale", len(tip))
	}
	for _, c := range tip {
		if !c.Step {
			t.Errorf("tip's %s channel no longer steps", c.Path)
		}
		if want := map[Path]int{PathTranslation: 2, PathRotation: 1, PathScale: 1}[c.Path]; len(c.Times) != want {
			t.Errorf("tip's %s channel has %d keys, want %d", c.Path, len(c.Times), want)
		}
	}
	// Idempotent: a rigid rest pose is returned as it is.
	if again := r.RigidRest(); again != r {
		t.Error("RigidRest changed a rest pose without scale")
	}
}

// TestRigidRestUnscaled: a skeleton without scale, a zero rest TRS among
// them, and a skeleton whose parents loop are returned as they are.
func TestRigidRestUnscaled(t *testing.T) {
	s := &Scene{Skeleton: &Skeleton{Joints: []Joint{
		{Name: "a", Parent: -1, Rest: TRS{Translation: [3]float32{1, 2, 3}, Rotation: [4]float32{0, 0.6, 0, 0.8}, Scale: [3]float32{1, 1, 1}}},
		{Name: "b", Parent: 0},
	}}}
	if s.RigidRest() != s {
		t.Error("an unscaled skeleton was rebuilt")
	}
	loop := &Scene{Skeleton: &Skeleton{Joints: []Joint{
		{Name: "a", Parent: 1, Rest: TRS{Rotation: [4]float32{0, 0, 0, 1}, Scale: [3]float32{2, 2, 2}}},
		{Name: "b", Parent: 0},
	}}}
	if loop.RigidRest() != loop {
		t.Error("a looping skeleton was rebuilt")
	}
	var none *Scene
	if none.RigidRest() != nil || (&Scene{}).RigidRest() == nil {
		t.Error("a scene without skeleton was not returned as it is")
	}
}
