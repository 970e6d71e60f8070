package meshgen

import (
	"fmt"
	"math"

	"github.com/meshfs/meshfs/decode/unigine"
)

// Unigine returns a UNIGINE ms15 .mesh (one surface, one LZ4 geometry block
// and one collision block, compact indices above 65 535 vertices) of about
// triangles triangles: a grid bent in both directions whose coordinates,
// tangent frames and UVs depend on seed, so that files of equal size still
// convert to different bytes. The grid is bent along x (a wave, the same in
// every row) and sloped along y, so each row's frames repeat the previous
// row's while positions all differ: the geometry block compresses about as
// the real ms14 geometry blocks do (1.2:1 to 1.7:1), neither like a flat
// grid's identical frames nor like noise.
func Unigine(triangles int, seed float32) ([]byte, error) {
	// nx×ny quads of 2 triangles each, as square as the count allows.
	nx := max(1, int(math.Round(math.Sqrt(float64(triangles)/2))))
	ny := max(1, int(math.Round(float64(triangles)/float64(2*nx))))
	side := nx + 1
	var s unigine.Surface
	s.Name = "ground"
	s.LightmapChannel, s.LightmapResolution = 1, 4
	base := unigine.Target{
		Positions: make([][3]float32, 0, side*(ny+1)),
		Tangents:  make([][4]int16, 0, side*(ny+1)),
	}
	s.UV0 = make([][2]float32, 0, side*(ny+1))
	// Height h(x, y) = a·sin(k·i + seed) + slope·y; its gradient gives the
	// normal (−∂h/∂x, −∂h/∂y, 1) and the tangent (1, 0, ∂h/∂x) along x.
	const a, k, slope = 0.75, 0.11, 0.125
	ph := float64(seed)
	for j := 0; j <= ny; j++ {
		for i := 0; i < side; i++ {
			x, y := float64(i)*0.25+float64(seed), float64(j)*0.25
			sx, cx := math.Sincos(k*float64(i) + ph)
			h := a*sx + slope*y
			dx, dy := a*k*cx/0.25, slope
			nrm := unit([3]float64{-dx, -dy, 1})
			tan := unit([3]float64{1, 0, dx})
			// Make the tangent orthogonal to the normal (Gram-Schmidt).
			d := tan[0]*nrm[0] + tan[1]*nrm[1] + tan[2]*nrm[2]
			tan = unit([3]float64{tan[0] - d*nrm[0], tan[1] - d*nrm[1], tan[2] - d*nrm[2]})
			base.Positions = append(base.Positions, [3]float32{float32(x), float32(y), float32(h)})
			base.Tangents = append(base.Tangents, unigine.FrameQuat(f32(nrm), f32(tan), 1))
			s.UV0 = append(s.UV0, [2]float32{float32(i) / float32(nx), 1 - float32(j)/float32(ny)})
		}
	}
	s.Targets = []unigine.Target{base}
	s.CIndices = make([]uint32, 0, 6*nx*ny)
	for j := 0; j < ny; j++ {
		for i := 0; i < nx; i++ {
			// Counter-clockwise seen from +Z (UNIGINE's front faces).
			a := uint32(j*side + i)
			b, c, d := a+1, a+uint32(side)+1, a+uint32(side)
			s.CIndices = append(s.CIndices, a, b, c, a, c, d)
		}
	}
	s.TIndices = s.CIndices // one triangle vertex per coordinate vertex: no seams
	s.Bounds = unigine.BoundsOf(base.Positions)
	s.Collision = unigine.CollisionBlock(len(s.CIndices)/3, s.Bounds)
	f := &unigine.File{Magic: unigine.MagicMS15, SpatialTreeTriangles: int32(len(s.CIndices) / 3),
		Bounds: s.Bounds, Surfaces: []unigine.Surface{s}, RAM: int64(len(base.Positions)) * 48}
	b, err := unigine.Encode(f)
	if err != nil {
		return nil, fmt.Errorf("meshgen: %w", err)
	}
	return b, nil
}

func unit(v [3]float64) [3]float64 {
	l := math.Sqrt(v[0]*v[0] + v[1]*v[1] + v[2]*v[2])
	return [3]float64{v[0] / l, v[1] / l, v[2] / l}
}

func f32(v [3]float64) [3]float32 { return [3]float32{float32(v[0]), float32(v[1]), float32(v[2])} }
