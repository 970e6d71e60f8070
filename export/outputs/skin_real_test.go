package outputs_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	qgltf "github.com/qmuntal/gltf"
	"github.com/qmuntal/gltf/modeler"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/outputs"
)

// TestSkinnedTracksInTheirVolumes: the skinned tracks of the three tanks
// whose files were made for their models (the P44 Pantera, the SU-85 and
// centurions.mdl) lie, as assembled at rest, where their own witnesses
// say: inside the collision polyhedron trackleft.vol / trackright.vol
// that a bone places (every vertex within 5 cm of its box, the boxes'
// centres within 5 cm), along the hull's length (x), around every road
// wheel of their side (the wheels whose bone says ID=trackleft or
// ID=trackright). Left and right, mirrored (the SU-85's trackr.ply) or not.
func TestSkinnedTracksInTheirVolumes(t *testing.T) {
	ms := realModels(t)
	for _, name := range []string{"p44_pantera.mdl", "su85.mdl", "centurions.mdl"} {
		rm := findModel(t, ms, name)
		doc, coll := rm.docs[0], rm.docs[len(rm.model.LODs)]
		for _, side := range []string{"left", "right"} {
			what := fmt.Sprintf("%s track%s", name, side)
			vol, _ := colliderBox(t, coll, "track"+side)
			var verts [][3]float64
			tb := emptyBox()
			for i, n := range doc.Nodes {
				if n.Name == "track"+side[:1] && n.Mesh != nil && n.Skin != nil {
					verts = append(verts, restPositions(t, doc, i)...)
					tb.addMesh(t, doc, i)
				}
			}
			if len(verts) == 0 {
				t.Fatalf("%s: no skinned track mesh", what)
			}
			inside := 0
			for _, v := range verts {
				if vol.holds(v, 0.05) {
					inside++
				}
			}
			var off [3]float64
			for k := range off {
				off[k] = (tb.min[k]+tb.max[k])/2 - (vol.min[k]+vol.max[k])/2
			}
			var wheels, around int
			for i, n := range rm.model.LODs[0].Nodes {
				par, _ := n.Extras.Get("parameters").(string)
				if !strings.HasPrefix(n.Name, "wheel") || strings.HasPrefix(n.Name, "wheels") || !strings.Contains(par, "ID=track"+side) {
					continue
				}
				w := worldOf(doc, i+1) // glTF node 0 is the model's root
				wheels++
				if tb.holds([3]float64{w[12], w[13], w[14]}, 0) {
					around++
				}
			}
			frac := float64(inside) / float64(len(verts))
			t.Logf("%s: %.1f%% of %d vertices in the .vol's box, centre off (%.3f, %.3f, %.3f) m, %d/%d road wheels inside; track %v, vol %v",
				what, 100*frac, len(verts), off[0], off[1], off[2], around, wheels, tb, vol)
			if frac < 0.99 {
				t.Errorf("%s: %.1f%% of its vertices inside its .vol's box", what, 100*frac)
			}
			if math.Max(math.Abs(off[0]), math.Max(math.Abs(off[1]), math.Abs(off[2]))) > 0.05 {
				t.Errorf("%s: centred %.3f, %.3f, %.3f m from its .vol", what, off[0], off[1], off[2])
			}
			if size := [3]float64{tb.max[0] - tb.min[0], tb.max[1] - tb.min[1], tb.max[2] - tb.min[2]}; size[0] < 3*size[1] || size[0] < 3*size[2] {
				t.Errorf("%s: %.2f × %.2f × %.2f m, not along the hull's x", what, size[0], size[1], size[2])
			}
			if wheels < 5 || around != wheels {
				t.Errorf("%s: %d of its %d road wheels inside its box", what, around, wheels)
			}
		}
	}
}

// restPositions are the vertices of node i's mesh placed as restOf says.
func restPositions(t *testing.T, doc *qgltf.Document, i int) [][3]float64 {
	m := restOf(t, doc, i)
	var out [][3]float64
	for _, p := range doc.Meshes[*doc.Nodes[i].Mesh].Primitives {
		v, err := modeler.ReadPosition(doc, doc.Accessors[p.Attributes[qgltf.POSITION]], nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range v {
			x, y, z := float64(q[0]), float64(q[1]), float64(q[2])
			out = append(out, [3]float64{
				m[0]*x + m[4]*y + m[8]*z + m[12],
				m[1]*x + m[5]*y + m[9]*z + m[13],
				m[2]*x + m[6]*y + m[10]*z + m[14],
			})
		}
	}
	return out
}

// holds reports whether p lies in b grown by tol on every side.
func (b box) holds(p [3]float64, tol float64) bool {
	for k := range p {
		if p[k] < b.min[k]-tol || p[k] > b.max[k]+tol {
			return false
		}
	}
	return true
}

func (b box) String() string {
	return fmt.Sprintf("x %.2f..%.2f y %.2f..%.2f z %.2f..%.2f", b.min[0], b.max[0], b.min[1], b.max[1], b.min[2], b.max[2])
}

// TestHorseAccessoriesOnBones: the horse's skinned bridle and mane
// (../shared/realdata/gem/horse), assembled, sit on its head and neck at
// rest: the vertices each bone drives (weight ≥ 0.9, 4 or more) are
// centred within 0.25 m of that bone.
func TestHorseAccessoriesOnBones(t *testing.T) {
	p := filepath.Join(decodetest.NeedRealData(t, "gem"), "horse", "horse.mdl")
	m, err := outputs.Open(p)
	if err != nil || m == nil {
		t.Fatalf("%s: %v", p, err)
	}
	glbs, _, err := m.ModelGLBs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	doc := parseGLB(t, glbs[0])
	for _, part := range []string{"horse_bridle", "horse_mane"} {
		checked := 0
		for i, n := range doc.Nodes {
			if n.Name != part || n.Mesh == nil || n.Skin == nil {
				continue
			}
			sk := doc.Skins[*n.Skin]
			ibs, err := modeler.ReadAccessor(doc, doc.Accessors[*sk.InverseBindMatrices], nil)
			if err != nil {
				t.Fatal(err)
			}
			type acc struct {
				sum [3]float64
				n   int
			}
			groups := map[int]*acc{}
			for _, prim := range doc.Meshes[*n.Mesh].Primitives {
				pos, err := modeler.ReadPosition(doc, doc.Accessors[prim.Attributes[qgltf.POSITION]], nil)
				if err != nil {
					t.Fatal(err)
				}
				js, err := modeler.ReadJoints(doc, doc.Accessors[prim.Attributes[qgltf.JOINTS_0]], nil)
				if err != nil {
					t.Fatal(err)
				}
				ws, err := modeler.ReadWeights(doc, doc.Accessors[prim.Attributes[qgltf.WEIGHTS_0]], nil)
				if err != nil {
					t.Fatal(err)
				}
				for v, q := range pos {
					for k := 0; k < 4; k++ {
						if ws[v][k] < 0.9 {
							continue
						}
						j := int(js[v][k])
						ib := ibs.([][4][4]float32)[j] // [row][column]
						var ibm decode.Mat4
						for c := 0; c < 4; c++ {
							for r := 0; r < 4; r++ {
								ibm[c*4+r] = float64(ib[r][c])
							}
						}
						f := worldOf(doc, sk.Joints[j]).Mul(ibm)
						x, y, z := float64(q[0]), float64(q[1]), float64(q[2])
						a := groups[j]
						if a == nil {
							a = &acc{}
							groups[j] = a
						}
						a.sum[0] += f[0]*x + f[4]*y + f[8]*z + f[12]
						a.sum[1] += f[1]*x + f[5]*y + f[9]*z + f[13]
						a.sum[2] += f[2]*x + f[6]*y + f[10]*z + f[14]
						a.n++
					}
				}
			}
			for j, a := range groups {
				bone := sk.Joints[j]
				if a.n < 4 || bone == i {
					continue
				}
				w := worldOf(doc, bone)
				var d float64
				for c := 0; c < 3; c++ {
					x := a.sum[c]/float64(a.n) - w[12+c]
					d += x * x
				}
				d = math.Sqrt(d)
				checked++
				t.Logf("%s: %d vertices of %s centred %.3f m from it", part, a.n, doc.Nodes[bone].Name, d)
				if d > 0.25 {
					t.Errorf("%s: the vertices %s drives are centred %.2f m from it", part, doc.Nodes[bone].Name, d)
				}
			}
		}
		if checked == 0 {
			t.Errorf("%s: no skinned mesh with bones driving 4 vertices or more", part)
		}
	}
}
