package browse

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/vfs/vfstest"
	"github.com/qmuntal/gltf"
	"github.com/qmuntal/gltf/modeler"
)

// quad is a unit square in the XY plane, centred on the origin, as two
// triangles of the indices 0 1 2, 0 2 3.
var quad = [][3]float32{{-0.5, -0.5, 0}, {0.5, -0.5, 0}, {0.5, 0.5, 0}, {-0.5, 0.5, 0}}

// writeShapes writes a GLB exercising what the viewer reads, each piece at
// a place only a right reading puts it:
//   - u8 indices, no normals, a node's translation (-3, 0, 0): x from -3.5;
//   - u32 indices, POSITION and NORMAL interleaved in one strided
//     bufferView, a node's matrix scaling by 2: x and y within ±1;
//   - no indices, a child (translation (0, 1, 0)) of a node turned 90°
//     about Z and moved (3, 0, 0): centred on (2, 0, 0), x up to 2.5;
//   - a skinned mesh at (0, 3, 0) as stored, on a node moved by (100, 0,
//     0) that glTF ignores for skinned meshes: y up to 3.5, x never 100;
//   - a MASK material with a 2×1 texture, its left texel transparent.
//
// The scene's bounding box is then (-3.5, -1, 0)–(2.5, 3.5, 0).
func writeShapes(t *testing.T, path string) {
	t.Helper()
	doc := gltf.NewDocument()
	prim := func(attrs gltf.PrimitiveAttributes, indices *int, material *int) int {
		doc.Meshes = append(doc.Meshes, &gltf.Mesh{Primitives: []*gltf.Primitive{{Attributes: attrs, Indices: indices, Material: material}}})
		return len(doc.Meshes) - 1
	}
	ptr := func(i int) *int { return &i }

	a := prim(gltf.PrimitiveAttributes{gltf.POSITION: modeler.WritePosition(doc, quad)},
		ptr(modeler.WriteAccessor(doc, gltf.TargetElementArrayBuffer, []uint8{0, 1, 2, 0, 2, 3})), nil)
	normals := [][3]float32{{0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {0, 0, 1}}
	il, err := modeler.WriteAccessorsInterleaved(doc, quad, normals)
	if err != nil {
		t.Fatal(err)
	}
	b := prim(gltf.PrimitiveAttributes{gltf.POSITION: il[0], gltf.NORMAL: il[1]},
		ptr(modeler.WriteAccessor(doc, gltf.TargetElementArrayBuffer, []uint32{0, 1, 2, 0, 2, 3})), nil)
	flat := [][3]float32{quad[0], quad[1], quad[2], quad[0], quad[2], quad[3]}
	c := prim(gltf.PrimitiveAttributes{gltf.POSITION: modeler.WritePosition(doc, flat)}, nil, nil)
	up := make([][3]float32, 4)
	for i, p := range quad {
		up[i] = [3]float32{p[0], p[1] + 3, p[2]}
	}
	d := prim(gltf.PrimitiveAttributes{gltf.POSITION: modeler.WritePosition(doc, up)},
		ptr(modeler.WriteIndices(doc, []uint16{0, 1, 2, 0, 2, 3})), nil)

	tex := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	tex.SetNRGBA(0, 0, color.NRGBA{255, 0, 0, 0})
	tex.SetNRGBA(1, 0, color.NRGBA{0, 200, 0, 255})
	var pngb bytes.Buffer
	if err := png.Encode(&pngb, tex); err != nil {
		t.Fatal(err)
	}
	img, err := modeler.WriteImage(doc, "mask.png", "image/png", &pngb)
	if err != nil {
		t.Fatal(err)
	}
	doc.Samplers = []*gltf.Sampler{{MagFilter: gltf.MagNearest, MinFilter: gltf.MinNearest}}
	doc.Textures = []*gltf.Texture{{Source: ptr(img), Sampler: ptr(0)}}
	doc.Materials = []*gltf.Material{{AlphaMode: gltf.AlphaMask, AlphaCutoff: gltf.Float(0.5), DoubleSided: true,
		PBRMetallicRoughness: &gltf.PBRMetallicRoughness{BaseColorTexture: &gltf.TextureInfo{Index: 0}}}}
	uv := modeler.WriteTextureCoord(doc, [][2]float32{{0, 0}, {1, 0}, {1, 1}, {0, 1}})
	small := make([][3]float32, 4)
	for i, p := range quad {
		small[i] = [3]float32{p[0] * 0.5, p[1]*0.5 + 1.5, p[2]}
	}
	e := prim(gltf.PrimitiveAttributes{gltf.POSITION: modeler.WritePosition(doc, small), gltf.TEXCOORD_0: uv},
		ptr(modeler.WriteIndices(doc, []uint16{0, 1, 2, 0, 2, 3})), ptr(0))

	doc.Nodes = []*gltf.Node{
		{Mesh: ptr(a), Translation: [3]float64{-3, 0, 0}},
		{Mesh: ptr(b), Matrix: [16]float64{2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1}},
		{Rotation: [4]float64{0, 0, math.Sqrt2 / 2, math.Sqrt2 / 2}, Translation: [3]float64{3, 0, 0}, Children: []int{3}},
		{Mesh: ptr(c), Translation: [3]float64{0, 1, 0}},
		{Mesh: ptr(d), Skin: ptr(0), Translation: [3]float64{100, 0, 0}},
		{Name: "joint"},
		{Mesh: ptr(e)},
	}
	doc.Skins = []*gltf.Skin{{Joints: []int{5}}}
	doc.Scenes = []*gltf.Scene{{Nodes: []int{0, 1, 2, 4, 5, 6}}}
	doc.Scene = ptr(0)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := gltf.SaveBinary(doc, path); err != nil {
		t.Fatal(err)
	}
}

// TestViewerReads has Chromium draw writeShapes' GLB: the box it reports
// says where it placed each piece, the status what it drew.
func TestViewerReads(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	writeShapes(t, filepath.Join(dir, "shapes.ply", "shapes.glb"))
	bad := gltf.NewDocument()
	bad.Meshes = []*gltf.Mesh{{Primitives: []*gltf.Primitive{{
		Attributes: gltf.PrimitiveAttributes{gltf.POSITION: modeler.WritePosition(bad, quad)},
		Indices:    gltf.Index(modeler.WriteIndices(bad, []uint16{0, 1, 9})),
	}}}}
	bad.Nodes = []*gltf.Node{{Mesh: gltf.Index(0)}}
	bad.Scenes = []*gltf.Scene{{Nodes: []int{0}}}
	if err := os.MkdirAll(filepath.Join(dir, "bad.ply"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := gltf.SaveBinary(bad, filepath.Join(dir, "bad.ply", "bad.glb")); err != nil {
		t.Fatal(err)
	}
	srv := serveDir(t, dir)

	d := startDevtools(t, bin, 900, 700)
	d.load(srv.URL+"/shapes.ply/", viewerDone)
	var got struct {
		State, Status string
		Box           [2][3]float64
	}
	d.eval(`(() => { const c = document.getElementById('view');
		return {state: c.dataset.state, status: document.getElementById('status').textContent,
			box: JSON.parse(c.dataset.box || '[[0,0,0],[0,0,0]]')}; })()`, &got)
	t.Logf("state %s, status %q, box %v", got.State, got.Status, got.Box)
	if got.State != "drawn" {
		t.Fatalf("not drawn: %s", got.Status)
	}
	if want := "5 primitives, 10 triangles, 1 texture"; got.Status != want {
		t.Errorf("status %q, want %q", got.Status, want)
	}
	// The MASK quad shows its green texel and drops its transparent red
	// one; the rest is white lit grey.
	var b struct{ X, Y, W, H float64 }
	d.eval(`(() => { const r = document.getElementById('view').getBoundingClientRect();
		return {x: r.x, y: r.y, w: r.width, h: r.height}; })()`, &b)
	img := d.shot(image.Rect(int(b.X), int(b.Y), int(b.X+b.W), int(b.Y+b.H)-40))
	green, red := 0, 0
	for i := 0; i+3 < len(img.Pix); i += 4 {
		r, g := int(img.Pix[i]), int(img.Pix[i+1])
		switch {
		case g > 40 && g > 2*r:
			green++
		case r > 40 && r > 2*g:
			red++
		}
	}
	t.Logf("MASK quad: %d green pixels, %d red", green, red)
	if green < 100 || red > 0 {
		t.Errorf("MASK quad: %d green pixels, %d red: want its green half only", green, red)
	}
	want := [2][3]float64{{-3.5, -1, 0}, {2.5, 3.5, 0}}
	for i := range want {
		for k := range want[i] {
			if math.Abs(got.Box[i][k]-want[i][k]) > 1e-5 {
				t.Errorf("box %v, want %v", got.Box, want)
			}
		}
	}

	// A GLB whose index is past its vertices is refused, naming them, and
	// stays refused when the page redraws (a resize).
	d.load(srv.URL+"/bad.ply/", viewerDone)
	d.do("Emulation.setDeviceMetricsOverride", map[string]any{"width": 800, "height": 600, "deviceScaleFactor": 1, "mobile": false}, nil)
	d.frame()
	d.eval(`(() => { const c = document.getElementById('view');
		return {state: c.dataset.state, status: document.getElementById('status').textContent}; })()`, &got)
	if want := "could not show bad.glb: mesh 0: index 9 at 2 past the 4 vertices"; got.State != "error" || got.Status != want {
		t.Errorf("bad.glb: state %s, status %q, want error, %q", got.State, got.Status, want)
	}
}

// TestViewerDrawsTestdata converts every mesh and model of testdata/ as
// `meshfs convert` does and has the viewer draw each .glb of each folder:
// none may fail.
func TestViewerDrawsTestdata(t *testing.T) {
	bin := chromium(t)
	out := t.TempDir()
	root := filepath.Join(decodetest.RepoRoot(), "testdata")
	tr := vfstest.Tree(t, root, nil)
	folders := vfstest.Meshes(t, tr, "")
	for _, rel := range folders {
		// A broken mesh's folder holds error.txt and no .glb: testdata/
		// has none.
		if err := vfstest.WriteFolder(t, tr, rel, filepath.Join(out, filepath.FromSlash(rel))); err != nil {
			t.Errorf("%s: %v", rel, err)
		}
	}
	srv := serveDir(t, out)
	d := startDevtools(t, bin, 640, 480)
	glbs := 0
	for _, rel := range folders {
		d.load(srv.URL+urlOf(rel)+"/", `document.readyState === 'complete'`)
		var got []struct{ Name, State, Status string }
		// Each .glb of the folder in turn, by its button.
		d.eval(`(async () => {
			const c = document.getElementById('view'), out = [];
			for (const b of document.querySelectorAll('button.glb')) {
				c.dataset.state = 'asked';
				b.click();
				while (!['drawn', 'error'].includes(c.dataset.state)) await new Promise(r => setTimeout(r, 10));
				out.push({name: b.textContent, state: c.dataset.state, status: document.getElementById('status').textContent});
			}
			return out; })()`, &got)
		for _, g := range got {
			glbs++
			if g.State != "drawn" {
				t.Errorf("%s/%s: %s", rel, g.Name, g.Status)
			}
		}
	}
	t.Logf("%d folders, %d .glb files drawn", len(folders), glbs)
	if glbs < len(folders) {
		t.Errorf("%d .glb files for %d mesh folders", glbs, len(folders))
	}
}
