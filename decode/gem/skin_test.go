package gem

import (
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// skinnedPart decodes the skinned part file of node name in the real
// model m (beside path) and returns its scene and the rest frame its
// vertices are placed by: the node's world matrix, scaled to metres.
func skinnedPart(t *testing.T, m *decode.Model, path, name, file string) (*decode.Scene, decode.Mat4) {
	t.Helper()
	nodes := m.LODs[0].Nodes
	i := nodeIndex(t, nodes, name)
	var part *decode.ModelPart
	for k := range nodes[i].Parts {
		if strings.EqualFold(nodes[i].Parts[k].Mesh.Rel, file) {
			part = &nodes[i].Parts[k]
		}
	}
	if part == nil || !part.Skinned {
		t.Fatalf("node %q has no skinned part %s", name, file)
	}
	_, sc := scanDecode(t, filepath.Join(filepath.Dir(path), file))
	scale := decode.Identity4()
	scale[0], scale[5], scale[10] = m.Scale, m.Scale, m.Scale
	return sc, worlds(nodes)[i].Mul(scale)
}

// TestPilotSkinOnBones: a skinned part's vertices are in the frame of the
// node carrying it (the pilot's "skin" bone): placed so, the vertices each
// bone drives (weight ≥ 0.9) lie around that bone's rest position.
func TestPilotSkinOnBones(t *testing.T) {
	m, path := realModel(t, "cw_rus_combez.mdl")
	nodes := m.LODs[0].Nodes
	w := worlds(nodes)
	byName := map[string]int{}
	for i, n := range nodes {
		byName[n.Name] = i
	}
	sc, at := skinnedPart(t, m, path, "skin", "skin.ply")
	type acc struct {
		sum [3]float64
		n   int
	}
	groups := map[int]*acc{}
	for _, mesh := range sc.Meshes {
		for _, p := range mesh.Primitives {
			for v, pos := range p.Positions {
				for k := 0; k < 4; k++ {
					if p.Weights[v][k] < 0.9 {
						continue
					}
					q := apply(at, [3]float64{float64(pos[0]), float64(pos[1]), float64(pos[2])})
					a := groups[int(p.Joints[v][k])]
					if a == nil {
						a = &acc{}
						groups[int(p.Joints[v][k])] = a
					}
					for c := range q {
						a.sum[c] += q[c]
					}
					a.n++
				}
			}
		}
	}
	var dists []float64
	for j, a := range groups {
		if a.n < 20 || j == 0 {
			continue
		}
		name := sc.Skeleton.Joints[j].Name
		i, ok := byName[name]
		if !ok {
			t.Errorf("SKIN bone %q is not a bone of the model", name)
			continue
		}
		var d float64
		for c := 0; c < 3; c++ {
			x := a.sum[c]/float64(a.n) - w[i][12+c]
			d += x * x
		}
		dists = append(dists, math.Sqrt(d))
	}
	sort.Float64s(dists)
	if len(dists) < 10 {
		t.Fatalf("%d bones drive 20 vertices or more", len(dists))
	}
	med := dists[len(dists)/2]
	t.Logf("%d bones: median distance from their vertices' centre %.3f m, largest %.3f m", len(dists), med, dists[len(dists)-1])
	if med > 0.15 {
		t.Errorf("the skin's vertices lie a median %.2f m from their bones", med)
	}
}
