// Package preview draws a decode.Scene as a small square picture with a
// software rasterizer (no cgo, no GPU), for NAME.preview.png.
//
// The camera is fixed, so that anyone can check a picture against another
// renderer: orthographic, looking from glTF direction (+1, +1, +1) toward the
// centre of the scene's bounding box, up +Y. The box is the world-space one
// (node transforms applied) of every finite vertex of every primitive with
// triangles; its circumscribed sphere (radius half the box's diagonal)
// exactly fills the square: the sphere's centre is the picture's centre and
// its radius is half the picture's side. With c the box's centre, R the
// sphere's radius, and the camera's right axis r = (1, 0, −1)/√2 and up axis
// u = (−1, 2, −1)/√6, a world point p is drawn at pixel
// x = (1 + r·(p−c)/R)·size/2, y = (1 − u·(p−c)/R)·size/2, pixel (i, j)
// covering [i, i+1)×[j, j+1) and sampled at its centre.
//
// What is drawn: the scene's geometry, unanimated. Meshes take their
// node transforms (a mirroring transform reverses which winding is front, as
// in glTF); skinned meshes are drawn in their default pose, skinned by
// their joints where the .glb's nodes put them, as a glTF viewer shows the
// file unanimated (skin.go); morph targets are not applied. Triangles
// whose vertices are not all finite are skipped.
//
// How: one pass per triangle, with edge functions over the triangle's
// bounding box, and a z-buffer; the triangles, in their order, are cut into
// one run per CPU, each drawn into a picture and z-buffer of its own, and
// those merged in that order, nearest first and the earlier run on a tie
// (the picture one pass over every triangle draws). Back faces are culled unless the material is
// double-sided (then lit from their own side). The colour is the material's
// base colour (white when not given) times its base-colour texture (UV set
// 0, nearest texel, repeating; decoded from its PNG when the image has no
// pixels) times the vertex colour (set 0). Attributes are interpolated
// with screen-space barycentrics: under an orthographic camera every vertex
// has w = 1, so this affine interpolation is exactly the perspective-correct
// one. An alpha-masked material drops the pixels whose
// alpha is below its cutoff; a blended one is drawn as if masked at 0.5 (no
// sorting). Light is ambient plus a key and a fill light on the normals
// (interpolated vertex normals, or the face's when the primitive has none),
// both lights fixed to the camera. The background is transparent; every
// drawn pixel is opaque.
//
// The file: Encode and Pad make the picture's PNG exactly FixedLen(size)
// bytes, a length known from the side alone, so that a listing tells the
// exact size of a preview not drawn yet (fixed.go).
package preview

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"math"
	"runtime"
	"sync"

	"github.com/meshfs/meshfs/decode"
)

// MaxSize is the largest side Render draws.
const MaxSize = 4096

// The light: ambient plus a key light from the upper left and a weaker fill
// from the lower right, their directions given in the camera's frame
// (right, up, toward the viewer).
const (
	keyLight  = 0.65
	fillLight = 0.25
	ambient   = 0.3
)

// axes are the camera's right, up and backward (toward the viewer) unit
// axes in world space.
func axes() (right, up, back [3]float64) {
	const s2, s6, s3 = 0.7071067811865476, 0.4082482904638631, 0.5773502691896258 // 1/√2, 1/√6, 1/√3
	return [3]float64{s2, 0, -s2}, [3]float64{-s6, 2 * s6, -s6}, [3]float64{s3, s3, s3}
}

// Render draws scene as a size×size picture by the package's rules. An empty
// scene, or one whose bounding box is a point, gives a transparent picture.
func Render(scene *decode.Scene, size int) (*image.NRGBA, error) {
	return RenderContext(context.Background(), scene, size)
}

// RenderContext is Render stopping with ctx's error once ctx ends: the
// work of a scene is up to its triangles times the picture's pixels, and
// a caller bounds it in time this way.
func RenderContext(ctx context.Context, scene *decode.Scene, size int) (*image.NRGBA, error) {
	return RenderWith(ctx, scene, size, Config{})
}

// RenderWith is RenderContext drawn as cfg says.
func RenderWith(ctx context.Context, scene *decode.Scene, size int, cfg Config) (*image.NRGBA, error) {
	if size < 1 || size > MaxSize {
		return nil, fmt.Errorf("preview: size %d outside 1–%d", size, MaxSize)
	}
	if scene == nil {
		return nil, fmt.Errorf("preview: no scene")
	}
	prims, err := gather(scene)
	if err != nil {
		return nil, err
	}
	img := image.NewNRGBA(image.Rect(0, 0, size, size))

	total := 0
	for i := range prims {
		total += len(prims[i].p.Indices) / 3
	}
	workers := min(cfg.Workers, total)
	if cfg.Workers <= 0 {
		workers = min(runtime.GOMAXPROCS(0), total/minTrianglesPerWorker)
	}
	workers = max(1, workers)

	// World-space positions and the bounding box (min and max do not
	// depend on the order they are taken in).
	lo := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
	hi := [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	var mu sync.Mutex
	for i := range prims {
		pp := &prims[i]
		split(workers, len(pp.p.Positions), func(from, to int) {
			l := [3]float64{math.Inf(1), math.Inf(1), math.Inf(1)}
			h := [3]float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
			for _, v := range pp.p.Positions[from:to] {
				w := apply(pp.m, v)
				if !finite3(w) {
					continue
				}
				for c := range 3 {
					l[c] = math.Min(l[c], w[c])
					h[c] = math.Max(h[c], w[c])
				}
			}
			mu.Lock()
			for c := range 3 {
				lo[c] = math.Min(lo[c], l[c])
				hi[c] = math.Max(hi[c], h[c])
			}
			mu.Unlock()
		})
	}
	if !(lo[0] <= hi[0]) {
		return img, nil
	}
	var centre [3]float64
	var d2 float64
	for c := range 3 {
		centre[c] = (lo[c] + hi[c]) / 2
		d2 += (hi[c] - lo[c]) * (hi[c] - lo[c])
	}
	radius := math.Sqrt(d2) / 2
	if !(radius > 0) || math.IsInf(radius, 0) {
		return img, nil
	}

	r := &raster{size: size, textures: cfg.Textures, workers: workers}
	r.key = worldDir([3]float64{-0.5, 0.8, 0.6})
	r.fill = worldDir([3]float64{0.7, -0.3, 0.6})
	camRight, camUp, camBack := axes()
	half := float64(size) / 2
	draws := make([]drawPrim, len(prims))
	for i := range prims {
		pp := &prims[i]
		// Screen positions: x, y in pixels, z toward the viewer.
		scr := make([][3]float32, len(pp.p.Positions))
		split(workers, len(scr), func(from, to int) {
			for k := from; k < to; k++ {
				w := apply(pp.m, pp.p.Positions[k])
				d := [3]float64{w[0] - centre[0], w[1] - centre[1], w[2] - centre[2]}
				scr[k] = [3]float32{
					float32((1 + dot(camRight, d)/radius) * half),
					float32((1 - dot(camUp, d)/radius) * half),
					float32(dot(camBack, d) / radius),
				}
			}
		})
		draws[i] = r.prepare(scene, pp, scr)
	}
	targets := make([]*target, workers)
	for w := range targets {
		var pix []uint8
		if w == 0 {
			pix = img.Pix
		}
		targets[w] = newTarget(ctx, size, pix)
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		lo, hi := total*w/workers, total*(w+1)/workers
		draw := func() { errs[w] = r.triangles(targets[w], draws, lo, hi) }
		if w == workers-1 {
			draw()
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); draw() }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for _, t := range targets[1:] {
		targets[0].merge(t)
	}
	return img, nil
}

// split calls fn over [0, n) cut into up to workers runs, at once (one
// call when n is small: not worth a goroutine).
func split(workers, n int, fn func(from, to int)) {
	workers = min(workers, n/minVerticesPerWorker)
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		from, to := n*w/workers, n*(w+1)/workers
		if w == workers-1 {
			fn(from, to)
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); fn(from, to) }()
	}
	wg.Wait()
}

// minVerticesPerWorker is the fewest vertices worth a worker of their own.
const minVerticesPerWorker = 8192

// minTrianglesPerWorker is the fewest triangles worth a worker of their
// own.
const minTrianglesPerWorker = 4096

// Config is how Render draws.
type Config struct {
	// Workers is how many triangle partitions are drawn at once (0: one
	// per CPU, GOMAXPROCS, each of at least minTrianglesPerWorker); the
	// picture is the same for any number.
	Workers int
	// Textures, when set, keeps decoded base-colour textures from one
	// picture to the next (nil: decoded once per picture).
	Textures *TextureCache
}

// target is a picture being drawn by one worker: its pixels and z-buffer.
// Every pixel drawn is opaque, so alpha 0 marks a pixel not drawn.
type target struct {
	ctx  context.Context
	work int // the pixels tested since ctx was last looked at
	pix  []uint8
	zbuf []float32
	size int
}

// newTarget is a target of size² pixels, drawn into pix (nil: its own).
func newTarget(ctx context.Context, size int, pix []uint8) *target {
	if pix == nil {
		pix = make([]uint8, 4*size*size)
	}
	t := &target{ctx: ctx, pix: pix, zbuf: make([]float32, size*size), size: size}
	for i := range t.zbuf {
		t.zbuf[i] = float32(math.Inf(-1))
	}
	return t
}

// merge draws o's pixels over t's where they are nearer. Drawing the
// partitions of the triangles in their order into their own targets and
// merging those in that order gives the picture one pass over every
// triangle gives: a pixel is the first triangle's of those nearest there
// (a pixel is drawn only when strictly nearer, and NaN depth never is).
func (t *target) merge(o *target) {
	for i, z := range o.zbuf {
		if o.pix[4*i+3] == 0 || !(z > t.zbuf[i]) {
			continue
		}
		t.zbuf[i] = z
		copy(t.pix[4*i:4*i+4], o.pix[4*i:4*i+4])
	}
}

// prim is one primitive to draw with its mesh's world transform.
type prim struct {
	p      *decode.Primitive
	m      decode.Mat4
	normal [9]float64 // the inverse transpose of m's 3×3 part, row-major; zero when singular
	mirror bool
}

// gather lists the primitives with triangles, each with its world transform,
// and checks that their indices and attributes keep the scene's contract.
func gather(s *decode.Scene) ([]prim, error) {
	var nodeWorld []decode.Mat4
	if len(s.Nodes) > 0 {
		nodeWorld = make([]decode.Mat4, len(s.Nodes))
		for i, n := range s.Nodes {
			m := n.Matrix
			if m == (decode.Mat4{}) {
				m = decode.Identity4()
			}
			if p := n.Parent; p >= 0 && p < i {
				m = nodeWorld[p].Mul(m)
			}
			nodeWorld[i] = m
		}
	}
	var out []prim
	var skeleton []decode.Mat4 // Scene.Skeleton's skinning matrices, made once
	for mi := range s.Meshes {
		mesh := &s.Meshes[mi]
		var m decode.Mat4
		var skin []decode.Mat4 // the skinning matrices of a skinned mesh (skin.go)
		switch {
		case len(s.Nodes) > 0 && mesh.Skinned && mesh.Skin != nil && len(mesh.Skin.Joints) > 0:
			m, skin = decode.Identity4(), skinMats(mesh.Skin, nodeWorld)
		case len(s.Nodes) == 0 && mesh.Skinned && s.Skeleton != nil && len(s.Skeleton.Joints) > 0:
			if skeleton == nil {
				skeleton = skeletonMats(s.Skeleton)
			}
			m, skin = decode.Identity4(), skeleton
		default:
			m = decode.Identity4()
			if !mesh.Transform.IsIdentity() {
				m = mesh.Transform.Matrix()
			}
			if n := mesh.Node; len(s.Nodes) > 0 && n >= 0 && n < len(s.Nodes) {
				m = nodeWorld[n].Mul(m)
			}
		}
		var nm [9]float64
		if inv, ok := m.InverseAffine(); ok {
			// Row r of the inverse transpose is column r of the inverse.
			for r := range 3 {
				for c := range 3 {
					nm[r*3+c] = inv[r*4+c]
				}
			}
		}
		for pi := range mesh.Primitives {
			p := &mesh.Primitives[pi]
			if len(p.Indices) < 3 {
				continue
			}
			n := len(p.Positions)
			where := func() string { return fmt.Sprintf("preview: mesh %d (%q) primitive %d", mi, mesh.Name, pi) }
			for k, ix := range p.Indices {
				if int(ix) >= n {
					return nil, fmt.Errorf("%s: index %d is %d of %d vertices", where(), k, ix, n)
				}
			}
			if p.Normals != nil && len(p.Normals) != n {
				return nil, fmt.Errorf("%s: %d normals for %d positions", where(), len(p.Normals), n)
			}
			if len(p.UVs) > 0 && len(p.UVs[0]) != n {
				return nil, fmt.Errorf("%s: %d UVs for %d positions", where(), len(p.UVs[0]), n)
			}
			if len(p.Colors) > 0 && len(p.Colors[0]) != n {
				return nil, fmt.Errorf("%s: %d colours for %d positions", where(), len(p.Colors[0]), n)
			}
			if skin != nil {
				p = posed(p, skin)
			}
			out = append(out, prim{p: p, m: m, normal: nm, mirror: m.Det3() < 0})
		}
	}
	return out, nil
}

// raster is one picture being drawn: what every worker shares.
type raster struct {
	workers   int // the goroutines a picture's work is split over
	size      int
	key, fill [3]float32
	decoded   map[*decode.Image]*image.NRGBA
	textures  *TextureCache
}

// MaxTexturePixels caps the pixels of a texture Render decodes from its
// PNG (an image given as pixels is used as it is).
const MaxTexturePixels = 4096 * 4096

// pixels is img's picture: its Pixels, or its PNG decoded (once per Render)
// when it has none; nil when it has neither, or its PNG does not decode or
// is over MaxTexturePixels (the surface is then drawn untextured).
func (r *raster) pixels(img *decode.Image) *image.NRGBA {
	if img == nil {
		return nil
	}
	if img.Pixels != nil {
		return img.Pixels
	}
	if img.PNG == nil {
		return nil
	}
	if px, ok := r.decoded[img]; ok {
		return px
	}
	var px *image.NRGBA
	if r.textures != nil {
		px = r.textures.decode(img.PNG)
	} else {
		px = decodePNG(img.PNG)
	}
	if r.decoded == nil {
		r.decoded = map[*decode.Image]*image.NRGBA{}
	}
	r.decoded[img] = px
	return px
}

// decodePNG is the texture b decoded, nil when it does not decode or is
// over MaxTexturePixels.
func decodePNG(b []byte) *image.NRGBA {
	var px *image.NRGBA
	if cfg, err := png.DecodeConfig(bytes.NewReader(b)); err == nil && int64(cfg.Width)*int64(cfg.Height) <= MaxTexturePixels {
		if dec, err := png.Decode(bytes.NewReader(b)); err == nil {
			if n, ok := dec.(*image.NRGBA); ok {
				px = n
			} else {
				px = image.NewNRGBA(dec.Bounds())
				draw.Draw(px, px.Rect, dec, px.Rect.Min, draw.Src)
			}
		}
	}
	return px
}

// look is what a primitive's material says about its pixels.
type look struct {
	base        [4]float32
	tex         *image.NRGBA
	cutoff      float32
	cut         bool
	doubleSided bool
}

func (r *raster) lookOf(s *decode.Scene, p *decode.Primitive) look {
	l := look{base: [4]float32{1, 1, 1, 1}}
	if p.Material < 0 || p.Material >= len(s.Materials) {
		return l
	}
	m := &s.Materials[p.Material]
	if m.BaseColor != ([4]float32{}) {
		for k, v := range m.BaseColor {
			l.base[k] = clamp01(v)
		}
	}
	if px := r.pixels(m.BaseColorMap); px != nil && !px.Rect.Empty() {
		l.tex = px
	}
	switch {
	case m.AlphaBlend:
		l.cut, l.cutoff = true, 0.5
	case m.AlphaMask:
		l.cut, l.cutoff = true, clamp01(m.AlphaCutoff)
	}
	l.doubleSided = m.DoubleSided
	return l
}

// drawPrim is one primitive ready to draw: its vertices on screen (scr),
// its look, and the attributes its pixels take.
type drawPrim struct {
	pp      *prim
	scr     [][3]float32
	lk      look
	uvs     [][2]float32
	cols    [][4]float32
	normals [][3]float32 // world-space vertex normals; nil: face normals
}

// prepare readies one primitive, scr being its vertices on screen.
func (r *raster) prepare(s *decode.Scene, pp *prim, scr [][3]float32) drawPrim {
	p := pp.p
	lk := r.lookOf(s, p)
	var uvs [][2]float32
	if lk.tex != nil && len(p.UVs) > 0 {
		uvs = p.UVs[0]
	}
	var cols [][4]float32
	if len(p.Colors) > 0 {
		cols = p.Colors[0]
	}
	// World-space vertex normals, when given and the transform allows.
	var normals [][3]float32
	if p.Normals != nil && pp.normal != ([9]float64{}) {
		normals = make([][3]float32, len(p.Normals))
		nm := &pp.normal
		split(r.workers, len(normals), func(from, to int) {
			for k := from; k < to; k++ {
				n := p.Normals[k]
				x, y, z := float64(n[0]), float64(n[1]), float64(n[2])
				normals[k] = decode.Normalize3([3]float32{
					float32(nm[0]*x + nm[1]*y + nm[2]*z),
					float32(nm[3]*x + nm[4]*y + nm[5]*z),
					float32(nm[6]*x + nm[7]*y + nm[8]*z),
				})
			}
		})
	}
	return drawPrim{pp: pp, scr: scr, lk: lk, uvs: uvs, cols: cols, normals: normals}
}

// triangles draws triangles [lo, hi) of draws (numbered across them in
// order) into t.
func (r *raster) triangles(t *target, draws []drawPrim, lo, hi int) error {
	first := 0
	for i := range draws {
		n := len(draws[i].pp.p.Indices) / 3
		a, b := max(lo, first), min(hi, first+n)
		if a < b {
			if err := r.primitive(t, &draws[i], a-first, b-first); err != nil {
				return err
			}
		}
		first += n
	}
	return nil
}

// primitive draws triangles [lo, hi) of one primitive into t.
func (r *raster) primitive(tg *target, dp *drawPrim, lo, hi int) error {
	pp, p, scr, lk, uvs, cols, normals := dp.pp, dp.pp.p, dp.scr, dp.lk, dp.uvs, dp.cols, dp.normals
	size := float32(r.size)
	idx := p.Indices
	for t := 3 * lo; t < 3*hi; t += 3 {
		i0, i1, i2 := idx[t], idx[t+1], idx[t+2]
		a, b, c := scr[i0], scr[i1], scr[i2]
		if !finite3f(a) || !finite3f(b) || !finite3f(c) {
			continue
		}
		// Twice the signed area, in pixels (y down): negative when the
		// triangle is counter-clockwise as seen.
		area := (b[0]-a[0])*(c[1]-a[1]) - (b[1]-a[1])*(c[0]-a[0])
		if area == 0 || area != area {
			continue
		}
		front := (area < 0) != pp.mirror
		if !front && !lk.doubleSided {
			continue
		}
		if max(a[0], b[0], c[0]) < 0 || max(a[1], b[1], c[1]) < 0 || min(a[0], b[0], c[0]) >= size || min(a[1], b[1], c[1]) >= size {
			continue
		}
		minX := max(0, int(min(a[0], b[0], c[0])))
		maxX := min(r.size-1, int(max(a[0], b[0], c[0])))
		minY := max(0, int(min(a[1], b[1], c[1])))
		maxY := min(r.size-1, int(max(a[1], b[1], c[1])))
		if tg.work += (maxX - minX + 1) * (maxY - minY + 1); tg.work >= 1<<18 {
			tg.work = 0
			if err := tg.ctx.Err(); err != nil {
				return err
			}
		}
		// Face normal toward the side being seen, for primitives without
		// normals, and the sign that turns vertex normals that way.
		var face [3]float32
		flip := float32(1)
		if !front {
			flip = -1
		}
		if normals == nil {
			wa, wb, wc := apply(pp.m, p.Positions[i0]), apply(pp.m, p.Positions[i1]), apply(pp.m, p.Positions[i2])
			e1 := [3]float64{wb[0] - wa[0], wb[1] - wa[1], wb[2] - wa[2]}
			e2 := [3]float64{wc[0] - wa[0], wc[1] - wa[1], wc[2] - wa[2]}
			n := [3]float32{float32(e1[1]*e2[2] - e1[2]*e2[1]), float32(e1[2]*e2[0] - e1[0]*e2[2]), float32(e1[0]*e2[1] - e1[1]*e2[0])}
			if pp.mirror {
				flip = -flip
			}
			face = decode.Normalize3([3]float32{n[0] * flip, n[1] * flip, n[2] * flip})
		}
		inv := 1 / area
		for y := minY; y <= maxY; y++ {
			py := float32(y) + 0.5
			row := y * r.size
			for x := minX; x <= maxX; x++ {
				px := float32(x) + 0.5
				// Barycentric weights of a, b, c.
				w0 := ((b[0]-px)*(c[1]-py) - (b[1]-py)*(c[0]-px)) * inv
				w1 := ((c[0]-px)*(a[1]-py) - (c[1]-py)*(a[0]-px)) * inv
				w2 := 1 - w0 - w1
				if w0 < 0 || w1 < 0 || w2 < 0 {
					continue
				}
				z := w0*a[2] + w1*b[2] + w2*c[2]
				if !(z > tg.zbuf[row+x]) {
					continue
				}
				col := lk.base
				if uvs != nil {
					u := w0*uvs[i0][0] + w1*uvs[i1][0] + w2*uvs[i2][0]
					v := w0*uvs[i0][1] + w1*uvs[i1][1] + w2*uvs[i2][1]
					tx := texel(lk.tex, u, v)
					for k := range col {
						col[k] *= tx[k]
					}
				}
				if cols != nil {
					for k := range col {
						col[k] *= clamp01(w0*cols[i0][k] + w1*cols[i1][k] + w2*cols[i2][k])
					}
				}
				if lk.cut && col[3] < lk.cutoff {
					continue
				}
				n := face
				if normals != nil {
					na, nb, nc := normals[i0], normals[i1], normals[i2]
					n = [3]float32{
						(w0*na[0] + w1*nb[0] + w2*nc[0]) * flip,
						(w0*na[1] + w1*nb[1] + w2*nc[1]) * flip,
						(w0*na[2] + w1*nb[2] + w2*nc[2]) * flip,
					}
					n = decode.Normalize3(n)
				}
				light := ambient + keyLight*max(0, dot3(n, r.key)) + fillLight*max(0, dot3(n, r.fill))
				tg.zbuf[row+x] = z
				o := 4 * (row + x)
				pix := tg.pix[o : o+4 : o+4]
				pix[0] = to8(col[0] * light)
				pix[1] = to8(col[1] * light)
				pix[2] = to8(col[2] * light)
				pix[3] = 255
			}
		}
	}
	return nil
}

// texel is the nearest texel of img at (u, v), UV origin at the top left,
// repeating, as RGBA in [0, 1].
func texel(img *image.NRGBA, u, v float32) [4]float32 {
	if u != u || v != v || math.IsInf(float64(u), 0) || math.IsInf(float64(v), 0) {
		u, v = 0, 0
	}
	w, h := img.Rect.Dx(), img.Rect.Dy()
	fu := float64(u) - math.Floor(float64(u))
	fv := float64(v) - math.Floor(float64(v))
	x := min(w-1, int(fu*float64(w)))
	y := min(h-1, int(fv*float64(h)))
	o := img.PixOffset(img.Rect.Min.X+x, img.Rect.Min.Y+y)
	p := img.Pix[o : o+4 : o+4]
	return [4]float32{float32(p[0]) / 255, float32(p[1]) / 255, float32(p[2]) / 255, float32(p[3]) / 255}
}

// worldDir turns a direction in the camera's frame into a unit world one.
func worldDir(d [3]float64) [3]float32 {
	camRight, camUp, camBack := axes()
	var w [3]float64
	for c := range 3 {
		w[c] = d[0]*camRight[c] + d[1]*camUp[c] + d[2]*camBack[c]
	}
	l := math.Sqrt(dot(w, w))
	return [3]float32{float32(w[0] / l), float32(w[1] / l), float32(w[2] / l)}
}

func apply(m decode.Mat4, v [3]float32) [3]float64 {
	x, y, z := float64(v[0]), float64(v[1]), float64(v[2])
	return [3]float64{
		m[0]*x + m[4]*y + m[8]*z + m[12],
		m[1]*x + m[5]*y + m[9]*z + m[13],
		m[2]*x + m[6]*y + m[10]*z + m[14],
	}
}

func dot(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

func dot3(a, b [3]float32) float32 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

func finite3(v [3]float64) bool {
	return !math.IsNaN(v[0]+v[1]+v[2]) && !math.IsInf(v[0]+v[1]+v[2], 0)
}

func finite3f(v [3]float32) bool { return decode.Finite(v[0], v[1], v[2]) }

func clamp01(f float32) float32 {
	if !(f > 0) {
		return 0
	}
	return min(f, 1)
}

func to8(f float32) uint8 { return uint8(clamp01(f)*255 + 0.5) }
