package outputs_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/texture"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
)

// TestPackedModTree: a GEM mod tree packed whole into mod.pak (its mesh
// at mod.pak/entity/tank/body.ply, the archive as its tree) gives the same
// header.json (its material, textures found through the asset root inside
// the archive, skins listed from the archive's folder) and .glb, byte for
// byte, as the loose tree; its deps name the archive file.
func TestPackedModTree(t *testing.T) {
	mod, mesh, _ := gemTree(t)
	pak := filepath.Join(t.TempDir(), "mod.pak")
	decodetest.ZipTree(t, mod, pak, 0)
	loose, err := outputs.OpenSource(mesh, viewLimits())
	if err != nil || loose == nil {
		t.Fatal(loose, err)
	}
	loose.Tree = mod
	packed, err := outputs.OpenSource(pak+"/entity/tank/body.ply", viewLimits())
	if err != nil || packed == nil {
		t.Fatal(packed, err)
	}
	packed.Tree = pak
	ctx := context.Background()
	var hdr [2][]byte
	var glb [2][]byte
	for i, m := range []*outputs.Mesh{loose, packed} {
		st, err := m.Scan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, deps, err := m.HeaderDeps(st, nil)
		if err != nil {
			t.Fatal(err)
		}
		hdr[i] = b
		if i == 1 {
			for _, d := range deps {
				if d.Path != pak {
					t.Errorf("dep %s, want the archive %s", d.Path, pak)
				}
			}
			if len(deps) == 0 {
				t.Error("no deps")
			}
		}
		if glb[i], err = m.GLBFile(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(hdr[0], hdr[1]) {
		t.Errorf("header.json differs:\nloose  %s\npacked %s", hdr[0], hdr[1])
	}
	if !bytes.Contains(hdr[1], []byte(`"../../texture/common/model/tank/hull.dds"`)) || !bytes.Contains(hdr[1], []byte("hull#winter.dds")) {
		t.Errorf("the packed textures are not resolved:\n%s", hdr[1])
	}
	if !bytes.Equal(glb[0], glb[1]) {
		t.Errorf(".glb differs: %d bytes loose, %d packed", len(glb[0]), len(glb[1]))
	}
}

// zipFiles writes files (by slash path) into the ZIP at dest, deflated.
func zipFiles(t *testing.T, dest string, files map[string][]byte) {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		put(t, filepath.Join(dir, filepath.FromSlash(name)), b)
	}
	decodetest.ZipTree(t, dir, dest, 0)
}

// TestOverlayAssetPathPak: a mod whose $/ normal map exists only inside
// a texture.pak of its --asset-path root gets it embedded from there, and
// header.json names it beneath the archive; of two archives holding it the
// later by name wins (texture.pak over a.pak), and a loose file of the
// mod's own root wins over its root's packed one (mod/texture.pak).
func TestOverlayAssetPathPak(t *testing.T) {
	mod, mesh, base := gemTree(t)
	if err := os.RemoveAll(filepath.Join(base, "texture")); err != nil {
		t.Fatal(err)
	}
	packed := bc1(t, 8, 8, 9)
	zipFiles(t, filepath.Join(base, "texture.pak"), map[string][]byte{"texture/model/common_nm.dds": packed})
	zipFiles(t, filepath.Join(base, "a.pak"), map[string][]byte{"texture/model/common_nm.dds": bc1(t, 8, 8, 10)})
	os.WriteFile(filepath.Join(base, "notes.zip"), []byte("not an archive"), 0o644)
	zipFiles(t, filepath.Join(mod, "texture.pak"), map[string][]byte{"texture/common/model/tank/hull.dds": bc1(t, 16, 8, 11)})

	m, err := outputs.OpenSource(mesh, viewLimits())
	if err != nil || m == nil {
		t.Fatal(m, err)
	}
	m.Tree = filepath.Dir(mod)
	h, _, _ := convertFixture(t, m)
	if tx := h.Materials[0].Textures; len(tx) < 2 || tx[1].Path != "" {
		t.Fatalf("the normal map resolved without --asset-path: %+v", tx)
	}
	m.Limits.AssetPaths = []string{base}
	h, doc, glb := convertFixture(t, m)
	tx := h.Materials[0].Textures
	if want := filepath.ToSlash(filepath.Join(base, "texture.pak", "texture", "model", "common_nm.dds")); len(tx) < 2 || tx[1].Path != want {
		t.Fatalf("textures %+v, want the normal map at %s", tx, want)
	}
	if tx[0].Path != "../../texture/common/model/tank/hull.dds" {
		t.Errorf("base colour at %q: the loose file must win over mod/texture.pak", tx[0].Path)
	}
	gm := glTFMaterial(t, doc, "body.mtl")
	if gm.NormalTexture == nil {
		t.Fatal("the packed normal map is not embedded")
	}
	want := decodeDDS(t, packed)
	if got := embeddedPix(t, doc, glb, *doc.Textures[*gm.NormalTexture.Index].Source); !bytes.Equal(got, want) {
		t.Errorf("the embedded normal map is not texture.pak's")
	}
}

func decodeDDS(t *testing.T, b []byte) []byte {
	t.Helper()
	im, err := texture.Decode("x.dds", bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return im.Pix
}

// viewLimits are the default limits with a source view of their own
// (archives as folders), as each convert run makes.
func viewLimits() outputs.Limits {
	l := outputs.DefaultLimits
	l.View = source.NewView()
	return l
}
