package gem

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/meshfs/meshfs/decode"
)

// GEM's material rules (decode.MaterialResolver, decode.AssetRooter): a
// MESH chunk names a material file (NAME.mtl, beside the mesh) or its
// textures directly. A texture named "$/p" is texture/common/p.dds, then
// texture/p.dds, under each asset root (the nearest ancestor folder
// holding texture/, or a texture.pak archive as an installed game does,
// then the user's asset paths); a plain name is beside the .mtl, then
// beside the mesh. {diffuse} is the base colour, {bump} the normal map;
// {blend test} is MASK with {alpharef}/255 as cutoff (0.5 when not
// given), {blend blend} BLEND; {color "r g b a"} gives the base colour's
// RGB (0–255; its alpha is not an opacity and is not used). Files
// "NAME#VARIANT.dds" beside a base colour "NAME.dds" are its skins,
// listed in header.json.

// TextureFolder is the folder an asset root holds (or TextureFolder+".pak",
// an archive).
const TextureFolder = "texture"

// ResourceFolder is the folder of an installed game whose archives (*.pak)
// the game loads over one another.
const ResourceFolder = "resource"

// Merges implements decode.Merger: the resource folder, in any case.
func (Format) Merges(name string) bool { return strings.EqualFold(name, ResourceFolder) }

// assetRoot is GEM's asset root rule: the nearest folder of Up(dir, stop)
// holding a folder TextureFolder, or a TextureFolder.pak that is one of
// its archives.
func assetRoot(dir, stop string, files decode.Files) (string, bool) {
	for _, d := range decode.Up(dir, stop) {
		if fi, err := files.Stat(filepath.Join(d, TextureFolder)); err == nil && fi.IsDir() {
			return d, true
		}
		pak := filepath.Join(d, TextureFolder+".pak")
		if fi, err := files.Stat(pak); err == nil && fi.Mode().IsRegular() && slices.Contains(files.Layers(d)[1:], pak) {
			return d, true
		}
	}
	return "", false
}

// AssetRoot implements decode.AssetRooter (above).
func (Format) AssetRoot(dir, stop string, files decode.Files) (string, bool) {
	return assetRoot(dir, stop, files)
}

// AssetRoot implements decode.AssetRooter: a model names its parts and
// animations beneath the asset root as meshes name textures.
func (Mdl) AssetRoot(dir, stop string, files decode.Files) (string, bool) {
	return assetRoot(dir, stop, files)
}

// AssetRoot implements decode.AssetRooter.
func (AnmFormat) AssetRoot(dir, stop string, files decode.Files) (string, bool) {
	return assetRoot(dir, stop, files)
}

// AssetRoot implements decode.AssetRooter.
func (VolFormat) AssetRoot(dir, stop string, files decode.Files) (string, bool) {
	return assetRoot(dir, stop, files)
}

// textureCandidates are the files a texture name may be, in order.
func textureCandidates(files decode.MaterialFiles, name, mtlDir string) []decode.FileRef {
	rootRel, local := TexturePaths(name)
	var cs []decode.FileRef
	for _, rel := range rootRel {
		for _, root := range files.Roots() {
			cs = append(cs, decode.FileRef{Root: root, Rel: rel})
		}
	}
	if local != "" {
		cs = append(cs, decode.FileRef{Root: mtlDir, Rel: local})
		if mtlDir != files.Dir() {
			cs = append(cs, decode.FileRef{Root: files.Dir(), Rel: local})
		}
	}
	return cs
}

// ResolveMaterial implements decode.MaterialResolver (above).
func (Format) ResolveMaterial(files decode.MaterialFiles, m *decode.Material) decode.Fields {
	var f decode.Fields
	f.Add("name", m.Name)
	type named struct{ slot, name string }
	var refs []named
	mtlDir := files.Dir()
	if strings.HasSuffix(strings.ToLower(m.Name), ".mtl") {
		rel := strings.ReplaceAll(m.Name, "\\", "/")
		b, c, tried, err := files.Read([]decode.FileRef{{Root: files.Dir(), Rel: rel}}, decode.MaxMaterialFile)
		if b == nil {
			f.Add("source", rel)
			f.Add("unresolved", tried)
			if err != nil && !os.IsNotExist(err) {
				f.Add("error", err.Error())
			}
			decode.AlphaFields(&f, m)
			return f
		}
		f.Add("source", files.Show(c))
		mtl, err := ParseMTL(files.Show(c), b)
		if err != nil {
			f.Add("error", err.Error())
			decode.AlphaFields(&f, m)
			return f
		}
		mtlDir = filepath.Dir(filepath.Join(c.Root, filepath.FromSlash(c.Rel)))
		for _, s := range mtl.Slots {
			refs = append(refs, named{s, mtl.Textures[s]})
		}
		switch strings.ToLower(mtl.Blend) {
		case "test":
			m.AlphaMask, m.AlphaCutoff = true, 0.5
			if mtl.AlphaRef >= 0 {
				m.AlphaCutoff = float32(mtl.AlphaRef) / 255
			}
		case "blend":
			m.AlphaBlend = true
		}
		if len(mtl.Color) >= 3 {
			m.BaseColor = [4]float32{float32(mtl.Color[0] / 255), float32(mtl.Color[1] / 255), float32(mtl.Color[2] / 255), 1}
		}
		mf := decode.Fields{{Key: "kind", Value: mtl.Kind}}
		if mtl.Blend != "" {
			mf.Add("blend", mtl.Blend)
		}
		if mtl.AlphaRef >= 0 {
			mf.Add("alpharef", mtl.AlphaRef)
		}
		if mtl.Color != nil {
			cs := make([]string, len(mtl.Color))
			for i, v := range mtl.Color {
				cs[i] = fmt.Sprint(v)
			}
			mf.Add("color", strings.Join(cs, " "))
		}
		keys := make([]string, 0, len(mtl.Fields))
		for k := range mtl.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			mf.Add(k, mtl.Fields[k])
		}
		f.Add("fields", mf)
	} else {
		for _, t := range m.Textures {
			refs = append(refs, named{t.Role, t.Path})
		}
	}
	var slots []decode.Fields
	var skins []string
	for _, ref := range refs {
		s, img, c := files.Texture(ref.slot, ref.name, textureCandidates(files, ref.name, mtlDir), false, ref.slot == "diffuse" || ref.slot == "bump")
		switch ref.slot {
		case "diffuse":
			m.BaseColorMap = img
			if s.Path != "" {
				skins = skinsOf(files, c)
			}
		case "bump":
			m.NormalMap = img
		}
		slots = append(slots, s.Fields())
	}
	if slots != nil {
		f.Add("textures", slots)
	}
	if skins != nil {
		f.Add("skins", skins)
	}
	decode.AlphaFields(&f, m)
	return f
}

// skinsOf lists the files NAME#VARIANT.EXT beside the texture NAME.EXT.
func skinsOf(files decode.MaterialFiles, c decode.FileRef) []string {
	full := filepath.Join(c.Root, filepath.FromSlash(c.Rel))
	ext := filepath.Ext(full)
	stem := strings.TrimSuffix(filepath.Base(full), ext)
	ents, err := files.ReadDir(filepath.Dir(full))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.EqualFold(filepath.Ext(n), ext) &&
			len(n) > len(stem)+1 && strings.EqualFold(n[:len(stem)+1], stem+"#") {
			out = append(out, files.Show(decode.FileRef{Root: c.Root, Rel: path.Join(path.Dir(c.Rel), n)}))
		}
	}
	return out
}
