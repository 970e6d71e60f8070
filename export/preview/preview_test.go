package preview

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode"
)

// cube is a unit cube centred at the origin, counter-clockwise outward.
func cube() decode.Primitive {
	var p decode.Primitive
	for i := range 8 {
		p.Positions = append(p.Positions, [3]float32{float32(i&1) - 0.5, float32(i>>1&1) - 0.5, float32(i>>2&1) - 0.5})
	}
	// Each face as a quad a, b, c, d counter-clockwise from outside.
	faces := [][4]uint32{
		{1, 3, 7, 5}, {0, 4, 6, 2}, // +X, −X
		{2, 6, 7, 3}, {0, 1, 5, 4}, // +Y, −Y
		{4, 5, 7, 6}, {0, 2, 3, 1}, // +Z, −Z
	}
	for _, f := range faces {
		p.Indices = append(p.Indices, f[0], f[1], f[2], f[0], f[2], f[3])
	}
	return p
}

// facing is a square of half side s facing the camera, centred depth
// units toward the viewer from the origin, counter-clockwise as seen
// (ccw false: clockwise), with UVs whose origin is its top-left corner.
func facing(s, depth float64, ccw bool) decode.Primitive {
	right, up, back := axes()
	corner := func(a, b float64) [3]float32 {
		var v [3]float32
		for c := range 3 {
			v[c] = float32(a*s*right[c] + b*s*up[c] + depth*back[c])
		}
		return v
	}
	p := decode.Primitive{
		Positions: [][3]float32{corner(-1, -1), corner(1, -1), corner(1, 1), corner(-1, 1)},
		UVs:       [][][2]float32{{{0, 1}, {1, 1}, {1, 0}, {0, 0}}},
		Indices:   []uint32{0, 1, 2, 0, 2, 3},
	}
	if !ccw {
		p.Indices = []uint32{0, 2, 1, 0, 3, 2}
	}
	return p
}

func sceneOf(mats []decode.Material, prims ...decode.Primitive) *decode.Scene {
	return &decode.Scene{Meshes: []decode.Mesh{{Name: "m", Primitives: prims}}, Materials: mats}
}

func render(t *testing.T, s *decode.Scene, size int) *image.NRGBA {
	t.Helper()
	img, err := Render(s, size)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != size || b.Dy() != size {
		t.Fatalf("picture is %v, want %d×%d", b, size, size)
	}
	return img
}

func covered(img *image.NRGBA) int {
	n := 0
	for i := 3; i < len(img.Pix); i += 4 {
		if img.Pix[i] != 0 {
			n++
		}
	}
	return n
}

// TestCubeSilhouette: seen along (1, 1, 1), a unit cube is a regular hexagon
// of area √3; its circumscribed sphere (radius √3/2) fills the square, whose
// area is then 3, so the hexagon covers √3/3 of the pixels.
func TestCubeSilhouette(t *testing.T) {
	const size = 256
	img := render(t, sceneOf(nil, cube()), size)
	got := float64(covered(img))
	want := size * size * math.Sqrt(3) / 3
	if math.Abs(got-want)/want > 0.02 {
		t.Fatalf("cube covers %.0f pixels, hexagon area %.0f (%.2f%% off)", got, want, 100*(got-want)/want)
	}
	t.Logf("cube covers %.0f pixels, hexagon area %.1f", got, want)
	// The picture's corners are outside the hexagon, its centre inside.
	for _, p := range []image.Point{{0, 0}, {size - 1, 0}, {0, size - 1}, {size - 1, size - 1}} {
		if img.NRGBAAt(p.X, p.Y).A != 0 {
			t.Fatalf("corner %v drawn", p)
		}
	}
	if img.NRGBAAt(size/2, size/2).A != 255 {
		t.Fatalf("centre not drawn")
	}
}

// TestLight: the cube's three faces seen are lit, each differently (their
// centres are at (0.30, 0.62), (0.50, 0.26), (0.70, 0.62) of the side), and
// vertex normals, when given, are the ones lit.
func TestLight(t *testing.T) {
	const size = 100
	img := render(t, sceneOf(nil, cube()), size)
	var greys []uint8
	for _, p := range []image.Point{{30, 62}, {50, 26}, {70, 62}} {
		c := img.NRGBAAt(p.X, p.Y)
		if c.A != 255 || c.R != c.G || c.G != c.B {
			t.Fatalf("face at %v is %v, want opaque grey", p, c)
		}
		greys = append(greys, c.R)
	}
	if greys[0] == greys[1] || greys[1] == greys[2] || greys[0] == greys[2] {
		t.Errorf("the three faces seen are lit %v, want three shades", greys)
	}
	// Normals turned away from the camera (and so from both lights, which
	// come from its side): only the ambient light is left.
	lit := render(t, sceneOf(nil, facing(1, 0, true)), 32).NRGBAAt(16, 16)
	away := facing(1, 0, true)
	_, _, back := axes()
	n := [3]float32{float32(-back[0]), float32(-back[1]), float32(-back[2])}
	away.Normals = [][3]float32{n, n, n, n}
	dark := render(t, sceneOf(nil, away), 32).NRGBAAt(16, 16)
	if !(dark.R < lit.R/2) {
		t.Errorf("square lit %v with its normals toward the camera, %v away from it", lit, dark)
	}
}

// TestZBuffer: a small near red square drawn first, then a larger far blue
// one: the red stays in front.
func TestZBuffer(t *testing.T) {
	mats := []decode.Material{{BaseColor: [4]float32{1, 0, 0, 1}}, {BaseColor: [4]float32{0, 0, 1, 1}}}
	red, blue := facing(0.5, 1, true), facing(1, -1, true)
	red.Material, blue.Material = 0, 1
	for _, order := range [][]decode.Primitive{{red, blue}, {blue, red}} {
		img := render(t, sceneOf(mats, order...), 64)
		if c := img.NRGBAAt(32, 32); !(c.R > 100 && c.B == 0) {
			t.Fatalf("centre is %v, want the near red", c)
		}
		// The blue spans rows y0 to 63 − y0, the red the middle half of them.
		_, _, y0, _ := extent(img)
		y := y0 + (32-y0)/4
		if c := img.NRGBAAt(32, y); !(c.B > 100 && c.R == 0) {
			t.Fatalf("(32, %d) is %v, want the far blue around the red", y, c)
		}
	}
}

// TestBackFaces: a square seen from its back is culled unless its material
// is double-sided; under a mirroring transform the other winding is front.
func TestBackFaces(t *testing.T) {
	single := []decode.Material{{}}
	double := []decode.Material{{DoubleSided: true}}
	cases := []struct {
		name   string
		ccw    bool
		mats   []decode.Material
		mirror bool
		drawn  bool
	}{
		{"front", true, single, false, true},
		{"back", false, single, false, false},
		{"back double-sided", false, double, false, true},
		{"mirrored front", false, single, true, true},
		{"mirrored back", true, single, true, false},
	}
	for _, c := range cases {
		p := facing(1, 0, c.ccw)
		s := sceneOf(c.mats, p)
		if c.mirror {
			// The mesh's positions mirrored in X, and the mesh's transform
			// mirroring them back: the world winding is p's.
			for k := range p.Positions {
				p.Positions[k][0] = -p.Positions[k][0]
			}
			s.Meshes[0].Transform = decode.TRS{Rotation: [4]float32{0, 0, 0, 1}, Scale: [3]float32{-1, 1, 1}}
		}
		img := render(t, s, 32)
		if n := covered(img); (n > 0) != c.drawn {
			t.Errorf("%s: %d pixels drawn, want drawn %v", c.name, n, c.drawn)
		}
		// Double-sided back faces are lit from their own side: as bright
		// as the front.
		if c.name == "back double-sided" {
			front := render(t, sceneOf(single, facing(1, 0, true)), 32)
			if a, b := img.NRGBAAt(16, 16), front.NRGBAAt(16, 16); a != b {
				t.Errorf("back of a double-sided square is %v, its front %v", a, b)
			}
		}
	}
}

// quadrants is a 2×2 texture: red, green on top, blue, white below; alpha
// 0 in the top row when cut.
func quadrants(cut bool) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	a := uint8(255)
	if cut {
		a = 0
	}
	img.SetNRGBA(0, 0, color.NRGBA{255, 0, 0, a})
	img.SetNRGBA(1, 0, color.NRGBA{0, 255, 0, a})
	img.SetNRGBA(0, 1, color.NRGBA{0, 0, 255, 255})
	img.SetNRGBA(1, 1, color.NRGBA{255, 255, 255, 255})
	return img
}

// TestTexture: each quadrant of a square shows the texel its UVs reach,
// UV (0, 0) at the square's top-left, lit alike.
func TestTexture(t *testing.T) {
	mats := []decode.Material{{BaseColorMap: &decode.Image{Pixels: quadrants(false)}}}
	img := render(t, sceneOf(mats, facing(1, 0, true)), 64)
	// The square's half side is 1 and the sphere's radius √2: it spans
	// 64/√2 ≈ 45 pixels about the centre; quadrant centres at ±11.
	white := img.NRGBAAt(43, 43)
	if !(white.R > 100 && white.R == white.G && white.G == white.B) {
		t.Fatalf("bottom-right is %v, want lit white", white)
	}
	l := white.R
	for _, c := range []struct {
		x, y int
		want color.NRGBA
	}{
		{21, 21, color.NRGBA{l, 0, 0, 255}},
		{43, 21, color.NRGBA{0, l, 0, 255}},
		{21, 43, color.NRGBA{0, 0, l, 255}},
	} {
		if got := img.NRGBAAt(c.x, c.y); got != c.want {
			t.Errorf("(%d, %d) is %v, want %v", c.x, c.y, got, c.want)
		}
	}
	// A base colour and vertex colours multiply the texture.
	p := facing(1, 0, true)
	p.Colors = [][][4]float32{{{0.5, 1, 1, 1}, {0.5, 1, 1, 1}, {0.5, 1, 1, 1}, {0.5, 1, 1, 1}}}
	mats[0].BaseColor = [4]float32{1, 0.5, 1, 1}
	img = render(t, sceneOf(mats, p), 64)
	if got, want := img.NRGBAAt(43, 43), (color.NRGBA{to8(float32(l) / 255 / 2), to8(float32(l) / 255 / 2), l, 255}); absDiff(got, want) > 1 {
		t.Errorf("tinted white is %v, want %v", got, want)
	}
}

// TestTexturePNG: an image given only as PNG is drawn as its pixels are;
// one whose PNG does not decode leaves its surface untextured.
func TestTexturePNG(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, quadrants(false)); err != nil {
		t.Fatal(err)
	}
	want := render(t, sceneOf([]decode.Material{{BaseColorMap: &decode.Image{Pixels: quadrants(false)}}}, facing(1, 0, true)), 64)
	got := render(t, sceneOf([]decode.Material{{BaseColorMap: &decode.Image{PNG: buf.Bytes()}}}, facing(1, 0, true)), 64)
	if string(got.Pix) != string(want.Pix) {
		t.Errorf("texture as PNG drawn unlike its pixels")
	}
	plain := render(t, sceneOf(nil, facing(1, 0, true)), 64)
	broken := render(t, sceneOf([]decode.Material{{BaseColorMap: &decode.Image{PNG: buf.Bytes()[:40]}}}, facing(1, 0, true)), 64)
	if string(broken.Pix) != string(plain.Pix) {
		t.Errorf("surface with a broken PNG drawn unlike an untextured one")
	}
}

func absDiff(a, b color.NRGBA) int {
	d := 0
	for _, v := range [][2]uint8{{a.R, b.R}, {a.G, b.G}, {a.B, b.B}, {a.A, b.A}} {
		d = max(d, int(math.Abs(float64(v[0])-float64(v[1]))))
	}
	return d
}

// TestAlphaCutout: under an alpha-masked material the texels below the
// cutoff are holes, through which a square behind shows; opaque, they are
// drawn.
func TestAlphaCutout(t *testing.T) {
	behind := facing(1.2, -1, true)
	behind.Material = 1
	for _, mask := range []bool{true, false} {
		mats := []decode.Material{
			{BaseColorMap: &decode.Image{Pixels: quadrants(true)}, AlphaMask: mask, AlphaCutoff: 0.5},
			{BaseColor: [4]float32{1, 1, 0, 1}},
		}
		img := render(t, sceneOf(mats, facing(1, 0, true), behind), 64)
		top := img.NRGBAAt(21, 24)
		if mask && !(top.R > 100 && top.G > 100 && top.B == 0) {
			t.Errorf("masked: a cut texel shows %v, want the yellow behind", top)
		}
		if !mask && !(top.R > 100 && top.G == 0 && top.B == 0 && top.A == 255) {
			t.Errorf("opaque: a texel of alpha 0 shows %v, want opaque red", top)
		}
		if c := img.NRGBAAt(21, 43); !(c.B > 100 && c.R == 0) {
			t.Errorf("mask %v: an opaque texel shows %v, want blue", mask, c)
		}
	}
}

// TestSphereFillsSquare: shapes whose bounding box has a corner at the
// sphere's edge, along the camera's right axis (a flat square in the XZ
// plane) or its up axis, reach the picture's border within a pixel.
func TestSphereFillsSquare(t *testing.T) {
	const size = 128
	double := []decode.Material{{DoubleSided: true}}
	flat := decode.Primitive{
		Positions: [][3]float32{{-1, 0, -1}, {1, 0, -1}, {1, 0, 1}, {-1, 0, 1}},
		Indices:   []uint32{0, 2, 1, 0, 3, 2},
	}
	img := render(t, sceneOf(double, flat), size)
	x0, x1, y0, y1 := extent(img)
	if x0 > 1 || x1 < size-2 {
		t.Errorf("flat square spans columns %d–%d of %d, want the border within a pixel", x0, x1, size)
	}
	if d := float64(y0+y1+1)/2 - size/2; math.Abs(d) > 1 {
		t.Errorf("flat square's rows %d–%d not centred", y0, y1)
	}
	// Corners (−1, 2, −1) and (1, −2, 1) lie along ±up from the centre.
	tall := decode.Primitive{
		Positions: [][3]float32{{-1, 2, -1}, {1, -2, 1}, {1, 0, -1}},
		Indices:   []uint32{0, 1, 2},
	}
	img = render(t, sceneOf(double, tall), size)
	_, _, y0, y1 = extent(img)
	if y0 > 1 || y1 < size-2 {
		t.Errorf("tall triangle spans rows %d–%d of %d, want the border within a pixel", y0, y1, size)
	}
}

// extent is the range of drawn columns and rows.
func extent(img *image.NRGBA) (x0, x1, y0, y1 int) {
	b := img.Bounds()
	x0, y0, x1, y1 = b.Max.X, b.Max.Y, -1, -1
	for y := range b.Max.Y {
		for x := range b.Max.X {
			if img.NRGBAAt(x, y).A != 0 {
				x0, x1, y0, y1 = min(x0, x), max(x1, x), min(y0, y), max(y1, y)
			}
		}
	}
	return x0, x1, y0, y1
}

// TestTransforms: a mesh hung on a node tree is drawn where its world
// positions are, and a skinned mesh where its positions are (bind pose).
// movedCube is cube moved by (3, 0, 0) and stretched twice along Y.
func movedCube() decode.Primitive {
	moved := cube()
	for k := range moved.Positions {
		moved.Positions[k][0] += 3
		moved.Positions[k][1] *= 2
	}
	return moved
}

func TestTransforms(t *testing.T) {
	const size = 48
	moved := movedCube()
	want := render(t, sceneOf(nil, cube(), moved), size)

	tree := &decode.Scene{
		Nodes: []decode.Node{
			{Name: "a", Parent: -1, Matrix: decode.TRS{Translation: [3]float32{1, 0, 0}, Rotation: [4]float32{0, 0, 0, 1}, Scale: [3]float32{1, 2, 1}}.Matrix()},
			{Name: "b", Parent: 0, Matrix: decode.TRS{Translation: [3]float32{2, 0, 0}, Rotation: [4]float32{0, 0, 0, 1}, Scale: [3]float32{1, 1, 1}}.Matrix()},
		},
		Meshes: []decode.Mesh{
			{Name: "still", Node: -1, Primitives: []decode.Primitive{cube()}},
			{Name: "moved", Node: 1, Primitives: []decode.Primitive{cube()}},
		},
	}
	if got := render(t, tree, size); string(got.Pix) != string(want.Pix) {
		t.Errorf("node tree drawn unlike its world positions (%d vs %d pixels)", covered(got), covered(want))
	}

	skinned := &decode.Scene{
		Skeleton: &decode.Skeleton{Joints: []decode.Joint{{Name: "j", Parent: -1, Rest: decode.Identity()}}},
		Meshes: []decode.Mesh{
			{Name: "still", Primitives: []decode.Primitive{cube()}},
			{Name: "skinned", Skinned: true, Primitives: []decode.Primitive{moved},
				Transform: decode.TRS{Translation: [3]float32{9, 9, 9}, Rotation: [4]float32{0, 0, 0, 1}, Scale: [3]float32{1, 1, 1}}},
		},
	}
	if got := render(t, skinned, size); string(got.Pix) != string(want.Pix) {
		t.Errorf("skinned mesh not drawn in its bind pose")
	}
}

// TestBadInput: a wrong size or an index past the vertices is an error;
// non-finite positions are skipped; nothing panics.
func TestBadInput(t *testing.T) {
	for _, size := range []int{0, -1, MaxSize + 1} {
		if _, err := Render(sceneOf(nil, cube()), size); err == nil {
			t.Errorf("size %d: no error", size)
		}
	}
	bad := cube()
	bad.Indices[7] = 8
	if _, err := Render(sceneOf(nil, bad), 16); err == nil {
		t.Errorf("index past the vertices: no error")
	} else {
		t.Log(err)
	}
	// Corner 0 is on none of the faces seen, and the other seven span the
	// same box: the picture is the whole cube's.
	nan := cube()
	nan.Positions[0] = [3]float32{float32(math.NaN()), 0, float32(math.Inf(1))}
	if got, want := render(t, sceneOf(nil, nan), 64), render(t, sceneOf(nil, cube()), 64); string(got.Pix) != string(want.Pix) {
		t.Errorf("cube with a non-finite hidden corner drawn unlike the cube")
	}
	// Non-finite UVs sample the texture's first texel.
	nanUV := facing(1, 0, true)
	nanUV.UVs[0][0] = [2]float32{float32(math.NaN()), float32(math.Inf(1))}
	mats := []decode.Material{{BaseColorMap: &decode.Image{Pixels: quadrants(false)}}}
	if c := render(t, sceneOf(mats, nanUV), 64).NRGBAAt(32, 32); !(c.R > 100 && c.G == 0 && c.B == 0) {
		t.Errorf("pixel with non-finite UVs is %v, want the first texel's red", c)
	}
	if n := covered(render(t, &decode.Scene{}, 8)); n != 0 {
		t.Errorf("empty scene drew %d pixels", n)
	}
}

// TestRandomScenes draws random scenes full of awkward values (NaN, ±Inf,
// huge and tiny coordinates, singular and mirroring transforms, node
// parents out of order, materials out of range): Render never panics and
// always returns a picture of the size asked for.
func TestRandomScenes(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 30))
	f := func() float32 {
		switch r.IntN(40) {
		case 0:
			return float32(math.NaN())
		case 1:
			return float32(math.Inf(1 - 2*r.IntN(2)))
		case 2:
			return 0
		case 3:
			return (r.Float32() - 0.5) * 1e38
		case 4:
			return (r.Float32() - 0.5) * 1e-38
		}
		return r.Float32()*4 - 2
	}
	v3 := func() [3]float32 { return [3]float32{f(), f(), f()} }
	trs := func() decode.TRS {
		if r.IntN(2) == 0 {
			return decode.TRS{}
		}
		return decode.TRS{Translation: v3(), Rotation: [4]float32{f(), f(), f(), f()}, Scale: v3()}
	}
	drawn := 0
	for range 2000 {
		s := &decode.Scene{}
		for range r.IntN(3) {
			s.Materials = append(s.Materials, decode.Material{DoubleSided: r.IntN(2) == 0, AlphaMask: r.IntN(2) == 0,
				AlphaBlend: r.IntN(4) == 0, AlphaCutoff: f(), BaseColor: [4]float32{f(), f(), f(), f()},
				BaseColorMap: &decode.Image{Pixels: quadrants(r.IntN(2) == 0)}})
		}
		for range r.IntN(3) {
			s.Nodes = append(s.Nodes, decode.Node{Parent: r.IntN(5) - 2, Matrix: trs().Matrix()})
		}
		if r.IntN(2) == 0 {
			s.Skeleton = &decode.Skeleton{Joints: []decode.Joint{{Parent: -1}}}
		}
		for range 1 + r.IntN(3) {
			m := decode.Mesh{Node: r.IntN(5) - 2, Skinned: r.IntN(3) == 0,
				Transform: trs()}
			for range 1 + r.IntN(2) {
				n := r.IntN(8)
				p := decode.Primitive{Material: r.IntN(4) - 1}
				for range n {
					p.Positions = append(p.Positions, v3())
				}
				if r.IntN(2) == 0 {
					for range n {
						p.Normals = append(p.Normals, v3())
					}
				}
				if r.IntN(2) == 0 {
					p.UVs = [][][2]float32{make([][2]float32, n)}
					p.Colors = [][][4]float32{make([][4]float32, n)}
					for k := range n {
						p.UVs[0][k] = [2]float32{f(), f()}
						p.Colors[0][k] = [4]float32{f(), f(), f(), f()}
					}
				}
				if n > 0 {
					for range 3 * r.IntN(8) {
						p.Indices = append(p.Indices, uint32(r.IntN(n)))
					}
				}
				m.Primitives = append(m.Primitives, p)
			}
			s.Meshes = append(s.Meshes, m)
		}
		size := 1 + r.IntN(40)
		img, err := Render(s, size)
		if err != nil {
			t.Fatalf("random scene: %v", err)
		}
		if b := img.Bounds(); b.Dx() != size || b.Dy() != size {
			t.Fatalf("picture is %v, want %d²", b, size)
		}
		if covered(img) > 0 {
			drawn++
		}
	}
	// Awkward values must not keep every scene from being drawn.
	t.Logf("%d of 2000 scenes drew pixels", drawn)
	if drawn < 200 {
		t.Errorf("only %d of 2000 random scenes drew a pixel", drawn)
	}
}

// TestDeadline: a scene of many triangles each covering a quarter of the
// picture (seconds of work) stops with the context's error at its deadline.
func TestDeadline(t *testing.T) {
	p := facing(1, 0, true)
	for range 20_000 {
		p.Indices = append(p.Indices, 0, 1, 2, 0, 2, 3)
	}
	s := sceneOf(nil, p)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := RenderContext(ctx, s, 256)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v after %v, want the deadline's", err, took)
	}
	if took > time.Second {
		t.Fatalf("stopped %v after a 50 ms deadline", took)
	}
	t.Logf("stopped after %v", took)
}

// BenchmarkRender draws a 100 k-triangle GEM mesh at 256².
func BenchmarkRender(b *testing.B) { benchScene(b, gridScene(b, 100_000)) }
