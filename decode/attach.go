package decode

// AnimatedJoints returns the names of the joints that anim's channels drive,
// each once, in channel order; ok is false when a channel drives something
// else than a joint of anim's skeleton (a mesh node), or nothing is driven.
func AnimatedJoints(anim *Scene) (names []string, ok bool) {
	if anim == nil || anim.Skeleton == nil {
		return nil, false
	}
	seen := map[int]bool{}
	for _, a := range anim.Animations {
		for _, c := range a.Channels {
			if c.Kind != TargetJoint || c.Index < 0 || c.Index >= len(anim.Skeleton.Joints) {
				return nil, false
			}
			if !seen[c.Index] {
				seen[c.Index] = true
				names = append(names, anim.Skeleton.Joints[c.Index].Name)
			}
		}
	}
	return names, len(names) > 0
}

// Attach adds the animations of anim (a skeleton with animations, as an
// animation file decodes) to s, each channel moved by joint name onto the
// joint of s's skeleton. An animation belongs to a skeleton when every joint
// it drives is a joint of that skeleton by name; Attach changes nothing and
// returns false when anim does not belong to s's skeleton. name, when not
// empty, names the attached animations (the animation file's name: an
// animation's own name is often a generic "take").
func Attach(s, anim *Scene, name string) bool {
	if s == nil || s.Skeleton == nil {
		return false
	}
	if _, ok := AnimatedJoints(anim); !ok {
		return false
	}
	byName := make(map[string]int, len(s.Skeleton.Joints))
	for i, j := range s.Skeleton.Joints {
		if _, dup := byName[j.Name]; !dup {
			byName[j.Name] = i
		}
	}
	moved := make([]Animation, 0, len(anim.Animations))
	for _, a := range anim.Animations {
		na := Animation{Name: a.Name, Channels: make([]Channel, len(a.Channels))}
		if name != "" {
			na.Name = name
		}
		for i, c := range a.Channels {
			to, ok := byName[anim.Skeleton.Joints[c.Index].Name]
			if !ok {
				return false
			}
			c.Index = to
			na.Channels[i] = c
		}
		moved = append(moved, na)
	}
	s.Animations = append(s.Animations, moved...)
	return true
}
