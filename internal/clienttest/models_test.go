package clienttest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	qgltf "github.com/qmuntal/gltf"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/gltf/validator"
	"github.com/meshfs/meshfs/export/outputs"
)

// modelRoots are the trees of ../shared whose models (.mdl; a UNIGINE
// project's .node and .world scenes) the model test mounts: the asset
// trees, and realdata/gem (the horse with its skinned tack, blyskawica,
// helmet4_ger).
var modelRoots = []string{"assets/gem-centurion", "assets/gem-pantera", "assets/gem-su85", "assets/gem-pilot",
	"assets/tf-inova", "assets/tf-flirt", "assets/tf-roadsign", "realdata/gem", "assets/unigine-skyrunner"}

// modelFile is one assembled model file read from a mount.
type modelFile struct {
	label string // "tf-inova/res/.../x.mdl/x.lod1.glb"
	path  string
	doc   *qgltf.Document
	glb   []byte
	// model is the .mdl's base name and collision the path of its
	// NAME.collision.glb ("" for none).
	model, collision string
}

// TestModelClients mounts the model trees of ../shared/assets and checks
// every model's folder: header.json of every model is listed, stat'ed and
// grepped with no assembly (the mount's stats count none), every LOD's
// .glb has 0 validator errors, and Blender 3.4 imports each as one
// hierarchy (one object without a parent) with the file's nodes (as objects or bones) under the file's
// parents, its materials (one per material and vertex-colour use, no
// more), its images at their PNG sizes, an action for
// every animation, skins whose bones move the mesh, and mirrored parts
// facing as their unmirrored twins do. In every GEM model with skinned
// tracks, each track as Blender shows it (armature applied) runs along the
// hull, around its side's road wheels and into its track*.vol shape of
// NAME.collision.glb (checkTracks, both sides; trackMisfits says which
// stand on end and why); every GEM skin without tracks (the pilot's, the
// horse's tack) lies around the bones driving it (checkSkinOnBones).
// UNIGINE's JumpRunTest.world is one hierarchy of its 125 nodes with its
// three lights as Blender lights (checkWorld). Run: go test
// ./internal/clienttest -run TestModelClients -clients.
func TestModelClients(t *testing.T) {
	if !*clients {
		t.Skip("needs Blender 3.4 and the glTF validator: go test ./internal/clienttest -run TestModelClients -clients")
	}
	blender := lookTool(t, "blender", "apt-get install --no-install-recommends blender python3-numpy")
	if err := validator.Available(); err != nil {
		t.Fatal(err)
	}
	bin := buildMeshfs(t)
	var files []*modelFile
	allRoots := true // every tree of modelRoots is present
	for _, name := range modelRoots {
		src, ok := decodetest.Shared(t, filepath.FromSlash(name))
		if !ok {
			allRoots = false
			continue
		}
		src, _ = filepath.Abs(src)
		mnt := mountTree(t, bin, src)
		models := modelFolders(t, src)
		if len(models) == 0 {
			t.Errorf("%s: no .mdl", name)
		}
		// header.json first: listing, stat and grep assemble nothing.
		for rel := range models {
			p := filepath.Join(mnt, rel, outputs.HeaderName)
			b, err := os.ReadFile(p)
			if err != nil || !bytes.Contains(b, []byte(`"lod_files"`)) || !bytes.Contains(b, []byte(`"unresolved"`)) {
				t.Errorf("%s/%s: header.json %v: no lod_files or unresolved", name, rel, err)
			}
		}
		if n := conversions(t, mnt); n != 0 {
			t.Errorf("%s: reading every model's header.json made %d conversions, want none", name, n)
		}
		for rel, m := range models {
			dir := filepath.Join(mnt, rel)
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range ents {
				got = append(got, e.Name())
			}
			for n := range m.LODs() {
				lod := m.LODGLBName(n)
				if !strings.Contains(" "+strings.Join(got, " ")+" ", " "+lod+" ") {
					t.Errorf("%s/%s lists %v: no %s", name, rel, got, lod)
					continue
				}
				b, err := os.ReadFile(filepath.Join(dir, lod))
				if err != nil {
					t.Errorf("%s/%s/%s: %v", name, rel, lod, err)
					continue
				}
				validator.Check(t, b)
				doc := new(qgltf.Document)
				if err := qgltf.NewDecoder(bytes.NewReader(b)).Decode(doc); err != nil {
					t.Fatal(err)
				}
				files = append(files, &modelFile{label: name + "/" + rel + "/" + lod, path: filepath.Join(dir, lod), doc: doc, glb: b, model: filepath.Base(rel)})
			}
			if m.HasColliders() {
				p := filepath.Join(dir, m.CollisionGLBName())
				b, err := os.ReadFile(p)
				if err != nil {
					t.Errorf("%s/%s: %v", name, rel, err)
				} else {
					validator.Check(t, b)
					for _, f := range files {
						if f.model == filepath.Base(rel) && strings.HasPrefix(f.path, dir+string(filepath.Separator)) {
							f.collision = p
						}
					}
				}
			}
		}
	}
	if len(files) == 0 {
		t.Fatal("no model read from the mounts")
	}
	// Blender imports every model file, then the collision files they name.
	var paths []string
	collIndex := map[string]int{}
	for _, f := range files {
		paths = append(paths, f.path)
	}
	for _, f := range files {
		if _, ok := collIndex[f.collision]; f.collision != "" && !ok {
			collIndex[f.collision] = len(paths)
			paths = append(paths, f.collision)
		}
	}
	reports := runModelBlender(t, blender, paths)
	var tracks []trackCheck
	world := false
	skins := 0 // GEM model files whose skin checkSkinOnBones checked
	for i, f := range files {
		if strings.HasSuffix(f.label, "/JumpRunTest.world/JumpRunTest.glb") {
			world = true
			for _, e := range checkWorld(&reports[i]) {
				t.Errorf("%s: %s", f.label, e)
			}
		}
		for _, e := range compareModel(&reports[i], f) {
			t.Errorf("%s: %s", f.label, e)
		}
		r := &reports[i]
		t.Logf("%s: %d objects, %d bones, %d materials, %d images, %d actions", f.label, len(r.Objects), len(r.Bones), len(r.Materials), len(r.Images), len(r.Actions))
		if !isGEM(f.doc) {
			continue
		}
		var coll *modelReport
		if j, ok := collIndex[f.collision]; ok {
			coll = &reports[j]
			if coll.Error != "" {
				t.Errorf("%s: Blender's import failed: %s", f.collision, coll.Error)
			}
		}
		errs, logs, checked := checkTracks(r, coll, f, f.model)
		// Every skin is held to a rule: tracks to checkTracks, any other
		// (the pilot's) to checkSkinOnBones, which fails when Blender
		// shows no bone driving it.
		if checked == nil && errs == nil && hasSkin(f.doc) {
			var l string
			errs, l = checkSkinOnBones(r, f.doc)
			logs = []string{l}
			skins++
		}
		for _, l := range logs {
			t.Logf("%s: %s", f.label, l)
		}
		for _, e := range errs {
			t.Errorf("%s: %s", f.label, e)
		}
		tracks = append(tracks, checked...)
	}
	// Both kinds of side fitted: a mirrored track (the SU-85's trackr) and
	// an unmirrored one.
	var plain, mirrored int
	for _, c := range tracks {
		switch {
		case c.misfit:
		case c.mirrored:
			mirrored++
		default:
			plain++
		}
	}
	if allRoots && !world {
		t.Errorf("JumpRunTest.world was not among the files imported")
	}
	t.Logf("skinned tracks checked: %d unmirrored, %d mirrored, %d of models in trackMisfits", plain, mirrored, len(tracks)-plain-mirrored)
	if allRoots && (plain == 0 || mirrored == 0) {
		t.Errorf("skinned tracks held to the rules: %d unmirrored, %d mirrored; want both", plain, mirrored)
	}
	if allRoots && skins == 0 {
		t.Errorf("no GEM skin without tracks (the pilot's) was checked on its bones")
	}
}

// hasSkin reports whether doc has a skinned mesh.
func hasSkin(doc *qgltf.Document) bool {
	for _, n := range doc.Nodes {
		if n.Mesh != nil && n.Skin != nil {
			return true
		}
	}
	return false
}

// checkWorld holds JumpRunTest.world's import to its XML: 125 nodes, the
// sun's light on a child of its own, under the file's root, and Blender
// lights for the sun and the two LightOmni nodes (KHR_lights_punctual).
func checkWorld(r *modelReport) []string {
	var errs []string
	lights := 0
	for _, o := range r.Objects {
		if o.Type == "LIGHT" {
			lights++
		}
	}
	if lights != 3 {
		errs = append(errs, fmt.Sprintf("%d lights imported, want the sun and two omni lights", lights))
	}
	// The root, the 125 nodes and the sun's light node.
	if len(r.Objects) != 127 {
		errs = append(errs, fmt.Sprintf("%d objects, want 127", len(r.Objects)))
	}
	return errs
}

// modelFolders returns every model file under src, by path relative to it.
func modelFolders(t *testing.T, src string) map[string]*outputs.Mesh {
	out := map[string]*outputs.Mesh{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		m, err := outputs.Open(p)
		if err == nil && m != nil && m.IsModel() {
			rel, _ := filepath.Rel(src, p)
			out[rel] = m
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// conversions is the mount's count of conversions made (.meshfs/stats.json).
func conversions(t *testing.T, mnt string) int {
	b, err := os.ReadFile(filepath.Join(mnt, ".meshfs", "stats.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct{ Conversions map[string]int }
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range st.Conversions {
		n += c
	}
	return n
}

// modelReport is inspect_models.py's report of one file.
type modelReport struct {
	Path    string
	Error   string
	Objects []struct {
		Name, Type, Parent string
		ParentIsArmature   bool `json:"parent_is_armature"`
		Det                float64
		Outward            float64
		Armature           string
		// Box is a mesh's evaluated world-space box as imported (nil for
		// a mesh without vertices).
		Box *box
	}
	Bones []struct{ Name, Parent, Armature string }
	// Materials and Images are Blender's data-blocks after the import.
	Materials []string
	Images    []struct {
		Name string
		Size [2]int
	}
	Actions []struct {
		Name    string
		FCurves int
	}
	// Deform is, per armature, how far its meshes move when each weighted
	// bone is rotated.
	Deform map[string]map[string]float64
	// BoneFit is, per armature, for each bone driving 20 or more vertices
	// at weight ≥ 0.9, how far their evaluated centre lies from it (m).
	BoneFit map[string]map[string]float64 `json:"bone_fit"`
}

// runModelBlender has inspect_models.py import each .glb of paths and
// returns its reports, in the same order.
func runModelBlender(t *testing.T, blender string, paths []string) []modelReport {
	t.Helper()
	return runScript[string, modelReport](t, blender, "inspect_models.py", paths)
}

// base is a Blender name without the ".001" Blender adds to a repeated one.
func base(name string) string { return dupSuffix.ReplaceAllString(name, "") }

// parents is each node's parent in doc, -1 for a root.
func parents(doc *qgltf.Document) []int {
	parent := make([]int, len(doc.Nodes))
	for i := range parent {
		parent[i] = -1
	}
	for i, n := range doc.Nodes {
		for _, c := range n.Children {
			parent[c] = i
		}
	}
	return parent
}

// compareModel compares Blender's import of f with the file.
func compareModel(r *modelReport, f *modelFile) []string {
	if r.Error != "" {
		return []string{"Blender's import failed: " + r.Error}
	}
	doc := f.doc
	var errs []string
	parent := parents(doc)
	// Every node is an object or a bone, under its parent (an object
	// parented to a bone names the bone; a skinned mesh, a root of the
	// file, is the armature's child).
	type item struct{ name, parent string }
	have := map[item]int{}
	armatures := map[string]bool{}
	for _, o := range r.Objects {
		p := base(o.Parent)
		if o.ParentIsArmature && o.Armature != "" {
			p = ""
		}
		have[item{base(o.Name), p}]++
		if o.Type == "ARMATURE" {
			armatures[o.Name] = true
		}
	}
	for _, b := range r.Bones {
		p := b.Parent
		if p == "" {
			p = b.Armature // a root bone is under the node its armature stands for
		}
		have[item{base(b.Name), base(p)}]++
	}
	for i, n := range doc.Nodes {
		want := item{blenderName(n.Name), ""}
		if p := parent[i]; p >= 0 {
			want.parent = blenderName(doc.Nodes[p].Name)
		}
		if have[want] > 0 {
			have[want]--
			continue
		}
		// A node that heads an armature is its object and its root bone.
		if want.parent == "" && armatures[want.name] {
			continue
		}
		errs = append(errs, "node "+n.Name+" under "+want.parent+": no such object or bone")
	}
	// One hierarchy: a single object without a parent.
	var tops []string
	for _, o := range r.Objects {
		if o.Parent == "" {
			tops = append(tops, o.Name)
		}
	}
	if len(tops) != 1 {
		errs = append(errs, "objects without a parent: "+strings.Join(tops, ", ")+"; want the model's root alone")
	}
	// Materials: every one a primitive uses, by name.
	mats := map[string]bool{}
	for _, m := range r.Materials {
		mats[m] = true
	}
	used := map[int]bool{}
	for _, m := range doc.Meshes {
		for _, p := range m.Primitives {
			if p.Material != nil {
				used[*p.Material] = true
			}
		}
	}
	for i, m := range doc.Materials {
		if used[i] && !mats[blenderName(m.Name)] {
			errs = append(errs, "material "+m.Name+" not imported")
		}
	}
	// And no more: the file holds each material once, and Blender's
	// importer makes one per material and vertex-colour use (a material
	// used with COLOR_0 and without it becomes NAME and NAME.001).
	type use struct {
		mat   int
		color bool
	}
	uses := map[use]bool{}
	for _, m := range doc.Meshes {
		for _, p := range m.Primitives {
			if p.Material != nil {
				_, c := p.Attributes[qgltf.COLOR_0]
				uses[use{*p.Material, c}] = true
			}
		}
	}
	if len(r.Materials) != len(uses) {
		errs = append(errs, "materials: Blender has "+itoa(len(r.Materials))+" ("+strings.Join(r.Materials, ", ")+"), the file's primitives use "+itoa(len(uses))+" (material, vertex colours) pairs")
	}
	// Images: the file's, each at its PNG's size.
	sizes := pngSizes(f)
	if len(r.Images) != len(sizes) {
		errs = append(errs, "images: Blender has "+itoa(len(r.Images))+", the file "+itoa(len(sizes)))
	}
	bySize := map[[2]int]int{}
	for _, s := range sizes {
		bySize[s]++
	}
	for _, im := range r.Images {
		if bySize[im.Size] == 0 {
			errs = append(errs, "image "+im.Name+" loaded at a size no image of the file has")
		}
		bySize[im.Size]--
	}
	// Actions: one or more per animation, named after it.
	for _, a := range doc.Animations {
		prefix, found := blenderName(a.Name), false
		for _, ac := range r.Actions {
			if strings.HasPrefix(ac.Name, prefix) && ac.FCurves > 0 {
				found = true
			}
		}
		if !found {
			errs = append(errs, "animation "+a.Name+": no action with keys")
		}
	}
	// Skins: a posed bone moves the mesh bound to it.
	if len(doc.Skins) > 0 {
		moved := false
		for _, bones := range r.Deform {
			for _, d := range bones {
				if d > 0.001 {
					moved = true
				}
			}
		}
		if !moved {
			errs = append(errs, "no bone moves a skinned mesh")
		}
	}
	// Mirrors: a part placed mirrored faces as its unmirrored twin does.
	facing := map[string][2]float64{} // by base name: [plain, mirrored]; −1 none
	for _, o := range r.Objects {
		if o.Type != "MESH" {
			continue
		}
		k := base(o.Name)
		v, ok := facing[k]
		if !ok {
			v = [2]float64{-1, -1}
		}
		if o.Det < 0 {
			v[1] = o.Outward
		} else {
			v[0] = o.Outward
		}
		facing[k] = v
	}
	for k, v := range facing {
		if v[0] >= 0 && v[1] >= 0 && (v[0]-v[1] > 0.01 || v[1]-v[0] > 0.01) {
			errs = append(errs, "part "+k+": mirrored faces outward "+ftoa(v[1])+", unmirrored "+ftoa(v[0]))
		}
	}
	return errs
}

// pngSizes are the width and height of every image the .glb embeds.
func pngSizes(f *modelFile) [][2]int {
	// The binary chunk follows the JSON chunk.
	glb := f.glb
	if len(glb) < 20 {
		return nil
	}
	jsonLen := int(binary.LittleEndian.Uint32(glb[12:]))
	if len(glb) < 20+jsonLen+8 {
		return nil // no binary chunk
	}
	bin := glb[20+jsonLen+8:]
	var out [][2]int
	for _, im := range f.doc.Images {
		if im.BufferView == nil {
			continue
		}
		bv := f.doc.BufferViews[*im.BufferView]
		if bv.ByteOffset+bv.ByteLength > len(bin) {
			continue
		}
		png := bin[bv.ByteOffset : bv.ByteOffset+bv.ByteLength]
		if len(png) < 24 {
			continue
		}
		out = append(out, [2]int{int(binary.BigEndian.Uint32(png[16:])), int(binary.BigEndian.Uint32(png[20:]))})
	}
	return out
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func ftoa(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}
