package unigine

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/texture"
)

// yardDir is the yard fixture: a tiny UNIGINE project's data folder whose
// yard.world places a paved ground and seven crates (README's models
// sheet draws it).
const yardDir = fixtureDir + "/yard"

// yardGUID is the fixture's GUID of an asset: 40 hex digits derived from
// its name, so that regenerating the fixture writes the same ones.
func yardGUID(name string) string {
	sum := sha1.Sum([]byte("meshfs yard fixture: " + name))
	return hex.EncodeToString(sum[:])
}

// yardMeta is the XML .meta the editor keeps beside a source asset.
func yardMeta(name, typ string) string {
	return fmt.Sprintf("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<asset version=\"2.15.0.1\">\n\t<guid>%s</guid>\n\t<type>%s</type>\n</asset>\n", yardGUID(name), typ)
}

// yardMat is a .mat (guid attribute as its .meta's) with an albedo texture
// named by GUID, or inheriting one through base.
func yardMat(name, base, albedo, params string) string {
	s := fmt.Sprintf("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<material version=\"2.15.0.1\" guid=\"%s\"", yardGUID(name))
	if base != "" {
		s += fmt.Sprintf(" base_material=\"%s\"", yardGUID(base))
	}
	s += ">\n"
	if albedo != "" {
		s += fmt.Sprintf("\t<texture name=\"albedo\" wrap=\"repeat\">guid://%s</texture>\n", yardGUID(albedo))
	}
	return s + params + "</material>\n"
}

// yardHash is a small integer hash of a pixel, the textures' grain.
func yardHash(x, y, k int) int {
	h := uint32(x*73856093 ^ y*19349663 ^ k*83492791)
	h ^= h >> 13
	h *= 0x5bd1e995
	h ^= h >> 15
	return int(h % 256)
}

func clampByte(v int) uint8 { return uint8(max(0, min(255, v))) }

// crateImage is a 64×64 crate side: a dark frame, a diagonal brace and
// boards between, with grain.
func crateImage() *image.NRGBA {
	const n = 64
	img := image.NewNRGBA(image.Rect(0, 0, n, n))
	for y := range n {
		for x := range n {
			board, gap := y/12, y%12 == 0
			r, g, b := 168+8*(board%3), 118+6*(board%3), 62
			switch {
			case x < 7 || y < 7 || x >= n-7 || y >= n-7 || abs(x-y) < 5:
				r, g, b = 120, 78, 38 // frame and brace
			case gap:
				r, g, b = 70, 45, 22
			}
			grain := int(12*math.Sin(float64(x)/3+float64(board)*1.7)) + yardHash(x, y, 1)%14 - 7
			img.SetNRGBA(x, y, color.NRGBA{clampByte(r + grain), clampByte(g + grain), clampByte(b + grain/2), 255})
		}
	}
	return img
}

// pavingImage is 64×64 of 2×2 sandstone slabs with grout between.
func pavingImage() *image.NRGBA {
	const n = 64
	slabs := [4][3]int{{178, 168, 146}, {158, 154, 142}, {170, 158, 136}, {150, 148, 136}}
	img := image.NewNRGBA(image.Rect(0, 0, n, n))
	for y := range n {
		for x := range n {
			c := slabs[(y/32)*2+x/32]
			if x%32 < 2 || y%32 < 2 {
				c = [3]int{82, 80, 74}
			}
			v := yardHash(x, y, 2)%16 - 8
			img.SetNRGBA(x, y, color.NRGBA{clampByte(c[0] + v), clampByte(c[1] + v), clampByte(c[2] + v), 255})
		}
	}
	return img
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// groundFile is an 8 m square at z 0 (a 9×9 vertex sheet), its UVs
// repeating the paving 4 times a side.
func groundFile() *File {
	s := grid(9, 8)
	s.Name = "ground"
	for i := range s.Targets[0].Positions {
		s.Targets[0].Positions[i][2] = 0
		s.UV0[i] = [2]float32{s.UV0[i][0] * 4, s.UV0[i][1] * 4}
	}
	s.Bounds = BoundsOf(s.Targets[0].Positions)
	s.LightmapChannel, s.LightmapResolution = 1, 4
	f := &File{Magic: MagicMS12, Surfaces: []Surface{s}}
	f.Bounds = fileBounds(f.Surfaces)
	return f
}

// crateFile is a 1 m crate standing on z 0, ms12 as the skyrunner
// project's runtime meshes.
func crateFile() *File {
	s := cube(1, 0.5)
	s.Name = "crate"
	s.LightmapChannel, s.LightmapResolution = 1, 3
	f := &File{Magic: MagicMS12, Surfaces: []Surface{s}}
	f.Bounds = fileBounds(f.Surfaces)
	return f
}

// yardNum writes a float32 as the editor does (shortest form; no −0).
func yardNum(v float64) string {
	if v == 0 {
		v = 0
	}
	return strconv.FormatFloat(float64(float32(v)), 'g', -1, 32)
}

// yardMatrix writes a column-major 4×4.
func yardMatrix(m []float64) string {
	f := make([]string, len(m))
	for i, v := range m {
		f[i] = yardNum(v)
	}
	return strings.Join(f, " ")
}

// yardTransform is the column-major 4×4 of a turn of deg about Z, a
// uniform scale, then a move to t (Z up).
func yardTransform(deg, scale float64, t [3]float64) string {
	c, s := math.Cos(deg*math.Pi/180)*scale, math.Sin(deg*math.Pi/180)*scale
	if deg == 90 {
		c, s = 0, scale
	}
	return yardMatrix([]float64{c, s, 0, 0, -s, c, 0, 0, 0, 0, scale, 0, t[0], t[1], t[2], 1})
}

// yardCrate is one ObjectMeshStatic crate: by the mesh's GUID, with
// material mat (by its GUID).
type yardCrate struct {
	name, mat  string
	deg, scale float64
	at         [3]float64
}

// yardRoots are the world's crates at its root; TestYardWorld
// (export/outputs) composes their positions by hand.
var yardRoots = []yardCrate{
	{"crate_a", "crate", 0, 1, [3]float64{-2, -1.5, 0}},
	{"crate_b", "crate", 30, 1, [3]float64{-0.8, -1.7, 0}},
	{"crate_c", "crate", 15, 1, [3]float64{-2, -1.5, 1}}, // on crate_a
	{"crate_big", "crate", -20, 1.5, [3]float64{2.2, -1.8, 0}},
}

// The pallet is a NodeDummy at (1.2, 1.4, 0) turned 90° about Z: a child's
// local x is the world's y.
var yardPallet = []yardCrate{
	{"crate_d", "crate_red", 0, 1.2, [3]float64{0, 0, 0}},
	{"crate_e", "crate_red", 10, 1, [3]float64{1.4, 0, 0}},
	{"crate_f", "crate", 45, 0.8, [3]float64{0, 0, 1.2}}, // on crate_d
}

func yardWorld() string {
	var b strings.Builder
	id := 1000
	crate := func(c yardCrate, indent string) {
		id++
		fmt.Fprintf(&b, "%s<node type=\"ObjectMeshStatic\" id=\"%d\" name=\"%s\">\n", indent, id, c.name)
		fmt.Fprintf(&b, "%s\t<mesh_name>guid://%s</mesh_name>\n", indent, yardGUID("crate.mesh"))
		fmt.Fprintf(&b, "%s\t<surface name=\"crate\" physics_friction=\"1\" physics_restitution=\"1\" material=\"%s\"/>\n", indent, yardGUID(c.mat+".mat"))
		fmt.Fprintf(&b, "%s\t<transform>%s</transform>\n", indent, yardTransform(c.deg, c.scale, c.at))
		fmt.Fprintf(&b, "%s</node>\n", indent)
	}
	b.WriteString("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<world version=\"2.15.0.1\">\n")
	b.WriteString("\t<render>\n\t\t<exposure_min_luminance>0.5</exposure_min_luminance>\n\t</render>\n")
	b.WriteString("\t<editor>\n")
	// The ground by its path beneath the data folder, the crates by GUID:
	// a world names meshes both ways.
	fmt.Fprintf(&b, "\t\t<node type=\"ObjectMeshStatic\" id=\"%d\" name=\"ground\">\n", id)
	b.WriteString("\t\t\t<mesh_name>meshes/ground.mesh</mesh_name>\n")
	fmt.Fprintf(&b, "\t\t\t<surface name=\"ground\" material=\"%s\"/>\n", yardGUID("ground.mat"))
	fmt.Fprintf(&b, "\t\t\t<transform>%s</transform>\n\t\t</node>\n", yardTransform(0, 1, [3]float64{}))
	for _, c := range yardRoots {
		crate(c, "\t\t")
	}
	id++
	fmt.Fprintf(&b, "\t\t<node type=\"NodeDummy\" id=\"%d\" name=\"pallet\">\n", id)
	fmt.Fprintf(&b, "\t\t\t<transform>%s</transform>\n", yardTransform(90, 1, [3]float64{1.2, 1.4, 0}))
	for _, c := range yardPallet {
		crate(c, "\t\t\t")
	}
	b.WriteString("\t\t</node>\n")
	id++
	fmt.Fprintf(&b, "\t\t<node type=\"LightWorld\" id=\"%d\" name=\"sun\">\n", id)
	b.WriteString("\t\t\t<color>1 0.95 0.85 1</color>\n\t\t\t<intensity>2</intensity>\n")
	// Turned 40° about X: the sun's −Z leans towards +Y.
	c, s := math.Cos(40*math.Pi/180), math.Sin(40*math.Pi/180)
	fmt.Fprintf(&b, "\t\t\t<transform>%s</transform>\n\t\t</node>\n", yardMatrix([]float64{1, 0, 0, 0, 0, c, s, 0, 0, -s, c, 0, 0, 0, 10, 1}))
	b.WriteString("\t</editor>\n</world>\n")
	return b.String()
}

// yardFiles are the yard project's files (path beneath yardDir → bytes).
func yardFiles(t testing.TB) map[string][]byte {
	enc := func(f *File) []byte {
		b, err := Encode(f)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	img := func(m *image.NRGBA) []byte {
		b, err := texture.EncodePNG(&texture.Image{NRGBA: m})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const (
		m = "data/meshes/"
		x = "data/meshes/materials/"
		p = "data/meshes/textures/"
	)
	return map[string][]byte{
		m + "ground.mesh":      enc(groundFile()),
		m + "ground.mesh.meta": []byte(yardMeta("ground.mesh", "mesh")),
		m + "crate.mesh":       enc(crateFile()),
		m + "crate.mesh.meta":  []byte(yardMeta("crate.mesh", "mesh")),
		// Found beside the meshes by surface name too (meshes/materials/NAME.mat).
		x + "ground.mat":      []byte(yardMat("ground.mat", "", "paving.png", "\t<parameter name=\"roughness\">0.9</parameter>\n")),
		x + "ground.mat.meta": []byte(yardMeta("ground.mat", "material")),
		x + "crate.mat":       []byte(yardMat("crate.mat", "", "crate.png", "\t<parameter name=\"roughness\">0.8</parameter>\n")),
		x + "crate.mat.meta":  []byte(yardMeta("crate.mat", "material")),
		// The red crates inherit crate.mat's albedo texture, tinted.
		x + "crate_red.mat":      []byte(yardMat("crate_red.mat", "crate.mat", "", "\t<parameter name=\"albedo_color\">1 0.45 0.35 1</parameter>\n")),
		x + "crate_red.mat.meta": []byte(yardMeta("crate_red.mat", "material")),
		p + "crate.png":          img(crateImage()),
		p + "crate.png.meta":     []byte(yardMeta("crate.png", "texture")),
		p + "paving.png":         img(pavingImage()),
		p + "paving.png.meta":    []byte(yardMeta("paving.png", "texture")),
		"data/yard.world":        []byte(yardWorld()),
	}
}

// TestFixturesYard checks that testdata/unigine/yard is what yardFiles
// makes now, and holds nothing else; -update rewrites it.
func TestFixturesYard(t *testing.T) {
	files := yardFiles(t)
	var want []string
	for rel, b := range files {
		want = append(want, rel)
		decodetest.Golden(t, filepath.Join(yardDir, filepath.FromSlash(rel)), b, *update, "go test ./decode/unigine -run TestFixtures -update")
	}
	var have []string
	err := filepath.WalkDir(yardDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(yardDir, p)
			have = append(have, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	slices.Sort(have)
	if slices.Equal(have, want) {
		return
	}
	if !*update {
		t.Errorf("%s holds %v, the generator writes %v", yardDir, have, want)
		return
	}
	for _, h := range have {
		if _, ok := files[h]; !ok {
			if err := os.Remove(filepath.Join(yardDir, filepath.FromSlash(h))); err != nil {
				t.Fatal(err)
			}
		}
	}
}
