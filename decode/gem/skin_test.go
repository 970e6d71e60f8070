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
// vertices are placed by: the node's world matrix times the part's
// SkinFrame, scaled to metres.
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
	f := part.SkinFrame
	if f == (decode.Mat4{}) {
		f = decode.Identity4()
	}
	_, sc := scanDecode(t, filepath.Join(filepath.Dir(path), file))
	scale := decode.Identity4()
	scale[0], scale[5], scale[10] = m.Scale, m.Scale, m.Scale
	return sc, worlds(nodes)[i].Mul(f).Mul(scale)
}

// TestPilotSkinOnBones: a skinned part's vertices are in the root bone's
// axes turned by skinAxes, at the carrying node's origin (for the pilot
// that is its "skin" bone's own frame): placed so, the vertices each bone
// drives (weight ≥ 0.9) lie around that bone's rest position.
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

// TestCenturionTracksUnderWheels: the Centurion's skinned tracks, placed
// by the same rule as the pilot's skin, run along the hull's long axis
// (x, along which its road wheels stand) on their side's road wheels,
// their lowest points at the wheels' bottoms and the run that their own
// bone drives (joint 0) below every wheel centre.
func TestCenturionTracksUnderWheels(t *testing.T) {
	m, path := realModel(t, "centurion.mdl")
	nodes := m.LODs[0].Nodes
	w := worlds(nodes)
	_, wheel := scanDecode(t, filepath.Join(filepath.Dir(path), "wheell2.ply"))
	for _, side := range []string{"l", "r"} {
		// Road wheels 2–7 of the side: their centres, and their
		// lowest vertex placed rigidly.
		var centres [][3]float64
		bottom := math.Inf(1)
		minX, maxX := math.Inf(1), math.Inf(-1)
		for k := 2; k <= 7; k++ {
			i := nodeIndex(t, nodes, "wheel"+side+string(rune('0'+k)))
			centres = append(centres, [3]float64{w[i][12], w[i][13], w[i][14]})
			minX, maxX = math.Min(minX, w[i][12]), math.Max(maxX, w[i][12])
			for _, mesh := range wheel.Meshes {
				for _, p := range mesh.Primitives {
					for _, pos := range p.Positions {
						q := apply(w[i], [3]float64{float64(pos[0]) * m.Scale, float64(pos[1]) * m.Scale, float64(pos[2]) * m.Scale})
						bottom = math.Min(bottom, q[1])
					}
				}
			}
		}
		var wheelZ, lowestCentre float64
		lowestCentre = math.Inf(1)
		for _, c := range centres {
			wheelZ += c[2] / float64(len(centres))
			lowestCentre = math.Min(lowestCentre, c[1])
		}
		sc, at := skinnedPart(t, m, path, "track"+side, "track"+side+".ply")
		lo := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
		hi := [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
		runTop := math.Inf(-1)
		for _, mesh := range sc.Meshes {
			for _, p := range mesh.Primitives {
				for v, pos := range p.Positions {
					q := apply(at, [3]float64{float64(pos[0]), float64(pos[1]), float64(pos[2])})
					for c := range q {
						lo[c], hi[c] = math.Min(lo[c], q[c]), math.Max(hi[c], q[c])
					}
					if p.Weights[v][0] >= 0.9 && p.Joints[v][0] == 0 {
						runTop = math.Max(runTop, q[1])
					}
				}
			}
		}
		t.Logf("track%s: x %.2f..%.2f, y %.2f..%.2f, z %.2f..%.2f; road wheels x %.2f..%.2f, bottom %.2f, lowest centre %.2f, z %.2f; own run's top %.2f",
			side, lo[0], hi[0], lo[1], hi[1], lo[2], hi[2], minX, maxX, bottom, lowestCentre, wheelZ, runTop)
		if lo[0] > minX || hi[0] < maxX || hi[0]-lo[0] < 3*(hi[1]-lo[1]) || hi[0]-lo[0] < 3*(hi[2]-lo[2]) {
			t.Errorf("track%s does not run along the hull's x beneath its road wheels (x %.2f..%.2f, road wheels %.2f..%.2f)", side, lo[0], hi[0], minX, maxX)
		}
		if math.Abs(lo[1]-bottom) > 0.15 {
			t.Errorf("track%s's lowest point %.2f m is not at the road wheels' bottom %.2f m", side, lo[1], bottom)
		}
		if runTop >= lowestCentre {
			t.Errorf("track%s's ground run reaches %.2f m, above the road wheels' centres %.2f m", side, runTop, lowestCentre)
		}
		if mid := (lo[2] + hi[2]) / 2; math.Abs(mid-wheelZ) > 0.15 {
			t.Errorf("track%s is centred at z %.2f m, its road wheels at %.2f m", side, mid, wheelZ)
		}
	}
}
