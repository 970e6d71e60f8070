package gltf

import (
	"fmt"
	"math"

	"github.com/meshfs/meshfs/decode"
	qgltf "github.com/qmuntal/gltf"
	"github.com/qmuntal/gltf/ext/lightspunctual"
)

// A scene with Nodes (an assembled model) is exported as its tree: scene
// node i is glTF node i, parented as the scene says, its matrix written as
// translation, rotation and scale (a mirroring matrix as a negative x
// scale: glTF then reverses the winding of the meshes beneath it, which
// keeps their front faces front), its extras as node extras. Each mesh is
// a node of its own after them: a rigid mesh a child of the node it hangs
// on, a skinned one a scene root (parent transforms do not move a skinned
// mesh: validator NODE_SKINNED_MESH_NON_ROOT) with a skin of its own whose
// joints are scene nodes. When the tree has several roots and a mesh is
// skinned, one node called "root" above them gives the skins a common
// root (validator SKIN_NO_COMMON_ROOT). A node's Light is a
// KHR_lights_punctual light of the node, the extension used (not
// required) when any node has one.

// nodeTree is scene for a scene with Nodes.
func (b *builder) nodeTree(s *decode.Scene) error {
	doc := b.doc
	n := len(s.Nodes)
	b.treeNodes = n
	var roots []int
	for i := range s.Nodes {
		sn := &s.Nodes[i]
		gn := &qgltf.Node{Name: sn.Name}
		if sn.Matrix != (decode.Mat4{}) {
			setTRS(gn, sn.Matrix.TRS())
		}
		if len(sn.Extras) > 0 {
			gn.Extras = sn.Extras
		}
		if sn.Light != nil {
			b.light(gn, sn.Light)
		}
		doc.Nodes = append(doc.Nodes, gn)
		if p := sn.Parent; p >= 0 && p < i {
			doc.Nodes[p].Children = append(doc.Nodes[p].Children, i)
		} else {
			roots = append(roots, i)
		}
	}
	skinned := false
	for i := range s.Meshes {
		if m := &s.Meshes[i]; m.Skinned && m.Skin != nil && len(m.Skin.Joints) > 0 {
			skinned = true
		}
	}
	if skinned && len(roots) > 1 {
		doc.Nodes = append(doc.Nodes, &qgltf.Node{Name: "root", Children: roots})
		roots = []int{len(doc.Nodes) - 1}
	}
	skelRoot := -1
	if len(roots) == 1 {
		skelRoot = roots[0]
	}

	meshNode := make([]int, len(s.Meshes))
	for i := range s.Meshes {
		m := &s.Meshes[i]
		gn := &qgltf.Node{Name: m.Name}
		setTRS(gn, m.Transform)
		skin := m.Skinned && m.Skin != nil && len(m.Skin.Joints) > 0
		nJoints := 0
		if skin {
			if err := checkSkin(m.Skin, n); err != nil {
				return fmt.Errorf("mesh %d (%q): %w", i, m.Name, err)
			}
			nJoints = len(m.Skin.Joints)
		}
		gm, err := b.mesh(s, i, nJoints)
		if err != nil {
			return err
		}
		if gm != nil {
			doc.Meshes = append(doc.Meshes, gm)
			gn.Mesh = qgltf.Index(len(doc.Meshes) - 1)
			if skin {
				gn.Skin = qgltf.Index(b.nodeSkin(m, skelRoot))
			}
		}
		doc.Nodes = append(doc.Nodes, gn)
		at := len(doc.Nodes) - 1
		meshNode[i] = at
		if gn.Skin != nil || m.Node < 0 || m.Node >= n {
			roots = append(roots, at)
		} else {
			doc.Nodes[m.Node].Children = append(doc.Nodes[m.Node].Children, at)
		}
	}

	for i := range s.Animations {
		b.animation(&s.Animations[i], meshNode, nil)
	}
	doc.Scenes = []*qgltf.Scene{{Nodes: roots}}
	doc.Scene = qgltf.Index(0)
	return nil
}

// light adds l to the document's lights and makes it node gn's.
func (b *builder) light(gn *qgltf.Node, l *decode.Light) {
	doc := b.doc
	var lights lightspunctual.Lights
	if doc.Extensions == nil {
		doc.Extensions = qgltf.Extensions{}
	}
	if have, ok := doc.Extensions[lightspunctual.ExtensionName].(lightspunctual.Lights); ok {
		lights = have
	} else {
		doc.ExtensionsUsed = append(doc.ExtensionsUsed, lightspunctual.ExtensionName)
	}
	gl := &lightspunctual.Light{Type: l.Kind, Name: gn.Name}
	c := [3]float64{float64(clamp01(l.Color[0])), float64(clamp01(l.Color[1])), float64(clamp01(l.Color[2]))}
	gl.Color = &c
	gl.Intensity = qgltf.Float(float64(fin(max(0, l.Intensity))))
	if l.Range > 0 && !math.IsInf(float64(l.Range), 0) && l.Kind != lightspunctual.TypeDirectional {
		gl.Range = qgltf.Float(float64(l.Range))
	}
	if l.Kind == lightspunctual.TypeSpot {
		gl.Spot = &lightspunctual.Spot{}
		if l.OuterCone > 0 && l.OuterCone <= math.Pi/2 && l.InnerCone >= 0 && l.InnerCone < l.OuterCone {
			gl.Spot.InnerConeAngle = float64(l.InnerCone)
			gl.Spot.OuterConeAngle = qgltf.Float(float64(l.OuterCone))
		}
	}
	lights = append(lights, gl)
	doc.Extensions[lightspunctual.ExtensionName] = lights
	if gn.Extensions == nil {
		gn.Extensions = qgltf.Extensions{}
	}
	gn.Extensions[lightspunctual.ExtensionName] = lightspunctual.LightIndex(len(lights) - 1)
}

// checkSkin reports a skin whose joints are not nodes of the tree, each
// once, or whose inverse bind matrices are not one per joint.
func checkSkin(sk *decode.Skin, nodes int) error {
	seen := make(map[int]bool, len(sk.Joints))
	for k, j := range sk.Joints {
		if j < 0 || j >= nodes {
			return fmt.Errorf("skin joint %d is node %d of %d", k, j, nodes)
		}
		if seen[j] {
			return fmt.Errorf("skin joint %d: node %d is a joint twice", k, j)
		}
		seen[j] = true
	}
	if len(sk.InverseBinds) != len(sk.Joints) {
		return fmt.Errorf("skin has %d joints and %d inverse bind matrices", len(sk.Joints), len(sk.InverseBinds))
	}
	return nil
}

// nodeSkin adds the skin of mesh m and returns its index.
func (b *builder) nodeSkin(m *decode.Mesh, root int) int {
	ibs := m.Skin.InverseBinds
	acc := b.plainAccessor(len(ibs), 64, qgltf.AccessorMat4, nil, nil, func(dst []byte, lo, hi int) {
		for i := lo; i < hi; i++ {
			mat := ibs[i]
			for k := range mat {
				mat[k] = fin(mat[k])
			}
			mat[3], mat[7], mat[11], mat[15] = 0, 0, 0, 1
			e := dst[64*(i-lo):]
			for k, v := range mat {
				putF(e[4*k:], v)
			}
		}
	})
	sk := &qgltf.Skin{Name: m.Name, Joints: append([]int(nil), m.Skin.Joints...), InverseBindMatrices: qgltf.Index(acc)}
	if root >= 0 {
		sk.Skeleton = qgltf.Index(root)
	}
	b.doc.Skins = append(b.doc.Skins, sk)
	return len(b.doc.Skins) - 1
}
