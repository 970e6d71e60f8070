package preview

import (
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// TestDefaultPose: a skinned mesh is drawn where glTF's skinning puts it
// with its joints at rest (a Skeleton's, or a Skin's nodes): a cube fully
// weighted to a joint moved by (3, 0, 0) and stretched along Y, bound
// where it is stored (inverse bind identity), is drawn as the cube moved
// so; one weighted half and half to two joints moved opposite ways, and
// one bound at a joint's rest (inverse bind its inverse), stay where they
// are stored.
func TestDefaultPose(t *testing.T) {
	const size = 48
	want := render(t, sceneOf(nil, cube(), movedCube()), size)

	weighted := func(j [4]uint16, w [4]float32) decode.Primitive {
		p := cube()
		for range p.Positions {
			p.Joints = append(p.Joints, j)
			p.Weights = append(p.Weights, w)
		}
		return p
	}
	trs := func(x float32, sy float32) decode.TRS {
		return decode.TRS{Translation: [3]float32{x, 0, 0}, Rotation: [4]float32{0, 0, 0, 1}, Scale: [3]float32{1, sy, 1}}
	}
	inv := func(t decode.TRS) *[16]float32 {
		m, _ := t.Matrix().InverseAffine()
		var f [16]float32
		for i, v := range m {
			f[i] = float32(v)
		}
		return &f
	}
	skeleton := &decode.Scene{
		Skeleton: &decode.Skeleton{Joints: []decode.Joint{
			{Name: "moved", Parent: -1, Rest: trs(3, 2)},
			{Name: "left", Parent: -1, Rest: trs(-1, 1)},
			{Name: "right", Parent: -1, Rest: trs(1, 1)},
			{Name: "bound", Parent: -1, Rest: trs(5, 3), InverseBind: inv(trs(5, 3))},
		}},
		Meshes: []decode.Mesh{
			{Name: "balanced", Skinned: true, Primitives: []decode.Primitive{weighted([4]uint16{1, 2}, [4]float32{0.5, 0.5})}},
			{Name: "bound", Skinned: true, Primitives: []decode.Primitive{weighted([4]uint16{3}, [4]float32{1})}},
			{Name: "skinned", Skinned: true, Primitives: []decode.Primitive{weighted([4]uint16{0}, [4]float32{1})}},
		},
	}
	if got := render(t, skeleton, size); string(got.Pix) != string(want.Pix) {
		t.Errorf("skeleton: skinned meshes not drawn in their default pose (%d vs %d pixels)", covered(got), covered(want))
	}

	id := [16]float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}
	tree := &decode.Scene{
		Nodes: []decode.Node{
			{Name: "root", Parent: -1, Matrix: trs(1, 1).Matrix()},
			{Name: "joint", Parent: 0, Matrix: trs(2, 2).Matrix()},
		},
		Meshes: []decode.Mesh{
			{Name: "still", Node: -1, Primitives: []decode.Primitive{cube()}},
			{Name: "skinned", Node: 0, Skinned: true, Skin: &decode.Skin{Joints: []int{1}, InverseBinds: [][16]float32{id}},
				Primitives: []decode.Primitive{weighted([4]uint16{0}, [4]float32{1})}},
		},
	}
	if got := render(t, tree, size); string(got.Pix) != string(want.Pix) {
		t.Errorf("node tree: skinned mesh not drawn in its default pose (%d vs %d pixels)", covered(got), covered(want))
	}
}
