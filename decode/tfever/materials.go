package tfever

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/meshfs/meshfs/decode"
)

// Transport Fever's material rules (decode.MaterialResolver,
// decode.AssetRooter): a mesh of the old Train Fever style names its
// materials, files under the res folder (the nearest ancestor of the mesh
// called res, then the user's asset paths) at models/material/NAME, Lua
// scripts run in the sandbox with their requires served from
// res/scripts/. Their texture file names are under res/textures/.
// map_albedo (or map_albedo_opacity) is the base colour, map_normal the
// normal map (two-channel when its redGreen flag says so),
// map_metal_gloss_ao (R metal, G gloss, B ambient occlusion) becomes one
// image with glTF's occlusion in R, roughness = 1 − gloss in G and metal in
// B, used as both the metallic-roughness and the occlusion map;
// alpha_test is MASK at its threshold, two_sided double-sided. A mesh of
// the later style names no material (its .mdl does).

// ResFolder is the name of a mod's (and the game's) asset root.
const ResFolder = "res"

// Merges implements decode.Merger: a res folder, in any case (a mod's
// files override the game's by name).
func (Msh) Merges(name string) bool { return strings.EqualFold(name, ResFolder) }

// assetRoot is the nearest folder of Up(dir, stop) called ResFolder.
func assetRoot(dir, stop string) (string, bool) {
	for _, d := range decode.Up(dir, stop) {
		if filepath.Base(d) == ResFolder {
			return d, true
		}
	}
	return "", false
}

// AssetRoot implements decode.AssetRooter: the res folder above the file.
func (Msh) AssetRoot(dir, stop string, _ decode.Files) (string, bool) { return assetRoot(dir, stop) }

// AssetRoot implements decode.AssetRooter.
func (Ani) AssetRoot(dir, stop string, _ decode.Files) (string, bool) { return assetRoot(dir, stop) }

// AssetRoot implements decode.AssetRooter: a model's meshes, animations
// and scripts are beneath the res folder above it.
func (Mdl) AssetRoot(dir, stop string, _ decode.Files) (string, bool) { return assetRoot(dir, stop) }

// ResolveMaterial implements decode.MaterialResolver (above).
func (Msh) ResolveMaterial(files decode.MaterialFiles, m *decode.Material) decode.Fields {
	var f decode.Fields
	f.Add("name", m.Name)
	beneathRoots := func(rel string) []decode.FileRef {
		var cs []decode.FileRef
		for _, root := range files.Roots() {
			cs = append(cs, decode.FileRef{Root: root, Rel: rel})
		}
		return cs
	}
	rel := "models/material/" + strings.TrimPrefix(strings.ReplaceAll(m.Name, "\\", "/"), "/")
	b, c, tried, err := files.Read(beneathRoots(rel), decode.MaxMaterialFile)
	if b == nil {
		f.Add("unresolved", decode.NonNilStrings(tried))
		if err != nil && !os.IsNotExist(err) {
			f.Add("error", err.Error())
		}
		decode.AlphaFields(&f, m)
		return f
	}
	f.Add("source", files.Show(c))
	load := func(module string) (string, []byte, error) {
		p, err := ScriptModule(module)
		if err != nil {
			return "", nil, err
		}
		b, c, _, err := files.Read(beneathRoots(p), decode.MaxMaterialFile)
		if b == nil {
			return "", nil, fmt.Errorf("module %q: %w", module, err)
		}
		return files.Show(c), b, nil
	}
	mat, err := ParseMaterial(context.Background(), files.Show(c), b, load)
	if err != nil {
		f.Add("error", err.Error())
		decode.AlphaFields(&f, m)
		return f
	}
	if mat.AlphaThreshold >= 0 {
		m.AlphaMask, m.AlphaCutoff = true, float32(mat.AlphaThreshold)
	}
	m.DoubleSided = m.DoubleSided || mat.TwoSided
	var slots []decode.Fields
	for _, tm := range mat.Maps {
		tc := beneathRoots("textures/" + strings.TrimPrefix(tm.FileName, "/"))
		used := tm.Slot == "map_normal" || tm.Slot == "map_metal_gloss_ao" ||
			(tm.Slot == "map_albedo" || tm.Slot == "map_albedo_opacity") && m.BaseColorMap == nil
		s, img, _ := files.Texture(tm.Slot, tm.FileName, tc, tm.Slot == "map_metal_gloss_ao" || tm.Slot == "map_normal" && tm.RedGreen, used)
		switch tm.Slot {
		case "map_albedo", "map_albedo_opacity":
			if m.BaseColorMap == nil {
				m.BaseColorMap = img
			}
		case "map_normal":
			m.NormalMap, m.NormalRedGreen = img, tm.RedGreen
		case "map_metal_gloss_ao":
			orm := files.Repack(img, "orm", ormOf)
			m.MetallicRoughnessMap, m.OcclusionMap = orm, orm
		}
		slots = append(slots, s.Fields())
	}
	if slots != nil {
		f.Add("textures", slots)
	}
	mf := decode.Fields{{Key: "type", Value: mat.Type}}
	f.Add("fields", mf)
	decode.AlphaFields(&f, m)
	return f
}

// ormOf moves a Transport Fever metal-gloss-AO pixel (R metal, G gloss, B
// occlusion) into glTF's packing: R occlusion, G roughness = 1 − gloss, B
// metal.
func ormOf(metal, gloss, ao uint8) (r, g, b uint8) { return ao, 255 - gloss, metal }
