package gem

import (
	"context"
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

// longest is the index of the largest of s and its value.
func longest(s [3]float64) (int, float64) {
	k := 0
	for i := 1; i < 3; i++ {
		if s[i] > s[k] {
			k = i
		}
	}
	return k, s[k]
}

// axisOf is where frame w turns local axis k: w's column k, unit length.
func axisOf(w decode.Mat4, k int) [3]float64 {
	c := [3]float64{w[4*k], w[4*k+1], w[4*k+2]}
	l := math.Sqrt(c[0]*c[0] + c[1]*c[1] + c[2]*c[2])
	return [3]float64{c[0] / l, c[1] / l, c[2] / l}
}

// parallel reports whether unit vectors a and b lie within 25° of one
// line.
func parallel(a, b [3]float64) bool {
	return math.Abs(a[0]*b[0]+a[1]*b[1]+a[2]*b[2]) > 0.9
}

// TestSkinnedTrackFrames: what the real tanks' data allow as the frame of
// a skinned track. A SKIN chunk names bones and nothing else (no bind
// matrix, no frame), so whatever places the vertices is a frame the model
// defines. For every GEM model of ../shared/assets with skinned track
// parts and each track: the frame of the node carrying it (the rule the
// assembler keeps) turns the track's long axis (its .ply's own box) onto
// the hull's (body.ply's on "body") exactly when the track is as long as
// the model's own track shape (the collider track<side>: within 2 %),
// and exactly then it turns up the axis the track's own weights mark as
// its up (its ground run, on bone map 0 or "basis", lies lowest along it);
// every such shape lies along the hull itself. A track that its
// model's shape does not describe (centurion.mdl's: its boxes are 141.4
// units long, trackl.ply 148.9, the length of centurions.mdl's .vol
// shapes) is turned onto the hull by no frame of a bone carrying a part
// or a collider in that model, nor of the track's own chain of bones up to
// the root, so no choice of frame places it (see the package doc); nor
// does any constant axis-aligned turn or mirror, of the part's axes, of
// the part in the model's or of the root's axes, lay all eight tracks
// along their hulls. At least three models' tracks fit, both sides each.
func TestSkinnedTrackFrames(t *testing.T) {
	fits, misfits := 0, 0
	// placedTrack is one track's carrying frame, its model's root frame,
	// its long axis and the hull's direction.
	type placedTrack struct {
		at, root decode.Mat4
		k        int
		hull     [3]float64
	}
	var placed []placedTrack
	for _, path := range assetFiles(t, ".mdl") {
		m, err := Mdl{}.DecodeModel(context.Background(), fileSource(t, path))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		nodes := m.LODs[0].Nodes
		w := worlds(nodes)
		dir := filepath.Dir(path)
		name := filepath.Base(path)
		type track struct {
			node int
			file string
		}
		var tracks []track
		hull := -1
		for i, n := range nodes {
			for _, p := range n.Parts {
				base := strings.ToLower(filepath.Base(p.Mesh.Rel))
				if p.Skinned && strings.HasPrefix(base, "track") {
					tracks = append(tracks, track{i, p.Mesh.Rel})
				}
				if n.Name == "body" && base == "body.ply" {
					hull = i
				}
			}
		}
		if len(tracks) == 0 {
			continue
		}
		if hull < 0 {
			t.Fatalf("%s: no body.ply on the bone \"body\"", name)
		}
		lo, hi := partBounds(t, filepath.Join(dir, "body.ply"))
		k, _ := longest([3]float64{hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]})
		hullAxis := axisOf(w[hull], k)
		// The model's own track shapes: their length (metres) by side.
		shapes := map[string]float64{}
		for _, c := range m.Colliders {
			side, ok := strings.CutPrefix(c.Name, "track")
			if !ok || c.Node < 0 {
				continue
			}
			frame := w[c.Node].Mul(c.Matrix)
			size := c.Size
			if c.Kind == "mesh" {
				vs, err := VolFormat{}.Decode(context.Background(), source(t, filepath.Join(dir, c.Mesh.Rel)))
				if err != nil {
					t.Fatal(err)
				}
				vlo, vhi := sceneBounds(vs)
				size = [3]float64{(vhi[0] - vlo[0]) * m.Scale, (vhi[1] - vlo[1]) * m.Scale, (vhi[2] - vlo[2]) * m.Scale}
			}
			k, l := longest(size)
			if !parallel(axisOf(frame, k), hullAxis) {
				t.Errorf("%s: shape %s does not lie along the hull", name, c.Name)
			}
			shapes[map[string]string{"left": "l", "right": "r"}[side]] = l
		}
		sides := map[string]bool{}
		for _, tr := range tracks {
			lo, hi := partBounds(t, filepath.Join(dir, tr.file))
			k, l := longest([3]float64{hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]})
			l *= m.Scale
			side := strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(filepath.Base(tr.file)), "track"), ".ply")
			shape, ok := shapes[side]
			if !ok {
				t.Errorf("%s: no collider track%s for %s", name, map[string]string{"l": "left", "r": "right"}[side], tr.file)
				continue
			}
			sides[side] = true
			described := math.Abs(l-shape) <= 0.02*shape
			along := parallel(axisOf(w[tr.node], k), hullAxis)
			t.Logf("%s: %s on %q, %.2f m long (its shape %.2f m), along the hull %v", name, tr.file, nodes[tr.node].Name, l, shape, along)
			if along != described {
				t.Errorf("%s: %s on %q along the hull %v, but as long as its shape (%.2f m, %.2f m) %v", name, tr.file, nodes[tr.node].Name, along, l, shape, described)
			}
			// The track's own up: the axis its ground run (the vertices on
			// bone map 0, the carrier, or "basis") is lowest along.
			up := groundUp(t, filepath.Join(dir, tr.file))
			upright := up >= 0 && axisOf(w[tr.node], up)[1] > 0.9
			if upright != described {
				t.Errorf("%s: %s's ground run lowest along its axis %d, which %q turns up: %v; as long as its shape: %v", name, tr.file, up, nodes[tr.node].Name, upright, described)
			}
			placed = append(placed, placedTrack{w[tr.node], w[0], k, hullAxis})
			if described {
				fits++
				continue
			}
			misfits++
			carriers := map[int]bool{}
			for i, n := range nodes {
				carriers[i] = len(n.Parts) > 0
			}
			for i := tr.node; i >= 0; i = nodes[i].Parent {
				carriers[i] = true // the track's own chain, the root included
			}
			for _, c := range m.Colliders {
				if c.Node >= 0 {
					carriers[c.Node] = true
					if parallel(axisOf(w[c.Node].Mul(c.Matrix), k), hullAxis) {
						t.Errorf("%s: the frame of collider %s turns %s onto the hull", name, c.Name, tr.file)
					}
				}
			}
			for i, carries := range carriers {
				if carries && parallel(axisOf(w[i], k), hullAxis) {
					t.Errorf("%s: the frame of %q turns %s onto the hull", name, nodes[i].Name, tr.file)
				}
			}
		}
		if !sides["l"] || !sides["r"] {
			t.Errorf("%s: skinned tracks checked on sides %v, want l and r", name, sides)
		}
	}
	t.Logf("%d skinned tracks placed along the hull by their node, %d that their models do not describe", fits, misfits)
	// Nor does a constant turn: no axis-aligned turn or mirror P (the 48
	// signed permutations) of the part's axes (at·P), of the part in the
	// model's axes (P·at) or of the root's axes (root·P, as a former rule
	// had it) lays every track along its hull.
	for _, family := range []struct {
		name  string
		frame func(pt placedTrack, p decode.Mat4) decode.Mat4
	}{
		{"at·P", func(pt placedTrack, p decode.Mat4) decode.Mat4 { return pt.at.Mul(p) }},
		{"P·at", func(pt placedTrack, p decode.Mat4) decode.Mat4 { return p.Mul(pt.at) }},
		{"root·P", func(pt placedTrack, p decode.Mat4) decode.Mat4 { return pt.root.Mul(p) }},
	} {
		for _, p := range signedPermutations() {
			all := len(placed) > 0
			for _, pt := range placed {
				all = all && parallel(axisOf(family.frame(pt, p), pt.k), pt.hull)
			}
			if all {
				t.Errorf("the turn %v in %s lays every track along its hull: a rule the package doc does not know", p, family.name)
			}
		}
	}
	if fits < 6 {
		t.Errorf("%d skinned tracks fit, want the two of each of three tanks", fits)
	}
}

// signedPermutations are the 48 matrices that permute the axes and flip
// any of them.
func signedPermutations() []decode.Mat4 {
	var out []decode.Mat4
	for _, perm := range [][3]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}} {
		for signs := 0; signs < 8; signs++ {
			var m decode.Mat4
			m[15] = 1
			for c, r := range perm {
				m[4*c+r] = 1
				if signs>>c&1 == 1 {
					m[4*c+r] = -1
				}
			}
			out = append(out, m)
		}
	}
	return out
}

// groundUp is the axis (of the part's scene) along which the vertices of
// a skinned track's ground run, those weighing most on joint 0 (the node
// carrying it) or on "basis", lie lowest: their mean below the box's
// centre by more than half its half-extent; -1 when no axis is so.
func groundUp(t *testing.T, path string) int {
	t.Helper()
	_, sc := scanDecode(t, path)
	lo, hi := sceneBounds(sc)
	var sum [3]float64
	n := 0
	for _, m := range sc.Meshes {
		for _, p := range m.Primitives {
			for v, pos := range p.Positions {
				best := 0
				for k := 1; k < 4; k++ {
					if p.Weights[v][k] > p.Weights[v][best] {
						best = k
					}
				}
				j := int(p.Joints[v][best])
				if j != 0 && sc.Skeleton.Joints[j].Name != "basis" {
					continue
				}
				for c := range sum {
					sum[c] += float64(pos[c])
				}
				n++
			}
		}
	}
	up, low := -1, -0.5
	for c := range sum {
		if n == 0 || hi[c] <= lo[c] {
			continue
		}
		if d := (sum[c]/float64(n) - (lo[c]+hi[c])/2) / ((hi[c] - lo[c]) / 2); d < low {
			up, low = c, d
		}
	}
	return up
}
