package clienttest

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// blenderJob is one file for blender/inspect_imports.py.
type blenderJob struct {
	Path     string `json:"path"`
	Geometry bool   `json:"geometry"`
	Deform   bool   `json:"deform"`
	// Animation is an animation-only .glb to play on the file's armature.
	Animation string `json:"animation,omitempty"`
	// Play plays the file's own actions on its armature.
	Play bool `json:"play,omitempty"`
}

// blenderReport is what inspect_imports.py says about one file.
type blenderReport struct {
	Path      string            `json:"path"`
	Error     string            `json:"error"`
	Meshes    []blenderMesh     `json:"meshes"`
	Armatures []blenderArmature `json:"armatures"`
	Actions   []string          `json:"actions"`
	Materials []string          `json:"materials"`
	// MaterialNodes is, per material, what feeds its Principled BSDF.
	MaterialNodes []blenderMaterial    `json:"material_nodes"`
	Images        []blenderImage       `json:"images"`
	Deform        map[string]boneMoves `json:"deform"`
	Played        []played             `json:"played"`
}

// played is what playing one action of an animation file on the file's
// armature did (inspect_imports.py's play_report).
type played struct {
	Action       string   `json:"action"`
	KeyedBones   []string `json:"keyed_bones"`
	MissingBones []string `json:"missing_bones"`
	Frames       []int    `json:"frames"`
	BonesMoved   int      `json:"bones_moved"`
	MeshMoved    float64  `json:"mesh_moved"`
}

// blenderMaterial is what feeds a material's Principled BSDF: the images
// reaching Base Color, those reaching Normal through a Normal Map node.
type blenderMaterial struct {
	Name            string   `json:"name"`
	BlendMethod     string   `json:"blend_method"`
	BaseColorImages []string `json:"base_color_images"`
	NormalImages    []string `json:"normal_images"`
}

// blenderImage is an image as Blender loaded it.
type blenderImage struct {
	Name string `json:"name"`
	Size [2]int `json:"size"`
}

// boneMoves is, per bone, how far the meshes moved when it was rotated.
type boneMoves map[string]float64

type blenderMesh struct {
	Object          string        `json:"object"`
	Mesh            string        `json:"mesh"`
	Vertices        int           `json:"vertices"`
	Faces           int           `json:"faces"`
	Materials       []*string     `json:"materials"`
	UVLayers        []string      `json:"uv_layers"`
	ColorAttributes []string      `json:"color_attributes"`
	VertexGroups    []string      `json:"vertex_groups"`
	ShapeKeys       []string      `json:"shape_keys"`
	Armature        *string       `json:"armature"`
	Normals         bool          `json:"normals"`
	FlippedFaces    int           `json:"flipped_faces"`
	WorldVertices   [][3]float64  `json:"world_vertices"`
	Polygons        []blenderPoly `json:"polygons"`
}

type blenderPoly struct {
	Vertices []int        `json:"vertices"`
	Normal   [3]float64   `json:"normal"`
	UVs      [][2]float64 `json:"uvs"`
}

type blenderArmature struct {
	Object string   `json:"object"`
	Bones  []string `json:"bones"`
}

// runBlender imports every job in one Blender process and returns the
// reports in job order.
func runBlender(t *testing.T, blender string, jobs []blenderJob) []blenderReport {
	t.Helper()
	return runScript[blenderJob, blenderReport](t, blender, "inspect_imports.py", jobs)
}

// runScript runs the script blender/name in one headless Blender process
// over jobs (written as JOBS.json) and returns its reports (read from
// REPORT.json), one per job, in their order.
func runScript[J, R any](t *testing.T, blender, name string, jobs []J) []R {
	t.Helper()
	dir := t.TempDir()
	jobsPath, reportPath := filepath.Join(dir, "jobs.json"), filepath.Join(dir, "report.json")
	b, err := json.Marshal(jobs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jobsPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("blender", name))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(blender, "-b", "--factory-startup", "-noaudio", "--python-exit-code", "1",
		"--python", script, "--", jobsPath, reportPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("blender: %v\n%s", err, lastLines(out, 40))
	}
	b, err = os.ReadFile(reportPath)
	if err != nil {
		t.Fatalf("blender wrote no report: %v\n%s", err, lastLines(out, 40))
	}
	var reports []R
	if err := json.Unmarshal(b, &reports); err != nil {
		t.Fatal(err)
	}
	if len(reports) != len(jobs) {
		t.Fatalf("blender reported %d files of %d", len(reports), len(jobs))
	}
	return reports
}

// checkBlender imports every .glb and .obj from the mount in Blender and
// compares what it made with the scene.
func checkBlender(t *testing.T, blender string, folders []*meshFolder, exp map[*meshFolder]*fileExpect) {
	type target struct {
		mf  *meshFolder
		glb bool
	}
	var jobs []blenderJob
	var targets []target
	orient := map[string]orientationFixture{}
	for _, fx := range orientationFixtures() {
		orient[filepath.Join("orientation", fx.main)] = fx
	}
	for _, mf := range folders {
		e := exp[mf]
		if e == nil {
			continue
		}
		_, geometry := orient[mf.rel]
		if mf.glb != "" {
			jobs = append(jobs, blenderJob{Path: mf.glb, Geometry: geometry, Deform: len(e.weightedBones) > 0})
			targets = append(targets, target{mf, true})
		}
		if mf.obj != "" {
			jobs = append(jobs, blenderJob{Path: mf.obj, Geometry: geometry})
			targets = append(targets, target{mf, false})
		}
	}
	reports := runBlender(t, blender, jobs)
	objects, bones, normalFaces, flipped := 0, 0, 0, 0
	images, textured := 0, 0
	for i, r := range reports {
		objects += len(r.Meshes)
		for _, m := range r.Meshes {
			if m.Normals {
				normalFaces += m.Faces
				flipped += m.FlippedFaces
			}
		}
		for _, bm := range r.Deform {
			bones += len(bm)
		}
		tg := targets[i]
		label := tg.mf.label() + "/" + filepath.Base(r.Path)
		if r.Error != "" {
			t.Errorf("%s: Blender could not import it:\n%s", label, r.Error)
			continue
		}
		var errs []string
		if tg.glb {
			images += len(exp[tg.mf].images)
			textured += len(exp[tg.mf].materials)
			errs = compareGLB(&r, exp[tg.mf])
			if e := exp[tg.mf]; len(errs) == 0 && len(e.bones) > 0 && len(r.Armatures) == 1 {
				t.Logf("%s: armature of %d bones (the source lists %d); the %d that weigh on vertices move them", label,
					len(r.Armatures[0].Bones), len(e.sourceBones), len(e.weightedBones))
			}
		} else {
			errs = compareOBJ(&r, exp[tg.mf])
		}
		if fx, ok := orient[tg.mf.rel]; ok {
			errs = append(errs, checkOrientation(&r, fx)...)
		}
		for _, e := range errs {
			t.Errorf("%s: %s", label, e)
		}
	}
	t.Logf("Blender imported %d files (%d mesh objects compared; %d bones rotated; %d orientation fixtures, each as .glb and .obj; %d faces with normals, %d of them against their winding; %d embedded images and %d node trees of textured or alpha materials compared)",
		len(reports), objects, bones, len(orient), normalFaces, flipped, images, textured)
}

// matchMeshes pairs Blender's mesh objects with the expected meshes by
// name (Blender's rules: 63 bytes, ".001" when taken), in order among
// equal names; unmatched ones are reported.
func matchMeshes(got []blenderMesh, want []meshExpect, nameOf func(*meshExpect) string) (pairs [][2]int, errs []string) {
	used := make([]bool, len(got))
	var missing []int
	for wi := range want {
		found := -1
		for gi := range got {
			if !used[gi] && sameName(got[gi].Object, nameOf(&want[wi])) {
				found = gi
				break
			}
		}
		if found < 0 {
			missing = append(missing, wi)
			continue
		}
		used[found] = true
		pairs = append(pairs, [2]int{wi, found})
	}
	for _, wi := range missing {
		if nameOf(&want[wi]) != "" {
			errs = append(errs, fmt.Sprintf("no object named %q for mesh %d", nameOf(&want[wi]), wi))
			continue
		}
		// An unnamed mesh gets a name from the importer: take the next
		// object no name claimed.
		for gi := range got {
			if !used[gi] {
				used[gi] = true
				pairs = append(pairs, [2]int{wi, gi})
				break
			}
		}
	}
	for gi := range got {
		if !used[gi] {
			errs = append(errs, fmt.Sprintf("unexpected object %q", got[gi].Object))
		}
	}
	return pairs, errs
}

// compareImages checks the images of a .glb import and the node trees of
// its materials against the scene's materials: every embedded image is
// loaded at the PNG's size; a material with a base colour image has an
// Image Texture node of it feeding the Principled BSDF's Base Color, one
// with a normal map an Image Texture of it feeding a Normal Map node that
// feeds Normal, and MASK and BLEND materials blend by CLIP and BLEND.
func compareImages(r *blenderReport, e *fileExpect) []string {
	var errs []string
	size := map[string][2]int{}
	for _, im := range r.Images {
		size[im.Name] = im.Size
	}
	// hasImage reports whether one of names is want (allowing Blender's
	// ".001" for a name taken) at want's size.
	hasImage := func(names []string, want *imageExpect) bool {
		for _, n := range names {
			if sameName(n, want.name) && size[n] == [2]int{want.width, want.height} {
				return true
			}
		}
		return false
	}
	var all []string
	for _, im := range r.Images {
		all = append(all, im.Name)
	}
	var names []string
	for n := range e.images {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		want := e.images[n]
		if !hasImage(all, &want) {
			errs = append(errs, fmt.Sprintf("no image %q of %d×%d among Blender's %v", n, want.width, want.height, r.Images))
		}
	}
	names = names[:0]
	for n := range e.materials {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		want := e.materials[n]
		var got *blenderMaterial
		for i := range r.MaterialNodes {
			if sameName(r.MaterialNodes[i].Name, n) {
				got = &r.MaterialNodes[i]
				break
			}
		}
		if got == nil {
			errs = append(errs, fmt.Sprintf("no material %q", n))
			continue
		}
		pre := fmt.Sprintf("material %q: ", got.Name)
		if want.baseColor != nil && !hasImage(got.BaseColorImages, want.baseColor) {
			errs = append(errs, fmt.Sprintf("%sBase Color is fed by images %q, not by %q (%d×%d)", pre, got.BaseColorImages, want.baseColor.name, want.baseColor.width, want.baseColor.height))
		}
		if want.normal != nil && !hasImage(got.NormalImages, want.normal) {
			errs = append(errs, fmt.Sprintf("%sNormal Map node is fed by images %q, not by %q (%d×%d)", pre, got.NormalImages, want.normal.name, want.normal.width, want.normal.height))
		}
		if got.BlendMethod != want.blendMethod {
			errs = append(errs, fmt.Sprintf("%sblend method %s, the scene's alpha mode wants %s", pre, got.BlendMethod, want.blendMethod))
		}
	}
	return errs
}

// compareGLB checks a .glb import against the scene.
func compareGLB(r *blenderReport, e *fileExpect) []string {
	pairs, errs := matchMeshes(r.Meshes, e.meshes, func(m *meshExpect) string { return m.name })
	errs = append(errs, compareImages(r, e)...)
	for _, p := range pairs {
		w, g := &e.meshes[p[0]], &r.Meshes[p[1]]
		pre := fmt.Sprintf("object %q: ", g.Object)
		errs = append(errs, compareCommon(pre, w.faces, w, g, w.materials)...)
		if len(g.UVLayers) != w.uvLayers {
			errs = append(errs, fmt.Sprintf("%s%d UV layers %v, the scene has %d UV sets", pre, len(g.UVLayers), g.UVLayers, w.uvLayers))
		}
		if len(g.ColorAttributes) != w.colors {
			errs = append(errs, fmt.Sprintf("%s%d colour attributes %v, the scene has %d colour sets", pre, len(g.ColorAttributes), g.ColorAttributes, w.colors))
		}
		// Blender makes one vertex group per skin joint, named after the bone.
		if w.skinned {
			if d := diffNames(g.VertexGroups, e.bones); d != "" {
				errs = append(errs, pre+"vertex groups differ from the skeleton's joints: "+d)
			}
			if g.Armature == nil {
				errs = append(errs, pre+"skinned in the scene, but has no armature modifier")
			}
		} else if len(g.VertexGroups) > 0 {
			errs = append(errs, fmt.Sprintf("%s%d vertex groups on a mesh the scene does not skin", pre, len(g.VertexGroups)))
		}
		if d := diffNamesOrdered(g.ShapeKeys, w.shapeKeys); d != "" {
			errs = append(errs, pre+"shape keys differ from the morph targets: "+d)
		}
	}
	// One armature holding every joint, by name.
	switch {
	case len(e.bones) == 0 && len(r.Armatures) > 0:
		errs = append(errs, fmt.Sprintf("%d armatures for a scene without a skeleton", len(r.Armatures)))
	case len(e.bones) > 0 && len(r.Armatures) != 1:
		errs = append(errs, fmt.Sprintf("%d armatures, want 1 for the skeleton of %d joints", len(r.Armatures), len(e.bones)))
	case len(e.bones) > 0:
		if d := diffNames(r.Armatures[0].Bones, e.bones); d != "" {
			errs = append(errs, fmt.Sprintf("armature bones (%d) differ from the skeleton's joints (%d): %s", len(r.Armatures[0].Bones), len(e.bones), d))
		}
	}
	if len(r.Armatures) == 1 {
		for _, b := range e.sourceBones {
			found := false
			for _, g := range r.Armatures[0].Bones {
				found = found || sameName(g, b)
			}
			if !found {
				errs = append(errs, fmt.Sprintf("source bone %q (header.json) is no bone of the armature", b))
			}
		}
	} else if len(e.sourceBones) > 0 {
		errs = append(errs, fmt.Sprintf("the source has %d bones, Blender made %d armatures", len(e.sourceBones), len(r.Armatures)))
	}
	// The importer names an action ANIMATION_OBJECT per animated object.
	for _, a := range e.animations {
		found := false
		for _, act := range r.Actions {
			// A long name is cut at 63 bytes, possibly inside a+"_".
			if strings.HasPrefix(act, a+"_") || len(act) >= 60 && strings.HasPrefix(a+"_", act) {
				found = true
			}
		}
		if !found {
			errs = append(errs, fmt.Sprintf("no action for animation %q (actions %q)", a, r.Actions))
		}
	}
	if len(r.Actions) < len(e.animations) {
		errs = append(errs, fmt.Sprintf("%d actions for %d animations", len(r.Actions), len(e.animations)))
	}
	if len(e.animations) == 0 && len(r.Actions) > 0 {
		errs = append(errs, fmt.Sprintf("actions %q for a scene without animations", r.Actions))
	}
	// Rotating each weighted bone must move the mesh: weights that Blender
	// dropped or bound to the wrong bone show here.
	if len(e.weightedBones) > 0 {
		moved := map[string]float64{}
		for _, bm := range r.Deform {
			for b, d := range bm {
				moved[b] = max(moved[b], d)
			}
		}
		var names []string
		for b := range e.weightedBones {
			names = append(names, b)
		}
		sort.Strings(names)
		for _, b := range names {
			d, ok := moved[blenderName(b)]
			switch {
			case !ok:
				errs = append(errs, fmt.Sprintf("bone %q weighs on vertices in the scene, but on none in Blender", b))
			case d < 1e-6:
				errs = append(errs, fmt.Sprintf("rotating bone %q moves no vertex", b))
			}
		}
	}
	return errs
}

// compareOBJ checks an .obj import against the scene: geometry, the first
// UV set, one colour attribute when any primitive has colours, materials by
// their OBJ names; skins, morphs and animations have no OBJ form.
func compareOBJ(r *blenderReport, e *fileExpect) []string {
	pairs, errs := matchMeshes(r.Meshes, e.meshes, func(m *meshExpect) string { return m.objName })
	// Blender's OBJ importer gives every object a UV layer when the file
	// has any UV (expect_test.go).
	fileUVs := 0
	for _, m := range e.meshes {
		fileUVs = max(fileUVs, m.uvLayers)
	}
	for _, p := range pairs {
		w, g := &e.meshes[p[0]], &r.Meshes[p[1]]
		pre := fmt.Sprintf("object %q: ", g.Object)
		mats := map[string]bool{}
		for _, m := range w.objMaterials {
			mats[m] = true
		}
		var want []string
		for m := range mats {
			want = append(want, m)
		}
		sort.Strings(want)
		errs = append(errs, compareCommon(pre, w.objFaces, w, g, want)...)
		if uv := min(fileUVs, 1); len(g.UVLayers) != uv {
			errs = append(errs, fmt.Sprintf("%s%d UV layers %v, want %d", pre, len(g.UVLayers), g.UVLayers, uv))
		}
		if c := min(w.colors, 1); len(g.ColorAttributes) != c {
			errs = append(errs, fmt.Sprintf("%s%d colour attributes %v, want %d", pre, len(g.ColorAttributes), g.ColorAttributes, c))
		}
	}
	if len(r.Armatures) > 0 || len(r.Actions) > 0 {
		errs = append(errs, "an .obj import made armatures or actions")
	}
	return errs
}

// compareCommon checks the counts both importers share.
func compareCommon(pre string, faces int, w *meshExpect, g *blenderMesh, materials []string) []string {
	var errs []string
	// Inside-out faces: the winding must agree with the file's normals. Real
	// art has a few faces whose normals were edited against their winding
	// (FORMATS.md: 3 of 2 764 in one GEM file), so up to 1% may disagree.
	if g.Normals && g.FlippedFaces*100 > g.Faces {
		errs = append(errs, fmt.Sprintf("%s%d of %d faces are inside out (winding against the vertex normals)", pre, g.FlippedFaces, g.Faces))
	}
	if g.Faces != faces {
		errs = append(errs, fmt.Sprintf("%s%d faces, the scene gives %d", pre, g.Faces, faces))
	}
	if g.Vertices != w.vertices {
		errs = append(errs, fmt.Sprintf("%s%d vertices, the scene gives %d", pre, g.Vertices, w.vertices))
	}
	var got []string
	for _, m := range g.Materials {
		if m != nil && *m != "meshfs_none" {
			got = append(got, *m)
		}
	}
	if d := diffNames(got, materials); d != "" {
		errs = append(errs, pre+"materials differ: "+d)
	}
	return errs
}

// diffNames compares Blender names with wanted names as sets (Blender's
// naming rules applied); "" when they agree.
func diffNames(got, want []string) string {
	var extra, missing []string
	used := make([]bool, len(got))
	// Exact names first: a source name may itself end in ".011", and must
	// not be taken as another name's renamed duplicate.
	matched := make([]bool, len(want))
	for wi, w := range want {
		for i, g := range got {
			if !used[i] && g == blenderName(w) {
				used[i], matched[wi] = true, true
				break
			}
		}
	}
	for wi, w := range want {
		if matched[wi] {
			continue
		}
		found := false
		for i, g := range got {
			if !used[i] && sameName(g, w) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			missing = append(missing, w)
		}
	}
	for i, g := range got {
		if !used[i] {
			extra = append(extra, g)
		}
	}
	if len(extra) == 0 && len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("missing %q, unexpected %q", missing, extra)
}

// diffNamesOrdered compares two name lists in order.
func diffNamesOrdered(got, want []string) string {
	if len(got) == len(want) {
		same := true
		for i := range got {
			if !sameName(got[i], want[i]) {
				same = false
			}
		}
		if same {
			return ""
		}
	}
	return fmt.Sprintf("got %q, want %q", got, want)
}

// checkOrientation checks an orientation fixture's import: every Blender
// vertex is a source vertex moved by the format's rule, the ramp rises
// along +Z with its faces up, the flat parts face +Z, and every corner's UV
// is the source's UV with V flipped into Blender's bottom-left origin.
func checkOrientation(r *blenderReport, fx orientationFixture) []string {
	var errs []string
	type src struct {
		part string
		v    oVert
		at   [3]float32 // where Blender must show it
	}
	var srcs []src
	for _, p := range orientationModel() {
		for _, v := range p.verts {
			srcs = append(srcs, src{p.name, v, fx.toBlender(v.pos)})
		}
	}
	find := func(w [3]float64) *src {
		for i := range srcs {
			if dist(w, srcs[i].at) < 1e-4 {
				return &srcs[i]
			}
		}
		return nil
	}
	seen := map[*src]bool{}
	polys := 0
	for _, m := range r.Meshes {
		if len(m.Polygons) == 0 {
			errs = append(errs, fmt.Sprintf("object %q: no geometry reported", m.Object))
			continue
		}
		for _, p := range m.Polygons {
			polys++
			var part string
			for k, vi := range p.Vertices {
				w := m.WorldVertices[vi]
				s := find(w)
				if s == nil {
					errs = append(errs, fmt.Sprintf("vertex at %v is no source vertex moved by the %s rule", w, fx.format))
					continue
				}
				seen[s] = true
				part = s.part
				if k < len(p.UVs) {
					want := [2]float64{float64(s.v.uv[0]), 1 - float64(s.v.uv[1])}
					if math.Abs(p.UVs[k][0]-want[0]) > 1e-5 || math.Abs(p.UVs[k][1]-want[1]) > 1e-5 {
						errs = append(errs, fmt.Sprintf("%s corner at %v: Blender UV %v, want %v (source UV %v, top-left origin)",
							s.part, w, p.UVs[k], want, s.v.uv))
					}
				} else {
					errs = append(errs, fmt.Sprintf("%s corner at %v: no UV", s.part, w))
				}
			}
			// The face normal Blender computes from the winding.
			want := [3]float64{0, 0, 1}
			if part == "ramp" {
				want = [3]float64{float64(rampNormal[0]), float64(rampNormal[1]), float64(rampNormal[2])}
				// Rising along +Z: the ramp's height grows with x.
				for _, vi := range p.Vertices {
					w := m.WorldVertices[vi]
					if math.Abs(w[2]-w[0]/2) > 1e-4 {
						errs = append(errs, fmt.Sprintf("ramp vertex at %v: not on the slope z = x/2 rising along +Z", w))
					}
				}
			}
			if dot(p.Normal, want) < 0.999 {
				errs = append(errs, fmt.Sprintf("%s face normal %v, want %v (up)", part, p.Normal, want))
			}
		}
	}
	if polys != 5 {
		errs = append(errs, fmt.Sprintf("%d faces, want 5", polys))
	}
	if len(seen) != len(srcs) {
		errs = append(errs, fmt.Sprintf("%d of %d source vertices found", len(seen), len(srcs)))
	}
	return errs
}

func dist(a [3]float64, b [3]float32) float64 {
	var s float64
	for k := range 3 {
		d := a[k] - float64(b[k])
		s += d * d
	}
	return math.Sqrt(s)
}

func dot(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
