package decodetest

import (
	"image"
	"os"
	"path/filepath"
	"testing"

	"github.com/woozymasta/bcn"
)

// ModelTree is a source tree holding one model of each engine that reads
// one file of every kind a model reads, written by WriteModelTree.
type ModelTree struct {
	Root string
	// Models are the model files by engine ("gem", "tf"), relative to
	// Root.
	Models map[string]string
	// Deps are, by engine and then by kind, the file (or folder) of that
	// kind its model's outputs are made from, relative to Root:
	//   - gem: "part" (a .ply), "part folder" (the folder of a LOD's
	//     part), "archive" (a .pak holding a part), "mtl" (a part's
	//     material file), "texture" (the .dds it names), "animation" (.anm);
	//   - tf: "part" (the .msh), "blob" (its .msh.blob), "mtl" (the
	//     material the model names), "texture" (the .dds the .mtl names),
	//     "texture folder" (its folder),
	//     "script" (a module the .mtl requires), "model script" (a module
	//     the .mdl requires, naming the part and the material), "animation"
	//     (.ani).
	Deps map[string]map[string]string
}

// WriteModelTree writes a ModelTree into dir from the repository's
// fixtures: gem/ holds testdata/gem's tank_small.mdl and its files (its
// body part's body.mtl naming $/body, texture/common/body.dds beneath the
// asset root gem/, a LOD 1 part in lod/, its gun in gem/entity.pak), tf/res/ a Transport Fever
// model whose part, material, texture, scripts and animation are each
// in their own file. Every file is 0644, every folder 0755.
func WriteModelTree(t testing.TB, dir string) ModelTree {
	t.Helper()
	put := func(rel string, b []byte) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fixture := func(rel string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(RepoRoot(), "testdata", filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	texture := func(shade uint8) []byte {
		img := image.NewNRGBA(image.Rect(0, 0, 8, 8))
		for i := range img.Pix {
			img.Pix[i] = shade + uint8(i)
		}
		return DDS(t, img, bcn.FormatRGBA8, false)
	}

	// GEM.
	for _, n := range []string{"tank_small.mdl", "eply_tangents_textures.ply", "eply_multi_uv.ply", "eply_mirrored_mror.ply", "gun_fire.anm", "box.vol"} {
		put("gem/"+n, fixture("gem/"+n))
	}
	put("gem/body.mtl", []byte("{material simple\n\t{diffuse \"$/body\"}\n}\n"))
	put("gem/texture/common/body.dds", texture(10))
	put("gem/lod/turret_lod1.ply", fixture("gem/pm01_gem3.ply"))
	packed := filepath.Join(dir, "packed")
	put("packed/entity/common/gun.ply", fixture("gem/eply_multi_uv.ply"))
	ZipTree(t, packed, filepath.Join(dir, "gem", "entity.pak"), 0)
	if err := os.RemoveAll(packed); err != nil {
		t.Fatal(err)
	}

	// Transport Fever.
	for _, n := range []string{"cube.msh", "cube.msh.blob"} {
		put("tf/res/models/mesh/fixture/"+n, fixture("tfever/res/models/mesh/fixture/"+n))
	}
	put("tf/res/models/animation/fixture/wheel_spin.ani", fixture("tfever/res/models/animation/fixture/wheel_spin.ani"))
	put("tf/res/scripts/fixture/dep_names.lua", []byte(`return { mesh = "fixture/cube.msh", material = "fixture/dep.mtl" }`))
	put("tf/res/scripts/fixture/dep_params.lua", []byte(`return { albedo = "fixture/dep_alb.dds" }`))
	put("tf/res/models/material/fixture/dep.mtl", []byte(`local p = require "fixture/dep_params"
function data() return {
	type = "PHYS_TRANSPARENT_NRML_MAP",
	params = { map_albedo = { fileName = p.albedo } },
} end`))
	put("tf/res/textures/fixture/dep_alb.dds", texture(20))
	put("tf/res/models/model/fixture/deps.mdl", []byte(`local names = require "fixture/dep_names"
function data()
return {
	lods = {
		{
			node = {
				children = {
					{
						animations = { spin = { params = { id = "fixture/wheel_spin.ani" }, type = "FILE_REF" } },
						materials = { names.material },
						mesh = names.mesh,
						name = "body",
						transf = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, },
					},
				},
				name = "RootNode",
			},
			static = false,
			visibleFrom = 0,
			visibleTo = 1000,
		},
	},
	metadata = { },
	version = 1,
}
end
`))
	return ModelTree{
		Root:   dir,
		Models: map[string]string{"gem": "gem/tank_small.mdl", "tf": "tf/res/models/model/fixture/deps.mdl"},
		Deps: map[string]map[string]string{
			"gem": {
				"part":           "gem/eply_multi_uv.ply",
				"part folder":    "gem/lod",
				"archive":        "gem/entity.pak",
				"mtl":            "gem/body.mtl",
				"texture":        "gem/texture/common/body.dds",
				"texture folder": "gem/texture/common",
				"animation":      "gem/gun_fire.anm",
			},
			"tf": {
				"part":           "tf/res/models/mesh/fixture/cube.msh",
				"blob":           "tf/res/models/mesh/fixture/cube.msh.blob",
				"mtl":            "tf/res/models/material/fixture/dep.mtl",
				"texture":        "tf/res/textures/fixture/dep_alb.dds",
				"texture folder": "tf/res/textures/fixture",
				"script":         "tf/res/scripts/fixture/dep_params.lua",
				"model script":   "tf/res/scripts/fixture/dep_names.lua",
				"animation":      "tf/res/models/animation/fixture/wheel_spin.ani",
			},
		},
	}
}

// Reachable makes every folder from dir up to the temporary folder 0755
// (t.TempDir's are 0700) and returns dir: only the modes a test sets then
// deny other users.
func Reachable(t testing.TB, dir string) string {
	t.Helper()
	for p := dir; p != os.TempDir() && p != "/" && p != "."; p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// CopyTree copies the regular files beneath from into to, folders made as
// needed (a writable copy of a shared tree a test may change).
func CopyTree(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(to, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
