package clienttest

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/export/gltf"
	"github.com/meshfs/meshfs/export/outputs"
)

// The expected counts come from the decoded scene: the test decodes each
// source file itself (the same decoder the mount runs, in this process)
// and derives from the scene what Blender must show. That is the honest
// source. header.json describes the source file's own records (a GEM VERT
// chunk counts padding vertices no face uses; UNIGINE splits vertices into
// coordinate and triangle vertices; a GEM skin lists its bones without the
// synthetic root joint), so its numbers are not what any importer shows;
// and counts read back from the .glb would only test Blender against the
// .glb, not against what meshfs claims the file holds. Where header.json
// does carry a comparable total (GEM's counts.triangles), the test checks
// that the scene agrees with it too.

// meshExpect is what Blender must show for one scene mesh.
type meshExpect struct {
	name      string // the glTF node name (the OBJ "o" name differs for unnamed meshes)
	vertices  int
	faces     int      // .glb: without degenerate and repeated triangles
	objFaces  int      // .obj: without degenerate triangles
	materials []string // distinct names of the materials its faces use, sorted
	uvLayers  int
	colors    int
	skinned   bool // bound to the skeleton with at least one weighted vertex
	shapeKeys []string
	noMatFace bool // some face has no material

	objName      string   // the OBJ "o" name
	objMaterials []string // the OBJ "usemtl" names of its primitives
}

// fileExpect is what Blender must show for one file.
type fileExpect struct {
	meshes        []meshExpect
	bones         []string        // the skeleton's joint names, in order
	weightedBones map[string]bool // joints that weigh > 0.01 on some vertex
	animations    []string
	triangles     int // every triangle of the scene, degenerate or not (assimp's count)
	// sourceBones are the bone names header.json lists from the source
	// itself (GEM SKIN, UNIGINE joints); the scene may add joints (GEM's
	// synthetic root for the mesh's own matrix), never lose one.
	sourceBones []string
	scene       *decode.Scene
	// images are the images the .glb's materials embed (those of the
	// materials some primitive uses: Blender makes no other), by name;
	// materials the .glb materials with an image, by name.
	images    map[string]imageExpect
	materials map[string]materialExpect
}

// decodeSource decodes a source file the way the mount of tree does:
// its materials resolved to their images (outputs.Mesh.Textures), asset
// roots looked for up to tree.
func decodeSource(path, tree string) (*decode.Scene, error) {
	m, err := outputs.Open(path)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("%s: no format claims it", path)
	}
	m.Tree = tree
	s, err := m.Decode(context.Background())
	if err != nil {
		return nil, err
	}
	m.Textures(context.Background(), s)
	return s, nil
}

// imageExpect is an image the .glb embeds, as Blender must load it.
type imageExpect struct {
	name          string
	width, height int
}

// materialExpect is what a .glb material's node tree must hold: the
// images feeding the Principled BSDF's Base Color and (through a Normal
// Map node) its Normal, and Blender's blend method for the alpha mode.
type materialExpect struct {
	name        string
	baseColor   *imageExpect
	normal      *imageExpect
	blendMethod string // "OPAQUE", "CLIP" (glTF MASK) or "BLEND"
}

// imageOf is img as the .glb embeds it: the PNG's own size when it is
// encoded already, else its pixels' (export/gltf encodes those, a
// rebuilt Z keeping the size). nil when it has nothing to embed.
func imageOf(img *decode.Image) *imageExpect {
	if img == nil {
		return nil
	}
	if img.PNG != nil {
		c, err := png.DecodeConfig(bytes.NewReader(img.PNG))
		if err != nil {
			return nil
		}
		return &imageExpect{img.Name, c.Width, c.Height}
	}
	if img.Pixels == nil {
		return nil
	}
	b := img.Pixels.Bounds()
	return &imageExpect{img.Name, b.Dx(), b.Dy()}
}

// blendMethod is Blender 3.4's blend method for a material's alpha mode.
func blendMethod(m *decode.Material) string {
	switch {
	case m.AlphaBlend:
		return "BLEND"
	case m.AlphaMask:
		return "CLIP"
	}
	return "OPAQUE"
}

// expectFrom applies Blender 3.4's import rules to a scene.
//
// Vertices and faces (io_scene_gltf2, blender/imp/gltf2_blender_mesh.py,
// with the importer's default "merge vertices" off): each primitive
// contributes the vertices its indices use, once each (np.unique over the
// indices), so vertices nothing references are dropped; vertices are never
// merged across primitives or by position. Every triangle becomes a face,
// then mesh.validate() deletes faces that use one vertex twice (degenerate
// after renumbering) and all but one of faces that use the same three
// vertices (in any order). Blender's C++ OBJ importer (wm.obj_import)
// creates, per "o" object, the vertices its faces use (each "v" line of
// meshfs's .obj is a vertex of one primitive, so the vertex count is the
// same), skips degenerate faces, but keeps repeated ones: it does not call
// validate(). Vertices of deleted faces stay in both importers. The OBJ
// importer gives every object a UV layer once the file has any "vt" line
// (corners without one get (0, 0)), so an object whose own faces have no
// UVs still has one when another object's have. rulesScene and TestClients
// check these rules on Blender itself.
func expectFrom(s *decode.Scene) fileExpect {
	e := fileExpect{scene: s, weightedBones: map[string]bool{},
		images: map[string]imageExpect{}, materials: map[string]materialExpect{}}
	if s.Skeleton != nil {
		for _, j := range s.Skeleton.Joints {
			e.bones = append(e.bones, j.Name)
		}
	}
	for _, a := range s.Animations {
		e.animations = append(e.animations, a.Name)
	}
	for mi := range s.Meshes {
		m := &s.Meshes[mi]
		me := meshExpect{name: m.Name, objName: objToken(m.Name, "mesh_"+strconv.Itoa(mi))}
		mats := map[string]bool{}
		faces := map[[3]uint32]bool{}
		base := uint32(0)
		any := false
		for pi := range m.Primitives {
			p := &m.Primitives[pi]
			idx := p.Indices[:len(p.Indices)/3*3]
			if len(idx) == 0 || len(p.Positions) == 0 {
				continue
			}
			any = true
			e.triangles += len(idx) / 3
			local := map[uint32]uint32{}
			for _, v := range idx {
				if _, ok := local[v]; !ok {
					local[v] = base + uint32(len(local))
				}
			}
			for t := 0; t < len(idx); t += 3 {
				a, b, c := local[idx[t]], local[idx[t+1]], local[idx[t+2]]
				if a == b || b == c || a == c {
					continue
				}
				me.objFaces++
				k := sort3(a, b, c)
				if faces[k] {
					continue
				}
				faces[k] = true
			}
			me.vertices += len(local)
			base += uint32(len(local))
			// Blender gives each primitive its material slot, even when
			// validate() removed all of its faces. The .glb names it
			// after the primitive too (gltf.MaterialName); the .obj
			// keeps the scene material's name.
			has := p.Material >= 0 && p.Material < len(s.Materials)
			mat := ""
			if has {
				mat = s.Materials[p.Material].Name
				me.objMaterials = append(me.objMaterials, objToken(mat, "material_"+strconv.Itoa(p.Material)))
			}
			if name := gltf.MaterialName(p.Name, mat, has); name != "" {
				mats[name] = true
				if has {
					e.addMaterial(name, &s.Materials[p.Material])
				}
			} else {
				me.noMatFace = true
			}
			me.uvLayers = max(me.uvLayers, min(len(p.UVs), 8))
			me.colors = max(me.colors, min(len(p.Colors), 8))
			if m.Skinned && s.Skeleton != nil && len(p.Joints) == len(p.Positions) && len(p.Weights) == len(p.Positions) {
				me.skinned = true
				for _, v := range idx {
					for k, w := range p.Weights[v] {
						if w > 0.01 && int(p.Joints[v][k]) < len(s.Skeleton.Joints) {
							e.weightedBones[s.Skeleton.Joints[p.Joints[v][k]].Name] = true
						}
					}
				}
			}
		}
		if !any {
			continue // the exporters leave a mesh without triangles out
		}
		me.faces = len(faces)
		for n := range mats {
			me.materials = append(me.materials, n)
		}
		sort.Strings(me.materials)
		for i, n := range m.TargetNames {
			if n == "" {
				n = "target_" + strconv.Itoa(i)
			}
			me.shapeKeys = append(me.shapeKeys, n)
		}
		e.meshes = append(e.meshes, me)
	}
	return e
}

// addMaterial records the images of scene material m, made the .glb
// material name, when it has any.
func (e *fileExpect) addMaterial(name string, m *decode.Material) {
	me := materialExpect{name: name, baseColor: imageOf(m.BaseColorMap), normal: imageOf(m.NormalMap),
		blendMethod: blendMethod(m)}
	for _, im := range []*imageExpect{me.baseColor, me.normal, imageOf(m.MetallicRoughnessMap), imageOf(m.OcclusionMap)} {
		if im != nil {
			e.images[im.name] = *im
		}
	}
	if me.baseColor != nil || me.normal != nil || me.blendMethod != "OPAQUE" {
		e.materials[name] = me
	}
}

func sort3(a, b, c uint32) [3]uint32 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b, c = c, b
	}
	if a > b {
		a, b = b, a
	}
	return [3]uint32{a, b, c}
}

// blenderName is the name Blender gives a data-block called s: names are
// at most 63 bytes (MAX_ID_NAME − 2), cut at a character boundary.
func blenderName(s string) string {
	if len(s) <= 63 {
		return s
	}
	n := 63
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// dupSuffix is Blender's ".001" that makes a repeated name unique.
var dupSuffix = regexp.MustCompile(`\.\d{3}$`)

// sameName reports whether Blender's name got is the data-block name want,
// allowing the ".NNN" suffix Blender adds when a name is taken.
func sameName(got, want string) bool {
	want = blenderName(want)
	if got == want {
		return true
	}
	// A suffixed name is cut shorter to stay within 63 bytes.
	return dupSuffix.MatchString(got) && len(got) > 4 && strings.HasPrefix(want, got[:len(got)-4])
}

// objToken is export/obj's name rule for "o" and "usemtl": white space and
// control characters become '_', an empty name gets a default.
func objToken(s, def string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return '_'
		}
		return r
	}, s)
	if s == "" {
		return def
	}
	return s
}
