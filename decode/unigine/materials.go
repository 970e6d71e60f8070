package unigine

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/unigine/guid"
)

// UNIGINE's material rules (decode.MaterialResolver, decode.AssetRooter):
// a mesh names no material file; each surface's material is the one of
// the surface's name. It is the file NAME.mat found beside the mesh (in
// its folder, then in a materials folder in it); when there is none, the
// material is the one the project gives the surface (decode.MeshMaterials,
// listed as "given"), else it is only named (header.json lists the files
// looked for). A material named guid://<hex> (a scene's surface) is the
// file the project's index resolves it to (decode.ProjectIndexer; its
// .meta is then a file the output is made from). A .mat's <texture> paths
// are relative to the .mat's folder (when that stays beneath the mesh's),
// then to the project's data folder (the asset root: the project's root,
// guid.FindRoot), then to each asset path; a guid:// texture is the file
// the index resolves it to: a source image beside its .meta, or a runtime
// .dds. A .mat whose base_material resolves to another .mat of the project
// inherits the parameters and texture slots it does not set itself, its
// parent's parent too (at most maxMatParents; a base material that is not
// a .mat, the engine's .basemat, is listed and not read). albedo is the
// base colour (its alpha the opacity; the albedo_color parameter
// multiplies it), normal the normal map (X and Y as stored, Z rebuilt),
// shading (R metalness, G roughness) becomes glTF's metallic-roughness
// image (G roughness, B metal), and ambient_occlusion (R) the occlusion
// map. The .mat's attributes and parameters are listed under "fields".

// AssetRoot implements decode.AssetRooter: the project's data folder
// (ProjectRoot).
func (Format) AssetRoot(dir, stop string, files decode.Files) (string, bool) {
	return guid.FindRoot(dir, stop, files)
}

// AssetRoot implements decode.AssetRooter: a scene names its files
// beneath its project's data folder.
func (SceneFormat) AssetRoot(dir, stop string, files decode.Files) (string, bool) {
	return guid.FindRoot(dir, stop, files)
}

// matCandidates are the files surface material name may be, in order.
// They are beneath the mesh's folder, so that header.json names them alike
// in the mount, in convert's folders and for in-memory meshes.
func matCandidates(dir, name string) []decode.FileRef {
	rel := strings.TrimPrefix(strings.ReplaceAll(name, "\\", "/"), "/") + ".mat"
	return []decode.FileRef{{Root: dir, Rel: rel}, {Root: dir, Rel: "materials/" + rel}}
}

// maxMatParents bounds a .mat's chain of base materials followed.
const maxMatParents = 8

// notFound reports whether err says only that there was no file.
func notFound(err error) bool {
	return os.IsNotExist(err) || strings.Contains(err.Error(), "no such file")
}

// ResolveMaterial implements decode.MaterialResolver (above).
func (Format) ResolveMaterial(files decode.MaterialFiles, m *decode.Material) decode.Fields {
	var f decode.Fields
	f.Add("name", m.Name)
	name := m.Name
	var (
		b     []byte
		c     decode.FileRef
		tried []string
		err   error
		why   string
	)
	if !strings.HasPrefix(name, "guid://") {
		b, c, tried, err = files.Read(matCandidates(files.Dir(), name), decode.MaxMaterialFile)
		// Asked even when the .mat is found: the files saying so are
		// files the output is made from.
		if given, by := files.Given(name); b == nil && given != "" {
			f.Add("given", given)
			f.Add("given_by", by)
			name = given
		}
	}
	if strings.HasPrefix(name, "guid://") {
		if rc, w, ok := files.Reference(name); ok {
			var more []string
			b, c, more, err = files.Read([]decode.FileRef{rc}, decode.MaxMaterialFile)
			tried = append(tried, more...)
		} else {
			why = w
		}
	}
	if b == nil {
		f.Add("source", nil)
		f.Add("looked_for", decode.NonNilStrings(tried))
		if why != "" {
			f.Add("why", why)
		}
		if err != nil && !notFound(err) {
			f.Add("error", err.Error())
		}
		decode.AlphaFields(&f, m)
		return f
	}
	shown := files.Show(c)
	f.Add("source", shown)
	if strings.HasPrefix(name, "guid://") {
		// Named as the file the editor shows.
		m.Name = strings.TrimSuffix(path.Base(c.Rel), path.Ext(c.Rel))
	}
	mat, err := ParseMat(shown, b)
	if err != nil {
		f.Add("error", err.Error())
		decode.AlphaFields(&f, m)
		return f
	}
	texs, bases := inherit(files, mat, c)
	if bases != nil {
		f.Add("base_materials", bases)
	}
	if col := mat.Param("albedo_color"); len(col) >= 3 {
		m.BaseColor = [4]float32{float32(col[0]), float32(col[1]), float32(col[2]), 1}
		if len(col) >= 4 {
			m.BaseColor[3] = float32(col[3])
		}
	}
	var slots []decode.Fields
	for _, t := range texs {
		p := strings.TrimPrefix(strings.ReplaceAll(t.Path, "\\", "/"), "/")
		if p == "" {
			continue
		}
		var cands []decode.FileRef
		if strings.HasPrefix(p, "guid://") {
			tc, why, ok := files.Reference(p)
			if !ok {
				s := decode.TextureSlot{Slot: t.Slot, Name: t.Path, Tried: []string{}, Err: why}
				slots = append(slots, s.Fields())
				continue
			}
			cands = append(cands, tc)
		} else {
			if rel := path.Join(path.Dir(t.mat.Rel), p); filepath.IsLocal(filepath.FromSlash(rel)) {
				cands = append(cands, decode.FileRef{Root: t.mat.Root, Rel: rel})
			}
			for _, root := range files.Roots() {
				cands = append(cands, decode.FileRef{Root: root, Rel: p})
			}
		}
		used := t.Slot == "albedo" || t.Slot == "normal" || t.Slot == "shading" || t.Slot == "ambient_occlusion"
		s, img, _ := files.Texture(t.Slot, t.Path, cands, t.Slot == "normal" || t.Slot == "shading", used)
		switch t.Slot {
		case "albedo":
			m.BaseColorMap = img
		case "normal":
			m.NormalMap, m.NormalRedGreen = img, true
		case "shading":
			m.MetallicRoughnessMap = files.Repack(img, "shading", shadingOf)
		case "ambient_occlusion":
			m.OcclusionMap = img
		}
		slots = append(slots, s.Fields())
	}
	if slots != nil {
		f.Add("textures", slots)
	}
	var mf decode.Fields
	for _, kv := range [][2]string{{"version", mat.Version}, {"guid", mat.GUID}, {"base_material", mat.BaseMaterial}, {"material_name", mat.Name}} {
		if kv[1] != "" {
			mf.Add(kv[0], kv[1])
		}
	}
	var params decode.Fields
	for _, p := range mat.Params {
		if p.Values != nil {
			params.Add(p.Name, p.Values)
		} else {
			params.Add(p.Name, p.Text)
		}
	}
	if params != nil {
		mf.Add("parameters", params)
	}
	if mf != nil {
		f.Add("fields", mf)
	}
	decode.AlphaFields(&f, m)
	return f
}

// matTexture is a texture slot of a .mat, or of a base material it
// inherits, whose paths are relative to the folder of mat.
type matTexture struct {
	MatTexture
	mat decode.FileRef
}

// inherit follows mat's (found at c) chain of base materials that are
// .mat files of the project, adding to mat the parameters it lacks, and
// returns its texture slots with those it inherits, and the chain as
// header.json lists it (nil when mat names no base material).
func inherit(files decode.MaterialFiles, mat *Mat, c decode.FileRef) ([]matTexture, []decode.Fields) {
	var texs []matTexture
	have := map[string]bool{}
	addTextures := func(m *Mat, at decode.FileRef) {
		for _, t := range m.Textures {
			if !have[t.Slot] {
				have[t.Slot] = true
				texs = append(texs, matTexture{t, at})
			}
		}
	}
	addTextures(mat, c)
	params := map[string]bool{}
	for _, p := range mat.Params {
		params[p.Name] = true
	}
	var chain []decode.Fields
	seen := map[string]bool{path.Join(c.Root, c.Rel): true}
	for base := mat.BaseMaterial; base != ""; {
		bf := decode.Fields{{Key: "name", Value: base}}
		chain = append(chain, bf)
		if len(chain) > maxMatParents {
			chain[len(chain)-1].Add("error", fmt.Sprintf("more than %d base materials deep: not followed", maxMatParents))
			break
		}
		name := base
		if !strings.HasPrefix(name, "guid://") {
			name = "guid://" + name
		}
		bc, why, ok := files.Reference(name)
		if !ok {
			chain[len(chain)-1].Add("why", why)
			break
		}
		chain[len(chain)-1].Add("source", files.Show(bc))
		if !strings.HasSuffix(strings.ToLower(bc.Rel), ".mat") {
			chain[len(chain)-1].Add("note", "not a .mat: the engine's own, not read")
			break
		}
		if k := path.Join(bc.Root, bc.Rel); seen[k] {
			chain[len(chain)-1].Add("error", "a cycle: not followed")
			break
		} else {
			seen[k] = true
		}
		b, _, _, err := files.Read([]decode.FileRef{bc}, decode.MaxMaterialFile)
		var parent *Mat
		if err == nil {
			parent, err = ParseMat(files.Show(bc), b)
		}
		if err != nil {
			chain[len(chain)-1].Add("error", err.Error())
			break
		}
		for _, p := range parent.Params {
			if !params[p.Name] {
				params[p.Name] = true
				mat.Params = append(mat.Params, p)
			}
		}
		addTextures(parent, bc)
		base = parent.BaseMaterial
	}
	return texs, chain
}

// shadingOf moves a UNIGINE shading pixel (R metalness, G roughness) into
// glTF's metallic-roughness packing: G roughness, B metal (R, unused by
// glTF there, 255).
func shadingOf(metal, rough, _ uint8) (r, g, b uint8) { return 255, rough, metal }
