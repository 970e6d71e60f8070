package outputs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	qgltf "github.com/qmuntal/gltf"
	"github.com/woozymasta/bcn"

	"github.com/meshfs/meshfs/decode/texture"
	"github.com/meshfs/meshfs/export/gltf/validator"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

// bc1 is a w×h DDS (BC1, with mips) made by bcn's encoder, of a pattern
// set by seed.
func bc1(t *testing.T, w, h int, seed uint8) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i*13) ^ seed
	}
	d, err := bcn.EncodeDDSWithOptions([]image.Image{img}, bcn.FormatBC1, &bcn.EncodeOptions{QualityLevel: 1, GenerateMipmaps: true})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := d.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func put(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// gemTree builds a mod tree around the fixture eply_tangents_textures.ply
// (its MESH names body.mtl) and returns the mod's folder, the mesh's path
// and a base game folder holding the texture the mod lacks.
func gemTree(t *testing.T) (mod, mesh, base string) {
	root := t.TempDir()
	mod, base = filepath.Join(root, "mod", "resource"), filepath.Join(root, "game", "resource")
	ply, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "gem", "eply_tangents_textures.ply"))
	if err != nil {
		t.Fatal(err)
	}
	mesh = filepath.Join(mod, "entity", "tank", "body.ply")
	put(t, mesh, ply)
	put(t, filepath.Join(mod, "entity", "tank", "body.mtl"), []byte(`{material bump
	{diffuse "$/model/tank/hull"}
	{bump "$/model/common_nm"}
	{specular "hull_sm"}
	{blend test}
	{alpharef 64}
	{color "255 128 0 100"}
}`))
	put(t, filepath.Join(mod, "texture", "common", "model", "tank", "hull.dds"), bc1(t, 16, 8, 1))
	put(t, filepath.Join(mod, "texture", "common", "model", "tank", "hull#winter.dds"), bc1(t, 16, 8, 2))
	put(t, filepath.Join(mod, "entity", "tank", "hull_sm.dds"), bc1(t, 4, 4, 3))
	put(t, filepath.Join(base, "texture", "model", "common_nm.dds"), bc1(t, 8, 8, 4))
	return mod, mesh, base
}

type fixtureHeader struct{ Materials []headerMaterial }

func convertFixture(t *testing.T, m *outputs.Mesh) (fixtureHeader, *qgltf.Document, []byte) {
	t.Helper()
	return convertNamed(t, m, "body.mtl")
}

// convertNamed converts m and returns its header (the material called
// name first), its .glb's document and bytes.
func convertNamed(t *testing.T, m *outputs.Mesh, name string) (fixtureHeader, *qgltf.Document, []byte) {
	t.Helper()
	st, err := m.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hdr, err := m.Header(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var h fixtureHeader
	if err := json.Unmarshal(hdr, &h); err != nil {
		t.Fatal(err)
	}
	for i, hm := range h.Materials {
		if hm.Name == name {
			h.Materials[0], h.Materials[i] = h.Materials[i], h.Materials[0]
		}
	}
	if len(h.Materials) == 0 || h.Materials[0].Name != name {
		t.Fatalf("no %s in header.json:\n%s", name, hdr)
	}
	glb, err := m.GLBFile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep := validator.Check(t, glb); rep != nil && rep.Issues.NumErrors > 0 {
		t.Errorf("validator errors %v", rep.Codes(validator.SeverityError))
	}
	doc := new(qgltf.Document)
	if err := qgltf.NewDecoder(bytes.NewReader(glb)).Decode(doc); err != nil {
		t.Fatal(err)
	}
	return h, doc, glb
}

// TestGEMMaterialFixture: a .mtl's $/ name resolves under the mod's
// texture/common/, a plain name beside the .mtl; a name the mod lacks is
// unresolved with the two paths tried until --asset-path names the base
// game, then it resolves there (texture/, the second rule) and the .glb
// gets its normal map. blend test with alpharef 64 is MASK at 64/255; the
// diffuse's #variant is listed; the embedded base colour holds exactly the
// decoded texture's pixels. Above Mesh.Tree no asset root is looked for.
func TestGEMMaterialFixture(t *testing.T) {
	mod, mesh, base := gemTree(t)
	m, err := outputs.Open(mesh)
	if err != nil || m == nil {
		t.Fatal(m, err)
	}
	m.Tree = filepath.Dir(mod)
	h, doc, glb := convertFixture(t, m)
	hm := h.Materials[0]
	if hm.Source != "body.mtl" || hm.AlphaMode != "MASK" || hm.AlphaCutoff == nil || float32(*hm.AlphaCutoff) != float32(64)/255 {
		t.Errorf("material %+v", hm)
	}
	if !reflect.DeepEqual(hm.Skins, []string{"../../texture/common/model/tank/hull#winter.dds"}) {
		t.Errorf("skins %v", hm.Skins)
	}
	type res struct {
		path  string
		tried []string
	}
	want := []res{
		{"../../texture/common/model/tank/hull.dds", nil},
		{"", []string{"../../texture/common/model/common_nm.dds", "../../texture/model/common_nm.dds"}},
		{"hull_sm.dds", nil},
	}
	check := func(h fixtureHeader, want []res) {
		t.Helper()
		var got []res
		for _, tx := range h.Materials[0].Textures {
			got = append(got, res{tx.Path, tx.Unresolved})
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("textures %+v, want %+v", got, want)
		}
	}
	check(h, want)
	gm := glTFMaterial(t, doc, "body.mtl")
	if gm.AlphaMode != qgltf.AlphaMask || gm.NormalTexture != nil || gm.PBRMetallicRoughness.BaseColorTexture == nil {
		t.Fatalf("glTF material %+v", gm)
	}
	if c := *gm.PBRMetallicRoughness.BaseColorFactor; float32(c[1]) != float32(128)/255 || c[3] != 1 {
		t.Errorf("base colour factor %v", c)
	}
	dds, _ := os.ReadFile(filepath.Join(mod, "texture", "common", "model", "tank", "hull.dds"))
	src, err := texture.Decode("hull.dds", bytes.NewReader(dds), int64(len(dds)))
	if err != nil {
		t.Fatal(err)
	}
	if got := embeddedPix(t, doc, glb, *doc.Textures[gm.PBRMetallicRoughness.BaseColorTexture.Index].Source); !bytes.Equal(got, src.Pix) {
		t.Errorf("embedded base colour differs from the decoded texture")
	}

	// The OBJ's material library points at the textures' PNGs as the
	// mount shows them, from inside the mesh's folder.
	_, lib, err := m.OBJFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"\nmap_Kd ../../../texture/common/model/tank/hull.dds.png\n",
		"\nmap_d ../../../texture/common/model/tank/hull.dds.png\n",
	} {
		if !bytes.Contains(lib, []byte(line)) {
			t.Errorf("material library lacks %q:\n%s", line, lib)
		}
	}
	if bytes.Contains(lib, []byte("map_Bump")) {
		t.Errorf("map_Bump for an unresolved normal map:\n%s", lib)
	}

	m.Limits.AssetPaths = []string{base}
	h, doc, _ = convertFixture(t, m)
	want[1] = res{filepath.ToSlash(filepath.Join(base, "texture", "model", "common_nm.dds")), nil}
	check(h, want)
	if glTFMaterial(t, doc, "body.mtl").NormalTexture == nil {
		t.Errorf("the base game's normal map is not embedded")
	}
	if _, lib, err = m.OBJFiles(context.Background()); err != nil || !bytes.Contains(lib, []byte("\nmap_Bump "+filepath.Join(base, "texture", "model", "common_nm.dds")+"\n")) {
		t.Errorf("no map_Bump naming the base game's file (err %v):\n%s", err, lib)
	}

	m.Limits.AssetPaths = nil
	m.Tree = filepath.Dir(mesh)
	h, _, _ = convertFixture(t, m)
	want[0] = res{"", nil}
	want[1] = res{"", nil}
	check(h, want)
}

// embeddedPix decodes glTF image i of glb into NRGBA pixels.
func embeddedPix(t *testing.T, doc *qgltf.Document, glb []byte, i int) []byte {
	t.Helper()
	bv := doc.BufferViews[*doc.Images[i].BufferView]
	js := int(uint32(glb[12]) | uint32(glb[13])<<8 | uint32(glb[14])<<16 | uint32(glb[15])<<24)
	bin := glb[20+js+8:]
	p, err := png.Decode(bytes.NewReader(bin[bv.ByteOffset : bv.ByteOffset+bv.ByteLength]))
	if err != nil {
		t.Fatal(err)
	}
	n := image.NewNRGBA(p.Bounds())
	draw.Draw(n, n.Rect, p, p.Bounds().Min, draw.Src)
	return n.Pix
}

func glTFMaterial(t *testing.T, doc *qgltf.Document, name string) *qgltf.Material {
	t.Helper()
	for _, m := range doc.Materials {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("no glTF material %q", name)
	return nil
}

// TestConvertNarrowedByTextures: the files convert writes are readable by
// others only when every texture and material file they were made from is.
func TestConvertNarrowedByTextures(t *testing.T) {
	mod, mesh, _ := gemTree(t)
	m, err := outputs.Open(mesh)
	if err != nil || m == nil {
		t.Fatal(m, err)
	}
	root := filepath.Dir(mod)
	mode := func() os.FileMode {
		out := filepath.Join(t.TempDir(), "body")
		tr := vfstest.Tree(t, root, &m.Limits)
		if err := vfstest.WriteFolder(t, tr, vfstest.Name(t, root, m.Path), out); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(out, "body.glb"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	if got := mode(); got&0o044 != 0o044 {
		t.Fatalf("body.glb mode %v with every source readable", got)
	}
	if err := os.Chmod(filepath.Join(mod, "texture", "common", "model", "tank", "hull.dds"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := mode(); got&0o044 != 0 {
		t.Errorf("body.glb mode %v, made from a texture only its owner reads", got)
	}
}

// TestTextureLinkOutOfRoot: a texture that is a symbolic link leading out
// of its asset root is not read: it stays unresolved, nothing is embedded.
func TestTextureLinkOutOfRoot(t *testing.T) {
	mod, mesh, _ := gemTree(t)
	secret := filepath.Join(t.TempDir(), "secret.dds")
	put(t, secret, bc1(t, 8, 8, 9))
	hull := filepath.Join(mod, "texture", "common", "model", "tank", "hull.dds")
	if err := os.Remove(hull); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, hull); err != nil {
		t.Fatal(err)
	}
	m, err := outputs.Open(mesh)
	if err != nil || m == nil {
		t.Fatal(m, err)
	}
	m.Tree = filepath.Dir(mod)
	h, doc, _ := convertFixture(t, m)
	if tx := h.Materials[0].Textures[0]; tx.Path != "" || len(tx.Unresolved) != 2 {
		t.Errorf("linked texture: %+v", tx)
	}
	if glTFMaterial(t, doc, "body.mtl").PBRMetallicRoughness.BaseColorTexture != nil {
		t.Errorf("the linked file is embedded")
	}
}
