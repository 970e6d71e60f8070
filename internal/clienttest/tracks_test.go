package clienttest

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	qgltf "github.com/qmuntal/gltf"
)

// trackMisfits are the GEM models whose skinned tracks are known not to
// fit them, with the reason. centurion.mdl (2008, named by centurion.def)
// and centurions.mdl (2015, named by centurionmk1.def) are both models a
// game entity shows, and both name the same trackl.ply and trackr.ply; the
// decode/gem doc ("Skinned parts", "Two exports in one folder") shows those
// files, like the folder's .vol, body, turret, gun and .anm files, were made
// for centurions.mdl: there its tracks lie in their .vol shapes around every
// road wheel, while centurion.mdl hangs them from wheelsl/wheelsr turned a
// quarter turn about the hull's length, on end; no frame that model defines
// turns them onto the hull (decode/gem's TestSkinnedTrackFrames). checkTracks
// holds centurions.mdl to every rule and requires centurion.mdl's tracks to
// stand on end around no road wheel still: should a reading ever move them,
// this list and the doc must change together.
var trackMisfits = map[string]string{
	"centurion.mdl": "trackl.ply and trackr.ply were made for centurions.mdl (decode/gem doc)",
}

// box is an axis-aligned box in Blender's world (Z up), [min, max].
type box [2][3]float64

func (b box) centre() [3]float64 {
	return [3]float64{(b[0][0] + b[1][0]) / 2, (b[0][1] + b[1][1]) / 2, (b[0][2] + b[1][2]) / 2}
}

func (b box) size() [3]float64 {
	return [3]float64{b[1][0] - b[0][0], b[1][1] - b[0][1], b[1][2] - b[0][2]}
}

// longAxis is the index of b's longest side.
func (b box) longAxis() int {
	s, k := b.size(), 0
	for i := 1; i < 3; i++ {
		if s[i] > s[k] {
			k = i
		}
	}
	return k
}

// holds reports whether p lies in b grown by tol on every side.
func (b box) holds(p [3]float64, tol float64) bool {
	for k := range p {
		if p[k] < b[0][k]-tol || p[k] > b[1][k]+tol {
			return false
		}
	}
	return true
}

// iou is the volume of b ∩ c over that of b ∪ c's (0 when they do not
// overlap).
func (b box) iou(c box) float64 {
	inter := 1.0
	for k := 0; k < 3; k++ {
		lo, hi := max(b[0][k], c[0][k]), min(b[1][k], c[1][k])
		if hi <= lo {
			return 0
		}
		inter *= hi - lo
	}
	vb, vc := b.size(), c.size()
	return inter / (vb[0]*vb[1]*vb[2] + vc[0]*vc[1]*vc[2] - inter)
}

func (b box) String() string {
	s := b.size()
	return fmt.Sprintf("%.2f × %.2f × %.2f m at (%.2f, %.2f, %.2f)", s[0], s[1], s[2], b.centre()[0], b.centre()[1], b.centre()[2])
}

// parameters is a GEM bone's {parameters "…"} as the .glb's node extras
// hold it.
func parameters(n *qgltf.Node) string {
	if m, ok := n.Extras.(map[string]any); ok {
		s, _ := m["parameters"].(string)
		return s
	}
	return ""
}

// isGEM reports whether doc is an assembled GEM model: its root node
// says its unit is the GEM unit.
func isGEM(doc *qgltf.Document) bool {
	if len(doc.Nodes) == 0 {
		return false
	}
	m, _ := doc.Nodes[0].Extras.(map[string]any)
	return m["unit"] == "GEM unit"
}

// trackSide is "left" or "right" for a node whose bone says ID=trackleft or
// ID=trackright, else "".
func trackSide(n *qgltf.Node) string {
	p := parameters(n)
	for _, side := range []string{"left", "right"} {
		if strings.Contains(p, "ID=track"+side+";") {
			return side
		}
	}
	return ""
}

// trackCheck is what checkTracks measured of one skinned track.
type trackCheck struct {
	side             string
	mirrored, misfit bool
}

// checkTracks checks, in Blender's import of a GEM model (r, of f) and of
// its collision shapes (coll), where each skinned track lands (its
// evaluated world-space box, armature applied): its long axis is the
// hull's (the box of the mesh "body"), at least 80 % of the road wheels of
// its side (meshes on a bone "wheel…", not the wheel sets "wheels…", whose
// bone says ID=track<side>) have their centre inside it, and it overlaps
// its shape track<side> (a .vol polyhedron on the side's bone) in
// NAME.collision.glb by at least half their boxes' union (IoU ≥ 0.5): a
// track standing across the hull still crosses its shape's box, so mere
// overlap would pass it. It returns the errors, lines for the log and the
// tracks it checked.
func checkTracks(r, coll *modelReport, f *modelFile, model string) (errs, logs []string, checked []trackCheck) {
	doc := f.doc
	parent := parents(doc)
	// The file's meshes by what they are: (name, parent name) as Blender
	// reports its objects.
	type key struct{ name, parent string }
	tracks := map[string]string{} // skinned track mesh name → side
	mirrored := map[string]bool{}
	wheels := map[key]string{} // road wheel → side
	hull := key{}
	for i, n := range doc.Nodes {
		// A rigid part is on its parent bone; a skinned part, a root of
		// the scene, is carried by its skin's joint 0 (decode/gem's doc).
		carrier := parent[i]
		if n.Skin != nil && *n.Skin < len(doc.Skins) && len(doc.Skins[*n.Skin].Joints) > 0 {
			carrier = doc.Skins[*n.Skin].Joints[0]
		}
		if n.Mesh == nil || carrier < 0 || carrier >= len(doc.Nodes) {
			continue
		}
		p := doc.Nodes[carrier]
		side := trackSide(p)
		switch {
		case n.Skin != nil && strings.HasPrefix(n.Name, "track") && side == "":
			errs = append(errs, fmt.Sprintf("skinned track %s on %q, a bone that names no side (ID=trackleft or ID=trackright)", n.Name, p.Name))
		case n.Skin != nil && strings.HasPrefix(n.Name, "track"):
			tracks[blenderName(n.Name)] = side
			if m, ok := p.Extras.(map[string]any); ok && m["mirrored"] == true {
				mirrored[blenderName(n.Name)] = true
			}
		case n.Skin == nil && strings.HasPrefix(p.Name, "wheel") && !strings.HasPrefix(p.Name, "wheels") && side != "":
			wheels[key{blenderName(n.Name), blenderName(p.Name)}] = side
		case n.Name == "body" && p.Name == "body":
			hull = key{"body", "body"}
		}
	}
	if len(tracks) == 0 {
		return errs, nil, nil
	}
	if sides := slices.Sorted(maps.Values(tracks)); !slices.Equal(slices.Compact(sides), []string{"left", "right"}) {
		errs = append(errs, fmt.Sprintf("skinned tracks on the sides %v, want one each left and right", sides))
	}
	var hullBox *box
	trackBox := map[string]box{} // by side
	var wheelBoxes []struct {
		side string
		b    box
	}
	for _, o := range r.Objects {
		if o.Type != "MESH" || o.Box == nil {
			continue
		}
		name := base(o.Name)
		if side, ok := tracks[name]; ok && o.Armature != "" {
			if _, dup := trackBox[side]; dup {
				errs = append(errs, "two skinned tracks on the "+side)
			}
			trackBox[side] = *o.Box
			continue
		}
		k := key{name, base(o.Parent)}
		if side, ok := wheels[k]; ok {
			wheelBoxes = append(wheelBoxes, struct {
				side string
				b    box
			}{side, *o.Box})
		}
		if k == hull {
			b := *o.Box
			hullBox = &b
		}
	}
	if hullBox == nil {
		return append(errs, "no mesh \"body\" on the bone \"body\" (the hull) in Blender's import"), logs, nil
	}
	shapes := map[string]box{}
	if coll == nil {
		errs = append(errs, "no collision shapes imported")
	} else {
		for _, o := range coll.Objects {
			if n := base(o.Name); o.Type == "MESH" && o.Box != nil && strings.HasPrefix(n, "track") {
				shapes[strings.TrimPrefix(n, "track")] = *o.Box
			}
		}
	}
	misfit := trackMisfits[model] != ""
	axes := "XYZ"
	logs = append(logs, fmt.Sprintf("hull %v, long axis %c", *hullBox, axes[hullBox.longAxis()]))
	for name, side := range tracks {
		tb, ok := trackBox[side]
		if !ok {
			errs = append(errs, "skinned track "+name+": no such mesh object in Blender's import, or not on an armature")
			continue
		}
		checked = append(checked, trackCheck{side, mirrored[name], misfit})
		n, in := 0, 0
		for _, w := range wheelBoxes {
			if w.side == side {
				n++
				if tb.holds(w.b.centre(), 0) {
					in++
				}
			}
		}
		shape, hasShape := shapes[side]
		iou := 0.0
		if hasShape {
			iou = tb.iou(shape)
		}
		logs = append(logs, fmt.Sprintf("track %s (%s, mirrored %v): %v, long axis %c; %d of %d road wheels inside; IoU %.2f with shape track%s's %v",
			name, side, mirrored[name], tb, axes[tb.longAxis()], in, n, iou, side, shape))
		along := tb.longAxis() == hullBox.longAxis()
		if misfit {
			// As decode/gem's doc says it: on end (long axis up, Z), around
			// no road wheel.
			if tb.longAxis() != 2 || in > 0 {
				errs = append(errs, fmt.Sprintf("track %s: long axis %c, %d road wheels inside, but trackMisfits says %q and decode/gem's doc that it stands on end (Z) around none: update both", name, axes[tb.longAxis()], in, trackMisfits[model]))
			}
			continue
		}
		if !along {
			errs = append(errs, fmt.Sprintf("track %s: long axis %c, the hull's %c", name, axes[tb.longAxis()], axes[hullBox.longAxis()]))
		}
		if n == 0 {
			errs = append(errs, "track "+name+": no road wheel on the "+side)
		} else if 5*in < 4*n {
			errs = append(errs, fmt.Sprintf("track %s: %d of the %d road wheels of the %s inside its box, want 80 %%", name, in, n, side))
		}
		switch {
		case !hasShape:
			errs = append(errs, "track "+name+": no collision shape track"+side)
		case iou < 0.5:
			errs = append(errs, fmt.Sprintf("track %s: its box %v overlaps track%s.vol's %v by IoU %.2f, want 0.5", name, tb, side, shape, iou))
		}
	}
	return errs, logs, checked
}

// checkSkinOnBones checks that in Blender's import of a GEM model (r, of
// doc) its skin follows its bones as decode/gem's TestPilotSkinOnBones
// measures it from the file: of the bones driving 20 or more vertices at
// weight ≥ 0.9 (not a skin's joint 0, the node carrying it), one or more
// (the pilot has 13, the horse's tack 3), those vertices' evaluated centre
// lies a median 0.15 m or less from the bone. It returns the errors and a
// line for the log.
func checkSkinOnBones(r *modelReport, doc *qgltf.Document) (errs []string, log string) {
	carriers := map[string]bool{}
	for _, sk := range doc.Skins {
		if len(sk.Joints) > 0 && sk.Joints[0] < len(doc.Nodes) {
			carriers[blenderName(doc.Nodes[sk.Joints[0]].Name)] = true
		}
	}
	var dists []float64
	for _, bones := range r.BoneFit {
		for name, d := range bones {
			if !carriers[name] {
				dists = append(dists, d)
			}
		}
	}
	if len(dists) == 0 {
		return []string{"no bone drives 20 vertices or more of a skin"}, ""
	}
	sort.Float64s(dists)
	med := dists[len(dists)/2]
	log = fmt.Sprintf("%d bones driving a skin (no track): their vertices' centre a median %.3f m from them, %.3f to %.3f m", len(dists), med, dists[0], dists[len(dists)-1])
	if med > 0.15 {
		errs = append(errs, fmt.Sprintf("the skin's vertices lie a median %.2f m from the bones driving them, want 0.15", med))
	}
	return errs, log
}
