package gem

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

// sceneBox is an axis-aligned box in the scene's axes, metres.
type sceneBox struct{ lo, hi [3]float64 }

func newSceneBox() sceneBox {
	return sceneBox{[3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}, [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}}
}

func (b *sceneBox) add(m decode.Mat4, p [3]float64) {
	for k := 0; k < 3; k++ {
		w := m[k]*p[0] + m[4+k]*p[1] + m[8+k]*p[2] + m[12+k]
		b.lo[k], b.hi[k] = math.Min(b.lo[k], w), math.Max(b.hi[k], w)
	}
}

// iou is the boxes' intersection over their union, by volume.
func (b sceneBox) iou(c sceneBox) float64 {
	in, vb, vc := 1.0, 1.0, 1.0
	for k := 0; k < 3; k++ {
		in *= math.Max(0, math.Min(b.hi[k], c.hi[k])-math.Max(b.lo[k], c.lo[k]))
		vb *= b.hi[k] - b.lo[k]
		vc *= c.hi[k] - c.lo[k]
	}
	return in / (vb + vc - in)
}

// TestRealVolumeBoxes: the {Box} volumes of ../shared/realdata/gem's
// blyskawica and helmet4_ger, placed at bone · frame as DecodeModel gives
// them, centre inside the box of the model's meshes and overlap it (IoU
// 0.25 to 0.68; with the frame left out, 0 to 0.32).
func TestRealVolumeBoxes(t *testing.T) {
	root := decodetest.NeedRealData(t, "gem")
	for _, tc := range []struct {
		mdl    string
		minIoU map[string]float64
	}{
		{"blyskawica/blyskawica.mdl", map[string]float64{"body": 0.55, "select": 0.55}},
		{"helmet4_ger/helmet4_ger.mdl", map[string]float64{"body": 0.4, "select": 0.2}},
	} {
		p := filepath.Join(root, tc.mdl)
		m, err := Mdl{}.DecodeModel(context.Background(), fileSource(t, p))
		if err != nil {
			t.Fatal(err)
		}
		nodes := m.LODs[0].Nodes
		world := make([]decode.Mat4, len(nodes))
		meshes := newSceneBox()
		for i, n := range nodes {
			world[i] = n.Matrix
			if n.Parent >= 0 {
				world[i] = world[n.Parent].Mul(n.Matrix)
			}
			for _, part := range n.Parts {
				_, sc := scanDecode(t, filepath.Join(filepath.Dir(p), part.Mesh.Rel))
				for _, me := range sc.Meshes {
					for _, pr := range me.Primitives {
						for _, v := range pr.Positions {
							meshes.add(world[i], [3]float64{float64(v[0]) * m.Scale, float64(v[1]) * m.Scale, float64(v[2]) * m.Scale})
						}
					}
				}
			}
		}
		if len(m.Colliders) != len(tc.minIoU) {
			t.Fatalf("%s: %d colliders, want %d", tc.mdl, len(m.Colliders), len(tc.minIoU))
		}
		for _, c := range m.Colliders {
			if c.Kind != "box" || c.Node < 0 {
				t.Fatalf("%s: collider %+v, want a box on a bone", tc.mdl, c)
			}
			at := world[c.Node].Mul(c.Matrix)
			b := newSceneBox()
			for i := 0; i < 8; i++ {
				var q [3]float64
				for k := range q {
					q[k] = -c.Size[k] / 2
					if i&(1<<k) != 0 {
						q[k] = c.Size[k] / 2
					}
				}
				b.add(at, q)
			}
			for k := 0; k < 3; k++ {
				if mid := (b.lo[k] + b.hi[k]) / 2; mid < meshes.lo[k] || mid > meshes.hi[k] {
					t.Errorf("%s %s: centre %.3f on axis %d outside the meshes' %.3f to %.3f", tc.mdl, c.Name, mid, k, meshes.lo[k], meshes.hi[k])
				}
			}
			if got := b.iou(meshes); got < tc.minIoU[c.Name] {
				t.Errorf("%s %s: box %v overlaps the meshes' %v by IoU %.2f, want ≥ %.2f", tc.mdl, c.Name, b, meshes, got, tc.minIoU[c.Name])
			} else {
				t.Logf("%s %s: IoU %.2f with the meshes' box", tc.mdl, c.Name, got)
			}
		}
	}
}
