package gltf

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// nodeScene is a node tree of three nodes (the third mirrored), a rigid
// mesh on the mirrored node, a mesh skinned to the first two, and an
// animation of the second.
func nodeScene() *decode.Scene {
	mirror := decode.Identity4()
	mirror[0], mirror[12] = -1, -2
	up := decode.Identity4()
	up[13] = 1
	skinned := grid(3, 3, 0)
	for range skinned.Positions {
		skinned.Joints = append(skinned.Joints, [4]uint16{0, 1, 0, 0})
		skinned.Weights = append(skinned.Weights, [4]float32{0.5, 0.5, 0, 0})
	}
	ident := [16]float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}
	down := ident
	down[13] = -1
	return &decode.Scene{
		Nodes: []decode.Node{
			{Name: "root", Parent: -1, Matrix: decode.Identity4(), Extras: decode.Fields{{Key: "unit", Value: "metre"}}},
			{Name: "arm", Parent: 0, Matrix: up},
			{Name: "mirrored", Parent: 0, Matrix: mirror},
		},
		Meshes: []decode.Mesh{
			{Name: "rigid", Node: 2, Primitives: []decode.Primitive{grid(2, 2, 0)}},
			{Name: "skinned", Node: 0, Skinned: true, Skin: &decode.Skin{Joints: []int{0, 1}, InverseBinds: [][16]float32{ident, down}},
				Primitives: []decode.Primitive{skinned}},
		},
		Animations: []decode.Animation{{Name: "lift", Channels: []decode.Channel{
			{Kind: decode.TargetNode, Index: 1, Path: decode.PathTranslation, Times: []float32{0, 1}, Values: []float32{0, 1, 0, 0, 2, 0}}}}},
	}
}

func TestNodeTree(t *testing.T) {
	r := encode(t, nodeScene())
	doc := r.doc
	if doc.Nodes[0].Name != "root" || doc.Nodes[1].Name != "arm" || doc.Nodes[2].Name != "mirrored" {
		t.Fatalf("scene nodes are not glTF nodes 0–2: %v", doc.Nodes)
	}
	if ex, _ := json.Marshal(doc.Nodes[0].Extras); !strings.Contains(string(ex), `"unit":"metre"`) {
		t.Errorf("root extras %s", ex)
	}
	if s := doc.Nodes[2].Scale; s[0] != -1 || s[1] != 1 || s[2] != 1 {
		t.Errorf("mirrored node scale %v, want (-1, 1, 1)", s)
	}
	rigid, skinned := r.nodeByName("rigid"), r.nodeByName("skinned")
	if ch := doc.Nodes[2].Children; len(ch) != 1 || ch[0] != rigid {
		t.Errorf("mirrored's children %v, want the rigid mesh %d", ch, rigid)
	}
	roots := doc.Scenes[0].Nodes
	if len(roots) != 2 || roots[0] != 0 || roots[1] != skinned {
		t.Errorf("scene roots %v, want the tree's root and the skinned mesh", roots)
	}
	if len(doc.Skins) != 1 || doc.Nodes[skinned].Skin == nil || len(doc.Skins[0].Joints) != 2 || doc.Skins[0].Joints[1] != 1 {
		t.Fatalf("skins %v", doc.Skins)
	}
	if doc.Nodes[rigid].Skin != nil {
		t.Error("the rigid mesh has a skin")
	}
	if len(doc.Animations) != 1 || *doc.Animations[0].Channels[0].Target.Node != 1 {
		t.Errorf("animation does not target arm: %v", doc.Animations)
	}
}

func TestNodeTreeNoSkin(t *testing.T) {
	s := nodeScene()
	s.Meshes = s.Meshes[:1]
	// A second root: without a skin no common root is added.
	s.Nodes = append(s.Nodes, decode.Node{Name: "other", Parent: -1})
	r := encode(t, s)
	if len(r.doc.Skins) != 0 {
		t.Errorf("%d skins for a scene without skinned meshes", len(r.doc.Skins))
	}
	if len(r.doc.Scenes[0].Nodes) != 2 {
		t.Errorf("roots %v", r.doc.Scenes[0].Nodes)
	}
}

func TestNodeTreeSkinContract(t *testing.T) {
	s := nodeScene()
	s.Meshes[1].Skin.Joints = []int{0, 7}
	if _, err := Encode(s); err == nil || !strings.Contains(err.Error(), "node 7") {
		t.Errorf("a skin joint past the nodes: %v", err)
	}
	s = nodeScene()
	s.Meshes[1].Skin.Joints = []int{1, 1}
	if _, err := Encode(s); err == nil {
		t.Error("a node twice a joint encoded")
	}
	// Several roots and a skin: one common root above them.
	s = nodeScene()
	s.Nodes = append(s.Nodes, decode.Node{Name: "other", Parent: -1})
	r := encode(t, s)
	if sk := r.doc.Skins[0].Skeleton; sk == nil || *sk != len(s.Nodes) || len(r.doc.Nodes[*sk].Children) != 2 {
		t.Errorf("skin skeleton %v: want a common root over both roots", sk)
	}
}
