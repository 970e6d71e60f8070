package decode

import "testing"

// TestAttach: an animation belongs to a skeleton when every joint it drives
// is one of its joints by name; its channels then drive those joints
// (indices moved), and an animation that drives any other joint changes
// nothing.
func TestAttach(t *testing.T) {
	mesh := func() *Scene {
		return &Scene{Meshes: []Mesh{{Name: "m", Skinned: true}}, Skeleton: &Skeleton{Joints: []Joint{
			{Name: "root", Parent: -1}, {Name: "spine", Parent: 0}, {Name: "head", Parent: 1}}}}
	}
	anim := &Scene{Skeleton: &Skeleton{Joints: []Joint{{Name: "head", Parent: -1}, {Name: "spine", Parent: -1}}},
		Animations: []Animation{{Name: "take", Channels: []Channel{
			{Kind: TargetJoint, Index: 0, Path: PathRotation, Times: []float32{0}, Values: []float32{0, 0, 0, 1}},
			{Kind: TargetJoint, Index: 1, Path: PathTranslation, Times: []float32{0}, Values: []float32{0, 1, 0}},
		}}}}
	s := mesh()
	if !Attach(s, anim, "nod") {
		t.Fatal("an animation of head and spine does not belong to root/spine/head")
	}
	if len(s.Animations) != 1 || s.Animations[0].Name != "nod" {
		t.Fatalf("animations %+v", s.Animations)
	}
	if c := s.Animations[0].Channels; c[0].Index != 2 || c[1].Index != 1 {
		t.Errorf("channels drive joints %d and %d, want 2 (head) and 1 (spine)", c[0].Index, c[1].Index)
	}
	if anim.Animations[0].Channels[0].Index != 0 {
		t.Error("Attach changed the animation's own channels")
	}

	other := &Scene{Skeleton: &Skeleton{Joints: []Joint{{Name: "head", Parent: -1}, {Name: "tail", Parent: 0}}},
		Animations: []Animation{{Name: "wag", Channels: []Channel{
			{Kind: TargetJoint, Index: 0, Path: PathRotation, Times: []float32{0}, Values: []float32{0, 0, 0, 1}},
			{Kind: TargetJoint, Index: 1, Path: PathRotation, Times: []float32{0}, Values: []float32{0, 0, 0, 1}},
		}}}}
	s = mesh()
	if Attach(s, other, "") || len(s.Animations) != 0 {
		t.Errorf("an animation of a tail attached to a skeleton without one: %+v", s.Animations)
	}
	if Attach(&Scene{Meshes: []Mesh{{}}}, anim, "") {
		t.Error("attached to a scene without a skeleton")
	}
	if _, ok := AnimatedJoints(&Scene{Skeleton: anim.Skeleton}); ok {
		t.Error("a skeleton without animations drives joints")
	}
}
